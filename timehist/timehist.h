/* timehist.h — the piecewise-linear history of one clock pair x -> y
 * (docs/architecture.md §2.5, docs/clocks.md "timehist").
 *
 * Feed observations in x order.  The current segment is fitted over a
 * sliding window (libsync/fit.h); each time the window has turned over, its
 * fit is kept as a *piece* covering exactly the data it was fitted on, so a
 * time 40 s in the past converts with the fit that held 40 s ago.  A
 * discontinuity — the caller's timehist_break() (an xrun, a restart), or
 * `confirm` consecutive observations far off the line, all by the same
 * amount (a clock step) — closes the segment; the next one starts afresh.
 * A conversion never crosses a break: a time between two segments, before
 * the history kept, or too far past the newest observation is an error that
 * says which.  Memory is bounded (max_pieces, max_history).
 *
 * Outages (gap > 0): an observation more than `gap` after the one before
 * it — the clocks ran on, nobody measured them (a radio outage) — is not a
 * break: the piece before the gap is kept, the fit starts afresh after it,
 * and a time inside the gap is bridged between the two fits (issue 16 item
 * 3): the cubic Hermite curve through the fits before and after (their
 * values and slopes at their centres a and b), whose error under a random
 * walk of the rate (the wander the fits measure, libsync/fit.h; at least
 * bridge_q2) is that of an integrated Brownian motion pinned at both,
 *     var = q^2 (x - a)^3 (b - x)^3 / (3 (b - a)^3),
 * plus the two fits' own errors carried through the curve.
 *
 * Pure: no I/O, no clocks; allocation only in timehist_new().  Not thread
 * safe.  Errors: negative errno, reason written to the caller's buffer.
 */
#ifndef CHORUS_TIMEHIST_H
#define CHORUS_TIMEHIST_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/conv.h"
#include "libsync/fit.h"

typedef struct {
	sync_fit_params fit; /* per-segment fit; fit.window observations make one piece */
	double jump_k;       /* an observation is off the line beyond jump_k noise s.d. (> 0) */
	double jump_min;     /* ... and beyond this many y units (>= 0) */
	uint32_t confirm;    /* consecutive consistent off-line observations that make a break (>= 1) */
	uint32_t max_pieces; /* pieces of history kept (>= 1) */
	int64_t max_history; /* forget pieces ending before newest x - max_history, x units; 0 = no limit */
	int64_t tolerance;   /* how far past the newest observation x may go, x units (>= 0) */
	int64_t gap;         /* a pause longer than this between observations is an outage, bridged (x units; 0: off) */
	double bridge_q2;    /* the least rate random walk assumed across one, (y/x)^2 per x unit (>= 0) */
	uint32_t refit;      /* solve the live fit every this many observations (1: every one; a
			      * piece is always solved over all its data).  Between solves the
			      * newest observations are converted by the line before them,
			      * extrapolated with its stated variance: fewer solves of a long
			      * window for one a period (audiod) */
} timehist_params;

typedef struct timehist timehist;

/* Fill *p with defaults: fit defaults, jump_k 8, jump_min 0, confirm 4,
 * max_pieces 256, no history limit, tolerance 0, no gaps bridged, refit 1. */
void timehist_params_default(timehist_params *p);

/* A new empty history.  Returns it, or NULL with a static reason in *why. */
timehist *timehist_new(const timehist_params *p, const char **why);

/* Free h (NULL is fine). */
void timehist_free(timehist *h);

/* Add an observation (x must not decrease).  Returns 0, 1 when it was
 * found to start a new segment (a jump confirmed by `confirm` observations;
 * the new segment begins at the first of them), or -EINVAL (x went
 * backwards) with the reason in why[len]. */
int timehist_add(timehist *h, int64_t x, int64_t y, char *why, size_t len);

/* The caller knows of a discontinuity after the last observation: close the
 * current segment.  Returns 0. */
int timehist_break(timehist *h);

/* As timehist_break(), and the next segment's data begin at x_from, before
 * its first observation (a restarted capture's first frame, whose period
 * interrupt comes a period later): x in [x_from, first observation)
 * converts with the new segment's fit.  An x_from before the newest
 * observation is ignored (the segment then begins at its first
 * observation).  Returns 0. */
int timehist_break_at(timehist *h, int64_t x_from);

/* Convert x to y with the fit that held at x, or across an outage the
 * bridge between the fits on either side; *var gets the variance of y
 * (y units^2).  Returns 0, or -ERANGE (before the history kept, in the break
 * between two segments, beyond the tolerance past the newest observation),
 * -EAGAIN (the segment has fewer than 3 observations, or a discontinuity
 * awaits confirmation at x), with the reason (with numbers) in why[len]. */
int timehist_convert(const timehist *h, sync_tval x, sync_tval *y, double *var, char *why, size_t len);

/* Convert y back to x (the inverse of the fit that held there); *var in x
 * units^2.  Errors as timehist_convert(), about the x that y maps to. */
int timehist_invert(const timehist *h, sync_tval y, sync_tval *x, double *var, char *why, size_t len);

/* The current segment's fit (what syncd publishes).  Returns 0, or -EAGAIN
 * when it has fewer than 3 observations. */
int timehist_current(const timehist *h, sync_conv *out);

/* Number of pieces kept (closed fits, oldest first). */
size_t timehist_npieces(const timehist *h);

/* Piece k (0 = oldest) and its segment number.  Returns 0 or -ENOENT. */
int timehist_piece(const timehist *h, size_t k, sync_conv *out, uint32_t *segment);

/* Segment number of the current segment (0 for the first; +1 per break). */
uint32_t timehist_segment(const timehist *h);

/* Outages bridged so far (pauses longer than gap). */
uint32_t timehist_gaps(const timehist *h);

/* The bridge (pure): y at x between fit `a` (before the outage) and fit
 * `b` (after it), for a rate random walk of diffusion q2 ((y/x)^2 per x
 * unit): the cubic Hermite curve through each fit's centre, with its value
 * and slope there; *var as timehist_convert's: the fits' errors carried
 * through the curve (each rate's including how far a random walk moves it
 * from the window's mean, q2 L / 12 for a window of span L) and the pinned
 * integrated Brownian motion's q2 u^3 (T - u)^3 / (3 T^3), T the distance
 * between the centres and u that of x from a's. */
sync_tval timehist_bridge(const sync_conv *a, const sync_conv *b, double q2, sync_tval x, double *var);

#endif
