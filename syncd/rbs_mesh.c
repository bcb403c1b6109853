/* rbs_mesh.c — learned conversions, node liveness, root rule (see rbs_mesh.h). */
#include "syncd/rbs_mesh.h"

#include <stdio.h>

typedef struct {
	uint32_t origin;
	uint32_t hops;      /* advertisements crossed to reach us: the fewest of the recent copies */
	int64_t hops_ns;    /* our cpu ns of the last copy that came that few hops */
	int64_t updated_ns; /* our cpu ns */
	sync_clock_id from, to;
	sync_conv conv;
} edge_rec;

typedef struct {
	int64_t seen_ns; /* our cpu ns of the freshest news */
	uint32_t hops;   /* 1 = heard directly: the fewest of the recent news */
	int64_t hops_ns; /* our cpu ns of the last news that came that few hops */
} news_rec;

struct rbs_mesh {
	rbs_mesh_cfg cfg;
	GHashTable *edges; /* pair key (char*) -> edge_rec* */
	GHashTable *news;  /* node -> news_rec* */
};

char *rbs_mesh_pair_key(sync_clock_id a, sync_clock_id b)
{
	/* Order the two ends so {a, b} and {b, a} give one key. */
	uint64_t ka = (uint64_t)a.node << 32 | (uint64_t)a.kind << 16 | a.index;
	uint64_t kb = (uint64_t)b.node << 32 | (uint64_t)b.kind << 16 | b.index;
	if (ka > kb) {
		uint64_t t = ka;
		ka = kb;
		kb = t;
	}
	return g_strdup_printf("%016" G_GINT64_MODIFIER "x-%016" G_GINT64_MODIFIER "x", ka, kb);
}

rbs_mesh *rbs_mesh_new(const rbs_mesh_cfg *cfg)
{
	rbs_mesh *m = g_new0(rbs_mesh, 1);
	m->cfg = *cfg;
	m->edges = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	m->news = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	return m;
}

void rbs_mesh_free(rbs_mesh *m)
{
	if (!m)
		return;
	g_hash_table_destroy(m->edges);
	g_hash_table_destroy(m->news);
	g_free(m);
}

/* How long a hop count stands against copies that came further: a relay's
 * age leaves out its transit, so news of one broadcast heard by all
 * arrives "fresher" second-hand, and the freshest copy's hop count would
 * overstate the distance (and scoped forwarding, rbs.c, would stop the
 * copy short).  So the fewest hops of the copies seen within this window
 * count; past it, the topology may have changed and any copy resets it. */
static int64_t hops_window(const rbs_mesh *m)
{
	return m->cfg.node_timeout_ns / 3;
}

/* Keep the fewest hops of recent copies (see hops_window); `at` is our cpu
 * ns of this copy's news. */
static void fewest_hops(const rbs_mesh *m, uint32_t *hops, int64_t *hops_ns, uint32_t h, int64_t at)
{
	int64_t w = hops_window(m);
	if (*hops_ns == INT64_MIN || at - *hops_ns > w || (h < *hops && *hops_ns - at <= w)) {
		*hops = h;
		*hops_ns = at;
	} else if (h == *hops && at > *hops_ns) {
		*hops_ns = at;
	}
}

static void news(rbs_mesh *m, uint32_t node, int64_t seen, uint32_t hops)
{
	if (node == m->cfg.self)
		return;
	news_rec *r = g_hash_table_lookup(m->news, GUINT_TO_POINTER(node));
	if (!r) {
		r = g_new0(news_rec, 1);
		r->seen_ns = INT64_MIN;
		r->hops = UINT32_MAX;
		r->hops_ns = INT64_MIN;
		g_hash_table_insert(m->news, GUINT_TO_POINTER(node), r);
	}
	fewest_hops(m, &r->hops, &r->hops_ns, hops, seen);
	if (seen > r->seen_ns)
		r->seen_ns = seen;
}

