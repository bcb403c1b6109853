/* report.c — scoring a simulated run against the truth, one-to-one (see report.h). */
#include "sim/score/report.h"

#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/collab/result.h"
#include "apps/collab/sharemsg.h"
#include "sim/score/match.h"

static gchar **read_lines(const char *path)
{
	char *text = NULL;
	if (!path || !g_file_get_contents(path, &text, NULL, NULL))
		return g_new0(gchar *, 1);
	gchar **l = g_strsplit(text, "\n", -1);
	g_free(text);
	return l;
}

/* World seconds of node `node`'s cpu time cpu_ns; NAN when unknown. */
static double world_s(const sim_world *w, int node, double cpu_ns, int64_t epoch_ns)
{
	if (!isfinite(cpu_ns))
		return NAN;
	int64_t t = sim_world_true_at_node_cpu(w, node, (int64_t)llround(cpu_ns));
	return t == INT64_MIN ? NAN : (double)(t - epoch_ns) * 1e-9;
}

/* Quantile q of v[n] (sorted in place), linear interpolation between order
 * statistics (GSL's definition); NAN if empty. */
static double quantile(double *v, guint n, double q)
{
	if (!n)
		return NAN;
	gsl_sort(v, 1, n);
	return gsl_stats_quantile_from_sorted_data(v, 1, n, q);
}

static double cross(const double *o, const double *a, const double *b)
{
	return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int by_x(const void *a, const void *b)
{
	const double *p = a, *q = b;
	return p[0] < q[0] ? -1 : p[0] > q[0] ? 1
					      : (p[1] < q[1] ? -1 : p[1] > q[1]);
}

/* Inside the convex hull of the nodes (monotone chain), 2-D. */
static int inside_hull(const sim_scenario *sc, const double *p)
{
	size_t n = sim_scenario_n_nodes(sc), k = 0;
	double(*pt)[2] = g_malloc(n * sizeof *pt), (*h)[2] = g_malloc((2 * n + 1) * sizeof *h);
	for (size_t i = 0; i < n; i++) {
		pt[i][0] = sim_scenario_node(sc, i)->pos_m[0];
		pt[i][1] = sim_scenario_node(sc, i)->pos_m[1];
	}
	qsort(pt, n, sizeof pt[0], by_x);
	for (size_t i = 0; i < n; i++) {
		while (k >= 2 && cross(h[k - 2], h[k - 1], pt[i]) <= 0)
			k--;
		memcpy(h[k++], pt[i], sizeof h[0]);
	}
	for (size_t i = n - 1, t = k + 1; i-- > 0;) {
		while (k >= t && cross(h[k - 2], h[k - 1], pt[i]) <= 0)
			k--;
		memcpy(h[k++], pt[i], sizeof h[0]);
	}
	int in = k >= 4; /* a closed hull with at least 3 corners */
	for (size_t i = 0; in && i + 1 < k; i++)
		if (cross(h[i], h[i + 1], p) < 0)
			in = 0;
	g_free(pt);
	g_free(h);
	return in;
}

void demo_eval_params_default(demo_eval_params *p)
{
	*p = (demo_eval_params){.t_lo_s = 0, .t_hi_s = INFINITY, .det_tol_s = 0.1, .loc_tol_s = 0.1, .located_within_m = 1.0};
}

double demo_mahal2(double dx, double dy, double sx, double sy, double cxy)
{
	double a = sx * sx, c = sy * sy, det = a * c - cxy * cxy;
	if (!isfinite(dx) || !isfinite(dy) || !isfinite(det) || !(a > 0) || !(c > 0) || !(det > 0))
		return NAN;
	return (c * dx * dx - 2 * cxy * dx * dy + a * dy * dy) / det;
}

/* Every call of the run, scored or not: the matching sees them all. */
typedef struct {
	size_t src; /* source index (file order) */
	size_t k;   /* call index */
	double t_s; /* start, world s */
	int scored; /* start in the window */
	int row;    /* index in out->calls when scored, else -1 */
} any_call;

static GArray *all_calls(const sim_world *w, const demo_eval_params *p, demo_eval *out)
{
	const sim_scenario *sc = sim_world_scenario(w);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(any_call));
	for (size_t i = 0; i < sim_scenario_n_sources(sc); i++) {
		for (size_t k = 0; k < sim_world_n_calls(w, i); k++) {
			any_call a = {i, k, sim_world_call_time_s(w, i, k), 0, -1};
			a.scored = a.t_s >= p->t_lo_s && a.t_s <= p->t_hi_s;
			if (a.scored) {
				demo_call c = {.source = sim_scenario_source(sc, i)->id, .src = i, .k = k, .t_s = a.t_s};
				c.err_m = c.sd_m = c.sd_x_m = c.sd_y_m = c.cov_xy_m2 = c.mahal2 = c.ell95_m = c.dt_ms = c.latency_s = NAN;
				c.est_m[0] = c.est_m[1] = c.est_m[2] = NAN;
				if (!sim_world_call_pos(w, i, k, c.pos_m))
					c.pos_m[0] = c.pos_m[1] = c.pos_m[2] = NAN;
				c.inside = inside_hull(sc, c.pos_m);
				g_strlcpy(c.status, "missed", sizeof c.status);
				c.verdict = "missed";
				a.row = (int)out->calls->len;
				g_array_append_val(out->calls, c);
			}
			g_array_append_val(all, a);
		}
	}
	return all;
}

