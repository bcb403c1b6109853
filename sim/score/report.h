/* report.h — scoring a simulated run against the truth (chorus-demo, tests,
 * bench): detections and located calls, read back from their JSON-lines
 * files, matched with the world's true calls (sim/world.h) one-to-one.
 *
 * Truth: the arrival of call k of source i at node n is
 * sim_world_arrival_s(n, mic 0, i, k), its position sim_world_call_pos(i, k)
 * (per call: a source may move).  Every call of the run takes part in the
 * matching; only calls whose start lies in [t_lo, t_hi] are scored.
 *
 * Detections, per node: the node's timed detections and the arrivals of
 * every call are matched one-to-one, greedy by |onset - arrival| within
 * det_tol (sim/score/match.h): one detection satisfies at most one arrival.
 * Recall = matched arrivals of scored calls / arrivals of scored calls
 * (every node is expected to hear every call: the scenarios keep sources
 * audible everywhere).  A detection matched to an arrival of a call outside
 * the window is exempt; an unmatched detection in [t_lo, t_hi] is a false
 * alarm (per node-minute of the window).  A detection whose onset libsync
 * could not convert to the node's cpu clock (cpu_se_ns not finite) has no
 * time: it is counted (det_no_cpu) and matches nothing.
 *
 * Results: each result line gets a time on the reporter's clock, mapped to
 * the world: its emission (t_cpu_ns), compared with a call's start, or,
 * when it has none (a failed solve, a refused conversion), the reporter's
 * own onset (onset_cpu_ns), compared with that call's arrival at the
 * reporter.  Results and calls are matched one-to-one, greedy by that time
 * distance within loc_tol; the estimate's position plays no part in the
 * choice, so the scorer never picks the call that flatters it.  A scored
 * call then gets one verdict:
 *   located  its result's status is "ok" and its horizontal error is at most
 *            located_within_m;
 *   off      status "ok" but farther than located_within_m;
 *   not_ok   a result with another status (inconsistent, too_few, …);
 *   missed   no result.
 * Every call is in the denominator of the located fraction.  Coverage: for
 * each "ok" result matched to a scored call, the squared Mahalanobis
 * distance of the truth from the estimate under its horizontal covariance
 * [[sd_x^2, cov_xy], [cov_xy, sd_y^2]]; inside the 95 % ellipse when it is
 * at most chi2_2(0.95) = -2 ln 0.05.  A result without a usable covariance
 * counts as outside.
 *
 * World times are the scorer's own: cpu times of a node are mapped through
 * that node's simulated clock to the world's true time
 * (sim_world_true_at_node_cpu) and made relative to the run's epoch.
 * Nothing of the simulation travels in the events or the results.
 */
#ifndef CHORUS_SIM_SCORE_REPORT_H
#define CHORUS_SIM_SCORE_REPORT_H

#include <glib.h>
#include <stdint.h>

#include "sim/world.h"

typedef struct {
	double t_lo_s, t_hi_s;   /* scored window of call starts, world s */
	double det_tol_s;        /* detection-to-arrival match tolerance, s */
	double loc_tol_s;        /* result-to-call time match tolerance, s */
	double located_within_m; /* a result is located within this horizontal distance of its call, m */
	int64_t epoch_ns;        /* true (host raw) ns of world time 0 (csim_epoch_ns) */
} demo_eval_params;

/* Defaults: window [0, +inf), det_tol 0.1 s, loc_tol 0.1 s,
 * located_within 1 m, epoch 0.  Pure. */
void demo_eval_params_default(demo_eval_params *p);

/* How many of the nodes that heard a call are named (demo_call.heard_id). */
#define DEMO_HEARD_IDS 32

typedef struct {
	int source;                   /* source id ([source.K]) */
	size_t src;                   /* source index (the scenario's order: sim_world's calls) */
	size_t k;                     /* call index */
	double t_s;                   /* emission, world s */
	double pos_m[3];              /* true position at the call, m */
	int inside;                   /* inside the nodes' convex hull (2-D) */
	int heard;                    /* nodes whose detection was matched to its arrival */
	int heard_id[DEMO_HEARD_IDS]; /* the first DEMO_HEARD_IDS of those nodes' ids */
	int matched;                  /* a result was matched to it */
	int ok;                       /* that result's status is "ok" */
	int located;                  /* ok and err_m <= located_within_m */
	double est_m[3];              /* estimate, m (NAN without a position) */
	double err_m;                 /* horizontal error, m */
	double sd_m;                  /* sqrt(sd_x^2 + sd_y^2), m */
	double sd_x_m;                /* m */
	double sd_y_m;                /* m */
	double cov_xy_m2;             /* m^2 */
	double mahal2;                /* squared Mahalanobis distance of the truth (horizontal); NAN unknown */
	int in_ell95;                 /* mahal2 <= chi2_2(0.95); 0 when unknown */
	double ell95_m;               /* 95 % ellipse semi-major axis, m */
	double dt_ms;                 /* emission time error, ms */
	int used;                     /* arrivals in the fit */
	double latency_s;             /* s */
	int late;                     /* why its result came late: COLLAB_LATE_* bits (1 caught up after an outage, 2 held until the clocks converted), 0 not late */
	char status[24];              /* the result's status, or "missed" */
	const char *verdict;          /* "located", "off", "not_ok", "missed" (static) */
} demo_call;

