/* seen.c — per-node held and missing outbox ids (see seen.h). */
#include "apps/collab/seen.h"

#include <string.h>

typedef struct {
	uint64_t epoch; /* the sender's outbox numbering */
	uint64_t base;  /* lowest id of interest (0: never heard) */
	uint64_t top;   /* highest id known to exist (received or claimed) */
	guint8 *bits;   /* span bits: id % span held, for ids in (top - span, top] */
	guint8 pull;    /* WANT since_ms= still to ask (SEEN_PULL_ASKS when first heard, 0: answered or given up) */
} peer;

struct collab_seen {
	uint32_t max_nodes, span;
	GHashTable *peers; /* node → peer * */
	collab_seen_stats st;
};

static void peer_free(gpointer p)
{
	peer *q = p;
	g_free(q->bits);
	g_free(q);
}

collab_seen *collab_seen_new(uint32_t max_nodes, uint32_t span)
{
	collab_seen *s = g_new0(collab_seen, 1);
	s->max_nodes = max_nodes ? max_nodes : 1;
	s->span = span ? span : 1;
	s->peers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, peer_free);
	return s;
}

void collab_seen_free(collab_seen *s)
{
	if (!s)
		return;
	g_hash_table_destroy(s->peers);
	g_free(s);
}

static gboolean bit(const collab_seen *s, const peer *p, uint64_t id)
{
	uint64_t i = id % s->span;
	return (p->bits[i / 8] >> (i % 8)) & 1;
}

static void set_bit(const collab_seen *s, peer *p, uint64_t id, gboolean v)
{
	uint64_t i = id % s->span;
	if (v)
		p->bits[i / 8] |= (guint8)(1u << (i % 8));
	else
		p->bits[i / 8] &= (guint8) ~(1u << (i % 8));
}

/* Lowest id the window holds. */
static uint64_t window_lo(const collab_seen *s, const peer *p)
{
	uint64_t lo = p->top >= s->span ? p->top - s->span + 1 : 1;
	return MAX(lo, p->base);
}

/* Ids leaving the window unseen are lost; new ids enter unseen. */
static void advance(collab_seen *s, peer *p, uint64_t top)
{
	if (top <= p->top)
		return;
	uint64_t k = top - p->top;
	uint64_t lo = window_lo(s, p);
	/* Ids lo .. top - span leave (those below the new window). */
	uint64_t new_lo = top >= s->span ? top - s->span + 1 : 1;
	for (uint64_t id = lo; id < new_lo && id <= p->top; id++)
		if (!bit(s, p, id))
			s->st.lost++;
	/* Ids above the old top that pass straight out were never held. */
	if (new_lo > p->top + 1)
		s->st.lost += new_lo - 1 - p->top;
	if (k >= s->span) {
		memset(p->bits, 0, (s->span + 7) / 8);
	} else {
		for (uint64_t id = p->top + 1; id <= top; id++)
			set_bit(s, p, id, FALSE);
	}
	p->top = top;
}

static peer *find(collab_seen *s, uint32_t node, uint64_t epoch)
{
	peer *p = g_hash_table_lookup(s->peers, GUINT_TO_POINTER(node));
	if (p) {
		if (p->epoch != epoch) {
			/* A new numbering: what was missing of the old is lost. */
			for (uint64_t id = window_lo(s, p); p->base && id <= p->top; id++)
				s->st.lost += !bit(s, p, id);
			p->epoch = epoch;
			p->base = p->top = 0;
			p->pull = 0;
			memset(p->bits, 0, (s->span + 7) / 8);
		}
		return p;
	}
	if (g_hash_table_size(s->peers) >= s->max_nodes) {
		s->st.full++;
		return NULL;
	}
	p = g_new0(peer, 1);
	p->bits = g_malloc0((s->span + 7) / 8);
	p->epoch = epoch;
	g_hash_table_insert(s->peers, GUINT_TO_POINTER(node), p);
	return p;
}

