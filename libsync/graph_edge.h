/* graph_edge.h — one directed edge of the conversion graph (graph.c's
 * private view): the map from -> to, its timescale segments and its
 * history pieces, and what it converts a time x with — the current fit, a
 * segment, a piece, the bridge across a gap after a piece, or the fit
 * carried back — and which past times it refuses (a break, a step across
 * a gap).  Pure; not part of libsync's interface.
 */
#ifndef CHORUS_GRAPH_EDGE_H
#define CHORUS_GRAPH_EDGE_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"

/* One direction of an edge: the map from -> to, and the x range it accepts. */
typedef struct {
	uint32_t from, to; /* vertex indices */
	sync_conv c;       /* from -> to (a timescale's: its last segment) */
	int64_t lo, hi;    /* accepted x: [xmin - tol, xmax + tol], from units (saturated) */
	sync_conv *seg;    /* a timescale's segments in this direction, by start (owned; NULL: none) */
	uint32_t nseg;
	sync_conv *hist; /* history pieces before c, by start, in this direction (owned; NULL: none);
			  * each one's wander is its q2 (bridge.h) */
	uint32_t nhist;
} dedge;

/* Whether x is before edge d's current fit's data: converted through its
 * history or carried back before it (graph_edge_conv_at), not by the fit of
 * now.  A timescale's segments and exact maps never are. */
int graph_edge_before_fit(const dedge *d, int64_t x);

/* The map edge d applies to x: a timescale's segment that x falls in (the
 * last whose start is <= x; the first before it); before the current fit's
 * data, the history piece x falls in, the bridge across the gap after it
 * (written to *tmp; *bridged set), or the first piece or the fit carried
 * back (in *tmp); else d's conversion.  ns_per_unit: ns per unit of d's
 * from clock. */
const sync_conv *graph_edge_conv_at(const dedge *d, double ns_per_unit, sync_tval x, sync_conv *tmp, int *bridged);

/* Whether d's history refuses x: in the gap after a piece closed by a break
 * (SYNC_CONV_BREAK), or in a gap whose two sides disagree beyond
 * SYNC_GRAPH_STEP_SE of their difference by the t rule (a step, bridge.h
 * sync_bridge_step_z).  0 when it does not; else -ERANGE with the reason
 * in why[len] (when why is not NULL), naming d's clocks `from` and `to`. */
int graph_edge_history_refuses(const dedge *d, double ns_per_unit, sync_tval x, sync_clock_id from, sync_clock_id to,
			       char *why, size_t len);

#endif
