/* rbs_wire.c — RBS packet encode/decode and authentication (see rbs_wire.h). */
#include "syncd/rbs_wire.h"

#include "libdev/le.h"
#include "libdev/netkey.h"

#include <errno.h>
#include <glib.h>
#include <string.h>


static void put_clock(uint8_t *p, sync_clock_id c)
{
	le_put32(p, c.node);
	le_put16(p + 4, c.kind);
	le_put16(p + 6, c.index);
}

static sync_clock_id get_clock(const uint8_t *p)
{
	sync_clock_id c = {le_get32(p), le_get16(p + 4), le_get16(p + 6)};
	return c;
}

static size_t body_size(const rbs_packet *p)
{
	switch (p->type) {
	case RBS_BEACON:
		return 0;
	case RBS_REPORT:
		return 4 + p->n_rx * RBS_REPORT_ENTRY;
	case RBS_ADVERT:
		return 8 + p->n_nodes * RBS_NODE_ENTRY + p->n_edges * RBS_EDGE_ENTRY;
	}
	return 0;
}

size_t rbs_wire_size(const rbs_packet *p, int keyed)
{
	return RBS_HDR + body_size(p) + (keyed ? RBS_HMAC_LEN : 0);
}

/* HMAC-SHA256 of buf[0..len) under key into mac[32]. */
static void hmac(const uint8_t *key, size_t klen, const uint8_t *buf, size_t len, uint8_t *mac)
{
	GHmac *h = g_hmac_new(G_CHECKSUM_SHA256, key, klen);
	gsize n = RBS_HMAC_LEN;
	g_hmac_update(h, buf, (gssize)len);
	g_hmac_get_digest(h, mac, &n);
	g_hmac_unref(h);
}

int rbs_wire_encode(const rbs_packet *p, const uint8_t *key, size_t klen, uint8_t *buf, size_t len)
{
	if (p->sender == RBS_NO_NODE || p->type < RBS_BEACON || p->type > RBS_ADVERT)
		return -EINVAL;
	if (p->n_rx > 65535 || p->n_nodes > 65535 || p->n_edges > 65535)
		return -EMSGSIZE;
	size_t need = rbs_wire_size(p, klen > 0);
	if (need > len || need > RBS_MAX_PACKET)
		return -EMSGSIZE;
	le_put32(buf, RBS_WIRE_MAGIC);
	buf[4] = RBS_WIRE_VERSION;
	buf[5] = (uint8_t)p->type;
	le_put16(buf + 6, klen > 0 ? RBS_FLAG_HMAC : 0);
	le_put32(buf + 8, p->sender);
	le_put32(buf + 12, p->seq);
	le_put64(buf + 16, p->boot);
	uint8_t *q = buf + RBS_HDR;
	if (p->type == RBS_REPORT) {
		le_put16(q, (uint16_t)p->n_rx);
		le_put16(q + 2, 0);
		q += 4;
		for (size_t i = 0; i < p->n_rx; i++, q += RBS_REPORT_ENTRY) {
			le_put32(q, p->rx[i].sender);
			le_put32(q + 4, p->rx[i].seq);
			le_put64(q + 8, (uint64_t)p->rx[i].t_ns);
		}
	} else if (p->type == RBS_ADVERT) {
		le_put32(q, p->root);
		le_put16(q + 4, (uint16_t)p->n_nodes);
		le_put16(q + 6, (uint16_t)p->n_edges);
		q += 8;
		for (size_t i = 0; i < p->n_nodes; i++, q += RBS_NODE_ENTRY) {
			le_put32(q, p->nodes[i].node);
			le_put32(q + 4, p->nodes[i].hops);
			le_put64(q + 8, (uint64_t)p->nodes[i].age_ns);
		}
		for (size_t i = 0; i < p->n_edges; i++, q += RBS_EDGE_ENTRY) {
			const rbs_edge *e = &p->edges[i];
			sync_conv c = e->conv;
			c.updated_ns = 0; /* on the fitter's clock: meaningless elsewhere; the age travels */
			le_put32(q, e->origin);
			le_put16(q + 4, e->hops);
			le_put16(q + 6, 0);
			le_put64(q + 8, (uint64_t)e->age_ns);
			put_clock(q + 16, e->from);
			put_clock(q + 24, e->to);
			sync_conv_pack(&c, q + 32);
		}
	}
	if (klen > 0)
		hmac(key, klen, buf, need - RBS_HMAC_LEN, buf + need - RBS_HMAC_LEN);
	return (int)need;
}