collab_seen_verdict collab_seen_add(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t id, gboolean late)
{
	peer *p = find(s, node, epoch);
	if (!p)
		return SEEN_FULL;
	if (!p->base && late) {
		s->st.before++;
		return SEEN_BEFORE;
	}
	if (!p->base) {
		p->base = id;
		p->top = id;
		p->pull = SEEN_PULL_ASKS;
		set_bit(s, p, id, TRUE);
		return SEEN_NEW;
	}
	if (id < p->base) {
		s->st.before++;
		return SEEN_BEFORE;
	}
	if (id + s->span <= p->top) {
		s->st.too_old++;
		return SEEN_TOO_OLD;
	}
	advance(s, p, id);
	if (bit(s, p, id)) {
		s->st.dups++;
		return SEEN_DUP;
	}
	set_bit(s, p, id, TRUE);
	return SEEN_NEW;
}

uint64_t collab_seen_have(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t first, uint64_t last)
{
	peer *p = find(s, node, epoch);
	if (!p || last + 1 < first)
		return 0;
	if (!p->base) {
		p->base = last + 1;
		p->top = last;
		p->pull = SEEN_PULL_ASKS;
		return 0;
	}
	advance(s, p, last);
	uint64_t lost = 0;
	if (first > p->base) {
		for (uint64_t id = window_lo(s, p); id < first && id <= p->top; id++)
			if (!bit(s, p, id))
				lost++;
		p->base = first;
	}
	s->st.lost += lost;
	return lost;
}

uint64_t collab_seen_missing(const collab_seen *s, uint32_t node, GArray *out, guint max_ranges, uint64_t *epoch)
{
	const peer *p = g_hash_table_lookup(s->peers, GUINT_TO_POINTER(node));
	if (!p || !p->base)
		return 0;
	*epoch = p->epoch;
	uint64_t n = 0;
	guint r = 0;
	for (uint64_t id = window_lo(s, p); id <= p->top && r < max_ranges; id++) {
		if (bit(s, p, id))
			continue;
		uint64_t hi = id;
		while (hi + 1 <= p->top && !bit(s, p, hi + 1))
			hi++;
		g_array_append_val(out, id);
		g_array_append_val(out, hi);
		n += hi - id + 1;
		r++;
		id = hi;
	}
	return n;
}

void collab_seen_pulls(const collab_seen *s, GArray *out)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, s->peers);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		const peer *p = v;
		if (p->base && p->pull) {
			uint32_t node = GPOINTER_TO_UINT(k);
			g_array_append_val(out, node);
		}
	}
}

uint64_t collab_seen_pull_asked(collab_seen *s, uint32_t node)
{
	peer *p = g_hash_table_lookup(s->peers, GUINT_TO_POINTER(node));
	if (!p || !p->base || !p->pull)
		return 0;
	p->pull--;
	return p->epoch;
}

uint64_t collab_seen_since(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t since)
{
	peer *p = g_hash_table_lookup(s->peers, GUINT_TO_POINTER(node));
	if (!p || !p->base || p->epoch != epoch || !since)
		return 0;
	p->pull = 0;
	/* Within the window only; the ids between are unheld (never set:
	 * every id set was at or above the base). */
	uint64_t lo = p->top >= s->span ? p->top - s->span + 1 : 1;
	uint64_t k = MAX(since, lo);
	if (k >= p->base)
		return 0;
	uint64_t n = p->base - k;
	p->base = k;
	s->st.pulled += n;
	return n;
}

void collab_seen_lacking(const collab_seen *s, GArray *out)
{
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, s->peers);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		const peer *p = v;
		if (!p->base)
			continue;
		for (uint64_t id = window_lo(s, p); id <= p->top; id++)
			if (!bit(s, p, id)) {
				uint32_t node = GPOINTER_TO_UINT(k);
				g_array_append_val(out, node);
				break;
			}
	}
}

void collab_seen_counts(const collab_seen *s, collab_seen_stats *st)
{
	*st = s->st;
	st->missing = 0;
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, s->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		const peer *p = v;
		if (!p->base)
			continue;
		for (uint64_t id = window_lo(s, p); id <= p->top; id++)
			st->missing += !bit(s, p, id);
	}
}

const char *collab_seen_name(collab_seen_verdict v)
{
	static const char *const names[] = {"new", "dup", "before", "too_old", "full"};
	return (unsigned)v < G_N_ELEMENTS(names) ? names[v] : "?";
}
