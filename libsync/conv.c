/* conv.c — the linear map with its variance model (see conv.h). */
#include "libsync/conv.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <gsl/gsl_cdf.h>
#include <string.h>

/* base + d, saturating (conv.h); sync_i64_diff is conv.h's too. */
sync_tval sync_tval_add(int64_t base, double d)
{
	sync_tval t;
	double r = nearbyint(d);
	if (!(r > -9.2e18 && r < 9.2e18)) {
		t.i = r > 0 ? INT64_MAX : INT64_MIN;
		t.f = 0.0;
		return t;
	}
	int64_t ri = (int64_t)r;
	if (__builtin_add_overflow(base, ri, &t.i)) {
		t.i = ri > 0 ? INT64_MAX : INT64_MIN;
		t.f = 0.0;
		return t;
	}
	t.f = d - r;
	return t;
}

sync_conv sync_conv_fixed(int64_t x0, int64_t y0, double slope)
{
	sync_conv c;
	memset(&c, 0, sizeof c);
	c.x0 = x0;
	c.y0 = y0;
	c.slope = slope;
	c.xmin = INT64_MIN;
	c.xmax = INT64_MAX;
	c.n = 1;
	c.flags = SYNC_CONV_FIXED;
	return c;
}

int sync_conv_check(const sync_conv *c, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (!isfinite(c->slope) || c->slope == 0.0) {
		*why = "slope is zero or not finite";
		return -EINVAL;
	}
	if (!isfinite(c->yoff) || fabs(c->yoff) > 1e15 || !isfinite(c->xbar)) {
		*why = "reference offset or data centre not finite";
		return -EINVAL;
	}
	if (!(c->var_c >= 0.0) || !(c->var_s >= 0.0) || !isfinite(c->var_c) || !isfinite(c->var_s)) {
		*why = "variance parameters negative or not finite";
		return -EINVAL;
	}
	if (!(c->rms >= 0.0) || !isfinite(c->rms) || !(c->wander >= 0.0) || !isfinite(c->wander)) {
		*why = "residual RMS or wander negative or not finite";
		return -EINVAL;
	}
	if (c->xmin > c->xmax) {
		*why = "validity interval empty (xmin > xmax)";
		return -EINVAL;
	}
	if (c->n < 1) {
		*why = "fit of zero observations";
		return -EINVAL;
	}
	return 0;
}

sync_tval sync_conv_apply(const sync_conv *c, sync_tval x)
{
	double dx = sync_i64_diff(x.i, c->x0) + x.f;
	return sync_tval_add(c->y0, c->yoff + c->slope * dx);
}

sync_tval sync_conv_invert(const sync_conv *c, sync_tval y)
{
	double dy = sync_i64_diff(y.i, c->y0) + y.f - c->yoff;
	return sync_tval_add(c->x0, dy / c->slope);
}

double sync_conv_outside(const sync_conv *c, sync_tval x)
{
	if (c->flags & SYNC_CONV_FIXED)
		return 0.0;
	double lo = sync_i64_diff(c->xmin, x.i) - x.f; /* > 0 when x < xmin */
	if (lo > 0.0)
		return lo;
	double hi = sync_i64_diff(x.i, c->xmax) + x.f;
	return hi > 0.0 ? hi : 0.0;
}

double sync_conv_var(const sync_conv *c, sync_tval x)
{
	double u = sync_i64_diff(x.i, c->x0) + x.f - c->xbar;
	double w = c->wander * fabs(c->slope) * sync_conv_outside(c, x);
	return c->var_c + c->var_s * u * u + w * w;
}

/* How far x lies before c's data (*D) and the data's span (*T), x units;
 * false for FIXED, for x in or after the data, and for a span of 0. */
static int before_data(const sync_conv *c, sync_tval x, double *D, double *T)
{
	if (c->flags & SYNC_CONV_FIXED)
		return 0;
	*D = sync_i64_diff(c->xmin, x.i) - x.f;
	*T = sync_i64_diff(c->xmax, c->xmin);
	return *D > 0 && *T > 0;
}

double sync_conv_ramp_factor(const sync_conv *c, sync_tval x)
{
	double D, T;
	if (!before_data(c, x, &D, &T))
		return 1.0;
	return fmax(1.0, 2.0 * D / (3.0 * T) + 2.0 / 3.0);
}

double sync_conv_unresolved_ramp_var(const sync_conv *c, sync_tval x)
{
	double D, T;
	if (!before_data(c, x, &D, &T))
		return 0.0;
	double e = 4.0 * sqrt(c->var_s) / T * (D * D + D * T);
	return e * e;
}

double sync_conv_piece_tau(const sync_conv *c, double ns_per_unit)
{
	unsigned k = (c->flags & SYNC_CONV_TAU_MASK) >> SYNC_CONV_TAU_SHIFT;
	if (k && ns_per_unit > 0)
		return ldexp(1e9, (int)k) / ns_per_unit;
	return 0.5 * sync_i64_diff(c->xmax, c->xmin);
}