void rbs_mesh_heard(rbs_mesh *m, uint32_t node, int64_t now_ns)
{
	news(m, node, now_ns, 1);
}

int rbs_mesh_merge(rbs_mesh *m, const rbs_packet *adv, int64_t now_ns)
{
	int changed = 0;
	for (size_t i = 0; i < adv->n_nodes; i++)
		news(m, adv->nodes[i].node, now_ns - adv->nodes[i].age_ns, adv->nodes[i].hops + 1);
	for (size_t i = 0; i < adv->n_edges; i++) {
		const rbs_edge *e = &adv->edges[i];
		if (e->origin == m->cfg.self || (uint32_t)e->hops + 1 > m->cfg.max_hops)
			continue;
		int64_t upd = now_ns - e->age_ns;
		char *k = rbs_mesh_pair_key(e->from, e->to);
		edge_rec *r = g_hash_table_lookup(m->edges, k);
		if (r) {
			g_free(k);
			/* The fewest hops of recent copies (hops_window) whether
			 * or not this one is the freshest; the freshest carries
			 * the conversion. */
			fewest_hops(m, &r->hops, &r->hops_ns, (uint32_t)e->hops + 1, upd);
			if (r->updated_ns >= upd)
				continue;
		} else {
			r = g_new0(edge_rec, 1);
			g_hash_table_insert(m->edges, k, r);
			r->hops = (uint32_t)e->hops + 1;
			r->hops_ns = upd;
		}
		r->origin = e->origin;
		r->updated_ns = upd;
		r->from = e->from;
		r->to = e->to;
		r->conv = e->conv;
		r->conv.updated_ns = upd;
		changed++;
	}
	return changed;
}

guint rbs_mesh_expire(rbs_mesh *m, int64_t now_ns)
{
	GHashTableIter it;
	gpointer v;
	guint gone = 0;
	g_hash_table_iter_init(&it, m->edges);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		edge_rec *r = v;
		if (now_ns - r->updated_ns > m->cfg.edge_expire_ns) {
			g_hash_table_iter_remove(&it);
			gone++;
		}
	}
	/* News is kept a while past the timeout so the status shows who died. */
	g_hash_table_iter_init(&it, m->news);
	while (g_hash_table_iter_next(&it, NULL, &v))
		if (now_ns - ((news_rec *)v)->seen_ns > 10 * m->cfg.node_timeout_ns)
			g_hash_table_iter_remove(&it);
	return gone;
}

gboolean rbs_mesh_alive(const rbs_mesh *m, uint32_t node, int64_t now_ns)
{
	if (node == m->cfg.self)
		return TRUE;
	news_rec *r = g_hash_table_lookup(m->news, GUINT_TO_POINTER(node));
	return r && now_ns - r->seen_ns <= m->cfg.node_timeout_ns;
}

uint32_t rbs_mesh_root(const rbs_mesh *m, int64_t preferred, int64_t now_ns)
{
	if (preferred >= 0 && rbs_mesh_alive(m, (uint32_t)preferred, now_ns))
		return (uint32_t)preferred;
	uint32_t best = m->cfg.self;
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, m->news);
	while (g_hash_table_iter_next(&it, &k, NULL)) {
		uint32_t n = GPOINTER_TO_UINT(k);
		if (n < best && rbs_mesh_alive(m, n, now_ns))
			best = n;
	}
	return best;
}

uint32_t rbs_mesh_lowest_definer(const rbs_mesh *m, int64_t now_ns)
{
	uint32_t best = RBS_NO_NODE;
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, m->edges);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		const edge_rec *r = v;
		const sync_clock_id *c = r->to.kind == SYNC_KIND_GLOBAL ? &r->from : r->from.kind == SYNC_KIND_GLOBAL ? &r->to
														      : NULL;
		if (c && c->kind == SYNC_KIND_CPU && c->node != m->cfg.self && c->node < best && rbs_mesh_alive(m, c->node, now_ns))
			best = c->node;
	}
	return best;
}

