/* rbs_core.c — receptions, report matching, pairwise fits (see rbs_core.h). */
#include "syncd/rbs_core.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct {
	uint32_t sender, seq;
	int64_t t_ns; /* our cpu ns */
} rx_rec;

typedef struct {
	int64_t x, y;
} obs;

typedef struct {
	sync_fit *fit;
	int64_t last_x; /* newest x added (INT64_MIN: none) */
	uint64_t n_obs; /* observations ever added */
	gboolean dirty;
	gboolean have; /* conv valid */
	sync_conv conv;
	const char *err; /* last solve failure */
} fit_rec;

typedef struct {
	uint32_t node;
	int64_t last_heard_ns; /* our cpu ns of its last packet */
	uint64_t reports;
	fit_rec rbs, sr;
} peer_rec;

struct rbs_core {
	rbs_core_cfg cfg;
	GQueue rxq;        /* rx_rec*, arrival order */
	GHashTable *rx;    /* key (sender << 32 | seq) -> rx_rec* */
	GHashTable *peers; /* node -> peer_rec* */
	guint64 gen;
};

static guint64 key_of(uint32_t sender, uint32_t seq)
{
	return (guint64)sender << 32 | seq;
}

static sync_fit *new_fit(const rbs_core_cfg *cfg)
{
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	fp.mode = SYNC_FIT_MEAN;
	fp.window = cfg->window;
	fp.reject_k = cfg->reject_k;
	fp.wander = cfg->wander;
	fp.max_span = cfg->max_span_ns;
	fp.nominal_slope = 1.0; /* ns against ns */
	return sync_fit_new(&fp, NULL);
}

static void fit_init(fit_rec *f, const rbs_core_cfg *cfg)
{
	f->fit = new_fit(cfg);
	f->last_x = INT64_MIN;
}

static void peer_free(gpointer data)
{
	peer_rec *p = data;
	sync_fit_free(p->rbs.fit);
	sync_fit_free(p->sr.fit);
	g_free(p);
}

rbs_core *rbs_core_new(const rbs_core_cfg *cfg, const char **why)
{
	if (cfg->window < 3 || cfg->min_rbs < 3 || cfg->hold_ns <= 0 || cfg->peer_timeout_ns <= 0 ||
	    !(cfg->reject_k >= 0) || !(cfg->wander >= 0) || cfg->max_span_ns < 0) {
		*why = "RBS parameters out of range (window and min_rbs >= 3, positive hold and timeout)";
		return NULL;
	}
	sync_fit *probe = new_fit(cfg);
	if (!probe) {
		*why = "RBS fit parameters refused by libsync";
		return NULL;
	}
	sync_fit_free(probe);
	rbs_core *c = g_new0(rbs_core, 1);
	c->cfg = *cfg;
	g_queue_init(&c->rxq);
	c->rx = g_hash_table_new(g_int64_hash, g_int64_equal);
	c->peers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, peer_free);
	return c;
}

void rbs_core_free(rbs_core *c)
{
	if (!c)
		return;
	g_hash_table_destroy(c->rx);
	g_queue_clear_full(&c->rxq, g_free);
	g_hash_table_destroy(c->peers);
	g_free(c);
}

/* The hash keys point at the records' own key field, so both go together. */
typedef struct {
	guint64 key;
	rx_rec r;
} rx_node;

void rbs_core_heard(rbs_core *c, uint32_t sender, uint32_t seq, int64_t t_ns, int64_t now_ns)
{
	while (!g_queue_is_empty(&c->rxq)) {
		rx_node *old = g_queue_peek_head(&c->rxq);
		if (old->r.t_ns >= now_ns - c->cfg.hold_ns)
			break;
		g_hash_table_remove(c->rx, &old->key);
		g_free(g_queue_pop_head(&c->rxq));
	}
	guint64 k = key_of(sender, seq);
	if (g_hash_table_contains(c->rx, &k))
		return;
	rx_node *n = g_new(rx_node, 1);
	n->key = k;
	n->r.sender = sender;
	n->r.seq = seq;
	n->r.t_ns = t_ns;
	g_queue_push_tail(&c->rxq, n);
	g_hash_table_insert(c->rx, &n->key, n);
}