void sync_conv_set_piece_tau(sync_conv *c, double tau_s)
{
	c->flags &= ~SYNC_CONV_TAU_MASK;
	if (!(tau_s >= 2.0) || !isfinite(tau_s))
		return;
	int k = ilogb(tau_s);
	if (k > 15)
		k = 15;
	c->flags |= (uint32_t)k << SYNC_CONV_TAU_SHIFT;
}

double sync_conv_dof(const sync_conv *c)
{
	if (c->flags & SYNC_CONV_FIXED)
		return INFINITY;
	return c->n > 3 ? (double)c->n - 2.0 : 1.0;
}

double sync_tail_k(double dof, double k)
{
	if (!(dof < 1e7))
		return k;
	if (dof < 1.0)
		dof = 1.0;
	double scale = dof > 2.0 ? sqrt(dof / (dof - 2.0)) : 2.0;
	return gsl_cdf_tdist_Qinv(gsl_cdf_ugaussian_Q(k), dof) / scale;
}

double sync_conv_var_inv(const sync_conv *c, sync_tval y)
{
	/* Delta method: an error e in the line at x moves the inverse by e/slope. */
	return sync_conv_var(c, sync_conv_invert(c, y)) / (c->slope * c->slope);
}


int sync_conv_reverse(const sync_conv *c, sync_conv *out)
{
	double s = c->slope;
	if (!isfinite(s) || s == 0.0)
		return -EINVAL;
	sync_conv r = *c;
	r.x0 = c->y0;
	r.slope = 1.0 / s;
	double yoff = -c->yoff / s; /* x at y = y0 is x0 - yoff/s */
	sync_tval y0 = sync_tval_add(c->x0, yoff);
	r.y0 = y0.i;
	r.yoff = y0.f;
	/* Centre of the data on the y axis relative to the new x0 (= y0). */
	r.xbar = c->yoff + s * c->xbar;
	r.var_c = c->var_c / (s * s);
	r.var_s = c->var_s / (s * s * s * s);
	r.rms = c->rms / fabs(s);
	if (c->flags & SYNC_CONV_FIXED) {
		r.xmin = INT64_MIN;
		r.xmax = INT64_MAX;
	} else {
		sync_tval a = sync_conv_apply(c, sync_tval_of(c->xmin));
		sync_tval b = sync_conv_apply(c, sync_tval_of(c->xmax));
		if (s < 0) {
			sync_tval t = a;
			a = b;
			b = t;
		}
		r.xmin = a.f < 0 && a.i > INT64_MIN ? a.i - 1 : a.i; /* floor of the lower end */
		r.xmax = b.f > 0 && b.i < INT64_MAX ? b.i + 1 : b.i; /* ceiling of the upper end */
	}
	*out = r;
	return 0;
}

static void put64(uint8_t **p, uint64_t v)
{
	v = htole64(v);
	memcpy(*p, &v, 8);
	*p += 8;
}

static void putd(uint8_t **p, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	put64(p, v);
}

static void put32(uint8_t **p, uint32_t v)
{
	v = htole32(v);
	memcpy(*p, &v, 4);
	*p += 4;
}

static uint64_t get64(const uint8_t **p)
{
	uint64_t v;
	memcpy(&v, *p, 8);
	*p += 8;
	return le64toh(v);
}

static double getd(const uint8_t **p)
{
	uint64_t v = get64(p);
	double d;
	memcpy(&d, &v, 8);
	return d;
}

static uint32_t get32(const uint8_t **p)
{
	uint32_t v;
	memcpy(&v, *p, 4);
	*p += 4;
	return le32toh(v);
}

size_t sync_conv_pack(const sync_conv *c, uint8_t *buf)
{
	uint8_t *p = buf;
	put64(&p, (uint64_t)c->x0);
	put64(&p, (uint64_t)c->y0);
	putd(&p, c->yoff);
	putd(&p, c->slope);
	putd(&p, c->xbar);
	putd(&p, c->var_c);
	putd(&p, c->var_s);
	putd(&p, c->rms);
	putd(&p, c->wander);
	put64(&p, (uint64_t)c->xmin);
	put64(&p, (uint64_t)c->xmax);
	put64(&p, (uint64_t)c->updated_ns);
	put32(&p, c->n);
	put32(&p, c->flags);
	return (size_t)(p - buf);
}

int sync_conv_unpack(const uint8_t *buf, size_t len, sync_conv *out, const char **why)
{
	const uint8_t *p = buf;
	sync_conv c;
	if (len != SYNC_CONV_WIRE_SIZE) {
		if (why)
			*why = "conversion record has the wrong size";
		return -EMSGSIZE;
	}
	c.x0 = (int64_t)get64(&p);
	c.y0 = (int64_t)get64(&p);
	c.yoff = getd(&p);
	c.slope = getd(&p);
	c.xbar = getd(&p);
	c.var_c = getd(&p);
	c.var_s = getd(&p);
	c.rms = getd(&p);
	c.wander = getd(&p);
	c.xmin = (int64_t)get64(&p);
	c.xmax = (int64_t)get64(&p);
	c.updated_ns = (int64_t)get64(&p);
	c.n = get32(&p);
	c.flags = get32(&p);
	int rc = sync_conv_check(&c, why);
	if (rc < 0)
		return rc;
	*out = c;
	return 0;
}
