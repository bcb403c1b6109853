/* rbs_wire.h — the node-to-node packets of syncd's RBS protocol
 * (docs/protocol.md, "Network protocol (syncd, collab)").
 *
 * Every packet: a 24-byte header, a body by type, and — when the network has
 * a key — a 32-byte HMAC-SHA256 trailer over everything before it (so over
 * the sender's boot and sequence number: a receiver's replay window,
 * libdev/replay.h, can trust them).
 *
 *   off size header (little-endian)
 *   0   4    magic   "CHRB" (0x42524843)
 *   4   1    version RBS_WIRE_VERSION
 *   5   1    type    RBS_BEACON | RBS_REPORT | RBS_ADVERT
 *   6   2    flags   RBS_FLAG_HMAC: a 32-byte trailer follows the body
 *   8   4    sender  node number (RBS_NO_NODE is invalid)
 *   12  4    seq     sender's sequence number of this packet type
 *   16  8    boot    sender's boot number: larger at every start of its
 *                    syncd (libdev/bootid.h); a packet of an earlier boot is
 *                    a replay
 *
 * BEACON: no body.  Its receivers timestamp it; its send time is never used.
 * REPORT: u16 count, u16 0, then count x {u32 beacon sender, u32 beacon seq,
 *         i64 receive time on the reporter's cpu clock, ns}.
 * ADVERT: u32 root (sender's global root, RBS_NO_NODE: none), u16 n_nodes,
 *         u16 n_edges, then n_nodes x {u32 node, u32 hops, i64 age ns} (how
 *         long ago the sender last had news of that node), then n_edges x
 *         {u32 origin node, u16 hops, u16 0, i64 age ns, u32+u16+u16 from
 *         clock, u32+u16+u16 to clock, 104-byte sync_conv (conv.h; its
 *         `updated` is sent as 0: ages travel instead, clocks differ)}.
 *
 * Pure: no I/O, no clocks (GLib's GHmac only).  Decoding never trusts a
 * length, count or value it has not checked.  Errors: negative errno with a
 * static reason (-EBADMSG magic/version/type/flags, -EMSGSIZE size,
 * -EINVAL impossible value, -EACCES authentication).
 */
#ifndef CHORUS_SYNCD_RBS_WIRE_H
#define CHORUS_SYNCD_RBS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"

#define RBS_WIRE_MAGIC 0x42524843u
#define RBS_WIRE_VERSION 2
#define RBS_HDR 24
#define RBS_HMAC_LEN 32
#define RBS_FLAG_HMAC 1u
#define RBS_NO_NODE UINT32_MAX
#define RBS_REPORT_ENTRY 16
#define RBS_NODE_ENTRY 16
#define RBS_EDGE_ENTRY (16 + 16 + SYNC_CONV_WIRE_SIZE)
#define RBS_MTU 1400 /* largest packet syncd sends: fits one 802.11/Ethernet frame */
#define RBS_MAX_PACKET 65536

typedef enum {
	RBS_BEACON = 1,
	RBS_REPORT = 2,
	RBS_ADVERT = 3,
} rbs_type;

typedef struct {
	uint32_t sender; /* beacon's sender node */
	uint32_t seq;    /* beacon's sequence number */
	int64_t t_ns;    /* receive time on the reporter's cpu clock, ns */
} rbs_reception;

typedef struct {
	uint32_t node;  /* a node the advertiser has news of */
	uint32_t hops;  /* 0: the advertiser itself, 1: a neighbour it heard, ... */
	int64_t age_ns; /* ns since that news, on the advertiser's clock */
} rbs_node_news;

typedef struct {
	uint32_t origin;    /* node that fitted (or defined) the conversion */
	uint16_t hops;      /* advertisements it has crossed before this one */
	int64_t age_ns;     /* ns since its last update, advertiser's clock */
	sync_clock_id from; /* x clock */
	sync_clock_id to;   /* y clock */
	sync_conv conv;     /* from -> to */
} rbs_edge;

typedef struct {
	rbs_type type;
	uint32_t sender;
	uint32_t seq;
	uint64_t boot; /* sender's boot number */
	/* REPORT */
	size_t n_rx;
	rbs_reception *rx; /* points into caller storage (decode: rbs_wire_decode's arrays) */
	/* ADVERT */
	uint32_t root;
	size_t n_nodes;
	rbs_node_news *nodes;
	size_t n_edges;
	rbs_edge *edges;
} rbs_packet;

/* Bytes the encoding of p takes (with the HMAC trailer when `keyed`). */
size_t rbs_wire_size(const rbs_packet *p, int keyed);

/* Encode p into buf (len bytes).  With key (klen > 0) the HMAC trailer is
 * appended.  Returns the bytes written, or -EMSGSIZE (buf too small, or a
 * count beyond 65535), -EINVAL (sender RBS_NO_NODE, unknown type). */
int rbs_wire_encode(const rbs_packet *p, const uint8_t *key, size_t klen, uint8_t *buf, size_t len);

/* Decode len bytes at buf into *p, whose arrays are allocated with g_new and
 * must be released with rbs_packet_clear().  With a key (klen > 0) the
 * packet must carry a valid HMAC (-EACCES otherwise); without one a trailer
 * is skipped unchecked.  Returns 0 or a negative errno (see above) with the
 * reason in *why; on error *p holds nothing to free. */
int rbs_wire_decode(const uint8_t *buf, size_t len, const uint8_t *key, size_t klen, rbs_packet *p,
		    const char **why);

/* The sender named in the header of the len bytes at buf, without decoding
 * the body or checking authentication (which rbs_wire_decode still does):
 * for a receive path that must decide on a packet by its sender before
 * paying for decoding it.  Checks what the header alone can show (size,
 * magic, version, flags, type, sender not RBS_NO_NODE).  Returns 0 with
 * *sender set, or the negative errno rbs_wire_decode gives for that header
 * fault (-EMSGSIZE, -EBADMSG, -EINVAL). */
int rbs_wire_peek_sender(const uint8_t *buf, size_t len, uint32_t *sender);

/* Free the arrays of a decoded packet (and zero them). */
void rbs_packet_clear(rbs_packet *p);

#endif
