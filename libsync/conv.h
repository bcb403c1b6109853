/* conv.h — one conversion between two clocks: a fitted linear map x -> y with
 * its uncertainty model (docs/architecture.md §2.3, docs/clocks.md).
 *
 *   y(x) = y0 + yoff + slope * (x - x0)
 *
 * x0, y0 are integers in the clocks' units (ns or frames) so that times near
 * 2^62 never pass through a double; only the small difference x - x0 does.
 * The variance of y(x) for an exact x (the mean line, no observation noise):
 *
 *   var(x) = var_c + var_s * (x - x0 - xbar)^2 + (wander * |slope| * dist(x))^2
 *
 * where dist(x) is how far x lies outside [xmin, xmax] (0 inside).  For a
 * least-squares fit var_c = s^2/n and var_s = s^2/Sxx.
 *
 * sync_conv is a plain fixed-size struct so syncd can publish it and clients
 * can rebuild graphs from it; sync_conv_pack()/unpack() give its portable
 * little-endian wire form.  Pure: no I/O, no clocks, no allocation.
 * Errors are negative errno values with a static reason string.
 */
#ifndef CHORUS_CONV_H
#define CHORUS_CONV_H

#include <stddef.h>
#include <stdint.h>

/* A time value i + f in a clock's unit: i integer, f in [-0.5, 0.5].  Used
 * wherever a result may be fractional (a frame index converted from ns) or
 * too large for a double to hold to the ns (ns near 2^62). */
typedef struct {
	int64_t i; /* integer part, clock units */
	double f;  /* fractional part, clock units, |f| <= 0.5 */
} sync_tval;

enum {
	SYNC_CONV_LOWER = 1u << 0, /* fitted as a lower envelope (one-sided delays in y) */
	SYNC_CONV_UPPER = 1u << 1, /* fitted as an upper envelope (one-sided advances in y) */
	SYNC_CONV_FIXED = 1u << 2, /* exact by definition (e.g. global <-> root cpu): no validity limit */
	SYNC_CONV_PIECE = 1u << 3, /* a closed piece of a pair's history, valid over its data; its
				    * wander is the q2 of its rate random walk (bridge.h) */
	SYNC_CONV_BREAK = 1u << 4, /* with PIECE: a break (a step of unknown size) follows the piece's
				    * data, so a time after them is never bridged to the next */
};

/* With PIECE: bits 8-11 of flags hold k, the span 2^k s its q2 was
 * measured over (the rates of consecutive spans compared); 0: not stated,
 * taken as half the piece's data (its fit's halves).  A drift of the rate
 * (a ramp: a temperature change) gives a q2 that grows with that span, so
 * carrying the piece further than twice it needs it (bridge.h
 * sync_bridge_beyond). */
#define SYNC_CONV_TAU_SHIFT 8
#define SYNC_CONV_TAU_MASK (0xfu << SYNC_CONV_TAU_SHIFT)

typedef struct {
	int64_t x0;         /* reference point, x units (an observation's x) */
	int64_t y0;         /* reference point, y units */
	double yoff;        /* line value at x0 minus y0, y units, |yoff| <= 0.5 */
	double slope;       /* dy/dx, y units per x unit (frames/ns ~ 4.8e-5 for 48 kHz) */
	double xbar;        /* centre of the data, x - x0, x units */
	double var_c;       /* variance of the line at the centre, y units^2 */
	double var_s;       /* variance of the slope, (y units / x unit)^2 */
	double rms;         /* residual RMS of the points used, y units (observation noise) */
	double wander;      /* frequency wander allowed outside the data, fractional (1e-7 = 0.1 ppm) */
	int64_t xmin;       /* validity interval = span of the data, x units */
	int64_t xmax;       /* x units, >= xmin */
	int64_t updated_ns; /* time of last update, ns on the publisher's reference clock */
	uint32_t n;         /* number of observations used by the fit */
	uint32_t flags;     /* SYNC_CONV_* */
} sync_conv;

#define SYNC_CONV_WIRE_SIZE 104  /* bytes of sync_conv_pack() output */
#define SYNC_WANDER_DEFAULT 1e-7 /* 0.1 ppm: typical crystal wander over minutes */

/* A conversion that is exact: y = y0 + (x - x0) * slope with zero variance,
 * valid everywhere (the daemon's global <-> root cpu edge).  Returns it. */
sync_conv sync_conv_fixed(int64_t x0, int64_t y0, double slope);

/* Check that c is usable: finite, slope nonzero, variances >= 0, xmin <= xmax,
 * n >= 1 (unless FIXED).  Returns 0 or -EINVAL with a static reason in *why. */
int sync_conv_check(const sync_conv *c, const char **why);

/* Map x to y on c's line (no validity check); returns y. */
sync_tval sync_conv_apply(const sync_conv *c, sync_tval x);

/* Map y back to x on c's line (no validity check); returns x. */
sync_tval sync_conv_invert(const sync_conv *c, sync_tval y);

/* Variance (y units^2) of y(x) for an exact x, including the wander term
 * outside [xmin, xmax].  Returns it (>= 0). */