size_t rbs_core_recent(const rbs_core *c, int64_t since_ns, rbs_reception *out, size_t max)
{
	size_t k = 0;
	for (GList *l = c->rxq.head; l && k < max; l = l->next) {
		rx_node *n = l->data;
		if (n->r.t_ns < since_ns)
			continue;
		out[k].sender = n->r.sender;
		out[k].seq = n->r.seq;
		out[k].t_ns = n->r.t_ns;
		k++;
	}
	return k;
}

static peer_rec *get_peer(rbs_core *c, uint32_t node, int64_t now_ns)
{
	peer_rec *p = g_hash_table_lookup(c->peers, GUINT_TO_POINTER(node));
	if (!p) {
		p = g_new0(peer_rec, 1);
		p->node = node;
		fit_init(&p->rbs, &c->cfg);
		fit_init(&p->sr, &c->cfg);
		g_hash_table_insert(c->peers, GUINT_TO_POINTER(node), p);
		c->gen++;
	}
	if (now_ns > p->last_heard_ns)
		p->last_heard_ns = now_ns;
	return p;
}

void rbs_core_touch(rbs_core *c, uint32_t peer, int64_t now_ns)
{
	if (peer != c->cfg.self)
		get_peer(c, peer, now_ns);
}

static int cmp_obs(const void *a, const void *b)
{
	const obs *p = a, *q = b;
	return p->x < q->x ? -1 : p->x > q->x;
}

/* Add the observations of o[0..n) beyond f's last x, in x order. */
static int feed(fit_rec *f, obs *o, size_t n)
{
	int added = 0;
	qsort(o, n, sizeof *o, cmp_obs);
	for (size_t i = 0; i < n; i++) {
		if (o[i].x <= f->last_x)
			continue;
		if (sync_fit_add(f->fit, o[i].x, o[i].y, NULL) < 0)
			continue;
		f->last_x = o[i].x;
		f->n_obs++;
		f->dirty = TRUE;
		added++;
	}
	return added;
}

int rbs_core_report(rbs_core *c, uint32_t peer, const rbs_reception *rx, size_t n, int64_t now_ns)
{
	if (peer == c->cfg.self)
		return 0;
	peer_rec *p = get_peer(c, peer, now_ns);
	obs *ro = g_new(obs, n + 1), *so = g_new(obs, n + 1);
	size_t nr = 0, ns = 0;
	p->reports++;
	for (size_t i = 0; i < n; i++) {
		guint64 k = key_of(rx[i].sender, rx[i].seq);
		rx_node *mine = g_hash_table_lookup(c->rx, &k);
		if (!mine)
			continue;
		obs o = {mine->r.t_ns, rx[i].t_ns};
		if (rx[i].sender == peer || rx[i].sender == c->cfg.self)
			so[ns++] = o; /* one side is the sender's own looped-back reception */
		else
			ro[nr++] = o;
	}
	int added = feed(&p->rbs, ro, nr) + feed(&p->sr, so, ns);
	g_free(ro);
	g_free(so);
	if (added)
		c->gen++;
	return added;
}

guint rbs_core_expire(rbs_core *c, int64_t now_ns)
{
	GHashTableIter it;
	gpointer v;
	guint gone = 0;
	g_hash_table_iter_init(&it, c->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		peer_rec *p = v;
		if (now_ns - p->last_heard_ns > c->cfg.peer_timeout_ns) {
			g_hash_table_iter_remove(&it);
			gone++;
		}
	}
	if (gone)
		c->gen++;
	return gone;
}

/* Fewest observations a published fit rests on: with fewer, the residual
 * variance rests on too few degrees of freedom and the claimed uncertainty
 * is itself too uncertain (Student's t tails). */
