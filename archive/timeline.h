/* timeline.h — placing a segment's frames in global time from the
 * conversions its index kept (docs/archive.md §2).  Pure.
 *
 * Between two time points with global time the frame's time is their
 * linear interpolation, and so is its standard error; beyond the last (or
 * before the first) the two nearest points' line is extrapolated, and the
 * slope's error (the two points' errors over their distance) grows with
 * the distance.  With one point the nominal rate is the slope, and its
 * error is taken as a crystal's 100 ppm bound read as a uniform
 * distribution (s.d. 100/sqrt(3) ppm) of the distance.
 */
#ifndef CHORUS_ARCHIVE_TIMELINE_H
#define CHORUS_ARCHIVE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "archive/index.h"

/* The s.d. of a nominal rate's error, as a fraction (100 ppm / sqrt 3). */
#define ARCHIVE_NOMINAL_RATE_SD 5.7735e-5

typedef struct {
	int64_t global_ns;   /* global time of the frame (integer part) */
	double frac_ns;      /* its fraction, ns, 0 <= frac < 1 */
	double se_ns;        /* standard error, ns */
	double period_ns;    /* global ns per frame there */
	double period_se_ns; /* its standard error, ns */
	uint32_t root;       /* whose timescale (ARCHIVE_ROOT_UNKNOWN: not recorded) */
} archive_when;

/* Global time of frame f of x.  Only points in one root's timescale are
 * combined: the root of the point with a global time nearest f (a node
 * cut off from the field may have been its own root for a while).  0, or
 * -ENOENT with why[len] when no time point of x has a global time. */
int archive_time_of_frame(const archive_index *x, int64_t f, archive_when *out, char *why, size_t len);

/* The first frame of x whose global time is at or after global_ns (it may
 * lie outside the segment: the caller clips).  0, or -ENOENT as above. */
int archive_frame_at(const archive_index *x, int64_t global_ns, int64_t *frame, char *why, size_t len);

/* The frequency wander assumed across an outage, as a fraction: a crystal
 * at a steady temperature holds its rate to about 0.1 ppm over minutes. */
#define ARCHIVE_BRIDGE_WANDER 1e-7

/* A recorded global time whose s.e. exceeds this many times the median of
 * the recorded ones is stale (a conversion aged through an outage). */
#define ARCHIVE_BRIDGE_STALE 10.0

/* The longest outage bridged, ns (a day). */
#define ARCHIVE_BRIDGE_MAX_NS (86400LL * 1000000000LL)

/* Bridge outages after the fact: every time point of the n indices x[]
 * that has no global time, or a stale one (its s.e. over
 * ARCHIVE_BRIDGE_STALE times the median of the recorded ones), gets one
 * through the node's own
 * cpu clock, interpolated between the nearest points with a global time
 * before and after it on the same node and run (the cpu clock is
 * continuous while the node runs; a renumbering or a reboot starts another
 * run).  A point whose global time is in another root's timescale than
 * the run's last recorded one (the node was cut off and its own root
 * meanwhile) is replaced the same way.  The standard error is the endpoints' interpolated plus the
 * wander's: w (1 - w) T `wander` for a point at fraction w of an outage of
 * T ns.  Points that cannot be bridged (no point on one side, a gap over
 * ARCHIVE_BRIDGE_MAX_NS) are left as they are.  Returns the points filled
 * or improved.  Pure (rewrites the indices' time arrays in memory only). */
size_t archive_bridge(archive_index **x, size_t n, double wander);

#endif
