/* graph.c — clocks, conversions, minimum-variance paths and the path cache
 * (see graph.h and docs/clocks.md). */
#include "libsync/graph.h"

#include "libsync/bridge.h"
#include "libsync/graph_edge.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SIZE 64                  /* direct-mapped path cache entries (power of 2) */
#define AUDIO_NS_DEFAULT (1e9 / 48000) /* ns per frame when no edge tells the rate */

typedef struct {
	sync_clock_id id;
	uint64_t key;
	double ns_per_unit; /* ns per unit of this clock (1 for ns clocks) */
} vertex;


/* The last path found between two clocks, for conversions at times where
 * every edge on it is at or after its current fit's data (route): a past
 * time, through history or before a fit, is searched afresh every time,
 * since the best path then is not the best path now. */
typedef struct {
	uint64_t kfrom, kto;             /* clock keys */
	uint64_t gen;                    /* graph generation it was found in (0 = empty) */
	uint32_t n;                      /* hops */
	uint32_t e[SYNC_GRAPH_MAX_HOPS]; /* directed edge indices */
} cached_path;

struct sync_graph {
	sync_graph_params p;
	vertex *v;
	size_t nv, capv;
	dedge *e; /* directed edges; 2k and 2k+1 are the two ways of one conversion */
	size_t ne, cape;
	uint64_t gen;
	/* Dijkstra scratch, capacity capv */
	double *dist, *pslope;
	sync_tval *val;
	int32_t *prev;
	unsigned char *done;
	cached_path cache[CACHE_SIZE];
	uint32_t past_path[SYNC_GRAPH_MAX_HOPS]; /* route's last path for a past time (not cached) */
	int64_t reach_ns;                        /* sync_graph_convert_past's reach, for the call in progress (0 otherwise) */
};

void sync_graph_params_default(sync_graph_params *p)
{
	p->tolerance_ns = 60000000000LL;
	p->max_age_ns = 120000000000LL;
}

sync_graph *sync_graph_new(const sync_graph_params *p)
{
	sync_graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->p = *p;
	g->gen = 1;
	return g;
}

static void free_scratch(sync_graph *g)
{
	free(g->dist);
	free(g->pslope);
	free(g->val);
	free(g->prev);
	free(g->done);
}

/* Drop the segments and history of the conversion at directed edges k
 * and k ^ 1. */
static void drop_segments(sync_graph *g, size_t k)
{
	for (size_t j = k & ~(size_t)1; j <= (k | 1); j++) {
		free(g->e[j].seg);
		g->e[j].seg = NULL;
		g->e[j].nseg = 0;
		free(g->e[j].hist);
		g->e[j].hist = NULL;
		g->e[j].nhist = 0;
	}
}

void sync_graph_free(sync_graph *g)
{
	if (!g)
		return;
	for (size_t k = 0; k < g->ne; k += 2)
		drop_segments(g, k);
	free_scratch(g);
	free(g->v);
	free(g->e);
	free(g);
}

static uint64_t key_of(sync_clock_id id)
{
	return (uint64_t)id.node << 32 | (uint64_t)id.kind << 16 | id.index;
}

static long find_vertex(const sync_graph *g, uint64_t key)
{
	for (size_t i = 0; i < g->nv; i++)
		if (g->v[i].key == key)
			return (long)i;
	return -1;
}

