/* print.c — a demo_eval as text and as CSV (see print.h). */
#include "sim/score/print.h"

#include <errno.h>
#include <math.h>

static double frac(guint a, guint b)
{
	return b ? (double)a / b : NAN;
}

int demo_print(const demo_eval *e, gboolean table, FILE *f)
{
	if (table)
		fprintf(f, "%-6s %9s %17s %17s %9s %9s %9s %7s %5s %-16s %s\n", "source", "time_s", "true (x, y) m",
			"estimate (x, y) m", "error_m", "sd_m", "ell95_m", "mahal2", "used", "status", "verdict");
	for (guint i = 0; table && i < e->calls->len; i++) {
		const demo_call *c = &g_array_index(e->calls, demo_call, i);
		char tp[40], ep[40];
		g_snprintf(tp, sizeof tp, "(%6.2f, %6.2f)", c->pos_m[0], c->pos_m[1]);
		if (c->matched && isfinite(c->est_m[0]))
			g_snprintf(ep, sizeof ep, "(%6.2f, %6.2f)", c->est_m[0], c->est_m[1]);
		else
			g_snprintf(ep, sizeof ep, "-");
		fprintf(f, "%-6d %9.3f %17s %17s %9.4f %9.4f %9.4f %7.2f %5d %-16s %s%s\n", c->source, c->t_s, tp, ep, c->err_m,
			c->sd_m, c->ell95_m, c->mahal2, c->used, c->status, c->verdict, c->inside ? "" : " (outside)");
	}
	guint n = e->calls->len;
	double M = e->located_within_m;
	fprintf(f, "%ssummary (detections and results matched one-to-one to true arrivals and calls)\n", table ? "\n" : "");
	fprintf(f, "  detection recall      %u / %u arrivals = %.3f\n", e->arrivals_detected, e->arrivals,
		frac(e->arrivals_detected, e->arrivals));
	fprintf(f, "  false alarms          %u in %.1f node-minutes = %.2f per node-minute (%u exempt: arrivals of calls outside the window)\n",
		e->false_alarms, e->node_minutes, e->node_minutes > 0 ? e->false_alarms / e->node_minutes : NAN, e->det_exempt);
	fprintf(f, "  onsets' stated errors %u matched detections: RMS of error / stated s.e. %.2f, %u beyond 5 s.e.\n",
		e->onsets_judged, e->onsets_judged ? sqrt(e->onset_z2 / e->onsets_judged) : NAN, e->onsets_beyond5);
	fprintf(f, "  detections refused    %u without a cpu time, %u without a global time (libsync refused the conversion)\n",
		e->det_no_cpu, e->det_no_global);
	fprintf(f, "  calls located         %u / %u = %.3f (status ok and within %.2f m of the truth)\n", e->located, n,
		frac(e->located, n), M);
	fprintf(f, "  calls not located     %u ok but off by more than %.2f m, %u with status not ok, %u missed\n", e->off, M,
		e->not_ok, e->missed);
	fprintf(f, "  results               %u: %u failed solves, %u solved but not ok, %u without a time, %u matching no call, %u of calls outside the window, %u superseded by a later answer\n",
		e->results, e->results_failed, e->results_not_ok, e->results_no_time, e->results_unmatched, e->results_exempt,
		e->results_superseded);
	fprintf(f, "  conversions refused   %u emission times (t_cpu_ns null), %u clips (clip service)\n", e->emission_refused,
		e->clip_refused);
	fprintf(f, "  ok results            %u matched: %u inside their own 95 %% ellipse = %.3f; %u more than %.2f m from the truth (+%u matching no call)\n",
		e->ok_scored, e->ok_in_ell95, frac(e->ok_in_ell95, e->ok_scored), e->off, M, e->ok_unmatched);
	fprintf(f, "  localization error    median %.4f m, p90 %.4f m (ok results, n=%u)\n", e->err_median_m, e->err_p90_m,
		e->n_err);
	fprintf(f, "  inside the array      median %.4f m, p90 %.4f m (n=%u)\n", e->err_in_median_m, e->err_in_p90_m, e->n_err_in);
	fprintf(f, "  latency end of call -> collab/events  p50 %.3f s, p95 %.3f s\n", e->lat_p50_s, e->lat_p95_s);
	if (e->late)
		fprintf(f, "  located late          %u of %u calls whose result came late (%u caught up after an outage, %u held until the clocks converted); latency p50 %.3f s, max %.3f s\n",
			e->late_located, e->late, e->late_caught_up, e->late_held, e->late_lat_p50_s, e->late_lat_max_s);
	return ferror(f) ? -EIO : 0;
}

int demo_write_csv(const demo_eval *e, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	/* The first 17 columns keep their order; the rest were appended. */
	fprintf(f, "source,call,time_s,true_x,true_y,inside,heard,located,est_x,est_y,error_m,sd_m,ell95_m,dt_ms,used,"
		   "latency_s,status,matched,ok,verdict,sd_x_m,sd_y_m,cov_xy_m2,mahal2,in_ell95,located_within_m,late\n");
	for (guint i = 0; i < e->calls->len; i++) {
		const demo_call *c = &g_array_index(e->calls, demo_call, i);
		fprintf(f, "%d,%zu,%.6f,%.3f,%.3f,%d,%d,%d,%.4f,%.4f,%.5f,%.5f,%.5f,%.4f,%d,%.3f,%s,%d,%d,%s,%.6g,%.6g,%.6g,%.4f,%d,%.3f,%d\n",
			c->source, c->k, c->t_s, c->pos_m[0], c->pos_m[1], c->inside, c->heard, c->located, c->est_m[0],
			c->est_m[1], c->err_m, c->sd_m, c->ell95_m, c->dt_ms, c->used, c->latency_s, c->status, c->matched, c->ok,
			c->verdict, c->sd_x_m, c->sd_y_m, c->cov_xy_m2, c->mahal2, c->in_ell95, e->located_within_m, c->late);
	}
	int rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	return rc;
}

int demo_write_onsets_csv(const demo_eval *e, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "node,source,call,template,arrival_s,error_us,se_us,z\n");
	for (guint i = 0; e->onsets && i < e->onsets->len; i++) {
		const demo_onset *o = &g_array_index(e->onsets, demo_onset, i);
		fprintf(f, "%d,%d,%zu,%d,%.6f,%.3f,%.3f,%.3f\n", o->node, o->source, o->k, o->tmpl, o->arr_s, o->err_s * 1e6,
			o->se_s * 1e6, o->err_s / o->se_s);
	}
	int rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	return rc;
}
