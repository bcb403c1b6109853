/* wire.h — the libdev wire format: pure encode/decode, no I/O.
 *
 * Every message is one SOCK_SEQPACKET datagram: a fixed 16-byte
 * little-endian header, then the payload (docs/protocol.md has the tables):
 *
 *   off size field
 *   0   2    magic    0x4843 (bytes 'C' 'H')
 *   2   1    version  DEV_WIRE_VERSION
 *   3   1    type     dev_msg_type
 *   4   2    flags    per type (DEV_F_*)
 *   6   2    reserved must be 0
 *   8   4    length   payload bytes; must equal datagram size - 16
 *   12  4    id       request id chosen by the client, echoed in replies
 *
 * The decoder checks every length before reading and returns pointers into
 * the caller's buffer; it is the libFuzzer target (tests/fuzz/fuzz_wire.c).
 * Errors are negative errno values with a static reason string.
 */
#ifndef CHORUS_DEV_WIRE_H
#define CHORUS_DEV_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#define DEV_WIRE_MAGIC 0x4843u
#define DEV_WIRE_VERSION 1
#define DEV_WIRE_HDR 16
/* Largest datagram either side sends or accepts, header included (bytes).
 * 128 KiB keeps a 64 KiB sensor chunk in one message and stays well under
 * the default socket buffer (212992 bytes) so one message always fits. */
#define DEV_WIRE_MAX_MSG (128 * 1024)
#define DEV_WIRE_MAX_PAYLOAD (DEV_WIRE_MAX_MSG - DEV_WIRE_HDR)
/* Longest command text or error text, bytes (no NUL on the wire). */
#define DEV_WIRE_MAX_TEXT 4096
/* Open-ended sensor request: `last` takes this value. */
#define DEV_SENSOR_OPEN_END INT64_MAX

typedef enum {
	/* generic, server -> client */
	DEV_MSG_HELLO = 0x01, /* u16 pattern, u16 0, u32 item_size, u32 max_msg, name text */
	DEV_MSG_ERROR = 0x02, /* i32 errno (>0), u8 ref_type, 3 x u8 0, text */
	DEV_MSG_OK = 0x03,    /* empty: request accepted (packet send) */
	/* status */
	DEV_MSG_STATUS_GET = 0x10,   /* c->s, empty; flag BINARY */
	DEV_MSG_STATUS_SUB = 0x11,   /* c->s, empty; flag BINARY; current state follows */
	DEV_MSG_STATUS_UNSUB = 0x12, /* c->s, empty */
	DEV_MSG_STATUS_DATA = 0x13,  /* s->c, state bytes; flags BINARY, NOTIFY */
	/* command */
	DEV_MSG_CMD = 0x20,       /* c->s, command text */
	DEV_MSG_CMD_REPLY = 0x21, /* s->c, i32 status, message text */
	DEV_MSG_USAGE_GET = 0x22, /* c->s, empty */
	DEV_MSG_USAGE = 0x23,     /* s->c, usage text */
	/* query */
	DEV_MSG_QUERY = 0x30,       /* c->s, request bytes */
	DEV_MSG_QUERY_REPLY = 0x31, /* s->c, i32 status, reply bytes */
	/* packet */
	DEV_MSG_PKT_SUB = 0x40,   /* c->s, filter bytes (empty = everything) */
	DEV_MSG_PKT_UNSUB = 0x41, /* c->s, empty */
	DEV_MSG_PKT_DATA = 0x42,  /* s->c, u32 dropped, u32 0, message bytes */
	DEV_MSG_PKT_SEND = 0x43,  /* c->s, message bytes; answered OK or ERROR */
	/* c->s, u64 boot, u64 next, filter bytes: subscribe, and first replay
	 * what the service still holds from `next` on (its history, when its
	 * boot is `boot`; everything it holds when another; nothing when 0) */
	DEV_MSG_PKT_SUB_FROM = 0x44,
	DEV_MSG_PKT_SEQDATA = 0x45, /* s->c, u32 dropped, u32 0, u64 boot, u64 seq, message bytes */
	/* sensor */
	DEV_MSG_SENS_OPEN = 0x50,   /* c->s, i64 first, i64 last, u32 flags, u32 0, params */
	DEV_MSG_SENS_OPENED = 0x51, /* s->c, i64 first, i64 last, u32 item_size, u32 0, reply */
	DEV_MSG_SENS_DATA = 0x52,   /* s->c, i64 first, u32 count, u32 0, count*item_size bytes */
	DEV_MSG_SENS_GAP = 0x53,    /* s->c, i64 from, i64 to */
	DEV_MSG_SENS_END = 0x54,    /* s->c, i64 next */
	DEV_MSG_SENS_CLOSE = 0x55,  /* c->s, empty */
} dev_msg_type;

