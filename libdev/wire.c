/* wire.c — encode/decode of libdev messages (see wire.h).  Pure: every read
 * of the input is preceded by a length check; nothing here does I/O. */
#include "libdev/wire.h"
#include "libdev/le.h"

#include <errno.h>
#include <string.h>

/* int64 fields are two's complement on every target we build for. */
static int64_t get64(const uint8_t *p) { return (int64_t)le_get64(p); }

const char *dev_wire_type_name(uint8_t t)
{
	switch (t) {
	case DEV_MSG_HELLO: return "HELLO";
	case DEV_MSG_ERROR: return "ERROR";
	case DEV_MSG_OK: return "OK";
	case DEV_MSG_STATUS_GET: return "STATUS_GET";
	case DEV_MSG_STATUS_SUB: return "STATUS_SUB";
	case DEV_MSG_STATUS_UNSUB: return "STATUS_UNSUB";
	case DEV_MSG_STATUS_DATA: return "STATUS_DATA";
	case DEV_MSG_CMD: return "CMD";
	case DEV_MSG_CMD_REPLY: return "CMD_REPLY";
	case DEV_MSG_USAGE_GET: return "USAGE_GET";
	case DEV_MSG_USAGE: return "USAGE";
	case DEV_MSG_QUERY: return "QUERY";
	case DEV_MSG_QUERY_REPLY: return "QUERY_REPLY";
	case DEV_MSG_PKT_SUB: return "PKT_SUB";
	case DEV_MSG_PKT_UNSUB: return "PKT_UNSUB";
	case DEV_MSG_PKT_DATA: return "PKT_DATA";
	case DEV_MSG_PKT_SEND: return "PKT_SEND";
	case DEV_MSG_PKT_SUB_FROM: return "PKT_SUB_FROM";
	case DEV_MSG_PKT_SEQDATA: return "PKT_SEQDATA";
	case DEV_MSG_SENS_OPEN: return "SENS_OPEN";
	case DEV_MSG_SENS_OPENED: return "SENS_OPENED";
	case DEV_MSG_SENS_DATA: return "SENS_DATA";
	case DEV_MSG_SENS_GAP: return "SENS_GAP";
	case DEV_MSG_SENS_END: return "SENS_END";
	case DEV_MSG_SENS_CLOSE: return "SENS_CLOSE";
	default: return "?";
	}
}

const char *dev_pattern_name(dev_pattern p)
{
	switch (p) {
	case DEV_PATTERN_STATUS: return "status";
	case DEV_PATTERN_COMMAND: return "command";
	case DEV_PATTERN_QUERY: return "query";
	case DEV_PATTERN_PACKET: return "packet";
	case DEV_PATTERN_SENSOR: return "sensor";
	default: return "?";
	}
}

gboolean dev_wire_from_client(uint8_t t)
{
	switch (t) {
	case DEV_MSG_STATUS_GET:
	case DEV_MSG_STATUS_SUB:
	case DEV_MSG_STATUS_UNSUB:
	case DEV_MSG_CMD:
	case DEV_MSG_USAGE_GET:
	case DEV_MSG_QUERY:
	case DEV_MSG_PKT_SUB:
	case DEV_MSG_PKT_UNSUB:
	case DEV_MSG_PKT_SEND:
	case DEV_MSG_PKT_SUB_FROM:
	case DEV_MSG_SENS_OPEN:
	case DEV_MSG_SENS_CLOSE:
		return TRUE;
	default:
		return FALSE;
	}
}

#define FAIL(e, text) \
	do { \
		*why = (text); \
		return -(e); \
	} while (0)

