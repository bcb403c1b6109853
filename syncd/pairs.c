/* pairs.c — syncd's clocks and pairs (see pairs.h). */
#include "syncd/pairs.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "syncd/history.h"

typedef struct {
	sync_clock_id id;
	char *feeder;        /* who said so: "audiod", "syncd", "?" */
	pid_t pid;           /* feeder's pid (0: unknown) */
	gboolean explicit_;  /* registered by a command, not just seen in an observation */
	int64_t last_obs_ns; /* node cpu ns of the last observation involving it (INT64_MIN: none) */
} clock_rec;

typedef struct {
	sync_clock_id a, b; /* x clock, y clock */
	sync_fit *fit;
	sync_fit_mode mode;
	double nominal;      /* dy/dx, 0 = from the data */
	double systematic;   /* s.d. every conversion carries beyond the fit's own, y units */
	int64_t last_obs_ns; /* node cpu ns of the last observation */
	gboolean dirty;      /* observations since the last solve */
	gboolean have_conv;
	sync_conv conv;        /* last solved conversion */
	uint64_t n_obs;        /* observations ever added */
	const char *last_err;  /* last solve failure reason, or NULL */
	syncd_history *hist;   /* its pieces (history.h; NULL until its first fit, or none kept) */
	gboolean has_run_from; /* the last reset said where the run after it starts: */
	int64_t run_from;      /* its first x, below the run's first observation (syncd_pairs_reset_from) */
} pair_rec;

/* The history of a pair that expired, for when it is fed again. */
typedef struct {
	sync_clock_id a, b;
	sync_fit_mode mode;
	double nominal;
	syncd_history *hist;
} retired_rec;

/* Expired pairs whose history is kept, at most (the oldest go first). */
#define RETIRED_MAX 16

struct syncd_pairs {
	syncd_pairs_cfg cfg;
	GPtrArray *clocks;  /* clock_rec* */
	GPtrArray *pairs;   /* pair_rec* */
	GPtrArray *retired; /* retired_rec*, oldest first */
	guint64 gen;        /* bumped on every change */
};

static void clock_free(gpointer data)
{
	clock_rec *c = data;
	g_free(c->feeder);
	g_free(c);
}

static void retired_free(gpointer data)
{
	retired_rec *t = data;
	syncd_history_free(t->hist);
	g_free(t);
}

static void pair_free(gpointer data)
{
	pair_rec *r = data;
	sync_fit_free(r->fit);
	syncd_history_free(r->hist);
	g_free(r);
}

syncd_pairs *syncd_pairs_new(const syncd_pairs_cfg *cfg)
{
	syncd_pairs *p = g_new0(syncd_pairs, 1);
	p->cfg = *cfg;
	p->clocks = g_ptr_array_new_with_free_func(clock_free);
	p->pairs = g_ptr_array_new_with_free_func(pair_free);
	p->retired = g_ptr_array_new_with_free_func(retired_free);
	return p;
}

void syncd_pairs_free(syncd_pairs *p)
{
	if (!p)
		return;
	g_ptr_array_free(p->pairs, TRUE);
	g_ptr_array_free(p->clocks, TRUE);
	g_ptr_array_free(p->retired, TRUE);
	g_free(p);
}

static clock_rec *find_clock(syncd_pairs *p, sync_clock_id id)
{
	for (guint i = 0; i < p->clocks->len; i++) {
		clock_rec *c = g_ptr_array_index(p->clocks, i);
		if (sync_clock_equal(c->id, id))
			return c;
	}
	return NULL;
}

static clock_rec *ensure_clock(syncd_pairs *p, sync_clock_id id)
{
	clock_rec *c = find_clock(p, id);
	if (!c) {
		c = g_new0(clock_rec, 1);
		c->id = id;
		c->feeder = g_strdup("?");
		c->last_obs_ns = INT64_MIN;
		g_ptr_array_add(p->clocks, c);
	}
	return c;
}

