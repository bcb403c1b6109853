/* graph.h — the conversion graph: clocks are vertices, conversions
 * (conv.h) are edges usable both ways; a conversion between two clocks
 * follows the minimum-variance path and composes the maps (docs/architecture.md §2.6,
 * docs/clocks.md "Graph").
 *
 * The variance of the composed result, for an exact input, is
 *     var = sum_i var_i(x_i) * prod_{j>i} slope_j^2
 * (each edge's error is carried to the destination by the slopes after it).
 * The search is Dijkstra on each edge's variance referred back to the source
 * clock, var_i / prod_{j<=i} slope_j^2, which is additive and non-negative;
 * the destination variance is that sum times the end-to-end slope squared.
 *
 * Cached conversions: the path found for a (from, to) pair is kept until
 * the graph changes; converting again costs a hash probe and a few
 * multiply-adds per hop — no allocation, no system call.  A time before
 * some edge's current fit (its history, or before a young pair's data) is
 * searched afresh each time and not cached: its best path is not now's.  Edges are refused
 * (and the search avoids them) when x lies outside their data by more than
 * the tolerance or when they were last updated longer ago than max_age.
 *
 * Pure: no clocks are read (the caller passes `now_ns`).  Not thread safe: a
 * conversion may update the cache; use one graph per thread or a lock.
 * Errors: negative errno, with a reason written to the caller's buffer.
 */
#ifndef CHORUS_GRAPH_H
#define CHORUS_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"

#define SYNC_GRAPH_STEP_SE 5.0 /* a history gap whose two sides disagree by more s.e. is a step, not bridged */
#define SYNC_GRAPH_MAX_HOPS 64 /* longest path followed (a minimum-variance path across a large field can be longer than its radio hops) */

typedef struct {
	int64_t tolerance_ns; /* how far outside an edge's data x may be, ns (frames via the card's rate) */
	int64_t max_age_ns;   /* refuse edges updated longer ago than this, ns; 0 = no limit */
} sync_graph_params;

enum {
	SYNC_GRAPH_EXTRAPOLATED = 1u << 0, /* some edge was used outside its data (within tolerance) */
	SYNC_GRAPH_BRIDGED = 1u << 1,      /* some edge was used across an outage in its history
					    * (sync_graph_set_history): bridged between two fits */
};

typedef struct {
	sync_tval value; /* the converted time, units of the destination clock */
	double var;      /* its variance, destination units^2 (the exact input has none) */
	uint32_t hops;   /* edges followed (0 when from == to) */
	uint32_t flags;  /* SYNC_GRAPH_* */
	double dof;      /* degrees of freedom of var (Welch-Satterthwaite over the edges, each
			  * n - 2; INFINITY when every edge is exact): an error over sqrt(var)
			  * is Student's t of dof scaled to unit variance (sync_tail_k) */
} sync_graph_result;

typedef struct sync_graph sync_graph;

/* Defaults: tolerance 60 s, max age 120 s. */
void sync_graph_params_default(sync_graph_params *p);

/* A new empty graph; NULL when out of memory. */
sync_graph *sync_graph_new(const sync_graph_params *p);

/* Free g (NULL is fine). */
void sync_graph_free(sync_graph *g);

/* Add or replace the conversion between clocks a and b (c maps a -> b; the
 * graph uses it both ways).  Returns 0, -EINVAL (a == b, or c unusable) or
 * -ENOMEM, with the reason in why[len]. */
int sync_graph_set(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *c, char *why, size_t len);

/* Set the conversion between a and b to a piecewise-exact timescale (the
 * global timescale's definition on the root's cpu clock, steered in rate:
 * docs/clocks.md "Global"): n >= 1 exact (SYNC_CONV_FIXED) segments with
 * positive slopes and strictly increasing starts segs[k].xmin; segment k
 * maps the x in [segs[k].xmin, segs[k + 1].xmin), the first also every x
 * before it, the last every x after.  Each segment's own x0, y0 define its
 * line (continuity between segments is the publisher's business).  The
 * reverse direction picks the segment by y the same way.  Replaces any
 * conversion between a and b.  Returns 0, -EINVAL (segments unusable, the
 * reason names why) or -ENOMEM. */
