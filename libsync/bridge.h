/* bridge.h — a clock pair across an outage (issue 16 item 3,
 * docs/clocks.md "Across an outage"): the two fits on either side of a
 * pause in the observations, joined by the curve a random walk of the rate
 * makes most likely, with the error that walk leaves.
 *
 * Between fit a (before the outage) and fit b (after it) the bridge is the
 * cubic Hermite curve through each fit's centre (where its value and slope
 * are uncorrelated), with its value and slope there.  Its variance at x,
 * for a rate random walk of diffusion q2 ((y/x)^2 per x unit), is the fits'
 * errors carried through the curve (each rate's including how far a random
 * walk moves it from the window's mean, q2 L / 12 for a window of span L)
 * plus the pinned integrated Brownian motion's
 *     q2 u^3 (T - u)^3 / (3 T^3),
 * T the distance between the centres and u that of x from a's.
 *
 * History pieces on the wire (SYNC_CONV_PIECE, docs/protocol.md
 * "sync/ticker"): a piece is a fit that held before an outage, valid over
 * its data; its `wander` field carries the q2 its fit measured, not a
 * fractional wander.  libsync's graph bridges the gap after a piece to the
 * next piece or the pair's current fit (graph.h sync_graph_set_history).
 *
 * Pure: no I/O, no allocation.
 */
#ifndef CHORUS_BRIDGE_H
#define CHORUS_BRIDGE_H

#include "libsync/conv.h"

/* y at x on the bridge from fit a to fit b (a's centre before b's) for a
 * rate random walk of diffusion q2 (>= 0); *var (may be NULL) gets its
 * variance (y units^2), *slope (may be NULL) the curve's dy/dx at x. */
sync_tval sync_bridge(const sync_conv *a, const sync_conv *b, double q2, sync_tval x, double *var, double *slope);

/* The bridge at x as a conversion valid at x alone (for composing along a
 * path): the tangent line there, with the bridge's variance at x as its
 * var_c, no slope variance and the fewer of the two fits' observations
 * (its degrees of freedom).  Returns it. */
sync_conv sync_bridge_at(const sync_conv *a, const sync_conv *b, double q2, sync_tval x);

/* One fit carried beyond its data (before a pair's first piece: a time no
 * later fit reaches, issue 16 item 3): y at x on a's line, and in *var
 * (may be NULL) its variance for a rate random walk of diffusion q2 — a's
 * value and rate at its centre (the rate's with rate_var's q2 L / 12)
 * carried the distance D from there, plus the integrated walk's
 * q2 |D|^3 / 3 that no data pins on that side — times max(1, D / (2 tau))
 * for a q2 measured over spans tau (x units): a ramp of the rate gives
 * q2 = 1.5 ydot^2 tau, under which the line errs by ydot D^2 / 2, that
 * many times the walk's variance (docs/clocks.md "Before the first fit"). */
sync_tval sync_bridge_beyond(const sync_conv *a, double q2, double tau, sync_tval x, double *var);

/* The same as a conversion valid at x alone: a's line with the variance at
 * x as its var_c (no slope variance, no wander), a's span and
 * observations kept (so a path still sees x outside the data).  Returns it. */
sync_conv sync_bridge_beyond_at(const sync_conv *a, double q2, double tau, sync_tval x);

/* Whether fits a and b (a's data before b's) are one clock that wandered
 * across the gap between their data, or one that stepped (a clock
 * restarted — a peer rebooted — or was set while no fit watched it): each
 * carried to the middle of the gap as sync_bridge_beyond carries it (q2,
 * and tau_a, tau_b the spans their q2 was measured over), the two lines'
 * errors there are independent (the walk before and after the middle), so
 * a clock that only wandered puts them apart by about one standard error
 * of the difference.  Returns |difference| / that standard error; *diff
 * (may be NULL) gets the difference (b's value minus a's, y units).  A
 * bridge across a step would join two lines seconds apart with the
 * uncertainty of a few microseconds of wander. */
double sync_bridge_step_z(const sync_conv *a, double tau_a, const sync_conv *b, double tau_b, double q2, double *diff);

/* The diffusion of a rate random walk reversed: for q2 of y against x
 * with slope s (dy/dx), that of x against y, q2 / s^5 (a rate error e on
 * dy/dx is -e/s^2 on dx/dy, and a unit of y is 1/s units of x). */
double sync_bridge_q2_reverse(double q2, double slope);

#endif