int syncd_pairs_register(syncd_pairs *p, sync_clock_id id, const char *feeder, pid_t pid, int64_t now_ns)
{
	clock_rec *c = find_clock(p, id);
	int known = c != NULL;
	c = ensure_clock(p, id);
	g_free(c->feeder);
	c->feeder = g_strdup(feeder && *feeder ? feeder : "?");
	c->pid = pid;
	c->explicit_ = TRUE;
	p->gen++;
	return known;
}

/* Find pair {a,b} in either orientation; *swapped tells which. */
static pair_rec *find_pair(syncd_pairs *p, sync_clock_id a, sync_clock_id b, gboolean *swapped, guint *index)
{
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		if (sync_clock_equal(r->a, a) && sync_clock_equal(r->b, b)) {
			*swapped = FALSE;
		} else if (sync_clock_equal(r->a, b) && sync_clock_equal(r->b, a)) {
			*swapped = TRUE;
		} else {
			continue;
		}
		if (index)
			*index = i;
		return r;
	}
	return NULL;
}

static int check_ends(sync_clock_id a, sync_clock_id b, const char **why)
{
	if (sync_clock_equal(a, b)) {
		*why = "a pair needs two different clocks";
		return -EINVAL;
	}
	if (a.kind == SYNC_KIND_GLOBAL || b.kind == SYNC_KIND_GLOBAL) {
		*why = "global is defined by the root node, not fed with observations";
		return -EINVAL;
	}
	if (a.kind == SYNC_KIND_UTC || b.kind == SYNC_KIND_UTC) {
		*why = "utc is derived from the node's disciplined realtime clock, not fed with observations";
		return -EINVAL;
	}
	return 0;
}

/* x is in ns unless it is an audio clock (frames): the age limit of the
 * window only applies to ns clocks. */
static sync_fit *make_fit(const syncd_pairs_cfg *cfg, sync_clock_id x, sync_fit_mode mode, double nominal)
{
	sync_fit_params fp;
	const char *why;
	sync_fit_params_default(&fp);
	fp.mode = mode;
	fp.window = cfg->window;
	fp.reject_k = mode == SYNC_FIT_MEAN ? cfg->reject_k : 0;
	fp.wander = cfg->wander;
	fp.nominal_slope = nominal;
	fp.max_span = x.kind == SYNC_KIND_AUDIO ? 0 : cfg->max_span_ns;
	sync_fit *f = sync_fit_new(&fp, &why);
	if (!f)
		g_error("syncd: cannot create a fit: %s", why);
	return f;
}

static pair_rec *new_pair(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_fit_mode mode, double nominal)
{
	pair_rec *r = g_new0(pair_rec, 1);
	r->a = a;
	r->b = b;
	r->mode = mode;
	r->nominal = nominal;
	r->last_obs_ns = INT64_MIN;
	r->fit = make_fit(&p->cfg, a, mode, nominal);
	/* Fed again after it expired, fitted the same way: its history goes
	 * on (a clock numbered afresh drops it at its first observation). */
	for (guint i = 0; i < p->retired->len; i++) {
		retired_rec *t = g_ptr_array_index(p->retired, i);
		if (sync_clock_equal(t->a, a) && sync_clock_equal(t->b, b) && t->mode == mode && t->nominal == nominal) {
			r->hist = t->hist;
			t->hist = NULL;
		}
		if (sync_clock_equal(t->a, a) && sync_clock_equal(t->b, b)) {
			g_ptr_array_remove_index(p->retired, i);
			break;
		}
	}
	ensure_clock(p, a);
	ensure_clock(p, b);
	g_ptr_array_add(p->pairs, r);
	return r;
}

