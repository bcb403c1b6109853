/* gapcheck.h — is every audio gap a client saw explained?  (issue 15's
 * chaos soak: "any audio gap not explained by a reported xrun or downtime"
 * fails it.)  Pure: numbers in, verdicts out.
 *
 * A gap is a stretch of audiod's frames [from, to) on one node that a
 * client will never receive, as the client saw it: declared by audiod (a
 * GAP marker of the sensor stream) or not (the next chunk began past the
 * frame the client expected: a silent hole), noticed at t_s (the checker's
 * clock, seconds).  It is explained
 *   - by an overrun when audiod reported one on that node (its journal:
 *     "audio/K: overrun, frames [a, b) lost") whose frames overlap it;
 *   - by downtime when audiod of that node went down (killed, or stopped)
 *     before t_s and was running again no earlier than
 *     t_s - CSIM_GAP_SETTLE_S - the gap's length: a restarted audiod
 *     numbering on from its previous run leaves the frames of its downtime
 *     as a gap, which the client sees when it resumes (after its reconnect
 *     back-off, and audiod's numbering settling).
 * A silent hole is never explained: whatever caused it, a client lost
 * frames nobody declared (it fails the soak even when an overrun overlaps
 * it).  So is a chunk that repeats or goes back (`backwards`) unless audiod
 * was restarted just before (it numbered anew: the truth counts that).
 */
#ifndef CHORUS_SIM_LAUNCH_GAPCHECK_H
#define CHORUS_SIM_LAUNCH_GAPCHECK_H

#include <glib.h>
#include <stdint.h>

/* How long after audiod is running again a gap of its downtime may be
 * noticed beyond the gap's own length (the client reconnects with a
 * back-off, audiod settles its numbering), s. */
#define CSIM_GAP_SETTLE_S 15.0
typedef enum {
	CSIM_GAP_DECLARED = 0, /* audiod sent a GAP marker */
	CSIM_GAP_SILENT,       /* the next chunk skipped frames without one */
	CSIM_GAP_BACKWARDS,    /* the next chunk repeated or went back */
} csim_gap_kind;

typedef struct {
	int node;
	int64_t from, to; /* frames [from, to) */
	double t_s;       /* when the client noticed it */
	csim_gap_kind kind;
} csim_gap;

typedef struct {
	int node;
	int64_t from, to; /* frames [from, to) audiod reported lost */
} csim_overrun;

typedef struct {
	int node;
	double from_s, to_s; /* audiod down (killed or stopped) over [from_s, to_s] */
} csim_downtime;

typedef enum {
	CSIM_GAP_BY_OVERRUN = 0,
	CSIM_GAP_BY_DOWNTIME,
	CSIM_GAP_UNEXPLAINED,
} csim_gap_verdict;

/* The verdict on one gap given audiod's reported overruns and downtimes
 * (any node; only the gap's own node's count).  Pure. */
csim_gap_verdict csim_gap_judge(const csim_gap *g, double rate_hz, const csim_overrun *ov, size_t n_ov,
				const csim_downtime *dt, size_t n_dt);

/* The verdict's name: "overrun", "downtime", "UNEXPLAINED" (static). */
const char *csim_gap_verdict_name(csim_gap_verdict v);

/* The gap kind's name: "declared", "silent", "backwards" (static). */
const char *csim_gap_kind_name(csim_gap_kind k);

/* An overrun from one line of audiod's journal ("... audio/K: overrun,
 * frames [A, B) lost"); TRUE and *from, *to when the line is one.  Pure. */
gboolean csim_gap_parse_overrun(const char *line, int64_t *from, int64_t *to);

#endif