void rbs_packet_clear(rbs_packet *p)
{
	g_free(p->rx);
	g_free(p->nodes);
	g_free(p->edges);
	p->rx = NULL;
	p->nodes = NULL;
	p->edges = NULL;
	p->n_rx = p->n_nodes = p->n_edges = 0;
}

static int fail(rbs_packet *p, const char **why, const char *reason, int rc)
{
	rbs_packet_clear(p);
	*why = reason;
	return rc;
}

/* Ages beyond a day, receive times <= 0 and unknown clock kinds cannot come
 * from a working node. */
#define MAX_AGE_NS (86400LL * 1000000000LL)

static int clock_ok(sync_clock_id c)
{
	if (c.kind > SYNC_KIND_LAST)
		return 0;
	if (c.kind == SYNC_KIND_GLOBAL || c.kind == SYNC_KIND_UTC)
		return c.node == 0 && c.index == 0;
	return c.node != RBS_NO_NODE && (c.kind == SYNC_KIND_AUDIO || c.index == 0);
}

static int decode_body(const uint8_t *q, size_t blen, rbs_packet *p, const char **why)
{
	if (p->type == RBS_BEACON)
		return blen == 0 ? 0 : fail(p, why, "beacon with a body", -EMSGSIZE);
	if (p->type == RBS_REPORT) {
		if (blen < 4)
			return fail(p, why, "report shorter than its count", -EMSGSIZE);
		p->n_rx = le_get16(q);
		if (blen != 4 + p->n_rx * RBS_REPORT_ENTRY)
			return fail(p, why, "report size does not match its count", -EMSGSIZE);
		p->rx = g_new(rbs_reception, p->n_rx ? p->n_rx : 1);
		for (size_t i = 0; i < p->n_rx; i++) {
			const uint8_t *e = q + 4 + i * RBS_REPORT_ENTRY;
			p->rx[i].sender = le_get32(e);
			p->rx[i].seq = le_get32(e + 4);
			p->rx[i].t_ns = (int64_t)le_get64(e + 8);
			if (p->rx[i].sender == RBS_NO_NODE || p->rx[i].t_ns <= 0)
				return fail(p, why, "report entry with an invalid node or a receive time <= 0", -EINVAL);
		}
		return 0;
	}
	if (blen < 8)
		return fail(p, why, "advertisement shorter than its counts", -EMSGSIZE);
	p->root = le_get32(q);
	p->n_nodes = le_get16(q + 4);
	p->n_edges = le_get16(q + 6);
	if (blen != 8 + p->n_nodes * RBS_NODE_ENTRY + p->n_edges * RBS_EDGE_ENTRY)
		return fail(p, why, "advertisement size does not match its counts", -EMSGSIZE);
	p->nodes = g_new(rbs_node_news, p->n_nodes ? p->n_nodes : 1);
	p->edges = g_new(rbs_edge, p->n_edges ? p->n_edges : 1);
	q += 8;
	for (size_t i = 0; i < p->n_nodes; i++, q += RBS_NODE_ENTRY) {
		p->nodes[i].node = le_get32(q);
		p->nodes[i].hops = le_get32(q + 4);
		p->nodes[i].age_ns = (int64_t)le_get64(q + 8);
		if (p->nodes[i].node == RBS_NO_NODE || p->nodes[i].age_ns < 0 || p->nodes[i].age_ns > MAX_AGE_NS ||
		    p->nodes[i].hops > 65535)
			return fail(p, why, "advertised node with an invalid number, age or hop count", -EINVAL);
	}
	for (size_t i = 0; i < p->n_edges; i++, q += RBS_EDGE_ENTRY) {
		rbs_edge *e = &p->edges[i];
		e->origin = le_get32(q);
		e->hops = le_get16(q + 4);
		e->age_ns = (int64_t)le_get64(q + 8);
		e->from = get_clock(q + 16);
		e->to = get_clock(q + 24);
		if (e->origin == RBS_NO_NODE || e->age_ns < 0 || e->age_ns > MAX_AGE_NS)
			return fail(p, why, "advertised conversion with an invalid origin or age", -EINVAL);
		if (!clock_ok(e->from) || !clock_ok(e->to) || sync_clock_equal(e->from, e->to))
			return fail(p, why, "advertised conversion between invalid or identical clocks", -EINVAL);
		const char *r = NULL;
		if (sync_conv_unpack(q + 32, SYNC_CONV_WIRE_SIZE, &e->conv, &r) < 0)
			return fail(p, why, "advertised conversion is not usable (bad slope, variance or interval)",
				    -EINVAL);
	}
	return 0;
}

