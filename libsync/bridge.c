/* bridge.c — a clock pair across an outage (bridge.h). */
#include "libsync/bridge.h"

#include <math.h>
#include <stdint.h>

/* A fit's centre, where its line is best known. */
static int64_t centre(const sync_conv *c)
{
	return sync_tval_add(c->x0, c->xbar).i;
}

/* Its rate's variance there: the slope's, plus how far the rate at the
 * centre may differ from the window's mean under a random walk of q2. */
static double rate_var(const sync_conv *c, double q2)
{
	return c->var_s + q2 * sync_i64_diff(c->xmax, c->xmin) / 12.0;
}

sync_tval sync_bridge(const sync_conv *a, const sync_conv *b, double q2, sync_tval x, double *var, double *slope)
{
	int64_t xa = centre(a), xb = centre(b);
	double T = sync_i64_diff(xb, xa), u = sync_tval_diff(x, xa), w = u / T;
	double h01 = w * w * (3 - 2 * w), h00 = 1 - h01, h10 = w * (1 - w) * (1 - w), h11 = w * w * (w - 1);
	sync_tval ya = sync_conv_apply(a, sync_tval_of(xa)), yb = sync_conv_apply(b, sync_tval_of(xb));
	double d = sync_i64_diff(yb.i, ya.i) + (yb.f - ya.f);
	/* h00 ya + h01 yb = ya + h01 (yb - ya): the integer parts stay exact. */
	double off = h01 * d + T * (h10 * a->slope + h11 * b->slope);
	sync_tval y = sync_tval_add(ya.i, off + ya.f);
	if (slope)
		*slope = 6 * w * (1 - w) * d / T + (1 - w) * (1 - 3 * w) * a->slope + w * (3 * w - 2) * b->slope;
	if (var) {
		/* At its centre a fit's value and slope are uncorrelated. */
		double ta = h10 * T, tb = h11 * T, r = T - u;
		double v = h00 * h00 * a->var_c + ta * ta * rate_var(a, q2) + h01 * h01 * b->var_c + tb * tb * rate_var(b, q2);
		*var = v + (u > 0 && r > 0 ? q2 * u * u * u * r * r * r / (3 * T * T * T) : 0.0);
	}
	return y;
}

sync_conv sync_bridge_at(const sync_conv *a, const sync_conv *b, double q2, sync_tval x)
{
	double var, s;
	sync_tval y = sync_bridge(a, b, q2, x, &var, &s);
	sync_conv c = {
		.x0 = x.i,
		.y0 = y.i,
		.yoff = y.f - s * x.f,
		.slope = s,
		.xbar = x.f,
		.var_c = var,
		.var_s = 0.0,
		.rms = fmax(a->rms, b->rms),
		.wander = 0.0,
		.xmin = x.i,
		.xmax = x.i,
		.updated_ns = a->updated_ns > b->updated_ns ? a->updated_ns : b->updated_ns,
		.n = a->n < b->n ? a->n : b->n,
		.flags = 0,
	};
	return c;
}

sync_tval sync_bridge_beyond(const sync_conv *a, double q2, double tau, sync_tval x, double *var)
{
	if (var) {
		double D = fabs(sync_tval_diff(x, centre(a)));
		double ramp = tau > 0 && D > 2 * tau ? D / (2 * tau) : 1.0;
		*var = a->var_c + rate_var(a, q2) * D * D + ramp * q2 * D * D * D / 3.0;
	}
	return sync_conv_apply(a, x);
}

sync_conv sync_bridge_beyond_at(const sync_conv *a, double q2, double tau, sync_tval x)
{
	sync_conv c = *a;
	sync_bridge_beyond(a, q2, tau, x, &c.var_c);
	c.var_s = 0.0;
	c.wander = 0.0;
	c.flags &= ~(uint32_t)(SYNC_CONV_PIECE | SYNC_CONV_BREAK | SYNC_CONV_TAU_MASK);
	return c;
}

double sync_bridge_step_z(const sync_conv *a, double tau_a, const sync_conv *b, double tau_b, double q2, double *diff)
{
	/* The middle of the gap (of the data's ends; centres if they overlap) */
	int64_t lo = a->xmax, hi = b->xmin;
	if (hi < lo) {
		lo = centre(a);
		hi = centre(b);
	}
	sync_tval m = sync_tval_add(lo, 0.5 * sync_i64_diff(hi, lo));
	double va, vb;
	sync_tval ya = sync_bridge_beyond(a, q2, tau_a, m, &va), yb = sync_bridge_beyond(b, q2, tau_b, m, &vb);
	double d = sync_i64_diff(yb.i, ya.i) + (yb.f - ya.f);
	if (diff)
		*diff = d;
	double v = va + vb;
	return v > 0 ? fabs(d) / sqrt(v) : (d == 0 ? 0.0 : INFINITY);
}

double sync_bridge_q2_reverse(double q2, double slope)
{
	double s = fabs(slope);
	return q2 / (s * s * s * s * s);
}