#define MIN_PUBLISH 6

static void solve(fit_rec *f)
{
	if (!f->dirty)
		return;
	f->dirty = FALSE;
	sync_conv cv;
	if (sync_fit_solve(f->fit, &cv, &f->err) < 0 || cv.n < MIN_PUBLISH) {
		f->have = FALSE;
		return;
	}
	cv.updated_ns = f->last_x;
	f->conv = cv;
	f->have = TRUE;
	f->err = NULL;
}

/* The fit a peer's pair uses: RBS once it has min_rbs observations, else
 * sender-receiver, else whatever RBS there is. */
static fit_rec *chosen(rbs_core *c, peer_rec *p)
{
	solve(&p->rbs);
	solve(&p->sr);
	if (p->rbs.have && p->rbs.conv.n >= c->cfg.min_rbs)
		return &p->rbs;
	return p->sr.have ? &p->sr : p->rbs.have ? &p->rbs
						 : NULL;
}

static gint cmp_node(gconstpointer a, gconstpointer b)
{
	const peer_rec *p = *(peer_rec *const *)a, *q = *(peer_rec *const *)b;
	return p->node < q->node ? -1 : p->node > q->node;
}

/* Peers in node order (a GPtrArray to free). */
static GPtrArray *sorted_peers(rbs_core *c)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer v;
	g_hash_table_iter_init(&it, c->peers);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_ptr_array_add(a, v);
	g_ptr_array_sort(a, cmp_node);
	return a;
}

size_t rbs_core_entries(rbs_core *c, GArray *out)
{
	size_t k = 0;
	GPtrArray *a = sorted_peers(c);
	for (guint i = 0; i < a->len; i++) {
		peer_rec *p = g_ptr_array_index(a, i);
		fit_rec *f = chosen(c, p);
		if (!f)
			continue;
		sync_ticker_entry e = {sync_clock_cpu(c->cfg.self), sync_clock_cpu(p->node), f->conv};
		g_array_append_val(out, e);
		k++;
	}
	g_ptr_array_free(a, TRUE);
	return k;
}

guint rbs_core_n_peers(const rbs_core *c)
{
	return g_hash_table_size(c->peers);
}

guint64 rbs_core_generation(const rbs_core *c)
{
	return c->gen;
}

void rbs_core_describe(rbs_core *c, int64_t now_ns, GString *out)
{
	GPtrArray *a = sorted_peers(c);
	g_string_append_printf(out, "peers: %u (receptions held: %u)\n", a->len, g_queue_get_length(&c->rxq));
	for (guint i = 0; i < a->len; i++) {
		peer_rec *p = g_ptr_array_index(a, i);
		fit_rec *f = chosen(c, p);
		g_string_append_printf(out,
				       "  node%u heard=%.3fs ago reports=%" G_GUINT64_FORMAT " rbs_obs=%" G_GUINT64_FORMAT
				       " sr_obs=%" G_GUINT64_FORMAT,
				       p->node, (double)(now_ns - p->last_heard_ns) * 1e-9, p->reports, p->rbs.n_obs, p->sr.n_obs);
		/* The measured wander as a random walk's diffusion (x in ns,
		 * slope ~1): ppb per sqrt(s). */
		if (f)
			g_string_append_printf(out,
					       " fit=%s n=%u rms=%.1fns slope-1=%.3fppm rejected=%u wander=%.3gppb/sqrt(s) "
					       "window_from=%zu\n",
					       f == &p->rbs ? "rbs" : "sender-receiver", f->conv.n, f->conv.rms,
					       (f->conv.slope - 1.0) * 1e6, sync_fit_rejected(f->fit),
					       sqrt(sync_fit_wander(f->fit) * 1e9) * 1e9, sync_fit_used_from(f->fit));
		else
			g_string_append(out, " no fit yet\n");
	}
	g_ptr_array_free(a, TRUE);
}