double sync_conv_var(const sync_conv *c, sync_tval x);

/* Degrees of freedom of c's stated variance: n - 2 observations' worth
 * (at least 1); INFINITY for a FIXED conversion.  Returns it. */
double sync_conv_dof(const sync_conv *c);

/* The t-quantile rule for stated standard errors (docs/clocks.md §3): a
 * variance estimated with `dof` degrees of freedom and scaled by
 * dof / (dof - 2) (4 when dof <= 2), as libsync's fits state it, leaves an
 * error / s.e. that follows Student's t of `dof` scaled to unit variance.
 * Returns how many stated s.e. have the two-sided tail probability of `k`
 * Gaussian standard errors (k itself for dof = INFINITY; more for fewer
 * dof, for k = 5: 18.0 at 6 dof, 10.0 at 10, 6.8 at 20, 5.5 at 60).  Pure
 * (GSL's t quantile). */
double sync_tail_k(double dof, double k);

/* Variance (x units^2) of the inverse x(y) for an exact y.  Returns it. */
double sync_conv_var_inv(const sync_conv *c, sync_tval y);

/* How far x lies outside [xmin, xmax], x units (0 inside, always 0 for
 * FIXED); returns it as a double (negative never). */
double sync_conv_outside(const sync_conv *c, sync_tval x);

/* The conversion y -> x with the same uncertainty model (so the reverse of an
 * edge is again a sync_conv).  Writes *out; returns 0, or -EINVAL if c's
 * slope is 0 or not finite. */
int sync_conv_reverse(const sync_conv *c, sync_conv *out);

/* How much more than its wander term a fit's line may err at x before its
 * data, if that wander was a ramp of the rate (a temperature change): a
 * fit over span T measures a ramp ydot as a rate error w = 0.75 ydot T at
 * its edge (fit.c), while the line, which holds the window's mean rate,
 * errs D before its data by ydot (D^2 + D T) / 2, i.e. w D times
 * 2D / (3T) + 2/3.  Returns that, at least 1; 1 for x in or after the data,
 * for FIXED, and for a span of 0.  For a time before a pair's first fit
 * (graph.h sync_graph_convert_past, docs/clocks.md "Before every fit"). */
double sync_conv_ramp_factor(const sync_conv *c, sync_tval x);

/* The variance (y units^2) at x before c's data of a ramp of the rate that
 * c's own data could not have shown: the slopes of its two halves differ
 * by noise of variance 16 var_s, so a ramp ydot = 8 sqrt(var_s) / T (T its
 * span) is one standard error of what it measures, and the line errs by
 * ydot (D^2 + D T) / 2 at D before the data.  A fit seconds old measures
 * its wander as 0 by chance (the 0.01 ppm floor then), while a crystal
 * following the temperature ramps by that much unseen: 0 for x in or
 * after the data, for FIXED, and for a span of 0. */
double sync_conv_unresolved_ramp_var(const sync_conv *c, sync_tval x);

/* A piece's q2 span (SYNC_CONV_TAU_MASK), in the unit of its x for a
 * clock whose unit lasts ns_per_unit ns: 2^k s, or half its data when k is
 * 0.  Returns it (> 0 unless the piece's data are one point). */
double sync_conv_piece_tau(const sync_conv *c, double ns_per_unit);

/* State in c's flags that its q2 was measured over spans of tau_s seconds,
 * rounded down to a power of two (1 s to 2^15 s; below 1 s, or not finite:
 * nothing stated).  For the publisher of a piece. */
void sync_conv_set_piece_tau(sync_conv *c, double tau_s);

/* Serialize c to buf (SYNC_CONV_WIRE_SIZE bytes, little-endian, IEEE
 * doubles).  Returns SYNC_CONV_WIRE_SIZE. */
size_t sync_conv_pack(const sync_conv *c, uint8_t *buf);

/* Parse len bytes at buf into *out and check it.  Returns 0, -EMSGSIZE when
 * len != SYNC_CONV_WIRE_SIZE, or -EINVAL with a reason. */
int sync_conv_unpack(const uint8_t *buf, size_t len, sync_conv *out, const char **why);

/* A tval from an integer, and the value of a tval as a double relative to
 * an integer origin (exact enough while |v - origin| < 2^50). */
static inline sync_tval sync_tval_of(int64_t i)
{
	sync_tval t = {i, 0.0};
	return t;
}

/* a - b as a double: exact while it fits int64, never an overflow (a
 * ticker from the wire may hold any values). */
static inline double sync_i64_diff(int64_t a, int64_t b)
{
	int64_t d;
	if (__builtin_sub_overflow(a, b, &d))
		return (double)a - (double)b;
	return (double)d;
}

static inline double sync_tval_diff(sync_tval v, int64_t origin)
{
	return sync_i64_diff(v.i, origin) + v.f;
}

/* base + d split into integer and fraction (d rounded to the nearest
 * integer, the rest in .f); saturates at the int64 range (.f = 0 then). */
sync_tval sync_tval_add(int64_t base, double d);

#endif
