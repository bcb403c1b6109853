/* advert_scope.c — scoped advertisements (see advert_scope.h). */
#include "syncd/advert_scope.h"

#include "libsync/graph.h"
#include "syncd/rbs_mesh.h"

GHashTable *syncd_scope_route(const GArray *conv, uint32_t self, int64_t now_ns, guint *len)
{
	GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	*len = 0;
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g = sync_graph_new(&gp);
	if (!g)
		return keys;
	char why[256];
	for (guint i = 0; i < conv->len; i++) {
		const sync_ticker_entry *e = &g_array_index(conv, syncd_conversion, i).e;
		/* An unusable conversion is left out here as libsync's clients
		 * leave it out of theirs. */
		(void)sync_graph_set(g, e->from, e->to, &e->conv, why, sizeof why);
	}
	sync_clock_id ids[SYNC_GRAPH_MAX_HOPS + 1];
	int n = sync_graph_path(g, sync_clock_cpu(self), sync_clock_global(), sync_tval_of(now_ns), now_ns, ids,
				G_N_ELEMENTS(ids), why, sizeof why);
	for (int i = 0; i + 1 < n && i + 1 < (int)G_N_ELEMENTS(ids); i++) {
		g_hash_table_add(keys, rbs_mesh_pair_key(ids[i], ids[i + 1]));
		++*len;
	}
	sync_graph_free(g);
	return keys;
}

gboolean syncd_scope_keep(const syncd_conversion *c, uint32_t hops, GHashTable *route)
{
	if (c->hops < hops)
		return TRUE;
	char *k = rbs_mesh_pair_key(c->e.from, c->e.to);
	gboolean on = route && g_hash_table_contains(route, k);
	g_free(k);
	return on;
}