/* header flags */
#define DEV_F_BINARY 0x0001u /* status: binary representation */
#define DEV_F_NOTIFY 0x0002u /* status data: sent because of a change */

/* sensor open flags (in the payload) */
#define DEV_SENSOR_FROM_NEXT 0x0001u /* start at the service's next index; `first` ignored */
#define DEV_SENSOR_RESUME 0x0002u    /* reconnect: `first` is the next index not received */

typedef enum {
	DEV_PATTERN_STATUS = 1,
	DEV_PATTERN_COMMAND = 2,
	DEV_PATTERN_QUERY = 3,
	DEV_PATTERN_PACKET = 4,
	DEV_PATTERN_SENSOR = 5,
} dev_pattern;

/* A decoded message; pointers point into the decoded buffer. */
typedef struct {
	uint8_t type;
	uint16_t flags;
	uint32_t id;
	const uint8_t *payload; /* whole payload */
	uint32_t len;           /* payload length, bytes */
	union {
		struct {
			uint16_t pattern;
			uint32_t item_size;
			uint32_t max_msg;
			const char *name;
			uint32_t name_len;
		} hello;
		struct {
			int32_t err;
			uint8_t ref_type;
			const char *text;
			uint32_t text_len;
		} error;
		struct {
			int32_t status;
			const uint8_t *data;
			uint32_t len;
		} reply; /* CMD_REPLY, QUERY_REPLY */
		struct {
			uint32_t dropped;
			const uint8_t *data;
			uint32_t len;
			uint64_t boot, seq; /* PKT_SEQDATA only (0 otherwise) */
		} pkt;
		struct {
			uint64_t boot, next;
			const uint8_t *filter;
			uint32_t flen;
		} from; /* PKT_SUB_FROM */
		struct {
			int64_t first, last;
			uint32_t flags;
			const uint8_t *params;
			uint32_t params_len;
		} open;
		struct {
			int64_t first, last;
			uint32_t item_size;
			const uint8_t *reply;
			uint32_t reply_len;
		} opened;
		struct {
			int64_t first;
			uint32_t count;
			const uint8_t *items;
			uint32_t bytes;
		} data;
		struct {
			int64_t from, to;
		} gap;
		struct {
			int64_t next;
		} end;
	} u;
} dev_msg;

/* Decode one datagram of `len` bytes into *m.  Returns 0, or -EBADMSG (bad
 * magic, reserved bits, length mismatch, malformed payload), -EPROTONOSUPPORT
 * (other version), -EMSGSIZE (over DEV_WIRE_MAX_MSG), -ENOMSG (unknown
 * type); *why (may be NULL) gets a static reason.  Pure. */
int dev_wire_decode(const void *buf, size_t len, dev_msg *m, const char **why);

/* True when `type` is sent by clients (false: sent by servers or unknown). */
gboolean dev_wire_from_client(uint8_t type);

/* Name of a message type ("STATUS_GET"), or "?" for an unknown one. */
const char *dev_wire_type_name(uint8_t type);

/* Name of a pattern ("status"), or "?". */
const char *dev_pattern_name(dev_pattern p);

/* Start a message in `b` (cleared first).  Never fails. */
void dev_wire_begin(GByteArray *b, uint8_t type, uint16_t flags, uint32_t id);
/* Append little-endian fields or raw bytes to the payload of `b`. */
void dev_wire_u32(GByteArray *b, uint32_t v);
void dev_wire_i64(GByteArray *b, int64_t v);
void dev_wire_bytes(GByteArray *b, const void *p, size_t n);
/* Write the payload length into the header; returns 0 or -EMSGSIZE when the
 * message is over DEV_WIRE_MAX_MSG (the caller must not send it). */
int dev_wire_end(GByteArray *b);

/* Encode an ERROR reply (errno `err` > 0, text truncated to
 * DEV_WIRE_MAX_TEXT) into b.  Never fails. */
void dev_wire_error(GByteArray *b, uint32_t id, uint8_t ref_type, int err, const char *text);

/* Encode the header of a message with `payload_len` bytes into hdr[16]
 * (for scatter-gather sends).  Pure. */
void dev_wire_header(uint8_t hdr[DEV_WIRE_HDR], uint8_t type, uint16_t flags, uint32_t id, uint32_t payload_len);

#endif
