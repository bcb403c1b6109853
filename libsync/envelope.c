/* envelope.c — lower-envelope line by the monotone-chain lower hull (see
 * envelope.h). */
#include "libsync/envelope.h"

#include <errno.h>

/* Cross product of (b - a) and (c - a): > 0 when a, b, c turn left. */
static double cross(const double *x, const double *d, size_t a, size_t b, size_t c)
{
	return (x[b] - x[a]) * (d[c] - d[a]) - (d[b] - d[a]) * (x[c] - x[a]);
}

int sync_envelope_lower(const double *x, const double *d, const unsigned char *use, size_t n,
			size_t *work, double *c0, double *c1)
{
	size_t *h = work, m = 0, used = 0;
	double sumx = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (use && !use[i])
			continue;
		used++;
		sumx += x[i];
		/* Equal x: only the lowest point can be on the lower hull. */
		if (m > 0 && x[h[m - 1]] == x[i]) {
			if (d[i] >= d[h[m - 1]])
				continue;
			m--;
		}
		while (m >= 2 && cross(x, d, h[m - 2], h[m - 1], i) <= 0.0)
			m--;
		h[m++] = i;
	}
	if (m < 2)
		return -EDOM;
	double xbar = sumx / (double)used;
	/* The LP optimum: the hull edge whose x range contains the mean x.  When
	 * the mean falls on a vertex both neighbouring edges are optimal; the
	 * first one found is as good as the other. */
	size_t j = 0;
	while (j + 2 < m && x[h[j + 1]] < xbar)
		j++;
	size_t a = h[j], b = h[j + 1];
	*c1 = (d[b] - d[a]) / (x[b] - x[a]);
	*c0 = d[a] - *c1 * x[a];
	return (int)used;
}
