/* timeline.c — global time of archived frames (see timeline.h). */
#include "archive/timeline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

/* TRUE when two roots name one timescale (an unknown one matches any). */
static gboolean same_root(uint32_t a, uint32_t b)
{
	return a == b || a == ARCHIVE_ROOT_UNKNOWN || b == ARCHIVE_ROOT_UNKNOWN;
}

/* The root of x's point with a global time nearest frame f. */
static uint32_t nearest_root(const archive_index *x, int64_t f)
{
	uint32_t root = ARCHIVE_ROOT_UNKNOWN;
	int64_t best = INT64_MAX;
	for (guint i = 0; i < x->times->len; i++) {
		const archive_timept *t = &g_array_index(x->times, archive_timept, i);
		int64_t d = t->frame > f ? t->frame - f : f - t->frame;
		if (t->has_global && d < best) {
			best = d;
			root = t->root;
		}
	}
	return root;
}

/* The two points to use for frame f (b = -1 when there is only one), all
 * in the timescale of *root (set here). */
static int pick(const archive_index *x, int64_t f, int *a, int *b, uint32_t *root)
{
	int prev = -1, n = 0, first = -1, second = -1, last = -1, before_last = -1;
	*a = *b = -1;
	*root = nearest_root(x, f);
	for (guint i = 0; i < x->times->len; i++) {
		const archive_timept *t = &g_array_index(x->times, archive_timept, i);
		if (!t->has_global || !same_root(t->root, *root))
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
	uint32_t root;
	if (pick(x, f, &a, &b, &root) < 0) {
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
	out->root = root;
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

typedef struct {
	archive_timept *t;
	int64_t run_ns;
	uint32_t node;
} ref;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int by_node_run_cpu(const void *a, const void *b)
{
	const ref *x = a, *y = b;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->run_ns != y->run_ns)
		return x->run_ns < y->run_ns ? -1 : 1;
	return x->t->cpu_ns < y->t->cpu_ns ? -1 : x->t->cpu_ns > y->t->cpu_ns;
}

size_t archive_bridge(archive_index **x, size_t n, double wander)
{
	GArray *r = g_array_new(FALSE, FALSE, sizeof(ref));
	for (size_t i = 0; i < n; i++)
		for (guint k = 0; k < x[i]->times->len; k++) {
			ref e = {&g_array_index(x[i]->times, archive_timept, k), x[i]->run_ns, x[i]->node};
			g_array_append_val(r, e);
		}
	g_array_sort(r, by_node_run_cpu);
	/* The anchors are the recorded points with a global time that is not
	 * stale: a conversion syncd kept through an outage states a growing
	 * s.e., and one over ARCHIVE_BRIDGE_STALE times the median of the
	 * recorded ones is replaced rather than trusted.  Copies, so a bridged
	 * point never anchors another. */
	size_t m = r->len, filled = 0;
	archive_timept *orig = g_new(archive_timept, m ? m : 1);
	double *ses = g_new(double, m ? m : 1);
	size_t ns = 0;
	for (size_t i = 0; i < m; i++) {
		orig[i] = *g_array_index(r, ref, i).t;
		if (orig[i].has_global == 1)
			ses[ns++] = orig[i].global_se_ns;
	}
	qsort(ses, ns, sizeof(double), cmp_double);
	double stale = ns ? ARCHIVE_BRIDGE_STALE * ses[ns / 2] : INFINITY;
	g_free(ses);
	for (size_t i = 0; i < m; i++)
		if (orig[i].has_global == 1 && orig[i].global_se_ns > stale)
			orig[i].has_global = 0;
	/* A point in another timescale than its run's last recorded root's is
	 * no anchor either: refs are sorted by node, run and cpu time, so the
	 * run's last point with a known root comes last in its block. */
	for (size_t i = 0; i < m;) {
		const ref *me = &g_array_index(r, ref, i);
		size_t end = i;
		uint32_t last_root = ARCHIVE_ROOT_UNKNOWN;
		for (; end < m && g_array_index(r, ref, end).node == me->node && g_array_index(r, ref, end).run_ns == me->run_ns; end++)
			if (orig[end].has_global == 1 && orig[end].root != ARCHIVE_ROOT_UNKNOWN)
				last_root = orig[end].root;
		for (size_t k = i; k < end; k++)
			if (orig[k].has_global == 1 && !same_root(orig[k].root, last_root))
				orig[k].has_global = 0;
		i = end;
	}
	for (size_t i = 0; i < m; i++) {
		const ref *me = &g_array_index(r, ref, i);
		int a = -1, b = -1;
		for (size_t j = i; j-- > 0;) {
			const ref *o = &g_array_index(r, ref, j);
			if (o->node != me->node || o->run_ns != me->run_ns)
				break;
			if (orig[j].has_global == 1 && orig[j].cpu_ns < me->t->cpu_ns) {
				a = (int)j;
				break;
			}
		}
		for (size_t j = i + 1; j < m; j++) {
			const ref *o = &g_array_index(r, ref, j);
			if (o->node != me->node || o->run_ns != me->run_ns)
				break;
			if (orig[j].has_global == 1 && orig[j].cpu_ns > me->t->cpu_ns) {
				b = (int)j;
				break;
			}
		}
		if (a < 0 || b < 0)
			continue;
		const archive_timept *p = &orig[a], *q = &orig[b];
		double span = (double)(q->cpu_ns - p->cpu_ns);
		if (span > (double)ARCHIVE_BRIDGE_MAX_NS)
			continue;
		double w = (double)(me->t->cpu_ns - p->cpu_ns) / span;
		double v = w * (double)(q->global_ns - p->global_ns);
		double se = hypot((1 - w) * p->global_se_ns + w * q->global_se_ns, w * (1 - w) * span * wander);
		/* The cpu time's own error moves the point along the line. */
		se = hypot(se, me->t->cpu_se_ns);
		if (orig[i].has_global == 1)
			continue; /* recorded, and not stale */
		me->t->global_ns = p->global_ns + (int64_t)llround(v);
		me->t->global_se_ns = se;
		me->t->has_global = 2;
		me->t->root = p->root != ARCHIVE_ROOT_UNKNOWN ? p->root : q->root;
		filled++;
	}
	g_free(orig);
	g_array_free(r, TRUE);
	return filled;
}
