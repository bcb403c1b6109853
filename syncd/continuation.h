/* continuation.h — how global time continues when the root changes
 * (issue 16, "global time never jumps").
 *
 * While this node follows a remote root it notes, once a second, its own
 * conversion cpu(self) -> global as a line: the global time at one cpu
 * time, the local slope and the standard error there.  If the root rule
 * later makes this node the root (the old root died or is out of reach),
 * it defines global by that line (root.c) instead of by its realtime clock,
 * so global continues — within the conversion's stated uncertainty —
 * instead of stepping by the two nodes' realtime difference.  Pure.
 */
#ifndef CHORUS_SYNCD_CONTINUATION_H
#define CHORUS_SYNCD_CONTINUATION_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/ticker_wire.h"

typedef struct {
	int valid;
	int64_t cpu0_ns;    /* this node's cpu time of the sample */
	int64_t global0_ns; /* global time then (rounded to the ns) */
	double slope;       /* global ns per cpu ns there */
	double se_ns;       /* standard error of global0_ns */
	double slope_se;    /* a bound on the slope's standard error: the two
			     * conversions' s.e. summed over their distance */
	double rate_var;    /* the rate's variance libsync states for an
			     * extrapolation of the line (continuity.h) */
	uint32_t via_root;  /* the root whose timescale it is */
} syncd_continuation;

/* Seconds between the two conversions the slope is taken from. */
#define SYNCD_CONTINUATION_BASE_S 10.0
/* Seconds ahead the rate's variance is read at (inside libsync's default
 * extrapolation tolerance of 60 s). */
#define SYNCD_CONTINUATION_AHEAD_S 30.0

/* Measure the line from the n ticker entries e[] (this node's conversions
 * as its ticker lists them) at cpu time now_ns: global at now_ns and at
 * now_ns - SYNCD_CONTINUATION_BASE_S (closer when the data does not reach
 * back that far), and rate_var from the variance stated
 * SYNCD_CONTINUATION_AHEAD_S ahead (0 when that is refused).  0 and *out, or a negative errno with the reason in
 * why[len] (no path to global, a refused conversion). */
int syncd_continuation_measure(const sync_ticker_entry *e, size_t n, uint32_t self, uint32_t root, int64_t now_ns,
			       syncd_continuation *out, char *why, size_t len);

/* Global time of cpu time x on the line (ns, fraction dropped). */
int64_t syncd_continuation_at(const syncd_continuation *c, int64_t x);

/* Standard error of the line at cpu time x: hypot(se, r |x - cpu0|), r the
 * rate's s.e. libsync states (sqrt(rate_var)) or slope_se, the smaller
 * (slope_se alone when rate_var is 0). */
double syncd_continuation_se(const syncd_continuation *c, int64_t x);

#endif