/* One detection matched to a scored arrival: its onset against the truth. */
typedef struct {
	int node;     /* node id */
	int source;   /* source id ([source.K]) */
	size_t k;     /* call index */
	int tmpl;     /* the template detect matched (0: none stated) */
	double arr_s; /* the call's true arrival at the node's mic 0, world s */
	double err_s; /* onset (world time of its cpu_ns) - arrival, s */
	double se_s;  /* the s.e. detect stated (cpu_se_ns), s */
} demo_onset;

typedef struct {
	GArray *calls;  /* demo_call, by source then time */
	GArray *onsets; /* demo_onset, by node, in the order of the detections */
	/* Detections. */
	guint arrivals, arrivals_detected; /* of scored calls, all nodes */
	guint detections;                  /* matched to scored arrivals, plus false alarms */
	guint false_alarms;                /* in the window, matching no arrival */
	guint det_exempt;                  /* matched to arrivals of calls outside the window */
	guint det_no_cpu;                  /* onset not converted to cpu (libsync refused): no time */
	guint det_no_global;               /* global_ns none (libsync refused): collab cannot use it */
	double node_minutes;               /* nodes x window length, min */
	/* Onsets' stated errors: each detection matched to a scored arrival,
	 * z = (its onset in world time - the arrival) / its cpu_se_ns (the
	 * onset's error and the cpu conversion's, as detect states them). */
	guint onsets_judged;  /* detections with a stated s.e. matched to scored arrivals */
	double onset_z2;      /* sum of z^2 over them */
	guint onsets_beyond5; /* |z| > 5 */
	/* Results (lines of the result files, every status). */
	guint results;            /* lines read */
	guint results_no_time;    /* no reporter, emission or onset time: cannot be matched */
	guint results_unmatched;  /* timed, near the window, matched to no call */
	guint results_exempt;     /* matched to calls outside the window */
	guint results_superseded; /* replaced by a later result of their reporter (not scored) */
	guint results_failed;     /* solves that failed (no position) */
	guint results_not_ok;     /* solved with a status other than ok */
	guint emission_refused;   /* solved, emission time not converted to the reporter's cpu (t_cpu_ns null) */
	guint clip_refused;       /* a clip whose clock conversion the clip service refused */
	guint ok_unmatched;       /* "ok" results among results_unmatched */
	/* Scored calls by verdict (they add up to calls->len). */
	guint located, off, not_ok, missed;
	guint ok_scored;                                               /* "ok" results matched to scored calls (= located + off) */
	guint ok_in_ell95;                                             /* of those, truth inside the 95 % ellipse */
	double err_median_m, err_p90_m, err_in_median_m, err_in_p90_m; /* over ok_scored; m; NAN when none */
	guint n_err, n_err_in;
	double lat_p50_s, lat_p95_s;           /* s */
	guint late, late_located;              /* scored calls whose result came late; of them located */
	guint late_caught_up, late_held;       /* of the late: caught up after an outage; held until the clocks converted (both may hold) */
	double late_lat_p50_s, late_lat_max_s; /* their latency, s (NAN when none) */
	double located_within_m;               /* the parameter, m */
} demo_eval;

/* The squared Mahalanobis distance of (dx, dy) (m) under the covariance
 * [[sx^2, cxy], [cxy, sy^2]] (m, m^2); NAN when the covariance is not finite
 * or not positive definite.  Pure. */
double demo_mahal2(double dx, double dy, double sx, double sy, double cxy);

/* Score the files: det_files[i] (detect's JSON lines) of node node_ids[i],
 * and every result file (collab's JSON lines; each call reported once).
 * Missing or unreadable files count as empty.  Reads the files, no other
 * I/O.  Fills *out (free with demo_eval_clear). */
void demo_evaluate(const sim_world *w, const int *node_ids, const char *const *det_files, int n_nodes,
		   const char *const *result_files, int n_results, const demo_eval_params *p, demo_eval *out);

/* Free what demo_evaluate allocated; accepts a cleared one. */
void demo_eval_clear(demo_eval *e);

#endif
