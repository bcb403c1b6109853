/* rbs_history.c — RBS pairs' fits from before an outage (rbs_history.h). */
#include "syncd/rbs_history.h"

#include <math.h>

typedef struct {
	uint32_t peer;
	GArray *pieces;        /* sync_conv, oldest first, flagged PIECE, wander = q2 */
	syncd_continuity line; /* the pair's line sampled, for its wander */
	int64_t q2_span_ns;    /* the newest piece's q2: over this much of the line (0: the fit's bound) */
} peer_hist;

struct rbs_history {
	guint max_pieces, max_peers;
	int64_t max_age_ns;
	int64_t every_ns;
	GHashTable *peers; /* node -> peer_hist* */
};

static void peer_hist_free(gpointer p)
{
	peer_hist *ph = p;
	g_array_free(ph->pieces, TRUE);
	g_free(ph);
}

rbs_history *rbs_history_new(guint max_pieces, guint max_peers, int64_t max_age_ns, int64_t every_ns)
{
	rbs_history *h = g_new0(rbs_history, 1);
	h->max_pieces = max_pieces;
	h->max_peers = max_peers;
	h->max_age_ns = max_age_ns;
	h->every_ns = every_ns;
	h->peers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, peer_hist_free);
	return h;
}

void rbs_history_free(rbs_history *h)
{
	if (!h)
		return;
	g_hash_table_destroy(h->peers);
	g_free(h);
}

/* The peer's record, made if there is room (NULL: none). */
static peer_hist *get(rbs_history *h, uint32_t peer)
{
	peer_hist *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
	if (!ph && h->max_pieces && g_hash_table_size(h->peers) < h->max_peers) {
		ph = g_new0(peer_hist, 1);
		ph->peer = peer;
		ph->pieces = g_array_new(FALSE, FALSE, sizeof(sync_conv));
		syncd_continuity_reset(&ph->line);
		g_hash_table_insert(h->peers, GUINT_TO_POINTER(peer), ph);
	}
	return ph;
}

void rbs_history_note(rbs_history *h, uint32_t peer, int64_t x_ns, int64_t y_ns, double se_ns)
{
	peer_hist *ph = isfinite(se_ns) && se_ns > 0 ? get(h, peer) : NULL;
	/* The pair's published fit may switch between its RBS and its
	 * sender-receiver one, whose newest observations differ: a sample
	 * before the newest is skipped, not a reason to start afresh. */
	if (ph && (!ph->line.n || x_ns > ph->line.x[(ph->line.head + ph->line.n - 1) % SYNCD_CONTINUITY_SAMPLES]))
		syncd_continuity_note(&ph->line, peer, x_ns, y_ns, se_ns);
}

gboolean rbs_history_close(rbs_history *h, uint32_t peer, const sync_conv *c, double fit_q2)
{
	if (!h->max_pieces || c->n < 3 || !(c->slope > 0) || !(fit_q2 >= 0) || !isfinite(fit_q2))
		return FALSE;
	peer_hist *ph = get(h, peer);
	if (!ph)
		return FALSE;
	int64_t span = 0, tau = 0;
	double q2 = syncd_continuity_q2(&ph->line, &span, &tau);
	ph->q2_span_ns = tau ? span : 0;
	if (!tau)
		q2 = fit_q2;
	/* A fit that began inside the last piece's data (it cannot, as the
	 * peer's fits start afresh after it fell silent, unless the clocks
	 * were reset) replaces it: pieces never overlap. */
	while (ph->pieces->len && g_array_index(ph->pieces, sync_conv, ph->pieces->len - 1).xmax > c->xmin)
		g_array_set_size(ph->pieces, ph->pieces->len - 1);
	sync_conv p = *c;
	p.flags = (p.flags & ~SYNC_CONV_FIXED) | SYNC_CONV_PIECE;
	p.wander = q2;
	g_array_append_val(ph->pieces, p);
	if (ph->pieces->len > h->max_pieces)
		g_array_remove_range(ph->pieces, 0, ph->pieces->len - h->max_pieces);
	return TRUE;
}

gboolean rbs_history_keep(rbs_history *h, uint32_t peer, const sync_conv *c, uint32_t min_n, double fit_q2)
{
	if (!h->every_ns || c->n < min_n)
		return FALSE;
	peer_hist *ph = get(h, peer);
	if (!ph)
		return FALSE;
	if (ph->pieces->len && c->xmin < g_array_index(ph->pieces, sync_conv, ph->pieces->len - 1).xmax + h->every_ns)
		return FALSE;
	return rbs_history_close(h, peer, c, fit_q2);
}

