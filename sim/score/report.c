/* report.c — scoring a simulated run against the truth (see report.h). */
#include "sim/score/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/collab/result.h"

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Quantile q of v[n] (sorted in place), linear interpolation; NAN if empty. */
static double quantile(double *v, guint n, double q)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, cmp_double);
	double h = q * (n - 1);
	guint i = (guint)floor(h);
	return i + 1 < n ? v[i] + (h - i) * (v[i + 1] - v[i]) : v[n - 1];
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

void demo_evaluate(const sim_world *w, const int *node_ids, const char *const *det_files, int n_nodes,
		   const char *const *result_files, int n_results, const demo_eval_params *p, demo_eval *out)
{
	memset(out, 0, sizeof *out);
	out->calls = g_array_new(FALSE, TRUE, sizeof(demo_call));
	const sim_scenario *sc = sim_world_scenario(w);
	for (size_t i = 0; i < sim_scenario_n_sources(sc); i++) {
		const sim_source_cfg *s = sim_scenario_source(sc, i);
		for (size_t k = 0; k < sim_world_n_calls(w, i); k++) {
			double t = sim_world_call_time_s(w, i, k);
			if (t < p->t_lo_s || t > p->t_hi_s)
				continue;
			demo_call c = {.source = s->id, .k = k, .t_s = t, .err_m = NAN, .sd_m = NAN, .ell95_m = NAN, .dt_ms = NAN, .latency_s = NAN};
			memcpy(c.pos_m, s->pos_m, sizeof c.pos_m);
			c.inside = inside_hull(sc, c.pos_m);
			g_strlcpy(c.status, "missed", sizeof c.status);
			g_array_append_val(out->calls, c);
		}
	}
	/* Detections. */
	out->node_minutes = n_nodes * (p->t_hi_s - p->t_lo_s) / 60.0;
	for (int ni = 0; ni < n_nodes; ni++) {
		gchar **lines = read_lines(det_files[ni]);
		GArray *onsets = g_array_new(FALSE, FALSE, sizeof(double));
		for (gchar **l = lines; *l; l++) {
			/* An onset that never reached the cpu clock has no time. */
			double s = isfinite(collab_json_number(*l, "cpu_se_ns"))
					   ? world_s(w, node_ids[ni], collab_json_number(*l, "cpu_ns"), p->epoch_ns)
					   : NAN;
			if (isfinite(s) && s >= p->t_lo_s && s <= p->t_hi_s + 0.5)
				g_array_append_val(onsets, s);
		}
		g_strfreev(lines);
		gboolean *used = g_new0(gboolean, onsets->len ? onsets->len : 1);
		for (guint c = 0; c < out->calls->len; c++) {
			demo_call *dc = &g_array_index(out->calls, demo_call, c);
			size_t src = 0;
			for (size_t i = 0; i < sim_scenario_n_sources(sc); i++)
				if (sim_scenario_source(sc, i)->id == dc->source)
					src = i;
			double arr = dc->t_s + sim_world_delay_s(w, node_ids[ni], 0, src);
			out->arrivals++;
			int best = -1;
			for (guint j = 0; j < onsets->len; j++) {
				double d = fabs(g_array_index(onsets, double, j) - arr);
				if (d <= p->det_tol_s && (best < 0 || d < fabs(g_array_index(onsets, double, best) - arr)))
					best = (int)j;
			}
			if (best >= 0) {
				out->arrivals_detected++;
				dc->heard++;
				used[best] = TRUE;
			}
		}
		for (guint j = 0; j < onsets->len; j++) {
			double s = g_array_index(onsets, double, j);
			if (s > p->t_hi_s)
				continue; /* the arrival of a call after the window */
			out->detections++;
			/* A detection matching no counted arrival is a false alarm
			 * unless it is an arrival of a call just outside the window. */
			if (!used[j]) {
				gboolean edge = FALSE;
				for (size_t i = 0; i < sim_scenario_n_sources(sc) && !edge; i++)
					for (size_t k = 0; k < sim_world_n_calls(w, i) && !edge; k++) {
						double arr = sim_world_call_time_s(w, i, k) + sim_world_delay_s(w, node_ids[ni], 0, i);
						edge = fabs(arr - s) <= p->det_tol_s;
					}
				if (!edge)
					out->false_alarms++;
			}
		}
		g_free(used);
		g_array_free(onsets, TRUE);
	}
	/* Located calls. */
	GArray *errs = g_array_new(FALSE, FALSE, sizeof(double)), *errs_in = g_array_new(FALSE, FALSE, sizeof(double)),
	       *lats = g_array_new(FALSE, FALSE, sizeof(double));
	for (int fi = 0; fi < n_results; fi++) {
		gchar **lines = read_lines(result_files[fi]);
		for (gchar **l = lines; *l; l++) {
			if (!**l)
				continue;
			double rep = collab_json_number(*l, "reporter");
			double s = isfinite(rep) ? world_s(w, (int)rep, collab_json_number(*l, "t_cpu_ns"), p->epoch_ns) : NAN;
			double x = collab_json_number(*l, "x"),
			       y = collab_json_number(*l, "y");
			if (!isfinite(x)) {
				out->results_failed++;
				continue;
			}
			if (!(s >= p->t_lo_s - p->loc_tol_s && s <= p->t_hi_s + p->loc_tol_s))
				continue;
			out->results++;
			int best = -1;
			double bd = INFINITY;
			for (guint c = 0; c < out->calls->len; c++) {
				demo_call *dc = &g_array_index(out->calls, demo_call, c);
				double d = hypot(dc->pos_m[0] - x, dc->pos_m[1] - y);
				if (fabs(dc->t_s - s) <= p->loc_tol_s && !dc->located && d < bd) {
					best = (int)c;
					bd = d;
				}
			}
			if (best < 0) {
				out->results_false++;
				continue;
			}
			demo_call *dc = &g_array_index(out->calls, demo_call, best);
			dc->located = 1;
			dc->est_m[0] = x;
			dc->est_m[1] = y;
			dc->est_m[2] = collab_json_number(*l, "z");
			dc->err_m = bd;
			dc->sd_m = hypot(collab_json_number(*l, "sd_x"), collab_json_number(*l, "sd_y"));
			dc->ell95_m = collab_json_number(*l, "ell95_major");
			dc->dt_ms = (s - dc->t_s) * 1e3;
			dc->latency_s = collab_json_number(*l, "latency_s");
			const char *u = strstr(*l, "\"used\":[");
			dc->used = 0;
			if (u && u[8] != ']') {
				dc->used = 1;
				for (u += 8; *u && *u != ']'; u++)
					dc->used += *u == ',';
			}
			const char *st = strstr(*l, "\"status\":\"");
			if (st) {
				st += 10;
				size_t n = strcspn(st, "\"");
				g_strlcpy(dc->status, st, MIN(n + 1, sizeof dc->status));
			}
			g_array_append_val(errs, bd);
			if (dc->inside)
				g_array_append_val(errs_in, bd);
			if (isfinite(dc->latency_s))
				g_array_append_val(lats, dc->latency_s);
		}
		g_strfreev(lines);
	}
	out->n_err = errs->len;
	out->n_err_in = errs_in->len;
	out->err_median_m = quantile((double *)errs->data, errs->len, 0.5);
	out->err_p90_m = quantile((double *)errs->data, errs->len, 0.9);
	out->err_in_median_m = quantile((double *)errs_in->data, errs_in->len, 0.5);
	out->err_in_p90_m = quantile((double *)errs_in->data, errs_in->len, 0.9);
	out->lat_p50_s = quantile((double *)lats->data, lats->len, 0.5);
	out->lat_p95_s = quantile((double *)lats->data, lats->len, 0.95);
	g_array_free(errs, TRUE);
	g_array_free(errs_in, TRUE);
	g_array_free(lats, TRUE);
}

