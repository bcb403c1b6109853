/* rbs_core.c — receptions, report matching, pairwise fits (see rbs_core.h). */
#include "syncd/rbs_core.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_statistics_double.h>

#include "syncd/history.h"
#include "syncd/rbs_history.h"

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
	GHashTable *nbrs;             /* node -> int64_t*: our cpu ns it was last advertised as this peer's neighbour */
	int64_t sr_self_x, sr_peer_x; /* newest sender-receiver observation from our beacons, from its (our ns) */
	rbs_paths *paths;             /* do the pair's beacon senders agree? */
	rbs_paths_verdict path;       /* the last comparison */
	gboolean path_onset;          /* path began to disagree and rbs_core_path_alarm has not said so */
	guint64 path_alarms;          /* times it began to */
	uint64_t boot;                /* its boot number (0: none seen) */
	gboolean boot_check;          /* its boot number grew: does its clock go on? (check_restart) */
} peer_rec;

struct rbs_core {
	rbs_core_cfg cfg;
	GQueue rxq;        /* rx_rec*, arrival order */
	GHashTable *rx;    /* key (sender << 32 | seq) -> rx_rec* */
	GHashTable *peers; /* node -> peer_rec* */
	guint64 gen;
	guint64 path_alarms;
	guint64 restarts;  /* peers whose cpu clock restarted (rbs_core_boot) */
	rbs_history *hist; /* fits from before outages */
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
	g_hash_table_destroy(p->nbrs);
	rbs_paths_free(p->paths);
	g_free(p);
}