/* One node's detections against every call's arrival at it. */
static void score_node(const sim_world *w, int node, const char *det_file, const GArray *all, const demo_eval_params *p,
		       demo_eval *out)
{
	gchar **lines = read_lines(det_file);
	GArray *onsets = g_array_new(FALSE, FALSE, sizeof(double));
	GArray *ses = g_array_new(FALSE, FALSE, sizeof(double)); /* their stated s.e., s */
	GArray *tmpls = g_array_new(FALSE, FALSE, sizeof(int));  /* their templates */
	for (gchar **l = lines; *l; l++) {
		if (!**l)
			continue;
		char gs[8];
		if (collab_json_string(*l, "global_ns", gs, sizeof gs) == 0 && !strcmp(gs, "none"))
			out->det_no_global++;
		/* An onset that never reached the cpu clock has no time. */
		if (!isfinite(collab_json_number(*l, "cpu_se_ns"))) {
			out->det_no_cpu++;
			continue;
		}
		double s = world_s(w, node, collab_json_number(*l, "cpu_ns"), p->epoch_ns);
		if (isfinite(s)) {
			double se = collab_json_number(*l, "cpu_se_ns") * 1e-9, tn = collab_json_number(*l, "template");
			int tm = isfinite(tn) ? (int)tn : 0;
			g_array_append_val(onsets, s);
			g_array_append_val(ses, se);
			g_array_append_val(tmpls, tm);
		} else
			out->det_no_cpu++;
	}
	g_strfreev(lines);
	double *arr = g_new(double, all->len + 1);
	for (guint j = 0; j < all->len; j++) {
		const any_call *a = &g_array_index(all, any_call, j);
		arr[j] = sim_world_arrival_s(w, node, 0, a->src, a->k);
	}
	int *d2a = g_new(int, onsets->len + 1), *a2d = g_new(int, all->len + 1);
	score_match_times((const double *)(void *)onsets->data, onsets->len, arr, all->len, p->det_tol_s, d2a, a2d);
	for (guint j = 0; j < all->len; j++) {
		const any_call *a = &g_array_index(all, any_call, j);
		if (!a->scored)
			continue;
		out->arrivals++;
		if (a2d[j] >= 0) {
			out->arrivals_detected++;
			out->detections++;
			demo_call *c = &g_array_index(out->calls, demo_call, a->row);
			if (c->heard < DEMO_HEARD_IDS)
				c->heard_id[c->heard] = node;
			c->heard++;
		}
	}
	for (guint i = 0; i < onsets->len; i++) {
		double s = g_array_index(onsets, double, i);
		if (d2a[i] >= 0) {
			if (!g_array_index(all, any_call, d2a[i]).scored && s >= p->t_lo_s && s <= p->t_hi_s)
				out->det_exempt++;
			double se = g_array_index(ses, double, i);
			if (g_array_index(all, any_call, d2a[i]).scored && se > 0) {
				double z = (s - arr[d2a[i]]) / se;
				const any_call *a = &g_array_index(all, any_call, d2a[i]);
				demo_onset o = {.node = node, .source = g_array_index(out->calls, demo_call, a->row).source, .k = a->k, .tmpl = g_array_index(tmpls, int, i), .arr_s = arr[d2a[i]], .err_s = s - arr[d2a[i]], .se_s = se};
				g_array_append_val(out->onsets, o);
				out->onsets_judged++;
				out->onset_z2 += z * z;
				out->onsets_beyond5 += fabs(z) > 5.0;
			}
		} else if (s >= p->t_lo_s && s <= p->t_hi_s) {
			out->false_alarms++;
			out->detections++;
		}
	}
	g_free(arr);
	g_free(d2a);
	g_free(a2d);
	g_array_free(onsets, TRUE);
	g_array_free(ses, TRUE);
	g_array_free(tmpls, TRUE);
}

