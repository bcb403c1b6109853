/* ticker_wire.c — binary ticker encode/decode (see ticker_wire.h). */
#include "libsync/ticker_wire.h"

#include "libdev/le.h"

#include <errno.h>
#include <stdio.h>
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

size_t sync_ticker_size(size_t count)
{
	return SYNC_TICKER_HDR + count * SYNC_TICKER_ENTRY;
}

size_t sync_ticker_pack(const sync_ticker_head *h, const sync_ticker_entry *e, uint8_t *buf)
{
	le_put32(buf, SYNC_TICKER_MAGIC);
	le_put16(buf + 4, SYNC_TICKER_VERSION);
	le_put16(buf + 6, (uint16_t)h->count);
	le_put32(buf + 8, h->node);
	le_put32(buf + 12, h->root);
	le_put64(buf + 16, (uint64_t)h->now_ns);
	for (size_t i = 0; i < h->count; i++) {
		uint8_t *p = buf + SYNC_TICKER_HDR + i * SYNC_TICKER_ENTRY;
		put_clock(p, e[i].from);
		put_clock(p + 8, e[i].to);
		sync_conv_pack(&e[i].conv, p + 16);
	}
	return sync_ticker_size(h->count);
}

int sync_ticker_unpack_head(const uint8_t *buf, size_t len, sync_ticker_head *h, const char **why)
{
	if (len < SYNC_TICKER_HDR) {
		*why = "ticker shorter than its header";
		return -EMSGSIZE;
	}
	if (le_get32(buf) != SYNC_TICKER_MAGIC || le_get16(buf + 4) != SYNC_TICKER_VERSION) {
		*why = "not a version-1 chorus ticker (bad magic or version)";
		return -EBADMSG;
	}
	h->count = le_get16(buf + 6);
	h->node = le_get32(buf + 8);
	h->root = le_get32(buf + 12);
	h->now_ns = (int64_t)le_get64(buf + 16);
	if (len != sync_ticker_size(h->count)) {
		*why = "ticker size does not match its entry count";
		return -EMSGSIZE;
	}
	return 0;
}

int sync_ticker_unpack_entry(const uint8_t *buf, size_t i, sync_ticker_entry *e, const char **why)
{
	const uint8_t *p = buf + SYNC_TICKER_HDR + i * SYNC_TICKER_ENTRY;
	e->from = get_clock(p);
	e->to = get_clock(p + 8);
	if (e->from.kind > SYNC_KIND_GLOBAL || e->to.kind > SYNC_KIND_GLOBAL) {
		*why = "ticker entry names an unknown clock kind";
		return -EINVAL;
	}
	return sync_conv_unpack(p + 16, SYNC_CONV_WIRE_SIZE, &e->conv, why);
}

int sync_ticker_to_graph(const uint8_t *buf, size_t len, sync_graph *g, sync_ticker_head *h, size_t *skipped,
			 char *why, size_t wlen)
{
	const char *reason = NULL;
	size_t bad = 0;
	int loaded = 0;
	int rc = sync_ticker_unpack_head(buf, len, h, &reason);
	if (rc < 0) {
		snprintf(why, wlen, "%s", reason);
		return rc;
	}
	sync_graph_clear(g);
	for (size_t i = 0; i < h->count; i++) {
		sync_ticker_entry e;
		char r[160];
		if (sync_ticker_unpack_entry(buf, i, &e, &reason) < 0) {
			snprintf(why, wlen, "entry %zu: %s", i, reason);
			bad++;
		} else if (sync_graph_set(g, e.from, e.to, &e.conv, r, sizeof r) < 0) {
			snprintf(why, wlen, "entry %zu: %s", i, r);
			bad++;
		} else {
			loaded++;
		}
	}
	if (skipped)
		*skipped = bad;
	return loaded;
}
