/* timeline.c — global time of archived frames (see timeline.h). */
#include "archive/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* The two points to use for frame f (b = -1 when there is only one). */
static int pick(const archive_index *x, int64_t f, int *a, int *b)
{
	int prev = -1, n = 0, first = -1, second = -1, last = -1, before_last = -1;
	*a = *b = -1;
	for (guint i = 0; i < x->times->len; i++) {
		const archive_timept *t = &g_array_index(x->times, archive_timept, i);
		if (!t->has_global)
			continue;
		if (first < 0)
			first = (int)i;
		else if (second < 0)
			second = (int)i;
		before_last = last;
		last = (int)i;
		n++;
		if (prev >= 0 && *a < 0 && g_array_index(x->times, archive_timept, prev).frame <= f && f <= t->frame) {
			*a = prev;
			*b = (int)i;
		}
		prev = (int)i;
	}
	if (!n)
		return -ENOENT;
	if (*a >= 0)
		return 0;
	if (n == 1) {
		*a = first;
		return 0;
	}
	if (f < g_array_index(x->times, archive_timept, first).frame) {
		*a = first;
		*b = second;
	} else {
		*a = before_last;
		*b = last;
	}
	return 0;
}

int archive_time_of_frame(const archive_index *x, int64_t f, archive_when *out, char *why, size_t len)
{
	int a, b;
	if (pick(x, f, &a, &b) < 0) {
		g_snprintf(why, len, "no global time was reachable while node%u:audio%u frames from %" G_GINT64_FORMAT " were recorded",
			   x->node, x->device, x->first);
		return -ENOENT;
	}
	const archive_timept *p = &g_array_index(x->times, archive_timept, a);
	double d = (double)(f - p->frame), slope, slope_se, se;
	if (b < 0) {
		slope = 1e9 / x->rate_hz;
		slope_se = slope * ARCHIVE_NOMINAL_RATE_SD;
		se = hypot(p->global_se_ns, d * slope_se);
	} else {
		const archive_timept *q = &g_array_index(x->times, archive_timept, b);
		double span = (double)(q->frame - p->frame);
		slope = (double)(q->global_ns - p->global_ns) / span;
		slope_se = hypot(p->global_se_ns, q->global_se_ns) / span;
		double w = d / span;
		if (w >= 0 && w <= 1)
			se = (1 - w) * p->global_se_ns + w * q->global_se_ns;
		else {
			/* Extrapolated from the nearer point. */
			const archive_timept *n = w < 0 ? p : q;
			se = hypot(n->global_se_ns, (double)(f - n->frame) * slope_se);
		}
	}
	double v = d * slope, fl = floor(v);
	out->global_ns = p->global_ns + (int64_t)fl;
	out->frac_ns = v - fl;
	out->se_ns = se;
	out->period_ns = slope;
	out->period_se_ns = slope_se;
	return 0;
}

int archive_frame_at(const archive_index *x, int64_t global_ns, int64_t *frame, char *why, size_t len)
{
	/* Start from the segment's first frame, then refine once with the
	 * points that bracket the first estimate. */
	int64_t f = x->first;
	for (int it = 0; it < 3; it++) {
		archive_when w;
		int rc = archive_time_of_frame(x, f, &w, why, len);
		if (rc < 0)
			return rc;
		double dt = (double)(global_ns - w.global_ns) - w.frac_ns;
		f += (int64_t)ceil(dt / w.period_ns - 1e-9);
	}
	*frame = f;
	return 0;
}