static long add_vertex(sync_graph *g, sync_clock_id id)
{
	long i = find_vertex(g, key_of(id));
	if (i >= 0)
		return i;
	if (g->nv == g->capv) {
		size_t cap = g->capv ? 2 * g->capv : 8;
		vertex *v = realloc(g->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		g->v = v;
		free_scratch(g);
		g->dist = malloc(cap * sizeof *g->dist);
		g->pslope = malloc(cap * sizeof *g->pslope);
		g->val = malloc(cap * sizeof *g->val);
		g->prev = malloc(cap * sizeof *g->prev);
		g->done = malloc(cap);
		if (!g->dist || !g->pslope || !g->val || !g->prev || !g->done) {
			free_scratch(g);
			g->dist = g->pslope = NULL;
			g->val = NULL;
			g->prev = NULL;
			g->done = NULL;
			return -ENOMEM;
		}
		g->capv = cap;
	}
	g->v[g->nv].id = id;
	g->v[g->nv].key = key_of(id);
	g->v[g->nv].ns_per_unit = id.kind == SYNC_KIND_AUDIO ? AUDIO_NS_DEFAULT : 1.0;
	return (long)g->nv++;
}

static int64_t sat_add(int64_t a, double b)
{
	if (b >= 9.2e18)
		return INT64_MAX;
	if (b <= -9.2e18)
		return INT64_MIN;
	int64_t r;
	if (__builtin_add_overflow(a, (int64_t)b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Audio clocks learn their ns per frame from an edge to an ns clock; then
 * every edge's accepted range is its data widened by the tolerance. */
static void refresh(sync_graph *g)
{
	for (size_t k = 0; k < g->ne; k++) {
		dedge *d = &g->e[k];
		vertex *f = &g->v[d->from], *t = &g->v[d->to];
		if (f->id.kind == SYNC_KIND_AUDIO && t->id.kind != SYNC_KIND_AUDIO)
			f->ns_per_unit = fabs(d->c.slope);
	}
	for (size_t k = 0; k < g->ne; k++) {
		dedge *d = &g->e[k];
		if (d->c.flags & SYNC_CONV_FIXED) {
			d->lo = INT64_MIN;
			d->hi = INT64_MAX;
			continue;
		}
		double tol = (double)g->p.tolerance_ns / g->v[d->from].ns_per_unit;
		d->lo = sat_add(d->nhist ? d->hist[0].xmin : d->c.xmin, -tol);
		d->hi = sat_add(d->c.xmax, tol);
	}
	g->gen++;
}

static long find_edge(const sync_graph *g, uint32_t a, uint32_t b)
{
	for (size_t k = 0; k < g->ne; k++)
		if (g->e[k].from == a && g->e[k].to == b)
			return (long)k;
	return -1;
}

int sync_graph_set(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *c, char *why, size_t len)
{
	char na[SYNC_CLOCK_NAME_MAX], nb[SYNC_CLOCK_NAME_MAX];
	const char *bad;
	sync_clock_format(a, na, sizeof na);
	sync_clock_format(b, nb, sizeof nb);
	if (sync_clock_equal(a, b)) {
		if (why)
			snprintf(why, len, "conversion from %s to itself", na);
		return -EINVAL;
	}
	sync_conv rev;
	if (sync_conv_check(c, &bad) < 0 || sync_conv_reverse(c, &rev) < 0) {
		if (why)
			snprintf(why, len, "conversion %s->%s unusable: %s", na, nb, c->slope == 0 ? "zero slope" : bad);
		return -EINVAL;
	}
	long ia = add_vertex(g, a), ib = ia < 0 ? ia : add_vertex(g, b);
	if (ia < 0 || ib < 0) {
		if (why)
			snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	long k = find_edge(g, (uint32_t)ia, (uint32_t)ib);
	if (k < 0) {
		if (g->ne + 2 > g->cape) {
			size_t cap = g->cape ? 2 * g->cape : 16;
			dedge *e = realloc(g->e, cap * sizeof *e);
			if (!e) {
				if (why)
					snprintf(why, len, "out of memory");
				return -ENOMEM;
			}
			g->e = e;
			g->cape = cap;
		}
		k = (long)g->ne;
		g->ne += 2;
		g->e[k].seg = g->e[k ^ 1].seg = NULL;
		g->e[k].nseg = g->e[k ^ 1].nseg = 0;
		g->e[k].hist = g->e[k ^ 1].hist = NULL;
		g->e[k].nhist = g->e[k ^ 1].nhist = 0;
	}
	drop_segments(g, (size_t)k);
	/* Directed edges k and k^1 are the two ways of one conversion. */
	g->e[k].from = (uint32_t)ia;
	g->e[k].to = (uint32_t)ib;
	g->e[k].c = *c;
	g->e[k ^ 1].from = (uint32_t)ib;
	g->e[k ^ 1].to = (uint32_t)ia;
	g->e[k ^ 1].c = rev;
	refresh(g);
	return 0;
}

int sync_graph_set_segments(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *segs, size_t n,
			    char *why, size_t len)
{
	char na[SYNC_CLOCK_NAME_MAX], nb[SYNC_CLOCK_NAME_MAX];
	const char *bad = NULL;
	sync_clock_format(a, na, sizeof na);
	sync_clock_format(b, nb, sizeof nb);
	if (n == 0 || n > UINT32_MAX)
		bad = "no segments";
	for (size_t k = 0; !bad && k < n; k++) {
		if (!(segs[k].flags & SYNC_CONV_FIXED))
			bad = "a segment is not an exact (FIXED) conversion";
		else if (!(segs[k].slope > 0.0))
			bad = "a segment's slope is not positive (a timescale runs forwards)";
		else if (k && segs[k].xmin <= segs[k - 1].xmin)
			bad = "segments do not start in increasing order";
	}
	if (bad) {
		if (why)
			snprintf(why, len, "timescale %s->%s unusable: %s", na, nb, bad);
		return -EINVAL;
	}
	int rc = sync_graph_set(g, a, b, &segs[n - 1], why, len);
	if (rc < 0 || n == 1)
		return rc;
	long k = find_edge(g, (uint32_t)find_vertex(g, key_of(a)), (uint32_t)find_vertex(g, key_of(b)));
	sync_conv *fw = malloc(n * sizeof *fw), *bw = malloc(n * sizeof *bw);
	if (!fw || !bw) {
		free(fw);
		free(bw);
		sync_graph_remove(g, a, b);
		if (why)
			snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		fw[j] = segs[j];
		int bad = sync_conv_reverse(&segs[j], &bw[j]) < 0;
		if (!bad) {
			/* The reverse segment starts where the forward one
			 * does (after the one before: none at the end of
			 * time, where a ticker from the wire may put it). */
			bw[j].xmin = sync_conv_apply(&segs[j], sync_tval_of(segs[j].xmin)).i;
			if (j && bw[j].xmin <= bw[j - 1].xmin) {
				bad = bw[j - 1].xmin == INT64_MAX;
				bw[j].xmin = bad ? INT64_MAX : bw[j - 1].xmin + 1;
			}
		}
		if (bad) {
			free(fw);
			free(bw);
			sync_graph_remove(g, a, b);
			if (why)
				snprintf(why, len, "timescale %s->%s unusable: a segment cannot be reversed", na, nb);
			return -EINVAL;
		}
	}
	g->e[k].seg = fw;
	g->e[k].nseg = (uint32_t)n;
	g->e[k ^ 1].seg = bw;
	g->e[k ^ 1].nseg = (uint32_t)n;
	g->gen++;
	return 0;
}

int sync_graph_set_history(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *pieces, size_t n,
			   char *why, size_t len)
{
	char na[SYNC_CLOCK_NAME_MAX], nb[SYNC_CLOCK_NAME_MAX];
	sync_clock_format(a, na, sizeof na);
	sync_clock_format(b, nb, sizeof nb);
	long ia = find_vertex(g, key_of(a)), ib = find_vertex(g, key_of(b));
	long k = ia < 0 || ib < 0 ? -1 : find_edge(g, (uint32_t)ia, (uint32_t)ib);
	if (k < 0) {
		if (why)
			snprintf(why, len, "history of %s->%s: no current conversion between them", na, nb);
		return -ENOENT;
	}
	const char *bad = n == 0 || n > UINT32_MAX ? "no pieces" : NULL;
	const sync_conv *cur = &g->e[k].c;
	if (!bad && (cur->flags & SYNC_CONV_FIXED))
		bad = "the pair is an exact timescale";
	for (size_t j = 0; !bad && j < n; j++) {
		const char *r;
		if (!(pieces[j].flags & SYNC_CONV_PIECE) || (pieces[j].flags & SYNC_CONV_FIXED))
			bad = "an entry is not a history piece (SYNC_CONV_PIECE)";
		else if (sync_conv_check(&pieces[j], &r) < 0)
			bad = r;
		else if (j && pieces[j].xmin < pieces[j - 1].xmax)
			bad = "pieces overlap or are out of order";
		else if (!(pieces[j].slope > 0.0))
			bad = "a piece's slope is not positive";
	}
	if (!bad && pieces[n - 1].xmax > cur->xmin)
		bad = "the newest piece reaches into the current fit's data";
	if (bad) {
		if (why)
			snprintf(why, len, "history of %s->%s unusable: %s", na, nb, bad);
		return -EINVAL;
	}
	sync_conv *fw = malloc(n * sizeof *fw), *bw = malloc(n * sizeof *bw);
	if (!fw || !bw) {
		free(fw);
		free(bw);
		if (why)
			snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		fw[j] = pieces[j];
		sync_conv_reverse(&pieces[j], &bw[j]); /* cannot fail: slope > 0, checked */
		bw[j].wander = sync_bridge_q2_reverse(pieces[j].wander, pieces[j].slope);
	}
	/* k is the stored direction a -> b; its twin b -> a gets the reverse. */
	free(g->e[k].hist);
	free(g->e[k ^ 1].hist);
	g->e[k].hist = fw;
	g->e[k ^ 1].hist = bw;
	g->e[k].nhist = g->e[k ^ 1].nhist = (uint32_t)n;
	refresh(g);
	return 0;
}

int sync_graph_remove(sync_graph *g, sync_clock_id a, sync_clock_id b)
{
	long ia = find_vertex(g, key_of(a)), ib = find_vertex(g, key_of(b));
	long k = ia < 0 || ib < 0 ? -1 : find_edge(g, (uint32_t)ia, (uint32_t)ib);
	if (k < 0)
		return -ENOENT;
	k &= ~1L;
	drop_segments(g, (size_t)k);
	/* Move the last pair into the hole. */
	if ((size_t)k + 2 < g->ne) {
		g->e[k] = g->e[g->ne - 2];
		g->e[k + 1] = g->e[g->ne - 1];
	}
	g->ne -= 2;
	refresh(g);
	return 0;
}

void sync_graph_clear(sync_graph *g)
{
	for (size_t k = 0; k < g->ne; k += 2)
		drop_segments(g, k);
	g->nv = 0;
	g->ne = 0;
	g->gen++;
}

size_t sync_graph_nedges(const sync_graph *g)
{
	return g->ne / 2;
}

/* Whether x, before edge d's accepted range, lies within the past reach
 * of the conversion in progress (sync_graph_convert_past): before all its
 * data (history included) by at most the tolerance plus the reach. */
static int in_reach(const sync_graph *g, const dedge *d, int64_t x)
{
	if (g->reach_ns <= 0 || (d->c.flags & SYNC_CONV_FIXED))
		return 0;
	return x >= sat_add(d->lo, -(double)g->reach_ns / g->v[d->from].ns_per_unit);
}

/* Why edge d refuses x at now: 0 when it accepts, else the error and the
 * reason (only formatted when why != NULL). */
static int refuses(const sync_graph *g, const dedge *d, sync_tval x, int64_t now_ns, char *why, size_t len)
{
	int64_t age_ns;
	if (__builtin_sub_overflow(now_ns, d->c.updated_ns, &age_ns))
		age_ns = INT64_MAX;
	if (g->p.max_age_ns > 0 && !(d->c.flags & SYNC_CONV_FIXED) && age_ns > g->p.max_age_ns) {
		if (why) {
			char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
			snprintf(why, len, "%s->%s last updated %.0f s ago, beyond max age %.0f s",
				 sync_clock_format(g->v[d->from].id, a, sizeof a),
				 sync_clock_format(g->v[d->to].id, b, sizeof b), (double)age_ns * 1e-9,
				 (double)g->p.max_age_ns * 1e-9);
		}
		return -ESTALE;
	}
	if ((x.i < d->lo && !in_reach(g, d, x.i)) || x.i > d->hi) {
		if (why) {
			char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
			double out = sync_conv_outside(&d->c, x) * g->v[d->from].ns_per_unit * 1e-9;
			snprintf(why, len,
				 "x=%" PRId64 " on %s outside the validity of %s->%s by %.3f s "
				 "(data %" PRId64 "..%" PRId64 ", tolerance %.3f s)",
				 x.i, sync_clock_format(g->v[d->from].id, a, sizeof a), a,
				 sync_clock_format(g->v[d->to].id, b, sizeof b), out, d->c.xmin, d->c.xmax,
				 (double)g->p.tolerance_ns * 1e-9);
		}
		return -ERANGE;
	}
	return graph_edge_history_refuses(d, g->v[d->from].ns_per_unit, x, g->v[d->from].id, g->v[d->to].id, why, len);
}

/* Follow n directed edges from x: the composed value and variance; *past
 * (when not NULL) says whether some edge took x from before its current
 * fit (before_fit). */
static int eval_path(const sync_graph *g, const uint32_t *e, uint32_t n, sync_tval x, int64_t now_ns,
		     sync_graph_result *out, int *past, char *why, size_t len)
{
	double var = 0.0, q = 0.0; /* q: sum of (contribution^2 / dof) for Welch-Satterthwaite */
	uint32_t flags = 0;
	if (past)
		*past = 0;
	for (uint32_t k = 0; k < n; k++) {
		const dedge *d = &g->e[e[k]];
		int rc = refuses(g, d, x, now_ns, why, len);
		if (rc < 0)
			return rc;
		if (past && graph_edge_before_fit(d, x.i))
			*past = 1;
		sync_conv tmp;
		int bridged = 0;
		const sync_conv *c = graph_edge_conv_at(d, g->v[d->from].ns_per_unit, x, &tmp, &bridged);
		if (bridged)
			flags |= SYNC_GRAPH_BRIDGED;
		else if (x.i < (d->nseg ? d->c : *c).xmin || x.i > (d->nseg ? d->c : *c).xmax)
			flags |= SYNC_GRAPH_EXTRAPOLATED; /* (a timescale's: as its last segment) */
		/* Earlier errors are carried on by this edge's slope. */
		double s2 = c->slope * c->slope, v = sync_conv_var(c, x);
		var = var * s2 + v;
		q = q * s2 * s2 + (v > 0.0 && !(c->flags & SYNC_CONV_FIXED) ? v * v / sync_conv_dof(c) : 0.0);
		x = sync_conv_apply(c, x);
	}
	out->value = x;
	out->var = var;
	out->dof = q > 0.0 ? var * var / q : INFINITY;
	out->hops = n;
	out->flags = flags;
	return 0;
}

/* Dijkstra from s on variance referred to s's units, honouring validity and
 * age when `strict`.  Writes the path to t into e[] (in order) and returns
 * its length, or -ENOLINK, -E2BIG. */
static int search(sync_graph *g, uint32_t s, uint32_t t, sync_tval x, int64_t now_ns, int strict,
		  uint32_t *e)
{
	for (size_t i = 0; i < g->nv; i++) {
		g->dist[i] = INFINITY;
		g->done[i] = 0;
		g->prev[i] = -1;
	}
	g->dist[s] = 0.0;
	g->pslope[s] = 1.0;
	g->val[s] = x;
	for (;;) {
		long u = -1;
		for (size_t i = 0; i < g->nv; i++)
			if (!g->done[i] && g->dist[i] < INFINITY && (u < 0 || g->dist[i] < g->dist[u]))
				u = (long)i;
		if (u < 0 || (uint32_t)u == t)
			break;
		g->done[u] = 1;
		for (size_t k = 0; k < g->ne; k++) {
			const dedge *d = &g->e[k];
			if (d->from != (uint32_t)u || g->done[d->to])
				continue;
			if (strict && refuses(g, d, g->val[u], now_ns, NULL, 0))
				continue;
			sync_conv tmp;
			int bridged = 0;
			const sync_conv *c = graph_edge_conv_at(d, g->v[d->from].ns_per_unit, g->val[u], &tmp, &bridged);
			double ps = g->pslope[u] * c->slope;
			double cost = g->dist[u] + sync_conv_var(c, g->val[u]) / (ps * ps);
			if (cost < g->dist[d->to]) {
				g->dist[d->to] = cost;
				g->pslope[d->to] = ps;
				g->val[d->to] = sync_conv_apply(c, g->val[u]);
				g->prev[d->to] = (int32_t)k;
			}
		}
	}
	if (!(g->dist[t] < INFINITY))
		return -ENOLINK;
	int n = 0;
	for (uint32_t v = t; v != s; v = g->e[g->prev[v]].from)
		n++;
	if (n > SYNC_GRAPH_MAX_HOPS)
		return -E2BIG;
	int k = n;
	for (uint32_t v = t; v != s; v = g->e[g->prev[v]].from)
		e[--k] = (uint32_t)g->prev[v];
	return n;
}

static cached_path *slot_of(sync_graph *g, uint64_t kf, uint64_t kt)
{
	uint64_t h = kf * 0x9E3779B97F4A7C15ULL ^ (kt + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
	return &g->cache[h >> 58 & (CACHE_SIZE - 1)];
}

/* The path for (from, to) at x: from the cache when it still accepts x
 * with every edge at or after its current fit, else searched (and cached
 * when that holds for x: a past time's best path, through one pair's
 * history rather than a fresher path that has none, is neither taken from
 * nor left in the cache).  Returns its length or a negative errno. */
static int route(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
		 sync_graph_result *out, const uint32_t **path, char *why, size_t len)
{
	uint64_t kf = key_of(from), kt = key_of(to);
	cached_path *cp = slot_of(g, kf, kt);
	int past = 0;
	if (cp->gen == g->gen && cp->kfrom == kf && cp->kto == kt &&
	    eval_path(g, cp->e, cp->n, x, now_ns, out, &past, NULL, 0) == 0 && !past) {
		*path = cp->e;
		return (int)cp->n;
	}
	char dummy[1];
	if (!why) {
		why = dummy;
		len = sizeof dummy;
	}
	char na[SYNC_CLOCK_NAME_MAX], nb[SYNC_CLOCK_NAME_MAX];
	sync_clock_format(from, na, sizeof na);
	sync_clock_format(to, nb, sizeof nb);
	long s = find_vertex(g, kf), t = find_vertex(g, kt);
	if (s < 0 || t < 0) {
		snprintf(why, len, "unknown clock %s (no conversion involves it)", s < 0 ? na : nb);
		return -ENOENT;
	}
	uint32_t e[SYNC_GRAPH_MAX_HOPS];
	int n = search(g, (uint32_t)s, (uint32_t)t, x, now_ns, 1, e);
	if (n == -ENOLINK) {
		/* Nothing usable: say whether no path exists at all or which edge
		 * of the best path refuses. */
		n = search(g, (uint32_t)s, (uint32_t)t, x, now_ns, 0, e);
		if (n == -ENOLINK) {
			snprintf(why, len, "no path from %s to %s", na, nb);
			return n;
		}
		/* n >= 0: evaluating that path below reports its refusal. */
	}
	if (n == -E2BIG) {
		snprintf(why, len, "path from %s to %s longer than %d hops", na, nb, SYNC_GRAPH_MAX_HOPS);
		return n;
	}
	int rc = eval_path(g, e, (uint32_t)n, x, now_ns, out, &past, why, len);
	if (rc < 0)
		return rc;
	if (past) {
		/* Not cached: the search's own copy is returned. */
		memcpy(g->past_path, e, (size_t)n * sizeof *e);
		*path = g->past_path;
		return n;
	}
	cp->kfrom = kf;
	cp->kto = kt;
	cp->gen = g->gen;
	cp->n = (uint32_t)n;
	memcpy(cp->e, e, (size_t)n * sizeof *e);
	*path = cp->e;
	return n;
}

int sync_graph_convert(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
		       sync_graph_result *out, char *why, size_t len)
{
	if (sync_clock_equal(from, to)) {
		out->value = x;
		out->var = 0.0;
		out->hops = 0;
		out->flags = 0;
		out->dof = INFINITY;
		return 0;
	}
	const uint32_t *path;
	int n = route(g, from, to, x, now_ns, out, &path, why, len);
	if (n < 0)
		return n;
	if (out->value.i == INT64_MAX || out->value.i == INT64_MIN) {
		/* sync_conv_apply saturates: say so rather than hand back a
		 * time 292 years away that is no conversion at all. */
		char a[SYNC_CLOCK_NAME_MAX];
		snprintf(why, len, "the result lies beyond the range of %s (int64: ±9.2e18 units)",
			 sync_clock_format(to, a, sizeof a));
		return -ERANGE;
	}
	return 0;
}

int sync_graph_path(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
		    sync_clock_id *ids, size_t max, char *why, size_t len)
{
	if (sync_clock_equal(from, to)) {
		if (max > 0)
			ids[0] = from;
		return 1;
	}
	const uint32_t *path;
	sync_graph_result r;
	int n = route(g, from, to, x, now_ns, &r, &path, why, len);
	if (n < 0)
		return n;
	if (max > 0)
		ids[0] = from;
	for (int k = 0; k < n && (size_t)k + 1 < max; k++)
		ids[k + 1] = g->v[g->e[path[k]].to].id;
	return n + 1;
}

int sync_graph_convert_past(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			    int64_t reach_ns, sync_graph_result *out, char *why, size_t len)
{
	g->reach_ns = reach_ns > 0 ? reach_ns : 0;
	int rc = sync_graph_convert(g, from, to, x, now_ns, out, why, len);
	g->reach_ns = 0;
	return rc;
}

int sync_graph_path_past(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			 int64_t reach_ns, sync_clock_id *ids, size_t max, char *why, size_t len)
{
	g->reach_ns = reach_ns > 0 ? reach_ns : 0;
	int rc = sync_graph_path(g, from, to, x, now_ns, ids, max, why, len);
	g->reach_ns = 0;
	return rc;
}
