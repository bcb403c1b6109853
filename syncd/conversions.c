/* conversions.c — the node's list of conversions (see conversions.h). */
#include "syncd/conversions.h"

static gboolean is_realtime(const sync_ticker_entry *e)
{
	return e->from.kind == SYNC_KIND_REALTIME || e->to.kind == SYNC_KIND_REALTIME;
}

GArray *syncd_conversions(syncd_pairs *pairs, const syncd_root *root, rbs_core *core, const rbs_mesh *mesh,
			  syncd_conv_set set, int64_t now_ns)
{
	uint32_t me = syncd_root_self(root);
	GArray *a = g_array_new(FALSE, FALSE, sizeof(syncd_conversion));
	size_t np;
	sync_ticker_entry *pe = syncd_pairs_entries(pairs, &np);
	for (size_t i = 0; i < np; i++) {
		if (set == SYNCD_CONV_SHAREABLE && is_realtime(&pe[i]))
			continue;
		syncd_conversion c = {pe[i], me, 0, now_ns - pe[i].conv.updated_ns};
		g_array_append_val(a, c);
	}
	g_free(pe);
	syncd_conversion g = {.origin = me};
	if (syncd_root_definition(root, &g.e)) /* the root affirms it: age 0 */
		g_array_append_val(a, g);
	if (core) {
		GArray *own = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
		rbs_core_entries(core, own);
		for (guint i = 0; i < own->len; i++) {
			sync_ticker_entry *te = &g_array_index(own, sync_ticker_entry, i);
			syncd_conversion c = {*te, me, 0, now_ns - te->conv.updated_ns};
			g_array_append_val(a, c);
		}
		g_array_free(own, TRUE);
	}
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