rbs_core *rbs_core_new(const rbs_core_cfg *cfg, const char **why)
{
	if (cfg->references == 1) {
		*why = "references must be 0 (every node beacons) or at least 2 (a pair needs a reference besides "
		       "one of its own two)";
		return NULL;
	}
	if (cfg->window < 3 || cfg->min_rbs < 3 || cfg->hold_ns <= 0 || cfg->peer_timeout_ns <= 0 ||
	    !(cfg->reject_k >= 0) || !(cfg->wander >= 0) || cfg->max_span_ns < 0 || !(cfg->path_tolerance_ns >= 0)) {
		*why = "RBS parameters out of range (window and min_rbs >= 3, positive hold and timeout, path tolerance >= 0)";
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
	c->hist = rbs_history_new(cfg->history_pieces, cfg->history_peers, cfg->history_ns, cfg->history_every_ns);
	return c;
}

void rbs_core_free(rbs_core *c)
{
	if (!c)
		return;
	g_hash_table_destroy(c->rx);
	g_queue_clear_full(&c->rxq, g_free);
	g_hash_table_destroy(c->peers);
	rbs_history_free(c->hist);
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

static fit_rec *chosen(rbs_core *c, peer_rec *p);

static peer_rec *get_peer(rbs_core *c, uint32_t node, int64_t now_ns)
{
	peer_rec *p = g_hash_table_lookup(c->peers, GUINT_TO_POINTER(node));
	if (!p) {
		p = g_new0(peer_rec, 1);
		p->node = node;
		fit_init(&p->rbs, &c->cfg);
		fit_init(&p->sr, &c->cfg);
		p->nbrs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
		p->sr_self_x = p->sr_peer_x = INT64_MIN;
		p->paths = rbs_paths_new(c->cfg.peer_timeout_ns);
		g_hash_table_insert(c->peers, GUINT_TO_POINTER(node), p);
		c->gen++;
	}
	if (now_ns > p->last_heard_ns)
		p->last_heard_ns = now_ns;
	return p;
}

gboolean rbs_core_path_alarm(rbs_core *c, uint32_t peer, rbs_paths_verdict *v)
{
	peer_rec *p = g_hash_table_lookup(c->peers, GUINT_TO_POINTER(peer));
	if (!p || !p->path_onset)
		return FALSE;
	p->path_onset = FALSE;
	*v = p->path;
	return TRUE;
}

guint64 rbs_core_path_alarms(const rbs_core *c)
{
	return c->path_alarms;
}

void rbs_core_boot(rbs_core *c, uint32_t peer, uint64_t boot, int64_t now_ns)
{
	if (peer == c->cfg.self)
		return;
	peer_rec *p = get_peer(c, peer, now_ns);
	if (p->boot && boot > p->boot)
		p->boot_check = TRUE;
	if (boot > p->boot)
		p->boot = boot;
}

guint64 rbs_core_restarts(const rbs_core *c)
{
	return c->restarts;
}

/* A fit that starts again from no observations. */
static void fit_restart(fit_rec *f)
{
	sync_fit_reset(f->fit);
	f->last_x = INT64_MIN;
	f->n_obs = 0;
	f->dirty = FALSE;
	f->have = FALSE;
	f->err = NULL;
}

/* The new observations (x beyond the fit's newest) a restarted peer's
 * clock must meet: at least this many, their median residual against the
 * pair's fit within this many s.e. of the prediction and the fit's rms
 * combined. */
#define RESTART_MIN_OBS 3
#define RESTART_SE 5.0

/* Peer p started again with a larger boot number: its syncd did, and its
 * cpu clock (CLOCK_MONOTONIC_RAW) did too when it rebooted, or went on
 * when only the service restarted.  Its first RESTART_MIN_OBS new
 * observations (o[0..n)) tell: a median residual beyond RESTART_SE s.e.
 * is a clock that started again, whose old line would stand for it until
 * the window's majority were new (its new observations rejected as
 * outliers meanwhile): the old fit becomes a piece of the pair's history
 * (the graph bridges no step: libsync/bridge.h) and the pair is fitted
 * afresh.  o[0..n) are the report's RBS and sender-receiver observations
 * together; r[0..n) scratch. */
static void check_restart(rbs_core *c, peer_rec *p, const obs *const o[2], const size_t n[2], double *r)
{
	fit_rec *f = chosen(c, p);
	if (!f) {
		p->boot_check = FALSE; /* nothing fitted to the old clock */
		return;
	}
	size_t m = 0;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < n[k]; i++) {
			if (o[k][i].x <= f->last_x)
				continue;
			sync_tval x = sync_tval_of(o[k][i].x), y = sync_conv_apply(&f->conv, x);
			double se = sqrt(sync_conv_var(&f->conv, x) + f->conv.rms * f->conv.rms);
			r[m++] = ((double)(o[k][i].y - y.i) - y.f) / se;
		}
	if (m < RESTART_MIN_OBS)
		return; /* wait for more */
	p->boot_check = FALSE;
	if (fabs(gsl_stats_median(r, 1, m)) <= RESTART_SE)
		return;
	rbs_history_close(c->hist, p->node, &f->conv, sync_fit_wander_bound(f->fit));
	fit_restart(&p->rbs);
	fit_restart(&p->sr);
	p->sr_self_x = p->sr_peer_x = INT64_MIN;
	rbs_paths_free(p->paths);
	p->paths = rbs_paths_new(c->cfg.peer_timeout_ns);
	p->path.flagged = FALSE;
	c->restarts++;
	c->gen++;
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
		if (rx[i].sender == peer || rx[i].sender == c->cfg.self) {
			so[ns++] = o; /* one side is the sender's own looped-back reception */
			int64_t *side = rx[i].sender == peer ? &p->sr_peer_x : &p->sr_self_x;
			if (o.x > *side)
				*side = o.x;
		} else {
			ro[nr++] = o;
			/* A third node's beacon: its residual against the
			 * pair's fit so far, for the senders' comparison. */
			if (p->rbs.have) {
				sync_tval y = sync_conv_apply(&p->rbs.conv, sync_tval_of(o.x));
				rbs_paths_add(p->paths, rx[i].sender, (double)(o.y - y.i) - y.f, now_ns);
			}
		}
	}
	if (p->boot_check) {
		const obs *const both[2] = {ro, so};
		const size_t counts[2] = {nr, ns};
		double *r = g_new(double, nr + ns + 1);
		check_restart(c, p, both, counts, r);
		g_free(r);
	}
	int added = feed(&p->rbs, ro, nr) + feed(&p->sr, so, ns);
	gboolean was = p->path.flagged;
	p->path = rbs_paths_check(p->paths, c->cfg.path_tolerance_ns, now_ns);
	if (p->path.flagged && !was) {
		p->path_onset = TRUE;
		p->path_alarms++;
		c->path_alarms++;
	}
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
			/* Its fit is the piece before the outage: a time inside
			 * converts across it once a new fit exists after. */
			fit_rec *f = chosen(c, p);
			if (f)
				rbs_history_close(c->hist, p->node, &f->conv, sync_fit_wander_bound(f->fit));
			g_hash_table_iter_remove(&it);
			gone++;
		}
	}
	if (rbs_history_expire(c->hist, now_ns) || gone)
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