size_t rbs_history_entries(const rbs_history *h, uint32_t self, uint32_t peer, int64_t current_xmin, GArray *out)
{
	const peer_hist *ph = g_hash_table_lookup(h->peers, GUINT_TO_POINTER(peer));
	size_t k = 0;
	int64_t tau = 0;
	double q2 = ph ? syncd_continuity_q2(&ph->line, NULL, &tau) : 0;
	for (guint i = 0; ph && i < ph->pieces->len; i++) {
		const sync_conv *p = &g_array_index(ph->pieces, sync_conv, i);
		if (p->xmax > current_xmin)
			break;
		sync_ticker_entry e = {sync_clock_cpu(self), sync_clock_cpu(peer), *p};
		if (tau)
			e.conv.wander = q2;
		g_array_append_val(out, e);
		k++;
	}
	return k;
}

guint rbs_history_expire(rbs_history *h, int64_t now_ns)
{
	guint gone = 0;
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, h->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		peer_hist *ph = v;
		guint old = 0;
		while (old < ph->pieces->len && now_ns - g_array_index(ph->pieces, sync_conv, old).xmax > h->max_age_ns)
			old++;
		g_array_remove_range(ph->pieces, 0, old);
		gone += old;
		/* Its line's samples stay while it is noted (they measure the
		 * wander the next piece gets); a peer gone for max_age goes. */
		int64_t newest = ph->line.n ? ph->line.x[(ph->line.head + ph->line.n - 1) % SYNCD_CONTINUITY_SAMPLES] : INT64_MIN;
		if (!ph->pieces->len && (newest == INT64_MIN || now_ns - newest > h->max_age_ns))
			g_hash_table_iter_remove(&it);
	}
	return gone;
}

guint rbs_history_count(const rbs_history *h, guint *peers)
{
	guint n = 0;
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, h->peers);
	guint with = 0;
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		n += ((const peer_hist *)v)->pieces->len;
		with += ((const peer_hist *)v)->pieces->len > 0;
	}
	if (peers)
		*peers = with;
	return n;
}

static gint cmp_peer(gconstpointer a, gconstpointer b)
{
	const peer_hist *p = *(peer_hist *const *)a, *q = *(peer_hist *const *)b;
	return p->peer < q->peer ? -1 : p->peer > q->peer;
}

void rbs_history_describe(const rbs_history *h, int64_t now_ns, int64_t (*current_xmin)(void *user, uint32_t peer),
			  void *user, GString *out)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, h->peers);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_ptr_array_add(a, v);
	g_ptr_array_sort(a, cmp_peer);
	for (guint i = 0; i < a->len; i++) {
		const peer_hist *ph = g_ptr_array_index(a, i);
		if (!ph->pieces->len)
			continue;
		const sync_conv *p = &g_array_index(ph->pieces, sync_conv, ph->pieces->len - 1);
		/* The wander published with it (rbs_history_entries). */
		char from[96];
		int64_t span = 0, tau = 0;
		double q2 = syncd_continuity_q2(&ph->line, &span, &tau);
		if (tau)
			g_snprintf(from, sizeof from, "measured over %.0f s of the line, spans of %.0f s", (double)span * 1e-9,
				   (double)tau * 1e-9);
		else if (ph->q2_span_ns)
			g_snprintf(from, sizeof from, "measured over %.0f s of the line", (double)ph->q2_span_ns * 1e-9);
		else
			g_snprintf(from, sizeof from, "the fit's bound: %zu samples of the line over %.0f s", ph->line.n,
				   (double)span * 1e-9);
		g_string_append_printf(out, "  history: node%u %u piece%s (newest: data %.1f s, ended %.1f s ago, wander %.3g ppb/sqrt(s), %s)",
				       ph->peer, ph->pieces->len, ph->pieces->len == 1 ? "" : "s",
				       (double)(p->xmax - p->xmin) * 1e-9, (double)(now_ns - p->xmax) * 1e-9,
				       sqrt((tau ? q2 : p->wander) * 1e9) * 1e9, from);
		int64_t cur = current_xmin ? current_xmin(user, ph->peer) : INT64_MIN;
		if (cur != INT64_MIN && cur >= p->xmax)
			g_string_append_printf(out, ", bridged over %.1f s to the current fit\n", (double)(cur - p->xmax) * 1e-9);
		else
			g_string_append(out, ", no fit after it yet\n");
	}
	g_ptr_array_free(a, TRUE);
}
