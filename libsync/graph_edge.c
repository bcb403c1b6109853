/* graph_edge.c — one directed edge of the conversion graph at a time x:
 * its history pieces, breaks, steps and bridges (graph_edge.h). */
#include "libsync/graph_edge.h"

#include "libsync/bridge.h"
#include "libsync/graph.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* The history piece of d at or before x: the last starting at or before
 * it (the first when none does). */
static uint32_t piece_at(const dedge *d, int64_t x)
{
	uint32_t lo = 0, hi = d->nhist;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->hist[mid].xmin <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The piece whose data x follows across a break (SYNC_CONV_BREAK: never
 * bridged), or NULL. */
static const sync_conv *in_break(const dedge *d, int64_t x)
{
	if (!d->nhist || x >= d->c.xmin)
		return NULL;
	const sync_conv *p = &d->hist[piece_at(d, x)];
	return x > p->xmax && x >= p->xmin && (p->flags & SYNC_CONV_BREAK) ? p : NULL;
}

/* x in the gap after a history piece of d (before the current fit, after
 * that piece's data, not a break): the piece, and in *next the fit after
 * the gap and in *q2 the walk the bridge assumes (conv_at's); else NULL. */
static const sync_conv *in_gap(const dedge *d, int64_t x, const sync_conv **next, double *q2)
{
	if (!d->nhist || x >= d->c.xmin)
		return NULL;
	uint32_t lo = piece_at(d, x);
	const sync_conv *p = &d->hist[lo];
	if (x <= p->xmax || x < p->xmin || (p->flags & SYNC_CONV_BREAK))
		return NULL;
	*next = lo + 1 < d->nhist ? &d->hist[lo + 1] : &d->c;
	*q2 = lo + 1 < d->nhist ? fmax(p->wander, (*next)->wander) : p->wander;
	return p;
}

int graph_edge_before_fit(const dedge *d, int64_t x)
{
	return !d->nseg && !(d->c.flags & SYNC_CONV_FIXED) && x < d->c.xmin;
}

const sync_conv *graph_edge_conv_at(const dedge *d, double ns_per_unit, sync_tval x, sync_conv *tmp, int *bridged)
{
	if (d->nhist && x.i < d->c.xmin) {
		uint32_t lo = piece_at(d, x.i);
		const sync_conv *p = &d->hist[lo];
		if (x.i <= p->xmax && x.i >= p->xmin)
			return p; /* in its data */
		if (x.i < p->xmin) {
			/* Before all history (within the tolerance or a past
			 * reach): the first piece carried back, with the walk its
			 * q2 allows (its wander field is q2, not a rate). */
			*tmp = sync_bridge_beyond_at(p, p->wander, sync_conv_piece_tau(p, ns_per_unit), x);
			return tmp;
		}
		const sync_conv *next = lo + 1 < d->nhist ? &d->hist[lo + 1] : &d->c;
		double q2 = lo + 1 < d->nhist ? fmax(p->wander, next->wander) : p->wander;
		*tmp = sync_bridge_at(p, next, q2, x);
		*bridged = 1;
		return tmp;
	}
	if (!d->nseg) {
		if (graph_edge_before_fit(d, x.i)) {
			/* Before a pair's data with no piece (a young pair, or
			 * one learned from an advertisement): its wander term as
			 * large as a ramp of that size would make it, and the
			 * ramp its data could not show (conv.h). */
			*tmp = d->c;
			tmp->wander *= sync_conv_ramp_factor(&d->c, x);
			tmp->var_c += sync_conv_unresolved_ramp_var(&d->c, x);
			return tmp;
		}
		return &d->c;
	}
	uint32_t lo = 0, hi = d->nseg; /* answer in [lo, hi) */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (d->seg[mid].xmin <= x.i)
			lo = mid;
		else
			hi = mid;
	}
	return &d->seg[lo];
}


int graph_edge_history_refuses(const dedge *d, double ns_per_unit, sync_tval x, sync_clock_id from, sync_clock_id to,
			       char *why, size_t len)
{
	const sync_conv *b = in_break(d, x.i);
	char a[SYNC_CLOCK_NAME_MAX], c[SYNC_CLOCK_NAME_MAX];
	if (b) {
		if (why) {
			uint32_t k = piece_at(d, x.i);
			int64_t next = k + 1 < d->nhist ? d->hist[k + 1].xmin : d->c.xmin;
			snprintf(why, len,
				 "x=%" PRId64 " on %s falls in a break of the history of %s->%s (data end x=%" PRId64
				 ", resume x=%" PRId64 "): not bridged",
				 x.i, sync_clock_format(from, a, sizeof a), a, sync_clock_format(to, c, sizeof c), b->xmax, next);
		}
		return -ERANGE;
	}
	/* A gap whose two sides disagree beyond what the walk explains is a
	 * step (a clock restarted or set while unobserved), not wander: not
	 * bridged (bridge.h sync_bridge_step_z), by the t rule of the fits'
	 * degrees of freedom. */
	const sync_conv *nx;
	double q2;
	const sync_conv *p = in_gap(d, x.i, &nx, &q2);
	if (p) {
		double ns = ns_per_unit, diff;
		double z = sync_bridge_step_z(p, sync_conv_piece_tau(p, ns), nx, sync_conv_piece_tau(nx, ns), q2, &diff);
		double k = sync_tail_k(fmin(sync_conv_dof(p), sync_conv_dof(nx)), SYNC_GRAPH_STEP_SE);
		if (!(z <= k)) {
			if (why) {
				snprintf(why, len,
					 "x=%" PRId64 " on %s falls in a gap of the history of %s->%s (data end x=%" PRId64
					 ", resume x=%" PRId64 ") across which the fits disagree by %.6g (%.1f s.e.): the "
					 "clock stepped or restarted, not bridged",
					 x.i, sync_clock_format(from, a, sizeof a), a, sync_clock_format(to, c, sizeof c), p->xmax, nx->xmin, diff, z);
			}
			return -ERANGE;
		}
	}
	return 0;
}
