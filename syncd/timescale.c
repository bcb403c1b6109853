/* timescale.c — global as a piecewise-linear function of the root's cpu
 * clock (see timescale.h). */
#include "syncd/timescale.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct syncd_timescale {
	uint32_t root;
	size_t n; /* segments kept, oldest first */
	sync_conv seg[SYNCD_TIMESCALE_KEEP];
};

syncd_timescale *syncd_timescale_new(void)
{
	return calloc(1, sizeof(syncd_timescale));
}

void syncd_timescale_free(syncd_timescale *ts)
{
	free(ts);
}

static sync_conv segment(int64_t x0, int64_t y0, double yoff, double slope)
{
	sync_conv c = sync_conv_fixed(x0, y0, slope);
	c.yoff = yoff;
	c.xmin = x0;
	c.updated_ns = x0;
	return c;
}

static void push(syncd_timescale *ts, const sync_conv *c)
{
	if (ts->n == SYNCD_TIMESCALE_KEEP) {
		memmove(ts->seg, ts->seg + 1, (SYNCD_TIMESCALE_KEEP - 1) * sizeof ts->seg[0]);
		ts->n--;
	}
	ts->seg[ts->n++] = *c;
}

void syncd_timescale_start(syncd_timescale *ts, uint32_t root, int64_t x0, int64_t y0, double slope)
{
	ts->root = root;
	ts->n = 0;
	sync_conv c = segment(x0, y0, 0.0, slope);
	push(ts, &c);
}

void syncd_timescale_clear(syncd_timescale *ts)
{
	ts->n = 0;
}

uint32_t syncd_timescale_root(const syncd_timescale *ts)
{
	return ts->root;
}

size_t syncd_timescale_count(const syncd_timescale *ts)
{
	return ts->n;
}

const sync_conv *syncd_timescale_current(const syncd_timescale *ts)
{
	return ts->n ? &ts->seg[ts->n - 1] : NULL;
}

sync_tval syncd_timescale_at(const syncd_timescale *ts, int64_t x)
{
	size_t k = ts->n - 1;
	while (k > 0 && ts->seg[k].xmin > x)
		k--;
	return sync_conv_apply(&ts->seg[k], sync_tval_of(x));
}

int syncd_timescale_steer(syncd_timescale *ts, int64_t x, double slope)
{
	const sync_conv *cur = syncd_timescale_current(ts);
	if (!cur || !isfinite(slope) || slope <= 0.0 || x <= cur->xmin)
		return -EINVAL;
	sync_tval y = sync_conv_apply(cur, sync_tval_of(x));
	sync_conv c = segment(x, y.i, y.f, slope);
	push(ts, &c);
	return 0;
}

int syncd_timescale_note(syncd_timescale *ts, uint32_t root, const sync_conv *def)
{
	if (!(def->flags & SYNC_CONV_FIXED) || !isfinite(def->slope) || def->slope <= 0.0)
		return -EINVAL;
	/* An old-style definition (valid everywhere) starts at its x0. */
	int64_t start = def->xmin == INT64_MIN ? def->x0 : def->xmin;
	sync_conv c = segment(def->x0, def->y0, def->yoff, def->slope);
	c.xmin = start;
	const sync_conv *cur = syncd_timescale_current(ts);
	if (!cur || ts->root != root) {
		ts->root = root;
		ts->n = 0;
		push(ts, &c);
		return 1;
	}
	if (start <= cur->xmin) {
		if (start == cur->xmin && (c.y0 != cur->y0 || c.slope != cur->slope || c.x0 != cur->x0)) {
			ts->seg[ts->n - 1] = c; /* the root redefined its latest segment */
			return 1;
		}
		return 0;
	}
	push(ts, &c);
	return 1;
}

size_t syncd_timescale_entries(const syncd_timescale *ts, sync_ticker_entry *out, size_t max)
{
	size_t n = ts->n < max ? ts->n : max, first = ts->n - n;
	for (size_t k = 0; k < n; k++) {
		out[k].from = sync_clock_cpu(ts->root);
		out[k].to = sync_clock_global();
		out[k].conv = ts->seg[first + k];
	}
	return n;
}