int syncd_pairs_configure(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_fit_mode mode,
			  double nominal, const char **why)
{
	gboolean sw;
	if (check_ends(a, b, why) < 0)
		return -EINVAL;
	if (!(nominal >= 0) || !isfinite(nominal)) {
		*why = "nominal slope must be a finite number >= 0";
		return -EINVAL;
	}
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (r && !sw && r->mode == mode && r->nominal == nominal)
		return 0;
	if (r) {
		/* Orientation, mode or nominal changed: start the pair afresh. */
		sync_fit_free(r->fit);
		r->a = a;
		r->b = b;
		r->mode = mode;
		r->nominal = nominal;
		r->fit = make_fit(&p->cfg, a, mode, nominal);
		r->have_conv = FALSE;
		r->dirty = TRUE;
		/* Its pieces were of the pair fitted otherwise. */
		syncd_history_free(r->hist);
		r->hist = NULL;
	} else {
		new_pair(p, a, b, mode, nominal);
	}
	p->gen++;
	return 0;
}

int syncd_pairs_set_systematic(syncd_pairs *p, sync_clock_id a, sync_clock_id b, double sd, const char **why)
{
	gboolean sw;
	if (!(sd >= 0) || !isfinite(sd)) {
		*why = "systematic standard deviation must be a finite number >= 0";
		return -EINVAL;
	}
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (!r) {
		*why = "no such pair";
		return -ENOENT;
	}
	if (sw) {
		*why = "the pair is fitted the other way round: state the systematic term in its y clock's units";
		return -EINVAL;
	}
	if (r->systematic != sd) {
		r->systematic = sd;
		r->dirty = TRUE;
		p->gen++;
	}
	return 0;
}

int syncd_pairs_observe(syncd_pairs *p, sync_clock_id a, sync_clock_id b, int64_t x, int64_t y,
			int64_t now_ns, const char **why)
{
	gboolean sw = FALSE;
	if (check_ends(a, b, why) < 0)
		return -EINVAL;
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (!r)
		r = new_pair(p, a, b, SYNC_FIT_MEAN, 0);
	int rc = sw ? sync_fit_add(r->fit, y, x, why) : sync_fit_add(r->fit, x, y, why);
	if (rc < 0)
		return rc;
	/* The first observation after a reset below the history: the clock
	 * was numbered afresh, its old pieces name other instants now. */
	if (r->hist && sync_fit_count(r->fit) == 1 && syncd_history_renumber(r->hist, sw ? y : x))
		p->gen++;
	r->last_obs_ns = now_ns;
	r->dirty = TRUE;
	r->n_obs++;
	ensure_clock(p, a)->last_obs_ns = now_ns;
	ensure_clock(p, b)->last_obs_ns = now_ns;
	p->gen++;
	return 0;
}

static void solve(syncd_pairs *p, pair_rec *r);

int syncd_pairs_reset_from(syncd_pairs *p, sync_clock_id a, sync_clock_id b, const int64_t *from)
{
	gboolean sw;
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (!r)
		return -ENOENT;
	/* Its fit until now is the piece before a break. */
	solve(p, r);
	if (r->have_conv && r->hist)
		syncd_history_close(r->hist, &r->conv, sync_fit_wander_bound(r->fit), TRUE);
	sync_fit_reset(r->fit);
	r->have_conv = FALSE;
	r->dirty = TRUE;
	/* Where the run after the break starts, on the pair's x clock: its
	 * fits hold from there (a frame before the run's first interrupt is
	 * the run's, not the break's).  On the y clock it is not known. */
	r->has_run_from = from && !sw;
	r->run_from = r->has_run_from ? *from : 0;
	p->gen++;
	return 0;
}

int syncd_pairs_reset(syncd_pairs *p, sync_clock_id a, sync_clock_id b)
{
	return syncd_pairs_reset_from(p, a, b, NULL);
}

static gboolean clock_in_pairs(syncd_pairs *p, sync_clock_id id)
{
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		if (sync_clock_equal(r->a, id) || sync_clock_equal(r->b, id))
			return TRUE;
	}
	return FALSE;
}