gboolean rbs_core_is_reference(const rbs_core *c, uint32_t node)
{
	if (!c->cfg.references)
		return TRUE;
	uint32_t lower = node != c->cfg.self && c->cfg.self < node;
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init(&it, c->peers);
	while (g_hash_table_iter_next(&it, &k, NULL) && lower < c->cfg.references)
		lower += GPOINTER_TO_UINT(k) < node;
	return lower < c->cfg.references;
}

void rbs_core_advertised(rbs_core *c, uint32_t peer, const rbs_node_news *news, size_t n, int64_t now_ns)
{
	if (!c->cfg.references || peer == c->cfg.self)
		return;
	peer_rec *p = get_peer(c, peer, now_ns);
	for (size_t i = 0; i < n; i++) {
		if (news[i].hops != 1 || news[i].age_ns >= c->cfg.peer_timeout_ns)
			continue;
		int64_t *at = g_hash_table_lookup(p->nbrs, GUINT_TO_POINTER(news[i].node));
		if (!at) {
			if (g_hash_table_size(p->nbrs) >= RBS_CORE_MAX_NBRS)
				continue;
			at = g_new(int64_t, 1);
			*at = INT64_MIN;
			g_hash_table_insert(p->nbrs, GUINT_TO_POINTER(news[i].node), at);
		}
		if (now_ns - news[i].age_ns > *at)
			*at = now_ns - news[i].age_ns;
	}
}

gboolean rbs_core_beacons(const rbs_core *c, int64_t now_ns)
{
	if (!c->cfg.references || rbs_core_is_reference(c, c->cfg.self))
		return TRUE;
	uint32_t self = c->cfg.self;
	GHashTableIter it, jt;
	gpointer v, k, at;
	g_hash_table_iter_init(&it, c->peers);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		const peer_rec *p = v;
		const int64_t *us = g_hash_table_lookup(p->nbrs, GUINT_TO_POINTER(self));
		if (!us || now_ns - *us >= c->cfg.peer_timeout_ns)
			continue; /* it does not hear us (now): we are no reference of its */
		uint32_t lower = p->node < self;
		g_hash_table_iter_init(&jt, p->nbrs);
		while (lower < c->cfg.references && g_hash_table_iter_next(&jt, &k, &at))
			lower += GPOINTER_TO_UINT(k) < self && now_ns - *(const int64_t *)at < c->cfg.peer_timeout_ns;
		if (lower < c->cfg.references)
			return TRUE;
	}
	return FALSE;
}

/* Sender-receiver observations are usable only from both directions, so
 * the send-path delay cancels: beacons of each side within a peer timeout
 * of the other's (a node that does not beacon, [rbs] beacon = false or
 * not a reference, gives one direction only). */
static gboolean two_sided(const rbs_core *c, const peer_rec *p)
{
	if (p->sr_self_x == INT64_MIN || p->sr_peer_x == INT64_MIN)
		return FALSE;
	int64_t d = p->sr_self_x - p->sr_peer_x;
	return (d < 0 ? -d : d) < c->cfg.peer_timeout_ns;
}

/* The fit a peer's pair uses: RBS once it has min_rbs observations, else
 * two-sided sender-receiver, else whatever RBS there is.  An RBS fit whose
 * newest observation is a peer timeout older than the sender-receiver
 * fit's has lost its third-party beacons (the field split and the pair
 * is alone in its part): the fresh sender-receiver fit is used instead of
 * extrapolating the stale one. */