static gboolean kept(uint32_t node, const uint32_t *keep, size_t n_keep)
{
	for (size_t i = 0; i < n_keep; i++)
		if (keep[i] == node)
			return TRUE;
	return FALSE;
}

rbs_node_news *rbs_mesh_news(const rbs_mesh *m, int64_t now_ns, uint32_t scope, const uint32_t *keep, size_t n_keep,
			     size_t *n)
{
	rbs_node_news *out = g_new(rbs_node_news, g_hash_table_size(m->news) + 1);
	size_t k = 0;
	out[k++] = (rbs_node_news){m->cfg.self, 0, 0};
	GHashTableIter it;
	gpointer key, v;
	g_hash_table_iter_init(&it, m->news);
	while (g_hash_table_iter_next(&it, &key, &v)) {
		news_rec *r = v;
		uint32_t node = GPOINTER_TO_UINT(key);
		if (now_ns - r->seen_ns > m->cfg.node_timeout_ns)
			continue;
		/* The fewest hops of the recent news (fewest_hops): a node we
		 * hear ourselves is our neighbour (one hop) even when a relayed
		 * news of it looks fresher.  Neighbours' hop-1 lists decide who
		 * beacons ([rbs] references, rbs_core_beacons). */
		if (scope && r->hops > scope && !kept(node, keep, n_keep))
			continue;
		out[k++] = (rbs_node_news){node, r->hops, now_ns - r->seen_ns < 0 ? 0 : now_ns - r->seen_ns};
	}
	*n = k;
	return out;
}

size_t rbs_mesh_entries(const rbs_mesh *m, uint32_t root, GHashTable *skip, GArray *out, GArray *origins,
			GArray *hops)
{
	GHashTableIter it;
	gpointer k, v;
	size_t n = 0;
	g_hash_table_iter_init(&it, m->edges);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		edge_rec *r = v;
		if (skip && g_hash_table_contains(skip, k))
			continue;
		/* A global edge defines global time only for the current root. */
		if ((r->to.kind == SYNC_KIND_GLOBAL && r->from.node != root) ||
		    (r->from.kind == SYNC_KIND_GLOBAL && r->to.node != root))
			continue;
		sync_ticker_entry e = {r->from, r->to, r->conv};
		g_array_append_val(out, e);
		if (origins)
			g_array_append_val(origins, r->origin);
		if (hops)
			g_array_append_val(hops, r->hops);
		n++;
	}
	return n;
}

guint rbs_mesh_n_edges(const rbs_mesh *m)
{
	return g_hash_table_size(m->edges);
}

void rbs_mesh_describe(const rbs_mesh *m, int64_t now_ns, GString *out)
{
	GHashTableIter it;
	gpointer k, v;
	g_string_append_printf(out, "nodes known: %u\n", g_hash_table_size(m->news));
	g_hash_table_iter_init(&it, m->news);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		news_rec *r = v;
		g_string_append_printf(out, "  node%u news=%.3fs ago hops=%u %s\n", GPOINTER_TO_UINT(k),
				       (double)(now_ns - r->seen_ns) * 1e-9, r->hops,
				       rbs_mesh_alive(m, GPOINTER_TO_UINT(k), now_ns) ? "alive" : "dead");
	}
	g_string_append_printf(out, "learned conversions: %u\n", g_hash_table_size(m->edges));
	g_hash_table_iter_init(&it, m->edges);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		edge_rec *r = v;
		char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
		g_string_append_printf(out, "  %s -> %s origin=node%u hops=%u age=%.3fs n=%u rms=%.4g\n",
				       sync_clock_format(r->from, a, sizeof a), sync_clock_format(r->to, b, sizeof b),
				       r->origin, r->hops, (double)(now_ns - r->updated_ns) * 1e-9, r->conv.n, r->conv.rms);
	}
}