int sync_graph_set_segments(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *segs, size_t n,
			    char *why, size_t len);

/* Give the conversion between a and b (set before) its history: n >= 1
 * fits that held before it (SYNC_CONV_PIECE, bridge.h: each one's wander
 * is the q2 its fit measured), maps a -> b in time order, none overlapping
 * the next or the current fit's data.  A time x before the current fit's
 * data then converts with the piece whose data hold it, or in a gap after
 * a piece with the bridge from it to the next piece (or the current fit),
 * q2 the larger of the two pieces' (bridge.h), and the result is flagged
 * SYNC_GRAPH_BRIDGED; the tolerance applies before the oldest piece.  A
 * piece flagged SYNC_CONV_BREAK is followed by a step of unknown size (a
 * pair reset): a time in the gap after it is refused (-ERANGE, "falls in a
 * break"), never bridged.  So is a time in a gap whose two sides disagree
 * by more than SYNC_GRAPH_STEP_SE standard errors of their difference
 * (by the t rule of their degrees of freedom; bridge.h
 * sync_bridge_step_z): the clock stepped or restarted there (a peer
 * rebooted, realtime was set) while no fit watched it (-ERANGE, "the
 * clock stepped or restarted").  The
 * reverse direction uses the reversed pieces.  Replacing the conversion
 * (sync_graph_set) drops its history.  Returns 0, -ENOENT (no conversion
 * between a and b), -EINVAL (pieces unusable: the reason says why) or
 * -ENOMEM. */
int sync_graph_set_history(sync_graph *g, sync_clock_id a, sync_clock_id b, const sync_conv *pieces, size_t n,
			   char *why, size_t len);

/* Remove the conversion between a and b.  Returns 0 or -ENOENT. */
int sync_graph_remove(sync_graph *g, sync_clock_id a, sync_clock_id b);

/* Remove every clock and conversion. */
void sync_graph_clear(sync_graph *g);

/* Number of conversions (undirected edges). */
size_t sync_graph_nedges(const sync_graph *g);

/* Convert x on clock `from` to clock `to` at time now_ns (the caller's
 * clock, as used for conv.updated_ns).  Returns 0 and fills *out, or -ENOENT
 * (a clock is unknown), -ENOLINK (no path), -ERANGE (x outside an edge's
 * validity beyond the tolerance, or a result beyond int64: the line would
 * saturate), -ESTALE (an edge too old), -E2BIG (path longer than
 * SYNC_GRAPH_MAX_HOPS), with the reason in why[len]. */
int sync_graph_convert(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
		       sync_graph_result *out, char *why, size_t len);

/* sync_graph_convert(), and an edge also takes an x before all its data
 * (its history included) by up to reach_ns (>= 0) beyond the tolerance:
 * its line, or its oldest piece's, extrapolated back, the variance grown
 * by the conversion's wander term with the distance (conv.h) — for a
 * piece, by the random walk of the rate its q2 allows (bridge.h
 * sync_bridge_beyond: cubic in the distance) — the result
 * flagged SYNC_GRAPH_EXTRAPOLATED.  For timing the past where no fit
 * reaches, and nothing better than that line ever will: a node cut off
 * from its very start has no conversion to the field before its first
 * observations after the outage (issue 16; collab's retiming).  Breaks
 * are refused as ever; x after an edge's data gets the tolerance alone. */
int sync_graph_convert_past(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			    int64_t reach_ns, sync_graph_result *out, char *why, size_t len);

/* The clocks along the path a conversion of x would follow, from first:
 * writes up to max ids and returns how many the path has, or a negative
 * errno as sync_graph_convert(). */
int sync_graph_path(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
		    sync_clock_id *ids, size_t max, char *why, size_t len);

/* The path sync_graph_convert_past() with the same reach would follow
 * (as sync_graph_path). */
int sync_graph_path_past(sync_graph *g, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			 int64_t reach_ns, sync_clock_id *ids, size_t max, char *why, size_t len);

#endif
