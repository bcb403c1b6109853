/* chaos_calls.h — chorus-demo --chaos: was every call located that the
 * faults left enough of the field to locate?  (issue 15's chaos soak:
 * "any call heard by >= 4 nodes whose services were up that was not
 * located" fails it.)  Pure: the scored calls and the faults' spans in,
 * verdicts out.
 *
 * A node *heard* a call when its detect's detection was matched to the
 * call's arrival there (report.h: one-to-one).  It was *up* for the call
 * when no fault touched it over [arrival - CHAOS_CALLS_BEFORE_S, arrival +
 * CHAOS_CALLS_AFTER_S]: none of its programs killed, crashed or stopped
 * and its radio not cut (a restarted syncd needs its fits again before its
 * detections have a global time; collab must be there to share the
 * detection and serve its clip).  A call heard by at least min_nodes up
 * nodes is *judged*: its verdict must be `located` (its `ok` result within
 * located_within_m of the truth).  min_nodes is what collab needs for a
 * tested answer: CHAOS_CALLS_MIN_NODES (4: x, y, the emission time and one
 * degree of freedom) when the sources' height is told to it, one more
 * (CHAOS_CALLS_MIN_NODES_UNTOLD) when it is not, as the height is then
 * marginalised and four arrivals leave no test: collab says `untested`,
 * never `ok` (docs/localization.md).
 *
 * Every judged call that is not located is a failure, whatever its
 * verdict — `missed` (no result: the faults lost it), `off` (a wrong answer
 * stated as ok), `not_ok` (the result refused: failed, ambiguous,
 * duplicate, …) — unless a *baseline* is given and says otherwise: the
 * calls.csv of a run of the same world without faults.  A judged call that
 * the baseline did not locate either is the localization's own limit (two
 * callers in one clip, a pulse train's ghost: issue 12), not the faults':
 * it is listed and counted apart, and does not fail.  A call the baseline
 * did not score fails as without one.
 */
#ifndef CHORUS_SIM_SCORE_CHAOS_CALLS_H
#define CHORUS_SIM_SCORE_CHAOS_CALLS_H

#include <glib.h>

#include "sim/score/report.h"
#include "sim/world.h"

#define CHAOS_CALLS_BEFORE_S 15.0
#define CHAOS_CALLS_AFTER_S 10.0
#define CHAOS_CALLS_MIN_NODES 4
#define CHAOS_CALLS_MIN_NODES_UNTOLD 5

/* A fault on a node over [from_s, to_s] (world s); node < 0: every node. */
typedef struct {
	int node;
	double from_s, to_s;
} chaos_fault;

/* One call of the baseline run: source id, call index, located. */
typedef struct {
	int source;
	size_t k;
	int located;
} chaos_baseline_call;

typedef struct {
	guint calls;                        /* scored calls */
	guint judged;                       /* heard by >= min_nodes up nodes */
	guint located, off, not_ok, missed; /* the judged calls' verdicts */
	guint baseline;                     /* of the not located, those the baseline did not locate either */
} chaos_calls_tally;

/* How many of call c's hearing nodes were up for it (arrival times from
 * w, mic 0).  Pure. */
int chaos_calls_up(const sim_world *w, const demo_call *c, const chaos_fault *f, size_t n);

/* Judge every scored call of ev heard by at least min_nodes up nodes
 * against the baseline's calls b[nb] (NULL, 0: none); a line per judged
 * call not located into out (may be NULL), the tally into *t.  Returns the
 * failures (judged, not located, and located in the baseline or absent
 * from it).  Pure. */
int chaos_calls_judge(const sim_world *w, const demo_eval *ev, const chaos_fault *f, size_t n, int min_nodes,
		      const chaos_baseline_call *b, size_t nb, GString *out, chaos_calls_tally *t);

/* The baseline's calls from a calls.csv chorus-demo wrote (columns source,
 * call, …, located, …, by the header): a new GArray of chaos_baseline_call,
 * or NULL with *err (which file, which line, why). */
GArray *chaos_baseline_load(const char *path, GError **err);

#endif