/* Payload layout checks per type; p/n are the payload. */
static int decode_payload(dev_msg *m, const uint8_t *p, uint32_t n, const char **why)
{
	switch (m->type) {
	case DEV_MSG_HELLO:
		if (n < 12)
			FAIL(EBADMSG, "HELLO shorter than 12 bytes");
		m->u.hello.pattern = le_get16(p);
		m->u.hello.item_size = le_get32(p + 4);
		m->u.hello.max_msg = le_get32(p + 8);
		m->u.hello.name = (const char *)p + 12;
		m->u.hello.name_len = n - 12;
		if (le_get16(p + 2) != 0)
			FAIL(EBADMSG, "HELLO reserved field not zero");
		return 0;
	case DEV_MSG_ERROR:
		if (n < 8)
			FAIL(EBADMSG, "ERROR shorter than 8 bytes");
		m->u.error.err = (int32_t)le_get32(p);
		m->u.error.ref_type = p[4];
		m->u.error.text = (const char *)p + 8;
		m->u.error.text_len = n - 8;
		if (m->u.error.err <= 0)
			FAIL(EBADMSG, "ERROR errno not positive");
		if (n - 8 > DEV_WIRE_MAX_TEXT)
			FAIL(EBADMSG, "ERROR text too long");
		return 0;
	case DEV_MSG_OK:
	case DEV_MSG_STATUS_GET:
	case DEV_MSG_STATUS_SUB:
	case DEV_MSG_STATUS_UNSUB:
	case DEV_MSG_USAGE_GET:
	case DEV_MSG_PKT_UNSUB:
	case DEV_MSG_SENS_CLOSE:
		if (n != 0)
			FAIL(EBADMSG, "message must have an empty payload");
		return 0;
	case DEV_MSG_CMD:
		if (n > DEV_WIRE_MAX_TEXT)
			FAIL(EBADMSG, "command longer than 4096 bytes");
		if (memchr(p, 0, n))
			FAIL(EBADMSG, "command contains a NUL byte");
		if (!g_utf8_validate((const char *)p, n, NULL))
			FAIL(EBADMSG, "command is not valid UTF-8");
		return 0;
	case DEV_MSG_STATUS_DATA:
	case DEV_MSG_USAGE:
	case DEV_MSG_QUERY:
	case DEV_MSG_PKT_SUB:
	case DEV_MSG_PKT_SEND:
		return 0;
	case DEV_MSG_CMD_REPLY:
	case DEV_MSG_QUERY_REPLY:
		if (n < 4)
			FAIL(EBADMSG, "reply shorter than 4 bytes");
		m->u.reply.status = (int32_t)le_get32(p);
		m->u.reply.data = p + 4;
		m->u.reply.len = n - 4;
		return 0;
	case DEV_MSG_PKT_DATA:
		if (n < 8)
			FAIL(EBADMSG, "PKT_DATA shorter than 8 bytes");
		if (le_get32(p + 4) != 0)
			FAIL(EBADMSG, "PKT_DATA reserved field not zero");
		m->u.pkt.dropped = le_get32(p);
		m->u.pkt.data = p + 8;
		m->u.pkt.len = n - 8;
		return 0;
	case DEV_MSG_PKT_SEQDATA:
		if (n < 24)
			FAIL(EBADMSG, "PKT_SEQDATA shorter than 24 bytes");
		if (le_get32(p + 4) != 0)
			FAIL(EBADMSG, "PKT_SEQDATA reserved field not zero");
		m->u.pkt.dropped = le_get32(p);
		m->u.pkt.boot = (uint64_t)get64(p + 8);
		m->u.pkt.seq = (uint64_t)get64(p + 16);
		m->u.pkt.data = p + 24;
		m->u.pkt.len = n - 24;
		if (m->u.pkt.boot == 0 || m->u.pkt.seq == 0)
			FAIL(EBADMSG, "PKT_SEQDATA boot or seq is 0");
		return 0;
	case DEV_MSG_PKT_SUB_FROM:
		if (n < 16)
			FAIL(EBADMSG, "PKT_SUB_FROM shorter than 16 bytes");
		m->u.from.boot = (uint64_t)get64(p);
		m->u.from.next = (uint64_t)get64(p + 8);
		m->u.from.filter = p + 16;
		m->u.from.flen = n - 16;
		return 0;
	case DEV_MSG_SENS_OPEN:
		if (n < 24)
			FAIL(EBADMSG, "SENS_OPEN shorter than 24 bytes");
		if (le_get32(p + 20) != 0)
			FAIL(EBADMSG, "SENS_OPEN reserved field not zero");
		m->u.open.first = get64(p);
		m->u.open.last = get64(p + 8);
		m->u.open.flags = le_get32(p + 16);
		m->u.open.params = p + 24;
		m->u.open.params_len = n - 24;
		if (m->u.open.flags & ~(DEV_SENSOR_FROM_NEXT | DEV_SENSOR_RESUME))
			FAIL(EBADMSG, "SENS_OPEN has unknown flags");
		if (!(m->u.open.flags & DEV_SENSOR_FROM_NEXT) && m->u.open.last < m->u.open.first)
			FAIL(EBADMSG, "SENS_OPEN last < first");
		return 0;
	case DEV_MSG_SENS_OPENED:
		if (n < 24)
			FAIL(EBADMSG, "SENS_OPENED shorter than 24 bytes");
		m->u.opened.first = get64(p);
		m->u.opened.last = get64(p + 8);
		m->u.opened.item_size = le_get32(p + 16);
		m->u.opened.reply = p + 24;
		m->u.opened.reply_len = n - 24;
		if (m->u.opened.item_size == 0 || m->u.opened.last < m->u.opened.first)
			FAIL(EBADMSG, "SENS_OPENED with item size 0 or last < first");
		return 0;
	case DEV_MSG_SENS_DATA:
		if (n < 16)
			FAIL(EBADMSG, "SENS_DATA shorter than 16 bytes");
		if (le_get32(p + 12) != 0)
			FAIL(EBADMSG, "SENS_DATA reserved field not zero");
		m->u.data.first = get64(p);
		m->u.data.count = le_get32(p + 8);
		m->u.data.items = p + 16;
		m->u.data.bytes = n - 16;
		/* the item size is known to the reader only: it checks
		 * bytes == count * item_size; here count must be plausible */
		if (m->u.data.count == 0 || m->u.data.count > m->u.data.bytes)
			FAIL(EBADMSG, "SENS_DATA count is 0 or exceeds its bytes");
		if (m->u.data.first > INT64_MAX - (int64_t)m->u.data.count)
			FAIL(EBADMSG, "SENS_DATA index overflows");
		return 0;
	case DEV_MSG_SENS_GAP:
		if (n != 16)
			FAIL(EBADMSG, "SENS_GAP must be 16 bytes");
		m->u.gap.from = get64(p);
		m->u.gap.to = get64(p + 8);
		if (m->u.gap.to <= m->u.gap.from)
			FAIL(EBADMSG, "SENS_GAP to <= from");
		return 0;
	case DEV_MSG_SENS_END:
		if (n != 8)
			FAIL(EBADMSG, "SENS_END must be 8 bytes");
		m->u.end.next = get64(p);
		return 0;
	default:
		FAIL(ENOMSG, "unknown message type");
	}
}

