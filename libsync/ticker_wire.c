/* ticker_wire.c — binary ticker parts encode/decode (see ticker_wire.h). */
#include "libsync/ticker_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/le.h"

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

size_t sync_ticker_part_size(size_t n)
{
	return SYNC_TICKER_HDR + n * SYNC_TICKER_ENTRY;
}

void sync_ticker_pack_part_head(const sync_ticker_part *p, uint8_t *buf)
{
	le_put32(buf, SYNC_TICKER_MAGIC);
	le_put16(buf + 4, SYNC_TICKER_VERSION);
	le_put16(buf + 6, 0);
	le_put32(buf + 8, p->head.node);
	le_put32(buf + 12, p->head.root);
	le_put64(buf + 16, (uint64_t)p->head.now_ns);
	le_put64(buf + 24, p->epoch);
	le_put32(buf + 32, (uint32_t)p->head.count);
	le_put32(buf + 36, (uint32_t)p->first);
	le_put32(buf + 40, (uint32_t)p->n);
}

void sync_ticker_pack_entry(const sync_ticker_entry *e, uint8_t *buf)
{
	put_clock(buf, e->from);
	put_clock(buf + 8, e->to);
	sync_conv_pack(&e->conv, buf + 16);
}

int sync_ticker_unpack_part(const uint8_t *buf, size_t len, sync_ticker_part *p, const char **why)
{
	if (len < 6) {
		*why = "ticker part shorter than its header";
		return -EMSGSIZE;
	}
	if (le_get32(buf) != SYNC_TICKER_MAGIC) {
		*why = "not a chorus ticker (bad magic)";
		return -EBADMSG;
	}
	unsigned v = le_get16(buf + 4);
	if (v != SYNC_TICKER_VERSION) {
		*why = v < SYNC_TICKER_VERSION ? "ticker version 1 (one message) from an older syncd: this reader "
						 "knows version 2 (parts); update syncd"
					       : "ticker of a newer version than 2: this reader is older than syncd; update libsync";
		return -EBADMSG;
	}
	if (len < SYNC_TICKER_HDR) {
		*why = "ticker part shorter than its header";
		return -EMSGSIZE;
	}
	if (le_get16(buf + 6) != 0) {
		*why = "ticker part has flags this reader does not know";
		return -EBADMSG;
	}
	p->head.node = le_get32(buf + 8);
	p->head.root = le_get32(buf + 12);
	p->head.now_ns = (int64_t)le_get64(buf + 16);
	p->epoch = le_get64(buf + 24);
	p->head.count = le_get32(buf + 32);
	p->first = le_get32(buf + 36);
	p->n = le_get32(buf + 40);
	if (p->epoch == 0) {
		*why = "ticker part of epoch 0 (epochs start at 1)";
		return -EBADMSG;
	}
	if (p->n > SYNC_TICKER_PART_MAX || p->first > p->head.count || p->n > p->head.count - p->first) {
		*why = "ticker part's entries lie outside its snapshot (first + count > total, or too many)";
		return -EMSGSIZE;
	}
	if (len != sync_ticker_part_size(p->n)) {
		*why = "ticker part's size does not match its entry count (truncated?)";
		return -EMSGSIZE;
	}
	return 0;
}

int sync_ticker_unpack_entry(const uint8_t *buf, size_t i, sync_ticker_entry *e, const char **why)
{
	const uint8_t *p = buf + SYNC_TICKER_HDR + i * SYNC_TICKER_ENTRY;
	e->from = get_clock(p);
	e->to = get_clock(p + 8);
	if (e->from.kind > SYNC_KIND_LAST || e->to.kind > SYNC_KIND_LAST) {
		*why = "ticker entry names an unknown clock kind";
		return -EINVAL;
	}
	return sync_conv_unpack(p + 16, SYNC_CONV_WIRE_SIZE, &e->conv, why);
}

void sync_ticker_pack_req(const sync_ticker_req *r, uint8_t *buf)
{
	le_put32(buf, SYNC_TICKER_REQ_MAGIC);
	le_put16(buf + 4, SYNC_TICKER_VERSION);
	le_put16(buf + 6, 0);
	le_put64(buf + 8, r->epoch);
	le_put32(buf + 16, (uint32_t)r->first);
}

int sync_ticker_unpack_req(const uint8_t *buf, size_t len, sync_ticker_req *r, const char **why)
{
	if (len != SYNC_TICKER_REQ) {
		*why = "ticker part request is not 20 bytes";
		return -EMSGSIZE;
	}
	if (le_get32(buf) != SYNC_TICKER_REQ_MAGIC || le_get16(buf + 4) != SYNC_TICKER_VERSION ||
	    le_get16(buf + 6) != 0) {
		*why = "not a version-2 ticker part request (bad magic, version or flags)";
		return -EBADMSG;
	}
	r->epoch = le_get64(buf + 8);
	r->first = le_get32(buf + 16);
	return 0;
}

size_t sync_ticker_size(size_t count)
{
	return sync_ticker_part_size(count);
}

size_t sync_ticker_pack(const sync_ticker_head *h, const sync_ticker_entry *e, uint8_t *buf)
{
	sync_ticker_part p = {*h, 1, 0, h->count};
	sync_ticker_pack_part_head(&p, buf);
	for (size_t i = 0; i < h->count; i++)
		sync_ticker_pack_entry(&e[i], buf + SYNC_TICKER_HDR + i * SYNC_TICKER_ENTRY);
	return sync_ticker_part_size(h->count);
}