/* Pair r goes: its last fit is the piece before its outage (the clocks
 * ran on unmeasured), and its history is kept for when it is fed again. */
static void retire(syncd_pairs *p, pair_rec *r)
{
	solve(p, r);
	if (!r->hist)
		return;
	if (r->have_conv)
		syncd_history_close(r->hist, &r->conv, sync_fit_wander_bound(r->fit), FALSE);
	retired_rec *t = g_new0(retired_rec, 1);
	*t = (retired_rec){r->a, r->b, r->mode, r->nominal, r->hist};
	r->hist = NULL;
	g_ptr_array_add(p->retired, t);
	if (p->retired->len > RETIRED_MAX)
		g_ptr_array_remove_index(p->retired, 0);
}

guint syncd_pairs_expire(syncd_pairs *p, int64_t now_ns)
{
	guint gone = 0;
	guint pieces = 0;
	for (guint i = p->pairs->len; i-- > 0;) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		if (r->last_obs_ns != INT64_MIN && now_ns - r->last_obs_ns > p->cfg.expire_ns) {
			retire(p, r);
			g_ptr_array_remove_index(p->pairs, i);
			gone++;
		} else if (r->hist) {
			pieces += syncd_history_expire(r->hist, now_ns);
		}
	}
	for (guint i = p->retired->len; i-- > 0;) {
		retired_rec *t = g_ptr_array_index(p->retired, i);
		syncd_history_expire(t->hist, now_ns);
		if (!syncd_history_count(t->hist))
			g_ptr_array_remove_index(p->retired, i);
	}
	for (guint i = p->clocks->len; i-- > 0;) {
		clock_rec *c = g_ptr_array_index(p->clocks, i);
		if (!c->explicit_ && !clock_in_pairs(p, c->id))
			g_ptr_array_remove_index(p->clocks, i);
	}
	if (gone || pieces)
		p->gen++;
	return gone;
}

guint64 syncd_pairs_generation(const syncd_pairs *p)
{
	return p->gen;
}

/* The pair's history, made at its first fit c: x's unit from the nominal
 * slope or c's when x is an audio clock's frames (NULL: none kept). */
static syncd_history *history_of(const syncd_pairs *p, pair_rec *r, const sync_conv *c)
{
	if (!r->hist && p->cfg.history_pieces) {
		double unit = 1.0;
		if (r->a.kind == SYNC_KIND_AUDIO && r->b.kind != SYNC_KIND_AUDIO)
			unit = r->nominal > 0 ? r->nominal : fabs(c->slope);
		syncd_history_params hp = {p->cfg.history_pieces, p->cfg.history_ns, p->cfg.history_every_ns, unit};
		r->hist = syncd_history_new(&hp);
	}
	return r->hist;
}

static void solve(syncd_pairs *p, pair_rec *r)
{
	const char *why = NULL;
	sync_conv c;
	if (!r->dirty)
		return;
	r->dirty = FALSE;
	if (sync_fit_solve(r->fit, &c, &why) < 0) {
		r->last_err = why;
		r->have_conv = FALSE;
		return;
	}
	c.updated_ns = r->last_obs_ns;
	/* The run began before its first observation (reset_from): its
	 * frames from there on are its line's, extrapolated that little way
	 * back (the line's own variance grows with it). */
	if (r->has_run_from && r->run_from < c.xmin && r->run_from <= c.xmax)
		c.xmin = r->run_from;
	syncd_history *h = history_of(p, r, &c);
	if (h && c.slope > 0) {
		/* The line at its newest point, for the wander its pieces are
		 * bridged with: its own error only (the systematic term below
		 * is an offset the same at every sample, no noise). */
		sync_tval end = sync_tval_of(c.xmax);
		syncd_history_note(h, c.xmax, sync_conv_apply(&c, end).i, sqrt(sync_conv_var(&c, end)), r->last_obs_ns);
	}
	/* A constant error of y no observation reveals (e.g. an interrupt
	 * latency floor): the line's offset is uncertain by it everywhere. */
	c.var_c += r->systematic * r->systematic;
	r->conv = c;
	r->have_conv = TRUE;
	r->last_err = NULL;
	/* ... and every so often as a piece of its history, for past times. */
	if (h)
		syncd_history_keep(h, &c, syncd_history_min_n(r->fit, (uint32_t)p->cfg.window),
				   sync_fit_wander_bound(r->fit));
}