int dev_wire_decode(const void *buf, size_t len, dev_msg *m, const char **why)
{
	const char *dummy;
	const uint8_t *b = buf;
	if (!why)
		why = &dummy;
	memset(m, 0, sizeof *m);
	if (len > DEV_WIRE_MAX_MSG)
		FAIL(EMSGSIZE, "message longer than the 131072-byte maximum");
	if (len < DEV_WIRE_HDR)
		FAIL(EBADMSG, "message shorter than the 16-byte header");
	if (le_get16(b) != DEV_WIRE_MAGIC)
		FAIL(EBADMSG, "bad magic (not a chorus device message)");
	if (b[2] != DEV_WIRE_VERSION)
		FAIL(EPROTONOSUPPORT, "unsupported protocol version");
	m->type = b[3];
	m->flags = le_get16(b + 4);
	m->id = le_get32(b + 12);
	if (le_get16(b + 6) != 0)
		FAIL(EBADMSG, "reserved header field not zero");
	uint32_t n = le_get32(b + 8);
	if ((size_t)n != len - DEV_WIRE_HDR)
		FAIL(EBADMSG, "payload length does not match the message size (truncated?)");
	if (m->flags & ~(DEV_F_BINARY | DEV_F_NOTIFY))
		FAIL(EBADMSG, "unknown header flags");
	m->payload = b + DEV_WIRE_HDR;
	m->len = n;
	return decode_payload(m, m->payload, n, why);
}

void dev_wire_header(uint8_t hdr[DEV_WIRE_HDR], uint8_t type, uint16_t flags, uint32_t id,
		     uint32_t payload_len)
{
	le_put16(hdr, DEV_WIRE_MAGIC);
	hdr[2] = DEV_WIRE_VERSION;
	hdr[3] = type;
	le_put16(hdr + 4, flags);
	le_put16(hdr + 6, 0);
	le_put32(hdr + 8, payload_len);
	le_put32(hdr + 12, id);
}

void dev_wire_begin(GByteArray *b, uint8_t type, uint16_t flags, uint32_t id)
{
	uint8_t hdr[DEV_WIRE_HDR];
	dev_wire_header(hdr, type, flags, id, 0);
	g_byte_array_set_size(b, 0);
	g_byte_array_append(b, hdr, sizeof hdr);
}

void dev_wire_u32(GByteArray *b, uint32_t v)
{
	uint8_t p[4];
	le_put32(p, v);
	g_byte_array_append(b, p, 4);
}

void dev_wire_i64(GByteArray *b, int64_t v)
{
	dev_wire_u32(b, (uint32_t)((uint64_t)v & 0xffffffffu));
	dev_wire_u32(b, (uint32_t)((uint64_t)v >> 32));
}

void dev_wire_bytes(GByteArray *b, const void *p, size_t n)
{
	if (n)
		g_byte_array_append(b, p, (guint)n);
}

int dev_wire_end(GByteArray *b)
{
	if (b->len > DEV_WIRE_MAX_MSG)
		return -EMSGSIZE;
	le_put32(b->data + 8, b->len - DEV_WIRE_HDR);
	return 0;
}

void dev_wire_error(GByteArray *b, uint32_t id, uint8_t ref_type, int err, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	if (n > DEV_WIRE_MAX_TEXT)
		n = DEV_WIRE_MAX_TEXT;
	dev_wire_begin(b, DEV_MSG_ERROR, 0, id);
	dev_wire_u32(b, (uint32_t)(err > 0 ? err : EIO));
	uint8_t ref[4] = {ref_type, 0, 0, 0};
	dev_wire_bytes(b, ref, 4);
	dev_wire_bytes(b, text, n);
	dev_wire_end(b);
}