/* A result line, as far as scoring needs it. */
typedef struct {
	const char *line;
	int reporter;   /* node id, or -1 */
	double emit_s;  /* emission, world s; NAN if none */
	double onset_s; /* reporter's own onset, world s; NAN if none */
	int superseded; /* a later result of its reporter replaces it ("supersedes") */
} res_line;

/* Results that a later one of their reporter supersedes (collab's answer
 * again to a call it answered untested, completed by late arrivals) are
 * marked, and scored no more: the newer is the answer.  A reporter's seqs
 * start again when its collab restarts, so the one superseded is the
 * latest before of that reporter and seq. */
static void mark_superseded(GArray *rl)
{
	/* reporter << 40 | seq -> its latest line's index + 1 */
	GHashTable *last = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	for (guint i = 0; i < rl->len; i++) {
		res_line *r = &g_array_index(rl, res_line, i);
		double seq = collab_json_number(r->line, "seq"), sup = collab_json_number(r->line, "supersedes");
		if (r->reporter < 0 || !isfinite(seq) || seq < 0 || seq >= (double)(1LL << 40))
			continue;
		if (isfinite(sup) && sup >= 0 && sup < (double)(1LL << 40)) {
			gint64 k = (gint64)r->reporter << 40 | (gint64)sup;
			gpointer at = g_hash_table_lookup(last, &k);
			if (at)
				g_array_index(rl, res_line, GPOINTER_TO_UINT(at) - 1).superseded = 1;
		}
		gint64 k = (gint64)r->reporter << 40 | (gint64)seq;
		g_hash_table_insert(last, g_memdup2(&k, sizeof k), GUINT_TO_POINTER(i + 1));
	}
	g_hash_table_destroy(last);
}

static void status_of(const char *line, char *st, size_t len)
{
	if (collab_json_string(line, "status", st, len) < 0)
		g_strlcpy(st, "unknown", len);
}

/* Fill the call's row from its matched result. */
static void take_result(demo_call *dc, const char *line, double emit_s, const demo_eval_params *p)
{
	dc->matched = 1;
	status_of(line, dc->status, sizeof dc->status);
	dc->ok = !strcmp(dc->status, "ok");
	dc->est_m[0] = collab_json_number(line, "x");
	dc->est_m[1] = collab_json_number(line, "y");
	dc->est_m[2] = collab_json_number(line, "z");
	dc->err_m = hypot(dc->est_m[0] - dc->pos_m[0], dc->est_m[1] - dc->pos_m[1]);
	dc->sd_x_m = collab_json_number(line, "sd_x");
	dc->sd_y_m = collab_json_number(line, "sd_y");
	dc->cov_xy_m2 = collab_json_number(line, "cov_xy");
	dc->sd_m = hypot(dc->sd_x_m, dc->sd_y_m);
	dc->mahal2 = demo_mahal2(dc->est_m[0] - dc->pos_m[0], dc->est_m[1] - dc->pos_m[1], dc->sd_x_m, dc->sd_y_m,
				 dc->cov_xy_m2);
	/* chi2 with 2 degrees of freedom: P(X > q) = exp(-q / 2). */
	dc->in_ell95 = isfinite(dc->mahal2) && dc->mahal2 <= -2 * log(0.05);
	dc->ell95_m = collab_json_number(line, "ell95_major");
	dc->dt_ms = (emit_s - dc->t_s) * 1e3;
	dc->latency_s = collab_json_number(line, "latency_s");
	dc->late = (int)collab_json_late(line);
	long used = collab_json_array_len(line, "used");
	dc->used = used > 0 ? (int)used : 0;
	/* A result without a position (a failed solve) is never located. */
	dc->located = dc->ok && dc->err_m <= p->located_within_m;
	dc->verdict = !dc->ok ? "not_ok" : dc->located ? "located"
						       : "off";
}