static fit_rec *chosen(rbs_core *c, peer_rec *p)
{
	solve(&p->rbs);
	solve(&p->sr);
	gboolean stale = p->rbs.have && p->sr.have && p->rbs.last_x != INT64_MIN && two_sided(c, p) &&
			 p->sr.last_x - p->rbs.last_x > c->cfg.peer_timeout_ns;
	if (p->rbs.have && p->rbs.conv.n >= c->cfg.min_rbs && !stale)
		return &p->rbs;
	return p->sr.have && two_sided(c, p) ? &p->sr : p->rbs.have ? &p->rbs
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

/* The fit published for peer p: with references, only our fits to them
 * (the graph stays N*K). */
static fit_rec *published(rbs_core *c, peer_rec *p)
{
	return rbs_core_is_reference(c, p->node) ? chosen(c, p) : NULL;
}

size_t rbs_core_entries(rbs_core *c, GArray *out)
{
	size_t k = 0;
	GPtrArray *a = sorted_peers(c);
	for (guint i = 0; i < a->len; i++) {
		peer_rec *p = g_ptr_array_index(a, i);
		fit_rec *f = published(c, p);
		if (!f)
			continue;
		/* The line at its newest point, for the wander a piece of its
		 * history will be bridged with (rbs_history.h). */
		sync_tval end = sync_tval_of(f->conv.xmax);
		rbs_history_note(c->hist, p->node, f->conv.xmax, sync_conv_apply(&f->conv, end).i,
				 sqrt(sync_conv_var(&f->conv, end)));
		/* ... and every so often as a piece of it, for past times. */
		rbs_history_keep(c->hist, p->node, &f->conv, syncd_history_min_n(f->fit, (uint32_t)c->cfg.window),
				 sync_fit_wander_bound(f->fit));
		sync_ticker_entry e = {sync_clock_cpu(c->cfg.self), sync_clock_cpu(p->node), f->conv};
		g_array_append_val(out, e);
		k++;
	}
	g_ptr_array_free(a, TRUE);
	return k;
}

size_t rbs_core_history_entries(rbs_core *c, GArray *out)
{
	size_t k = 0;
	GPtrArray *a = sorted_peers(c);
	for (guint i = 0; i < a->len; i++) {
		peer_rec *p = g_ptr_array_index(a, i);
		fit_rec *f = published(c, p);
		if (f)
			k += rbs_history_entries(c->hist, c->cfg.self, p->node, f->conv.xmin, out);
	}
	g_ptr_array_free(a, TRUE);
	return k;
}

int rbs_core_restore(rbs_core *c, uint32_t peer, const sync_conv *pieces, size_t n, int64_t now_ns, const char **why)
{
	if (peer == c->cfg.self) {
		*why = "an RBS pair's peer is another node";
		return -EINVAL;
	}
	int rc = rbs_history_restore(c->hist, peer, pieces, n, now_ns, why);
	if (rc > 0)
		c->gen++;
	return rc;
}

/* The fit rbs_core_expire would keep as a piece of peer's history. */
static gboolean current_fit(void *user, uint32_t node, sync_conv *out, double *fit_q2)
{
	rbs_core *c = user;
	peer_rec *p = g_hash_table_lookup(c->peers, GUINT_TO_POINTER(node));
	fit_rec *f = p ? chosen(c, p) : NULL;
	if (!f)
		return FALSE;
	*out = f->conv;
	*fit_q2 = sync_fit_wander_bound(f->fit);
	return TRUE;
}

size_t rbs_core_export(rbs_core *c, gboolean with_current, history_store *out)
{
	return rbs_history_export(c->hist, c->cfg.self, with_current ? current_fit : NULL, c, out);
}

/* The current fit's first x for peer (rbs_history_describe). */
static int64_t current_xmin(void *user, uint32_t node)
{
	rbs_core *c = user;
	peer_rec *p = g_hash_table_lookup(c->peers, GUINT_TO_POINTER(node));
	fit_rec *f = p ? chosen(c, p) : NULL;
	return f ? f->conv.xmin : INT64_MIN;
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
	g_string_append_printf(out, "peers: %u (receptions held: %u) path_alarms=%" G_GUINT64_FORMAT " clock_restarts=%" G_GUINT64_FORMAT "\n",
			       a->len, g_queue_get_length(&c->rxq), c->path_alarms, c->restarts);
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
		/* The beacon senders' agreement (rbs_paths.h). */
		const rbs_paths_verdict *v = &p->path;
		if (v->flagged) {
			char into[32];
			if (v->offset_ns > 0)
				g_snprintf(into, sizeof into, "node%u", p->node);
			else
				g_strlcpy(into, "us", sizeof into);
			g_string_append_printf(out,
					       "    paths: DISAGREE: beacons of node%u give %+.3f us against the other %u "
					       "sender%s' (z %+.1f; tolerance %.3f us): the link from node%u%s into %s delayed "
					       "by about %.3f us; alarms=%" G_GUINT64_FORMAT "\n",
					       v->sender, v->offset_ns * 1e-3, v->senders - 1, v->senders == 2 ? "" : "s", v->z,
					       c->cfg.path_tolerance_ns * 1e-3, v->sender,
					       v->senders == 2 ? " (or the other sender's: two cannot tell which)" : "", into,
					       fabs(v->offset_ns) * 1e-3, p->path_alarms);
		} else if (v->senders >= 2)
			g_string_append_printf(out,
					       "    paths: %u senders agree (largest: node%u %+.3f us, z %+.1f) alarms=%" G_GUINT64_FORMAT
					       "\n",
					       v->senders, v->sender, v->offset_ns * 1e-3, v->z, p->path_alarms);
	}
	g_ptr_array_free(a, TRUE);
	rbs_history_describe(c->hist, now_ns, current_xmin, c, out);
}
