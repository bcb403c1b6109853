/* conversions.c — the node's list of conversions (see conversions.h). */
#include "syncd/conversions.h"

static gboolean is_realtime(const sync_ticker_entry *e)
{
	return e->from.kind == SYNC_KIND_REALTIME || e->to.kind == SYNC_KIND_REALTIME;
}

/* This node's cpu -> utc from its realtime fit e (cpu <-> realtime, either
 * way) when its realtime clock is disciplined (steer.h); FALSE otherwise. */
static gboolean utc_of(const syncd_root *root, const sync_ticker_entry *e, uint32_t me, sync_ticker_entry *out)
{
	double est;
	if (!syncd_root_utc(root, &est))
		return FALSE;
	sync_conv c;
	if (sync_clock_equal(e->from, sync_clock_cpu(me)) && sync_clock_equal(e->to, sync_clock_realtime(me)))
		c = e->conv;
	else if (sync_clock_equal(e->to, sync_clock_cpu(me)) && sync_clock_equal(e->from, sync_clock_realtime(me)))
		sync_conv_reverse(&e->conv, &c);
	else
		return FALSE;
	*out = (sync_ticker_entry){sync_clock_cpu(me), sync_clock_utc(), syncd_steer_utc_conv(&c, est)};
	return TRUE;
}

static gboolean is_definition(const sync_ticker_entry *e, uint32_t root)
{
	return e->to.kind == SYNC_KIND_GLOBAL && sync_clock_equal(e->from, sync_clock_cpu(root));
}

/* On the ticker the definition of global is the timescale's recent
 * segments (timescale.h), so that past times convert through the segment
 * in force then; a definition newer than the kept history follows them. */
static void expand_definition(GArray *a, const syncd_root *root)
{
	uint32_t rn = syncd_root_node(root);
	const syncd_timescale *ts = syncd_root_timescale(root);
	const sync_conv *last = syncd_timescale_current(ts);
	if (!last || syncd_timescale_root(ts) != rn)
		return;
	for (guint i = 0; i < a->len; i++) {
		syncd_conversion *c = &g_array_index(a, syncd_conversion, i);
		if (!is_definition(&c->e, rn))
			continue;
		syncd_conversion d = *c;
		g_array_remove_index(a, i);
		sync_ticker_entry seg[SYNCD_TIMESCALE_KEEP];
		size_t n = syncd_timescale_entries(ts, seg, SYNCD_TIMESCALE_KEEP);
		for (size_t k = 0; k < n; k++) {
			syncd_conversion s = d;
			s.e = seg[k];
			g_array_insert_val(a, i + k, s);
		}
		int64_t start = d.e.conv.xmin == INT64_MIN ? d.e.conv.x0 : d.e.conv.xmin;
		if (start > last->xmin) {
			d.e.conv.xmin = start;
			g_array_insert_val(a, i + n, d);
		}
		return;
	}
}

/* Append the entries `get` gives of core to a, as this node's own. */
static void append_own(GArray *a, rbs_core *core, size_t (*get)(rbs_core *, GArray *), uint32_t me, int64_t now_ns)
{
	GArray *own = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	get(core, own);
	for (guint i = 0; i < own->len; i++) {
		sync_ticker_entry *te = &g_array_index(own, sync_ticker_entry, i);
		syncd_conversion c = {*te, me, 0, now_ns - te->conv.updated_ns};
		g_array_append_val(a, c);
	}
	g_array_free(own, TRUE);
}

GArray *syncd_conversions(syncd_pairs *pairs, const syncd_root *root, rbs_core *core, const rbs_mesh *mesh,
			  syncd_conv_set set, int64_t now_ns)
{
	uint32_t me = syncd_root_self(root);
	GArray *a = g_array_new(FALSE, FALSE, sizeof(syncd_conversion));
	size_t np;
	sync_ticker_entry *pe = syncd_pairs_entries(pairs, &np);
	for (size_t i = 0; i < np; i++) {
		syncd_conversion u = {.origin = me, .age_ns = now_ns - pe[i].conv.updated_ns};
		if (utc_of(root, &pe[i], me, &u.e))
			g_array_append_val(a, u);
		if (set == SYNCD_CONV_SHAREABLE && is_realtime(&pe[i]))
			continue;
		syncd_conversion c = {pe[i], me, 0, now_ns - pe[i].conv.updated_ns};
		g_array_append_val(a, c);
	}
	g_free(pe);
	syncd_conversion g = {.origin = me};
	if (syncd_root_definition(root, &g.e)) /* the root affirms it: age 0 */
		g_array_append_val(a, g);
	if (core)
		append_own(a, core, rbs_core_entries, me, now_ns);
	if (mesh) {
		/* Local knowledge first; the network adds only pairs we lack. */
		GHashTable *have = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < a->len; i++) {
			const sync_ticker_entry *x = &g_array_index(a, syncd_conversion, i).e;
			g_hash_table_add(have, rbs_mesh_pair_key(x->from, x->to));
		}
		GArray *learned = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
		GArray *org = g_array_new(FALSE, FALSE, sizeof(guint32));
		GArray *hop = g_array_new(FALSE, FALSE, sizeof(guint32));
		rbs_mesh_entries(mesh, syncd_root_node(root), have, learned, org, hop);
		for (guint i = 0; i < learned->len; i++) {
			sync_ticker_entry *te = &g_array_index(learned, sync_ticker_entry, i);
			if (set == SYNCD_CONV_SHAREABLE && is_realtime(te))
				continue;
			int64_t age_ns = now_ns - te->conv.updated_ns;
			syncd_conversion c = {*te, g_array_index(org, guint32, i), g_array_index(hop, guint32, i),
					      age_ns < 0 ? 0 : age_ns};
			g_array_append_val(a, c);
		}
		g_array_free(learned, TRUE);
		g_array_free(org, TRUE);
		g_array_free(hop, TRUE);
		g_hash_table_destroy(have);
	}
	if (set == SYNCD_CONV_ALL) { /* the pairs' history: the ticker's only (the two ends hold it) */
		GArray *own = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
		syncd_pairs_history_entries(pairs, own);
		for (guint i = 0; i < own->len; i++) {
			sync_ticker_entry *te = &g_array_index(own, sync_ticker_entry, i);
			syncd_conversion c = {*te, me, 0, now_ns - te->conv.updated_ns};
			g_array_append_val(a, c);
		}
		g_array_free(own, TRUE);
	}
	if (set == SYNCD_CONV_ALL && core)
		append_own(a, core, rbs_core_history_entries, me, now_ns);
	if (set == SYNCD_CONV_ALL && syncd_root_have_global(root))
		expand_definition(a, root);
	return a;
}

sync_ticker_entry *syncd_conversions_ticker(syncd_pairs *pairs, const syncd_root *root, rbs_core *core,
					    const rbs_mesh *mesh, int64_t now_ns, size_t *n)
{
	GArray *a = syncd_conversions(pairs, root, core, mesh, SYNCD_CONV_ALL, now_ns);
	sync_ticker_entry *e = g_new(sync_ticker_entry, a->len + 1);
	for (guint i = 0; i < a->len; i++)
		e[i] = g_array_index(a, syncd_conversion, i).e;
	*n = a->len;
	g_array_free(a, TRUE);
	return e;
}
