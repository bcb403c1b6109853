/* report.h — scoring a simulated run against the truth (chorus-demo, tests,
 * bench): detections and located calls, read back from their JSON-lines
 * files, matched with the world's true calls (sim/world.h) by time.
 *
 * Detections: node n's detection with world onset s matches the arrival of
 * call k of source i at n, c_ik + delay_i(n), when |s - arrival| <= det_tol.
 * Recall = matched arrivals / arrivals in the window (every node is expected
 * to hear every call: the scenarios keep sources audible everywhere);
 * false alarms = detections matching no arrival, per node-minute.
 * Located calls: a result with emission world time s matches, among the
 * true calls within loc_tol of it, the one nearest its position (two sources
 * may call at once).  Error = horizontal distance to the true source.
 * Only calls with c_ik in [t_lo, t_hi] count.
 *
 * World times are the scorer's own: a detection's onset cpu_ns (on its
 * node's cpu clock) and a result's emission t_cpu_ns (on the reporter's cpu
 * clock) are mapped through that node's simulated clock to the world's true
 * time (sim_world_true_at_node_cpu) and made relative to the run's epoch.
 * Nothing of the simulation travels in the events or the results.
 */
#ifndef CHORUS_SIM_SCORE_REPORT_H
#define CHORUS_SIM_SCORE_REPORT_H

#include <glib.h>
#include <stdio.h>

#include "sim/world.h"

typedef struct {
	double t_lo_s, t_hi_s; /* evaluation window, world s */
	double det_tol_s;      /* detection match tolerance, s */
	double loc_tol_s;      /* emission time match tolerance, s */
	int64_t epoch_ns;      /* true (host raw) ns of world time 0 (csim_epoch_ns) */
} demo_eval_params;

typedef struct {
	int source;      /* source id ([source.K]) */
	size_t k;        /* call index */
	double t_s;      /* emission, world s */
	double pos_m[3]; /* true position, m */
	int inside;      /* inside the nodes' convex hull (2-D) */
	int heard;       /* nodes that detected it */
	int located;     /* a result matched */
	double est_m[3]; /* estimate, m */
	double err_m;    /* horizontal error, m */
	double sd_m;     /* sqrt(sd_x^2 + sd_y^2), m */
	double ell95_m;  /* 95 % ellipse semi-major axis, m */
	double dt_ms;    /* emission time error, ms */
	int used;        /* arrivals in the fit */
	double latency_s;
	char status[24];
} demo_call;

typedef struct {
	GArray *calls; /* demo_call, by time */
	guint arrivals, arrivals_detected, detections, false_alarms;
	double node_minutes; /* nodes x window length, min */
	guint results, results_false, results_failed;
	double err_median_m, err_p90_m, err_in_median_m, err_in_p90_m; /* m; NAN when none */
	guint n_err, n_err_in;
	double lat_p50_s, lat_p95_s; /* s */
} demo_eval;

/* Score the files: det_files[i] (detect's JSON lines) of node node_ids[i],
 * and every result file (collab's JSON lines; each call reported once).
 * Missing files count as empty.  Fills *out (free with demo_eval_clear). */
void demo_evaluate(const sim_world *w, const int *node_ids, const char *const *det_files, int n_nodes,
		   const char *const *result_files, int n_results, const demo_eval_params *p, demo_eval *out);

void demo_eval_clear(demo_eval *e);

/* The per-call table (with `table`) and the summary, human readable. */
void demo_print(const demo_eval *e, gboolean table, FILE *f);

/* The per-call table as CSV.  Returns 0 or -errno. */
int demo_write_csv(const demo_eval *e, const char *path);

#endif
