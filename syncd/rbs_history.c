/* rbs_history.c — RBS pairs' fits from before an outage (rbs_history.h):
 * a table of peers, each one's pair history a syncd_history (history.h). */
#include "syncd/rbs_history.h"

#include <math.h>

#include "syncd/history.h"

struct rbs_history {
	guint max_peers;
	syncd_history_params p;
	GHashTable *peers; /* node -> syncd_history* */
};

rbs_history *rbs_history_new(guint max_pieces, guint max_peers, int64_t max_age_ns, int64_t every_ns)
{
	rbs_history *h = g_new0(rbs_history, 1);
	h->max_peers = max_peers;
	h->p = (syncd_history_params){max_pieces, max_age_ns, every_ns, 1.0};
	h->peers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)syncd_history_free);
	return h;
}

void rbs_history_free(rbs_history *h)
{
	if (!h)
		return;
	g_hash_table_destroy(h->peers);
	g_free(h);
}

/* The peer's history, made if there is room (NULL: none). */
static syncd_history *get(rbs_history *h, uint32_t peer)
{
	syncd_history *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
	if (!ph && h->p.max_pieces && g_hash_table_size(h->peers) < h->max_peers) {
		ph = syncd_history_new(&h->p);
		g_hash_table_insert(h->peers, GUINT_TO_POINTER(peer), ph);
	}
	return ph;
}

/* A pair's x is this node's cpu time: a piece ended (and ages from) its
 * data's end (history.h ages a piece from its updated_ns). */
static sync_conv ended(const sync_conv *c)
{
	sync_conv p = *c;
	p.updated_ns = c->xmax;
	return p;
}

void rbs_history_note(rbs_history *h, uint32_t peer, int64_t x_ns, int64_t y_ns, double se_ns)
{
	syncd_history *ph = isfinite(se_ns) && se_ns > 0 ? get(h, peer) : NULL;
	if (ph)
		syncd_history_note(ph, x_ns, y_ns, se_ns, x_ns);
}

gboolean rbs_history_close(rbs_history *h, uint32_t peer, const sync_conv *c, double fit_q2)
{
	if (!h->p.max_pieces || c->n < 3 || !(c->slope > 0) || !(fit_q2 >= 0) || !isfinite(fit_q2))
		return FALSE;
	syncd_history *ph = get(h, peer);
	sync_conv p = ended(c);
	return ph && syncd_history_close(ph, &p, fit_q2, FALSE);
}

gboolean rbs_history_keep(rbs_history *h, uint32_t peer, const sync_conv *c, uint32_t min_n, double fit_q2)
{
	if (!h->p.every_ns || c->n < min_n)
		return FALSE;
	syncd_history *ph = get(h, peer);
	sync_conv p = ended(c);
	return ph && syncd_history_keep(ph, &p, min_n, fit_q2);
}

size_t rbs_history_entries(const rbs_history *h, uint32_t self, uint32_t peer, int64_t current_xmin, GArray *out)
{
	const syncd_history *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
	return ph ? syncd_history_entries(ph, sync_clock_cpu(self), sync_clock_cpu(peer), current_xmin, out) : 0;
}

guint rbs_history_expire(rbs_history *h, int64_t now_ns)
{
	guint gone = 0;
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, h->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		gone += syncd_history_expire(v, now_ns);
		/* Its line's samples stay while it is noted (they measure the
		 * wander the next piece gets); a peer gone for max_age goes. */
		if (syncd_history_idle(v, now_ns))
			g_hash_table_iter_remove(&it);
	}
	return gone;
}

guint rbs_history_count(const rbs_history *h, guint *peers)
{
	guint n = 0, with = 0;
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, h->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		n += syncd_history_count(v);
		with += syncd_history_count(v) > 0;
	}
	if (peers)
		*peers = with;
	return n;
}

static gint cmp_u32(gconstpointer a, gconstpointer b)
{
	uint32_t p = *(const uint32_t *)a, q = *(const uint32_t *)b;
	return p < q ? -1 : p > q;
}

/* The peers with a history, in increasing order (g_array_free it). */
static GArray *sorted_peers(const rbs_history *h)
{
	GArray *nodes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, h->peers);
	while (g_hash_table_iter_next(&it, &k, NULL)) {
		uint32_t n = GPOINTER_TO_UINT(k);
		g_array_append_val(nodes, n);
	}
	g_array_sort(nodes, cmp_u32);
	return nodes;
}

int rbs_history_restore(rbs_history *h, uint32_t peer, const sync_conv *pieces, size_t n, int64_t now_ns,
			const char **why)
{
	syncd_history *ph = get(h, peer);
	if (!ph)
		return 0;
	int rc = syncd_history_restore(ph, pieces, n, why);
	if (rc > 0)
		syncd_history_expire(ph, now_ns);
	int kept = (int)syncd_history_count(ph);
	if (!kept && syncd_history_idle(ph, now_ns))
		g_hash_table_remove(h->peers, GUINT_TO_POINTER(peer));
	return rc < 0 ? rc : kept;
}

size_t rbs_history_export(const rbs_history *h, uint32_t self,
			  gboolean (*current)(void *user, uint32_t peer, sync_conv *c, double *fit_q2), void *user,
			  history_store *out)
{
	size_t total = 0;
	GArray *nodes = sorted_peers(h);
	GArray *pieces = g_array_new(FALSE, FALSE, sizeof(sync_conv));
	for (guint i = 0; i < nodes->len; i++) {
		uint32_t peer = g_array_index(nodes, uint32_t, i);
		const syncd_history *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
		sync_conv c;
		double q2 = 0;
		gboolean cur = current && current(user, peer, &c, &q2);
		if (cur)
			c = ended(&c);
		g_array_set_size(pieces, 0);
		size_t n = syncd_history_export(ph, cur ? &c : NULL, q2, pieces);
		history_store_add(out, HISTORY_STORE_RBS, sync_clock_cpu(self), sync_clock_cpu(peer), SYNC_FIT_MEAN, 1.0,
				  syncd_history_unit(ph), (const sync_conv *)(void *)pieces->data, n);
		total += n;
	}
	g_array_free(pieces, TRUE);
	g_array_free(nodes, TRUE);
	return total;
}

void rbs_history_describe(const rbs_history *h, int64_t now_ns, int64_t (*current_xmin)(void *user, uint32_t peer),
			  void *user, GString *out)
{
	GArray *nodes = sorted_peers(h);
	for (guint i = 0; i < nodes->len; i++) {
		uint32_t peer = g_array_index(nodes, uint32_t, i);
		const syncd_history *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
		if (!syncd_history_count(ph))
			continue;
		g_string_append_printf(out, "  history: node%u", peer);
		syncd_history_describe(ph, now_ns, current_xmin ? current_xmin(user, peer) : INT64_MIN, out);
		g_string_append_c(out, '\n');
	}
	g_array_free(nodes, TRUE);
}
