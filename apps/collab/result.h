/* result.h — a located call: its JSON line (collab/events, the JSON-lines
 * file) and the PNG map (gnuplot).
 *
 * JSON keys (one object per line):
 *   v, reporter, seq, status ("ok", "ambiguous", "coarse", "duplicate", "ill_conditioned",
 *   "untested", "inconsistent", "no_convergence", "too_few", "degenerate", "failed"), why,
 *   timing ("correlation": the clips' GCC, or "onsets": the detected onsets alone, where the
 *   clips did not correlate or the onsets refused their answer; "coarse" is such an answer
 *   whose 95 % ellipse is wider than coarse_m),
 *   duplicate_of (seq of the earlier result it repeats),
 *   supersedes (seq of this reporter's earlier result of the same call, which
 *   this one replaces: that answer was untested, from too few arrivals, and
 *   late arrivals completed the call since; a consumer keeps the newer),
 *   x, y, z (m), sd_x, sd_y (m), cov_xy (m^2), ell95_major, ell95_minor (m,
 *   semi-axes of the 95 % ellipse), ell95_angle_deg, dim,
 *   t_global_ns, t_se_ns (emission time), chi2, dof, p_value,
 *   nodes [ids heard], used [ids in the fit], rejected (id or -1),
 *   tdoa_us {id: arrival minus the reference's, µs}, ref,
 *   latency_s (publication minus the end of the call, global),
 *   late (true when a detection of the group came late: latency_s is then
 *   the delay that caused; absent otherwise), late_why (with late: an array
 *   of "caught_up" — resent after an outage or a split — and/or "held" —
 *   held on its node until the clocks converted its onset, as at start-up),
 *   t_cpu_ns (emission on the reporter's cpu clock, ns; null when the solve
 *   failed or libsync refused the conversion), onset_cpu_ns (the reporter's
 *   own detected onset on its cpu clock, ns; null when it has none: present
 *   for failed solves too, so a scorer can tell which call failed).
 * sd_x, sd_y and cov_xy carry 6 significant digits: the horizontal
 * covariance [[sd_x^2, cov_xy], [cov_xy, sd_y^2]] stays positive definite
 * for an elongated ellipse (a coverage check inverts it).
 */
#ifndef CHORUS_COLLAB_RESULT_H
#define CHORUS_COLLAB_RESULT_H

#include <glib.h>
#include <stdint.h>

#include "apps/collab/nodes.h"
#include "apps/collab/tdoa.h"

typedef struct {
	uint32_t reporter;
	uint64_t seq;
	int rc; /* tdoa_locate's return */
	int n;  /* nodes in the group */
	uint32_t nodes[TDOA_MAX];
	tdoa_result tr;
	int64_t t_global_ns; /* emission, global ns */
	double t_se_ns;
	double t_crb_se_ns;    /* the same from the onsets' bounds alone (tdoa_result.ref_t_crb_se_ns): the
				* duplicate rule's; 0 = t_se_ns */
	double latency_s;      /* NAN if unknown */
	int64_t t_cpu_ns;      /* emission in the reporter's cpu clock, ns; INT64_MIN if unknown */
	int64_t onset_cpu_ns;  /* the reporter's own detected onset, its cpu clock, ns; INT64_MIN if unknown */
	char why[200];         /* fetch or solve failure */
	uint64_t duplicate_of; /* an earlier ok result of this reporter locating the same sound, or 0 */
	uint64_t supersedes;   /* this reporter's earlier result of the same call that this one replaces, or 0 */
	double dur_s;          /* the group's longest detected call, s */
	int kind;              /* the group's call kind: its first detection's nonzero template id, 0 none */
	guint late;            /* its group held detections that came late: COLLAB_LATE_* bits (sharemsg.h) */
} collab_result;

/* Append the JSON object of r (no newline) to out. */
void collab_result_json(const collab_result *r, GString *out);

/* "ok", "inconsistent", … for r. */
const char *collab_result_status(const collab_result *r);

/* Whether ok results a and b locate the same sound: emission times within
 * 3 s.d. of their difference plus 1 ms — plus the longer call when the two
 * groups are of different kinds (an emission time rests on the
 * reference's template onset, which a template matched inside another
 * kind's call puts anywhere in it) — and positions within the 99 % region
 * of the sum of their covariances.  Two groups of one sound (a detector
 * that labelled part of one call as another kind) must not make two
 * answers; one frog calling twice, the second call starting before the
 * first ended, makes two (same kind: the onsets are the same template's,
 * and a call's later start is a later sound). */
gboolean collab_result_same_sound(const collab_result *a, const collab_result *b);

/* Member key of the JSON object on a line (json-glib), as a number, or NAN
 * (not JSON, no such member, not a number). */
double collab_json_number(const char *line, const char *key);

/* ... as a boolean: 1 true, 0 false, -1 (not JSON, no such member, not a
 * boolean). */
int collab_json_bool(const char *line, const char *key);

/* ... as a string into buf[len]: 0, or -1 (not JSON, no such member, not a
 * string). */
int collab_json_string(const char *line, const char *key, char *buf, size_t len);

/* ... the length of an array member, or -1. */
long collab_json_array_len(const char *line, const char *key);

/* Why a result line is late: its late_why as COLLAB_LATE_* bits
 * (sharemsg.h), 0 when not late (COLLAB_LATE_RESENT for a late result
 * without late_why, as an older collab wrote). */
guint collab_json_late(const char *line);

/* Draw a PNG map with gnuplot: nodes, the located calls of the JSON-lines
 * file `jsonl` with their 95 % ellipses, and n_truth true source positions
 * truth_xy[2k], truth_xy[2k+1] (m; a simulation's scorer has them, collab
 * never does: NULL, 0).  Returns 0, or -errno / -ECHILD (gnuplot missing or failed) with
 * the reason in why. */
int collab_map(const char *jsonl, const collab_nodes *nodes, const double *truth_xy, size_t n_truth, const char *png,
	       const char *title, char *why, size_t len);

#endif