sync_ticker_entry *syncd_pairs_entries(syncd_pairs *p, size_t *n)
{
	sync_ticker_entry *e = g_new0(sync_ticker_entry, p->pairs->len + 1);
	size_t k = 0;
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		solve(p, r);
		if (!r->have_conv)
			continue;
		e[k].from = r->a;
		e[k].to = r->b;
		e[k].conv = r->conv;
		k++;
	}
	*n = k;
	return e;
}

size_t syncd_pairs_history_entries(syncd_pairs *p, GArray *out)
{
	size_t k = 0;
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		solve(p, r);
		if (r->have_conv && r->hist)
			k += syncd_history_entries(r->hist, r->a, r->b, r->conv.xmin, out);
	}
	return k;
}

int syncd_pairs_conv(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_conv *out)
{
	gboolean sw;
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (!r)
		return -ENOENT;
	solve(p, r);
	if (!r->have_conv)
		return -EAGAIN;
	if (!sw) {
		*out = r->conv;
		return 0;
	}
	return sync_conv_reverse(&r->conv, out) < 0 ? -EAGAIN : 0;
}

int syncd_pairs_restore(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_fit_mode mode, double nominal,
			double unit_ns, const sync_conv *pieces, size_t n, int64_t now_ns, const char **why)
{
	if (check_ends(a, b, why) < 0)
		return -EINVAL;
	if (mode != SYNC_FIT_MEAN && mode != SYNC_FIT_LOWER && mode != SYNC_FIT_UPPER) {
		*why = "fit mode must be mean, lower or upper";
		return -EINVAL;
	}
	if (!(nominal >= 0) || !isfinite(nominal) || !(unit_ns > 0) || !isfinite(unit_ns)) {
		*why = "nominal slope must be a finite number >= 0 and the unit one > 0";
		return -EINVAL;
	}
	gboolean sw;
	pair_rec *r = find_pair(p, a, b, &sw, NULL);
	if (r && (sw || r->mode != mode || r->nominal != nominal || (r->hist && syncd_history_count(r->hist)))) {
		*why = "the pair is in the table fitted otherwise, or with a history of its own";
		return -EEXIST;
	}
	if (!p->cfg.history_pieces)
		return 0;
	syncd_history_params hp = {p->cfg.history_pieces, p->cfg.history_ns, p->cfg.history_every_ns, unit_ns};
	syncd_history *h = syncd_history_new(&hp);
	int rc = syncd_history_restore(h, pieces, n, why);
	if (rc > 0)
		syncd_history_expire(h, now_ns);
	if (rc <= 0 || !syncd_history_count(h)) {
		syncd_history_free(h);
		return rc < 0 ? rc : 0;
	}
	int kept = (int)syncd_history_count(h);
	if (r) {
		/* Configured already (syncd's own cpu -> realtime), with no
		 * piece yet: its history goes on from the saved pieces. */
		syncd_history_free(r->hist);
		r->hist = h;
	} else {
		for (guint i = 0; i < p->retired->len; i++) {
			retired_rec *t = g_ptr_array_index(p->retired, i);
			if (sync_clock_equal(t->a, a) && sync_clock_equal(t->b, b)) {
				g_ptr_array_remove_index(p->retired, i);
				break;
			}
		}
		retired_rec *t = g_new0(retired_rec, 1);
		*t = (retired_rec){a, b, mode, nominal, h};
		g_ptr_array_add(p->retired, t);
		if (p->retired->len > RETIRED_MAX)
			g_ptr_array_remove_index(p->retired, 0);
	}
	p->gen++;
	return kept;
}