static void score_results(const sim_world *w, const char *const *files, int n_files, const GArray *all,
			  const demo_eval_params *p, demo_eval *out)
{
	GPtrArray *texts = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
	GArray *rl = g_array_new(FALSE, FALSE, sizeof(res_line));
	for (int fi = 0; fi < n_files; fi++) {
		gchar **lines = read_lines(files[fi]);
		g_ptr_array_add(texts, lines);
		for (gchar **l = lines; *l; l++) {
			if (!**l)
				continue;
			double rep = collab_json_number(*l, "reporter");
			res_line r = {*l, -1, NAN, NAN, 0};
			if (isfinite(rep) && rep >= 0 && rep <= G_MAXINT && sim_world_node(w, (int)rep)) {
				r.reporter = (int)rep;
				r.emit_s = world_s(w, r.reporter, collab_json_number(*l, "t_cpu_ns"), p->epoch_ns);
				r.onset_s = world_s(w, r.reporter, collab_json_number(*l, "onset_cpu_ns"), p->epoch_ns);
			}
			g_array_append_val(rl, r);
		}
	}
	mark_superseded(rl);
	for (guint i = 0; i < rl->len; i++) {
		const res_line *r = &g_array_index(rl, res_line, i);
		const char *l = r->line;
		out->results++;
		if (r->superseded) {
			out->results_superseded++;
			continue;
		}
		gboolean solved = isfinite(collab_json_number(l, "x"));
		if (!solved)
			out->results_failed++;
		else {
			char st[16];
			if (collab_json_string(l, "status", st, sizeof st) < 0 || strcmp(st, "ok"))
				out->results_not_ok++;
		}
		if (solved && !isfinite(collab_json_number(l, "t_cpu_ns")))
			out->emission_refused++;
		/* The clip service's reasons for a refused conversion
		 * (apps/collab/clip.c: "global to audioK: …", "audioK to global: …"). */
		if (strstr(l, "global to audio") || strstr(l, " to global: "))
			out->clip_refused++;
		if (!isfinite(r->emit_s) && !isfinite(r->onset_s))
			out->results_no_time++;
	}
	/* Candidates: emission against the call's start, else the reporter's
	 * onset against the call's arrival at the reporter.  A result that
	 * places its call (a position and an emission time) is matched before
	 * any that does not: two groups formed for one call (the overlap row:
	 * two callers of one species 50 ms apart, one group answered at the
	 * first caller's place and time, another with the first caller's
	 * detection as its reporter `failed`) gave the call to the failed
	 * result, whose reporter's onset was nearer its arrival, and scored
	 * the right answer against the second caller, 14.8 m off. */
	GArray *cand = g_array_new(FALSE, FALSE, sizeof(score_cand));
	for (guint i = 0; i < rl->len; i++) {
		const res_line *r = &g_array_index(rl, res_line, i);
		if (r->reporter < 0 || r->superseded || (!isfinite(r->emit_s) && !isfinite(r->onset_s)))
			continue;
		for (guint j = 0; j < all->len; j++) {
			const any_call *a = &g_array_index(all, any_call, j);
			double d = isfinite(r->emit_s) ? fabs(r->emit_s - a->t_s)
						       : fabs(r->onset_s - sim_world_arrival_s(w, r->reporter, 0, a->src, a->k));
			if (d <= p->loc_tol_s) {
				score_cand c = {i, j, d, !(isfinite(r->emit_s) && isfinite(collab_json_number(r->line, "x")))};
				g_array_append_val(cand, c);
			}
		}
	}
	int *r2c = g_new(int, rl->len + 1), *c2r = g_new(int, all->len + 1);
	score_match_greedy((score_cand *)(void *)cand->data, cand->len, rl->len, all->len, r2c, c2r);
	g_array_free(cand, TRUE);
	GArray *errs = g_array_new(FALSE, FALSE, sizeof(double)), *errs_in = g_array_new(FALSE, FALSE, sizeof(double)),
	       *lats = g_array_new(FALSE, FALSE, sizeof(double)), *late_lats = g_array_new(FALSE, FALSE, sizeof(double));
	for (guint i = 0; i < rl->len; i++) {
		const res_line *r = &g_array_index(rl, res_line, i);
		if (r->superseded)
			continue;
		if (r2c[i] < 0) {
			double t = isfinite(r->emit_s) ? r->emit_s : r->onset_s;
			/* Onsets come after the start by the propagation delay. */
			double hi = p->t_hi_s + p->loc_tol_s + (isfinite(r->emit_s) ? 0 : 0.5);
			if (t >= p->t_lo_s - p->loc_tol_s && t <= hi) {
				out->results_unmatched++;
				out->ok_unmatched += strstr(r->line, "\"status\":\"ok\"") != NULL;
			}
			continue;
		}
		const any_call *a = &g_array_index(all, any_call, r2c[i]);
		if (!a->scored) {
			out->results_exempt++;
			continue;
		}
		demo_call *dc = &g_array_index(out->calls, demo_call, a->row);
		take_result(dc, r->line, r->emit_s, p);
		if (dc->late) {
			out->late++;
			out->late_located += dc->located;
			out->late_caught_up += (dc->late & COLLAB_LATE_RESENT) != 0;
			out->late_held += (dc->late & COLLAB_LATE_HELD) != 0;
			if (isfinite(dc->latency_s))
				g_array_append_val(late_lats, dc->latency_s);
		}
		if (!dc->ok)
			continue;
		out->ok_scored++;
		out->ok_in_ell95 += dc->in_ell95;
		g_array_append_val(errs, dc->err_m);
		if (dc->inside)
			g_array_append_val(errs_in, dc->err_m);
		if (isfinite(dc->latency_s))
			g_array_append_val(lats, dc->latency_s);
	}
	out->n_err = errs->len;
	out->n_err_in = errs_in->len;
	out->err_median_m = quantile((double *)(void *)errs->data, errs->len, 0.5);
	out->err_p90_m = quantile((double *)(void *)errs->data, errs->len, 0.9);
	out->err_in_median_m = quantile((double *)(void *)errs_in->data, errs_in->len, 0.5);
	out->err_in_p90_m = quantile((double *)(void *)errs_in->data, errs_in->len, 0.9);
	out->lat_p50_s = quantile((double *)(void *)lats->data, lats->len, 0.5);
	out->lat_p95_s = quantile((double *)(void *)lats->data, lats->len, 0.95);
	out->late_lat_p50_s = quantile((double *)(void *)late_lats->data, late_lats->len, 0.5);
	out->late_lat_max_s = quantile((double *)(void *)late_lats->data, late_lats->len, 1.0);
	g_array_free(late_lats, TRUE);
	g_array_free(errs, TRUE);
	g_array_free(errs_in, TRUE);
	g_array_free(lats, TRUE);
	g_free(r2c);
	g_free(c2r);
	g_array_free(rl, TRUE);
	g_ptr_array_free(texts, TRUE);
}