void demo_eval_clear(demo_eval *e)
{
	if (e->calls)
		g_array_free(e->calls, TRUE);
	e->calls = NULL;
}

void demo_print(const demo_eval *e, gboolean table, FILE *f)
{
	if (table)
		fprintf(f, "%-6s %9s %17s %17s %9s %9s %9s %5s %-14s\n", "source", "time_s", "true (x, y) m", "estimate (x, y) m",
			"error_m", "sd_m", "ell95_m", "used", "status");
	guint located = 0;
	for (guint i = 0; i < e->calls->len; i++) {
		const demo_call *c = &g_array_index(e->calls, demo_call, i);
		char tp[40], ep[40];
		g_snprintf(tp, sizeof tp, "(%6.2f, %6.2f)", c->pos_m[0], c->pos_m[1]);
		if (c->located)
			g_snprintf(ep, sizeof ep, "(%6.2f, %6.2f)", c->est_m[0], c->est_m[1]);
		else
			g_snprintf(ep, sizeof ep, "-");
		if (table)
			fprintf(f, "%-6d %9.3f %17s %17s %9.4f %9.4f %9.4f %5d %-14s%s\n", c->source, c->t_s, tp, ep, c->err_m,
				c->sd_m, c->ell95_m, c->used, c->status, c->inside ? "" : " (outside)");
		located += c->located;
	}
	fprintf(f, "%ssummary\n", table ? "\n" : "");
	fprintf(f, "  detection recall      %u / %u arrivals = %.3f\n", e->arrivals_detected, e->arrivals,
		e->arrivals ? (double)e->arrivals_detected / e->arrivals : NAN);
	fprintf(f, "  false alarms          %u in %.1f node-minutes = %.2f per node-minute\n", e->false_alarms,
		e->node_minutes, e->node_minutes > 0 ? e->false_alarms / e->node_minutes : NAN);
	fprintf(f, "  calls located         %u / %u = %.3f (%u unmatched results, %u failed solves)\n", located,
		e->calls->len, e->calls->len ? (double)located / e->calls->len : NAN, e->results_false, e->results_failed);
	fprintf(f, "  localization error    median %.4f m, p90 %.4f m (n=%u)\n", e->err_median_m, e->err_p90_m, e->n_err);
	fprintf(f, "  inside the array      median %.4f m, p90 %.4f m (n=%u)\n", e->err_in_median_m, e->err_in_p90_m, e->n_err_in);
	fprintf(f, "  latency end of call -> collab/events  p50 %.3f s, p95 %.3f s\n", e->lat_p50_s, e->lat_p95_s);
}

int demo_write_csv(const demo_eval *e, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "source,call,time_s,true_x,true_y,inside,heard,located,est_x,est_y,error_m,sd_m,ell95_m,dt_ms,used,latency_s,status\n");
	for (guint i = 0; i < e->calls->len; i++) {
		const demo_call *c = &g_array_index(e->calls, demo_call, i);
		fprintf(f, "%d,%zu,%.6f,%.3f,%.3f,%d,%d,%d,%.4f,%.4f,%.5f,%.5f,%.5f,%.4f,%d,%.3f,%s\n", c->source, c->k, c->t_s,
			c->pos_m[0], c->pos_m[1], c->inside, c->heard, c->located, c->est_m[0], c->est_m[1], c->err_m, c->sd_m,
			c->ell95_m, c->dt_ms, c->used, c->latency_s, c->status);
	}
	return fclose(f) == 0 ? 0 : -errno;
}