/* Add history h of pair (a, b) to out as syncd_history_export gives it. */
static size_t export_one(history_store *out, sync_clock_id a, sync_clock_id b, sync_fit_mode mode, double nominal,
			 const syncd_history *h, const sync_conv *current, double fit_q2)
{
	GArray *pieces = g_array_new(FALSE, FALSE, sizeof(sync_conv));
	size_t n = syncd_history_export(h, current, fit_q2, pieces);
	history_store_add(out, HISTORY_STORE_LOCAL, a, b, mode, nominal, syncd_history_unit(h),
			  (const sync_conv *)(void *)pieces->data, n);
	g_array_free(pieces, TRUE);
	return n;
}

size_t syncd_pairs_export(syncd_pairs *p, gboolean with_current, history_store *out)
{
	size_t n = 0;
	for (guint i = 0; i < p->retired->len; i++) {
		const retired_rec *t = g_ptr_array_index(p->retired, i);
		n += export_one(out, t->a, t->b, t->mode, t->nominal, t->hist, NULL, 0);
	}
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		solve(p, r);
		if (!r->hist)
			continue;
		gboolean cur = with_current && r->have_conv;
		n += export_one(out, r->a, r->b, r->mode, r->nominal, r->hist, cur ? &r->conv : NULL,
				cur ? sync_fit_wander_bound(r->fit) : 0);
	}
	return n;
}

static const char *mode_name(sync_fit_mode m)
{
	return m == SYNC_FIT_LOWER ? "lower" : m == SYNC_FIT_UPPER ? "upper"
								   : "mean";
}

void syncd_pairs_describe_clocks(syncd_pairs *p, int64_t now_ns, GString *out)
{
	char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
	g_string_append_printf(out, "clocks: %u\n", p->clocks->len);
	for (guint i = 0; i < p->clocks->len; i++) {
		clock_rec *c = g_ptr_array_index(p->clocks, i);
		g_string_append_printf(out, "  %-18s feeder=%s pid=%d", sync_clock_format(c->id, a, sizeof a),
				       c->feeder, (int)c->pid);
		if (c->last_obs_ns != INT64_MIN)
			g_string_append_printf(out, " last_obs=%.3fs ago", (double)(now_ns - c->last_obs_ns) * 1e-9);
		g_string_append(out, "\n");
	}
	g_string_append_printf(out, "pairs: %u\n", p->pairs->len);
	for (guint i = 0; i < p->pairs->len; i++) {
		pair_rec *r = g_ptr_array_index(p->pairs, i);
		solve(p, r);
		g_string_append_printf(out, "  %s -> %s mode=%s obs=%" G_GUINT64_FORMAT " window=%zu",
				       sync_clock_format(r->a, a, sizeof a), sync_clock_format(r->b, b, sizeof b),
				       mode_name(r->mode), r->n_obs, sync_fit_count(r->fit));
		if (r->last_obs_ns != INT64_MIN)
			g_string_append_printf(out, " last_obs=%.3fs ago", (double)(now_ns - r->last_obs_ns) * 1e-9);
		if (r->have_conv)
			g_string_append_printf(out, " slope=%.12g rms=%.4g rejected=%u", r->conv.slope, r->conv.rms,
					       sync_fit_rejected(r->fit));
		else
			g_string_append_printf(out, " no fit (%s)", r->last_err ? r->last_err : "too few observations");
		g_string_append(out, "\n");
		if (r->hist && syncd_history_count(r->hist)) {
			g_string_append(out, "    history:");
			syncd_history_describe(r->hist, now_ns, r->have_conv ? r->conv.xmin : INT64_MIN, out);
			g_string_append(out, "\n");
		}
	}
}