int sync_ticker_unpack_head(const uint8_t *buf, size_t len, sync_ticker_head *h, const char **why)
{
	sync_ticker_part p;
	int rc = sync_ticker_unpack_part(buf, len, &p, why);
	if (rc < 0)
		return rc;
	if (p.first != 0 || p.n != p.head.count) {
		*why = "ticker in several parts: read it with sync_ticker_fetch or sync_ticker_asm";
		return -EMSGSIZE;
	}
	*h = p.head;
	return 0;
}

/* A timescale segment: an exact conversion that names its start in xmin
 * (the entries of one pair that follow one another on the ticker). */
static int same_timescale(const sync_ticker_entry *a, const sync_ticker_entry *b)
{
	return (a->conv.flags & SYNC_CONV_FIXED) && (b->conv.flags & SYNC_CONV_FIXED) &&
	       !((a->conv.flags | b->conv.flags) & SYNC_CONV_PIECE) && sync_clock_equal(a->from, b->from) && sync_clock_equal(a->to, b->to) && b->conv.xmin > a->conv.xmin;
}

/* History pieces of one pair that follow one another on the ticker. */
static int same_history(const sync_ticker_entry *a, const sync_ticker_entry *b)
{
	return (a->conv.flags & SYNC_CONV_PIECE) && (b->conv.flags & SYNC_CONV_PIECE) &&
	       sync_clock_equal(a->from, b->from) && sync_clock_equal(a->to, b->to);
}

/* After the current conversions: each run of history pieces given to its
 * pair (sync_graph_set_history).  Returns the pieces loaded; refused ones
 * are added to *bad with the last reason in why. */
static int load_history(const sync_ticker_entry *e, size_t n, sync_graph *g, size_t *bad, char *why, size_t wlen)
{
	int loaded = 0;
	for (size_t i = 0; i < n;) {
		if (!(e[i].conv.flags & SYNC_CONV_PIECE)) {
			i++;
			continue;
		}
		size_t run = 1;
		while (i + run < n && same_history(&e[i + run - 1], &e[i + run]))
			run++;
		char r[160];
		sync_conv *pc = malloc(run * sizeof *pc);
		int rc = -ENOMEM;
		snprintf(r, sizeof r, "out of memory");
		if (pc) {
			for (size_t k = 0; k < run; k++)
				pc[k] = e[i + k].conv;
			rc = sync_graph_set_history(g, e[i].from, e[i].to, pc, run, r, sizeof r);
			free(pc);
		}
		if (rc < 0) {
			snprintf(why, wlen, "entry %zu: %s", i, r);
			*bad += run;
		} else {
			loaded += (int)run;
		}
		i += run;
	}
	return loaded;
}

int sync_ticker_entries_to_graph(const sync_ticker_entry *e, size_t n, sync_graph *g, size_t *skipped, char *why,
				 size_t wlen)
{
	size_t bad = 0;
	int loaded = 0;
	sync_graph_clear(g);
	for (size_t i = 0; i < n;) {
		char r[160];
		size_t run = 1;
		if (e[i].conv.flags & SYNC_CONV_PIECE) {
			i++; /* history: after every current conversion is in */
			continue;
		}
		while (i + run < n && same_timescale(&e[i + run - 1], &e[i + run]))
			run++;
		int rc;
		if (run == 1) {
			rc = sync_graph_set(g, e[i].from, e[i].to, &e[i].conv, r, sizeof r);
		} else {
			sync_conv *seg = malloc(run * sizeof *seg);
			if (!seg) {
				snprintf(r, sizeof r, "out of memory");
				rc = -ENOMEM;
			} else {
				for (size_t k = 0; k < run; k++)
					seg[k] = e[i + k].conv;
				rc = sync_graph_set_segments(g, e[i].from, e[i].to, seg, run, r, sizeof r);
				free(seg);
			}
		}
		if (rc < 0) {
			snprintf(why, wlen, "entry %zu: %s", i, r);
			bad += run;
		} else {
			loaded += (int)run;
		}
		i += run;
	}
	loaded += load_history(e, n, g, &bad, why, wlen);
	if (skipped)
		*skipped = bad;
	return loaded;
}

int sync_ticker_to_graph(const uint8_t *buf, size_t len, sync_graph *g, sync_ticker_head *h, size_t *skipped,
			 char *why, size_t wlen)
{
	const char *reason = NULL;
	size_t bad = 0, more = 0;
	int rc = sync_ticker_unpack_head(buf, len, h, &reason);
	if (rc < 0) {
		snprintf(why, wlen, "%s", reason);
		return rc;
	}
	sync_ticker_entry *e = h->count ? malloc(h->count * sizeof *e) : NULL;
	size_t k = 0;
	if (h->count && !e) {
		snprintf(why, wlen, "no memory for %zu entries", h->count);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->count; i++) {
		if (sync_ticker_unpack_entry(buf, i, &e[k], &reason) < 0) {
			snprintf(why, wlen, "entry %zu: %s", i, reason);
			bad++;
		} else {
			k++;
		}
	}
	int loaded = sync_ticker_entries_to_graph(e, k, g, &more, why, wlen);
	free(e);
	if (skipped)
		*skipped = bad + more;
	return loaded;
}
