/* envelope.h — the lower envelope of a point set: the line below every
 * point that maximises its height at the points' mean x.  That is the
 * linear programme  min sum (d_i - c0 - c1 x_i)  s.t.  d_i >= c0 + c1 x_i,
 * i.e. the maximum-likelihood line when every d_i is the line plus an
 * exponential delay; its optimum is the edge of the lower convex hull that
 * spans the mean x (docs/clocks.md).  Pure, O(n), no allocation.
 */
#ifndef CHORUS_ENVELOPE_H
#define CHORUS_ENVELOPE_H

#include <stddef.h>

/* Fit the lower envelope of the n points (x[i], d[i]) with x non-decreasing,
 * using only points with use[i] != 0 (use may be NULL).  work must hold n
 * indices.  Writes the line d = *c0 + *c1 * x.  Returns the number of points
 * used, or -EDOM when they do not span two distinct x. */
int sync_envelope_lower(const double *x, const double *d, const unsigned char *use, size_t n,
			size_t *work, double *c0, double *c1);

#endif