int rbs_wire_decode(const uint8_t *buf, size_t len, const uint8_t *key, size_t klen, rbs_packet *p,
		    const char **why)
{
	memset(p, 0, sizeof *p);
	if (len < RBS_HDR) {
		*why = "packet shorter than the header";
		return -EMSGSIZE;
	}
	if (le_get32(buf) != RBS_WIRE_MAGIC) {
		*why = "not a chorus RBS packet (bad magic)";
		return -EBADMSG;
	}
	if (buf[4] != RBS_WIRE_VERSION) {
		*why = "unsupported protocol version";
		return -EBADMSG;
	}
	unsigned flags = le_get16(buf + 6);
	if (flags & ~RBS_FLAG_HMAC) {
		*why = "unknown flags";
		return -EBADMSG;
	}
	size_t blen = len - RBS_HDR;
	if (flags & RBS_FLAG_HMAC) {
		if (blen < RBS_HMAC_LEN) {
			*why = "packet too short for its HMAC";
			return -EMSGSIZE;
		}
		blen -= RBS_HMAC_LEN;
	}
	if (klen > 0) {
		uint8_t mac[RBS_HMAC_LEN];
		if (!(flags & RBS_FLAG_HMAC)) {
			*why = "unauthenticated packet on a keyed network";
			return -EACCES;
		}
		hmac(key, klen, buf, len - RBS_HMAC_LEN, mac);
		/* Constant-time compare: a timing oracle must not reveal the MAC. */
		if (!dev_netkey_same(mac, buf + len - RBS_HMAC_LEN, RBS_HMAC_LEN, FALSE)) {
			*why = "HMAC does not match (wrong key or altered packet)";
			return -EACCES;
		}
	}
	p->type = (rbs_type)buf[5];
	if (p->type < RBS_BEACON || p->type > RBS_ADVERT) {
		*why = "unknown packet type";
		return -EBADMSG;
	}
	p->sender = le_get32(buf + 8);
	p->seq = le_get32(buf + 12);
	p->boot = le_get64(buf + 16);
	if (p->sender == RBS_NO_NODE) {
		*why = "sender node number is invalid";
		return -EINVAL;
	}
	return decode_body(buf + RBS_HDR, blen, p, why);
}

int rbs_wire_peek_sender(const uint8_t *buf, size_t len, uint32_t *sender)
{
	if (len < RBS_HDR)
		return -EMSGSIZE;
	if (le_get32(buf) != RBS_WIRE_MAGIC || buf[4] != RBS_WIRE_VERSION)
		return -EBADMSG;
	if (le_get16(buf + 6) & ~RBS_FLAG_HMAC)
		return -EBADMSG;
	if (buf[5] < RBS_BEACON || buf[5] > RBS_ADVERT)
		return -EBADMSG;
	uint32_t s = le_get32(buf + 8);
	if (s == RBS_NO_NODE)
		return -EINVAL;
	*sender = s;
	return 0;
}
