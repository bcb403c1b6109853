/* growth.c — the chaos soak's growth judge (growth.h). */
#include "sim/launch/growth.h"

#include <stdlib.h>
#include <string.h>

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The median (the upper one of an even count) of v[n], n >= 1; sorts v. */
static long median(long *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_long);
	return v[n / 2];
}

void csim_growth_judge(const csim_usage *s, size_t n, csim_growth *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0)
		return;
	double t0 = s[0].t_s, t1 = s[n - 1].t_s;
	out->life_s = t1 - t0;
	out->judged = out->life_s >= 2 * CSIM_GROWTH_WINDOW_S;
	if (!out->judged) {
		out->rss_first_kb = s[0].rss_kb;
		out->rss_last_kb = s[n - 1].rss_kb;
		out->fd_first = s[0].fd;
		out->fd_last = s[n - 1].fd;
		return;
	}
	out->fd_first = out->fd_last = -1;
	long *first = malloc(n * sizeof *first), *last = malloc(n * sizeof *last);
	size_t nf = 0, nl = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].t_s <= t0 + CSIM_GROWTH_WINDOW_S) {
			first[nf++] = s[i].rss_kb;
			if (out->fd_first < 0 || s[i].fd < out->fd_first)
				out->fd_first = s[i].fd;
		}
		if (s[i].t_s >= t1 - CSIM_GROWTH_WINDOW_S) {
			last[nl++] = s[i].rss_kb;
			if (out->fd_last < 0 || s[i].fd < out->fd_last)
				out->fd_last = s[i].fd;
		}
	}
	/* both windows hold at least their end sample */
	out->rss_first_kb = median(first, nf);
	out->rss_last_kb = median(last, nl);
	free(first);
	free(last);
	out->grew = out->rss_last_kb > CSIM_GROWTH_LIMIT * out->rss_first_kb ||
		    out->fd_last > CSIM_GROWTH_LIMIT * out->fd_first;
}