void demo_evaluate(const sim_world *w, const int *node_ids, const char *const *det_files, int n_nodes,
		   const char *const *result_files, int n_results, const demo_eval_params *p, demo_eval *out)
{
	memset(out, 0, sizeof *out);
	out->calls = g_array_new(FALSE, TRUE, sizeof(demo_call));
	out->onsets = g_array_new(FALSE, TRUE, sizeof(demo_onset));
	out->located_within_m = p->located_within_m;
	GArray *all = all_calls(w, p, out);
	out->node_minutes = n_nodes * (p->t_hi_s - p->t_lo_s) / 60.0;
	for (int ni = 0; ni < n_nodes; ni++)
		score_node(w, node_ids[ni], det_files[ni], all, p, out);
	score_results(w, result_files, n_results, all, p, out);
	for (guint i = 0; i < out->calls->len; i++) {
		const demo_call *c = &g_array_index(out->calls, demo_call, i);
		out->located += c->located;
		out->off += c->matched && c->ok && !c->located;
		out->not_ok += c->matched && !c->ok;
		out->missed += !c->matched;
	}
	g_array_free(all, TRUE);
}

void demo_eval_clear(demo_eval *e)
{
	if (e->calls)
		g_array_free(e->calls, TRUE);
	e->calls = NULL;
	if (e->onsets)
		g_array_free(e->onsets, TRUE);
	e->onsets = NULL;
}
