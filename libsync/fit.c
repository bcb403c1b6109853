/* fit.c — sliding-window robust least squares and lower-envelope fits
 * (see fit.h and docs/clocks.md for the method and its justification). */
#include "libsync/fit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort_double.h>
#include <gsl/gsl_statistics_double.h>

#include "libsync/envelope.h"

/* 1/Phi^-1(3/4): makes the median absolute deviation a consistent estimate
 * of a Gaussian's standard deviation. */
#define MAD_TO_SIGMA 1.482602218505602

/* Lower-envelope calibration (docs/clocks.md, "Lower envelope"): with m
 * points of exponential delay (scale theta) evenly spread in x, the LP line at
 * the mean x sits on average ENV_BIAS * theta/m above the truth (subtracted),
 * the remaining error at the centre has variance ENV_VAR_C * (theta/m)^2 and
 * the slope variance is ENV_VAR_S * theta^2 / (m * Sxx).  Measured by
 * simulation over 20000 seeds for m = 30..1000 (constant to a few %). */
/* Lowest residuals that estimate the delays' density at the floor, and the
 * largest tail exponent alpha believed (fit.c envelope_fit). */
#define ENV_LOCAL_K 6
#define ENV_LOCAL_ALPHA_MAX 3.0
#define ENV_BIAS 1.83
#define ENV_VAR_C 1.85
#define ENV_VAR_S 4.2

/* Wander (docs/clocks.md §5).  The frequency's wander is measured Allan
 * style: the slopes s1, s2 fitted to the two halves of the window (spans
 * tau) differ by more than their variances V = var_s1 + var_s2 explain, and
 * for a random walk of frequency with diffusion q^2 (y^2 / x^3)
 * E[(s2 - s1)^2] = V + 2 q^2 tau / 3, so q^2 = 1.5 ((s2 - s1)^2 - V) / tau
 * (unbiased; a ramp's gives 0.75 ydot^2 T).  A straight line fitted over T
 * to such a clock errs at its newest point by a variance WANDER_K_END
 * q^2 T^3 and in frequency there by WANDER_K_FREQ q^2 T (Monte Carlo over
 * 3000 walks of 64 points: 0.0095 and 0.377, the latter doubled for its
 * correlation with the former, which the additive form of conv.h cannot
 * carry; a ramp gives 0.0069 and 0.25 for the same q^2).  The estimate is a
 * running inverse-variance weighted mean over about WANDER_MEMORY windows
 * (an estimate's variance is 2 (1.5 V / tau)^2), believed when it exceeds
 * WANDER_SIGNIF of its standard errors (for one window's estimate, whose
 * error is chi^2_1 - 1 distributed, white noise passes that 1 time in 45;
 * the mean of several windows less often) before it shortens the window: a
 * believed chance wander costs precision.  What the fit *states* is the
 * mean itself, clipped at 0, believed or not: a line's bias at its newest
 * point grows with the same curvature the test measures (about 1.15 of the
 * test's z for a ramp), so a threshold on the test would leave biases up
 * to 2.6 stated s.e. unstated in every young window whose wander is just
 * below it (bench/honesty's temperature rows: 5-7 s.e. from 25 s to 45 s
 * of a ramp); the unbiased mean states them on average and costs a steady
 * clock a few per cent of its RMS z (tests/test_fit). */
#define WANDER_K_END 0.0095
/* A ramp's error of a line fitted over T is ydot T^2 / 24 at the data's
 * centre and ydot T^2 / 12 at its ends (the bias of a fitted parabola):
 * the stated term is split the same way, WANDER_K_CENTRE q^2 T^3 into the
 * centre's variance and WANDER_K_SLOPE q^2 T into the slope's, so that at
 * the newest point it is ~WANDER_K_END q^2 T^3 (1/432 + 1/144 = 1/108) and
 * at the centre a quarter of it, and beyond the data it grows as a ramp's
 * bias does.  A single term at the centre would state the newest point's
 * error for the centre's (RMS z 0.58 there for a ramp in a Monte Carlo of
 * this fit; 0.84 split, nothing else moving). */
#define WANDER_K_CENTRE (1.0 / 432.0)
#define WANDER_K_SLOPE (1.0 / 36.0)
/* A young least-squares fit (its window still filling: its wander is one
 * window's estimate) states its wander's bound, the mean plus one standard
 * error, not the mean: one window's two halves resolve a ramp only to a few
 * of their standard errors, and a ramp whose estimate came out 0 by chance
 * left the line ydot T^2 / 12 off at its newest point unstated.  Monte
 * Carlo of this fit (ramp 13 ppb/s, noise 1.3 us, about 1 observation/s,
 * window 64, 1000 pairs x 200 s, probes at the newest point + 1 s and at
 * the centre, beyond 5 s.e. by sync_tail_k's t rule): with the mean and a
 * single term 17 and 11 of 189949 beyond 5 s.e., RMS z 0.86 / 0.59; split
 * and with the bound while young 0 and 2, RMS z 0.76 / 0.77.  The price is
 * paid by every young fit: a steady clock's conversions in its first
 * window state RMS z 0.75 instead of 0.97 (0.86 over its first 200 s;
 * docs/clocks.md §5). */
#define WANDER_YOUNG_WINDOWS 1.0
/* ... and the bound fades while the windows pooled, K, go from 1 to this:
 * when the window slides the first window's estimate still weighs most in
 * the mean, and a ramp just below what one window resolves, stated at the
 * mean from then on, put conversions of the second window beyond 5 s.e.
 * (a Monte Carlo of this fit, 1000 pairs, two observations a second, probes
 * up to 1.5 s after the newest: 8 ppb/s at 1.3 us of noise, RMS z 1.42 and
 * 17 of 56000 beyond 5 s.e. in observations 64-128; 2 ppb/s at 0.3 us, 12
 * of 33600; 40 ppb/s at 5 us, 16).  Fading over the second window: none
 * beyond 5 s.e. in any, RMS z at most 1.17; a steady clock's second window
 * states 0.73-0.79 instead of 0.88-0.94, its later windows unchanged. */
#define WANDER_FADE_K 2.0
#define WANDER_K_FREQ 0.754
#define WANDER_MEMORY 4.0
#define WANDER_SIGNIF 3.0
/* The estimate pools about K windows' worth of halves (K = 1 while the
 * window has not slid: one estimate, (chi^2_1 - 1) / sqrt(2) in units of
 * its s.e. under no wander, which passes 3 s.e. 1 time in 45).  A chance
 * wander believed shortens the window and loses precision for nothing
 * (bench/sync: 2.5 % of first windows shortened, the value at the data's
 * centre 1.24x the Cramer-Rao bound), so the window is shortened beyond
 * WANDER_SIGNIF + WANDER_SIGNIF_K1 / sqrt(K) s.e.: 5.66 at K = 1 (chi^2_1 >
 * 9, as rare as a Gaussian's 3 sigma, 0.27 %), 4.9 at K = 2 and 4.3 at
 * K = 4 (the chi^2_K points of the same rarity: 4.9, 4.2), 3 for many. The
 * stated wander does not depend on it. */
#define WANDER_SIGNIF_K1 2.657
#define WANDER_BOUND_K 1.0 /* sync_fit_wander_bound: mean + this many s.e. */

/* Each half fit keeps at least this many points, the adapted window at
 * least twice as many and a quarter of the window. */
#define WANDER_MIN_POINTS 8

struct sync_fit {
	sync_fit_params p;
	int64_t *x, *y;     /* ring of observations, capacity p.window */
	size_t head, count; /* index of the oldest, number held */
	double *dx, *d, *r; /* work: x - x0, residual offset, residuals (window) */
	double *t1, *t2;    /* work: gathered inliers / median scratch (window) */
	size_t *hull;       /* work: hull indices (window) */
	unsigned char *in;  /* work: inlier mask (window) */
	uint32_t rejected;  /* outliers in the last solve */
	/* Envelope modes: the stated delay scale, remembered over about one
	 * window of observations (a window's local estimate is noisy; the
	 * delays' shape persists): */
	double scale2;     /* running mean of the squared scale, y units^2 (0: none yet) */
	uint64_t added;    /* observations ever added (since the last reset) */
	uint64_t added_at; /* `added` at the last envelope solve */
	/* Wander (docs/clocks.md §5): the random walk's q^2 measured so far. */
	double ws_w, ws_q; /* decayed sums of the estimates' weights u and of u q^2 */
	double ws_k;       /* decayed sum of the windows' shares: K, windows pooled */
	uint64_t wq_at;    /* `added` at the last update */
	size_t first;      /* oldest observation the last solve used (window adaptation) */
};

void sync_fit_params_default(sync_fit_params *p)
{
	memset(p, 0, sizeof *p);
	p->mode = SYNC_FIT_MEAN;
	p->window = 64;
	p->max_span = 0;
	p->nominal_slope = 0.0;
	p->reject_k = 3.5;
	p->max_iter = 10;
	p->sigma_floor = 0.28867513459481287; /* 1/sqrt(12): rounding to an integer unit */
	p->wander = SYNC_WANDER_DEFAULT;
}

sync_fit *sync_fit_new(const sync_fit_params *p, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (p->mode != SYNC_FIT_MEAN && p->mode != SYNC_FIT_LOWER && p->mode != SYNC_FIT_UPPER) {
		*why = "unknown fit mode";
		return NULL;
	}
	if (p->window < 3 || p->window > (1u << 24)) {
		*why = "fit window must hold 3 .. 16777216 observations";
		return NULL;
	}
	if (p->max_span < 0 || !isfinite(p->nominal_slope) || !(p->reject_k >= 0.0) ||
	    p->max_iter < 1 || !(p->sigma_floor >= 0.0) || !(p->wander >= 0.0) ||
	    !isfinite(p->reject_k) || !isfinite(p->sigma_floor) || !isfinite(p->wander)) {
		*why = "fit parameter out of range (negative span, k, floor or wander; max_iter 0)";
		return NULL;
	}
	sync_fit *f = calloc(1, sizeof *f);
	size_t w = p->window;
	if (!f)
		goto oom;
	f->p = *p;
	f->x = malloc(w * sizeof *f->x);
	f->y = malloc(w * sizeof *f->y);
	f->dx = malloc(w * sizeof *f->dx);
	f->d = malloc(w * sizeof *f->d);
	f->r = malloc(w * sizeof *f->r);
	f->t1 = malloc(w * sizeof *f->t1);
	f->t2 = malloc(w * sizeof *f->t2);
	f->hull = malloc(w * sizeof *f->hull);
	f->in = malloc(w);
	if (!f->x || !f->y || !f->dx || !f->d || !f->r || !f->t1 || !f->t2 || !f->hull || !f->in)
		goto oom;
	return f;
oom:
	sync_fit_free(f);
	*why = "out of memory";
	return NULL;
}

void sync_fit_free(sync_fit *f)
{
	if (!f)
		return;
	free(f->x);
	free(f->y);
	free(f->dx);
	free(f->d);
	free(f->r);
	free(f->t1);
	free(f->t2);
	free(f->hull);
	free(f->in);
	free(f);
}

void sync_fit_reset(sync_fit *f)
{
	f->head = 0;
	f->count = 0;
	f->rejected = 0;
	f->scale2 = 0.0;
	f->added = f->added_at = 0;
	f->ws_w = f->ws_q = f->ws_k = 0.0;
	f->wq_at = 0;
	f->first = 0;
}

size_t sync_fit_count(const sync_fit *f)
{
	return f->count;
}

static size_t slot(const sync_fit *f, size_t k)
{
	return (f->head + k) % f->p.window;
}

int64_t sync_fit_last_x(const sync_fit *f)
{
	return f->count ? f->x[slot(f, f->count - 1)] : INT64_MIN;
}

int sync_fit_add(sync_fit *f, int64_t x, int64_t y, const char **why)
{
	if (f->count && x < sync_fit_last_x(f)) {
		if (why)
			*why = "observation out of order (x went backwards)";
		return -EINVAL;
	}
	if (f->count == f->p.window) {
		f->head = slot(f, 1);
		f->count--;
	}
	size_t s = slot(f, f->count);
	f->x[s] = x;
	f->y[s] = y;
	f->count++;
	f->added++;
	if (f->p.max_span > 0) {
		int64_t oldest_ok;
		if (__builtin_sub_overflow(x, f->p.max_span, &oldest_ok))
			oldest_ok = INT64_MIN;
		while (f->count > 1 && f->x[f->head] < oldest_ok) {
			f->head = slot(f, 1);
			f->count--;
		}
	}
	return 0;
}

uint32_t sync_fit_rejected(const sync_fit *f)
{
	return f->rejected;
}

/* Least squares of d on dx over the inliers: *c0, *c1, residual sum of
 * squares; returns the number of inliers used. */
static size_t ls_inliers(sync_fit *f, size_t n, double *c0, double *c1, double *sumsq)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (f->in[i]) {
			f->t1[m] = f->dx[i];
			f->t2[m] = f->d[i];
			m++;
		}
	}
	double cov00, cov01, cov11;
	gsl_fit_linear(f->t1, 1, f->t2, 1, m, c0, c1, &cov00, &cov01, &cov11, sumsq);
	return m;
}

/* A high-breakdown line to start the rejection from: the slope is the
 * median of the n/2 slopes between each point and the one half a window
 * later (each has half the window's baseline, and a pair is spoiled only
 * if one of its points is, so the median holds while fewer than ~29 % of
 * the points are outliers), the offset the median of d - slope dx.  Least
 * squares over every point is no such start: five +1 ms outliers in 32
 * points of 10 us noise, three of them at the end, tilt it so far that the
 * MAD rejection around it keeps them and throws good points out (bench/sync:
 * 14.5x the Cramer-Rao bound with 10 % outliers).  O(n); uses f->t1, f->t2. */
static int median_line(sync_fit *f, size_t n, double *c0, double *c1)
{
	size_t h = n / 2, m = 0;
	for (size_t i = 0; i + h < n; i++) {
		double ddx = f->dx[i + h] - f->dx[i];
		if (ddx != 0.0)
			f->t1[m++] = (f->d[i + h] - f->d[i]) / ddx;
	}
	if (m == 0)
		return -1;
	*c1 = gsl_stats_median(f->t1, 1, m);
	for (size_t i = 0; i < n; i++)
		f->t2[i] = f->d[i] - *c1 * f->dx[i];
	*c0 = gsl_stats_median(f->t2, 1, n);
	return 0;
}

/* Robust least squares: from the median line, reject |r - median| > k
 * robust sigmas (MAD of all residuals, so a rejected point can come back),
 * refit the inliers by least squares, until the inlier set stops changing.
 * Below MIN_REJECT points the MAD is too noisy a scale: it rejects good
 * points, s^2 then understates the noise and the stated uncertainty with it
 * (1.5x at 8 points), so small fits keep every point (an outlier among them
 * widens the stated uncertainty: the safe side).  Leaves the fit in *c0,
 * *c1, the inliers in f->in, the residuals in f->r; returns the number of
 * inliers or -EAGAIN. */
#define MIN_REJECT 16

static int robust_ls(sync_fit *f, size_t n, double *c0, double *c1, double *sumsq)
{
	memset(f->in, 1, n);
	int robust = f->p.reject_k > 0.0 && n >= MIN_REJECT;
	size_t m;
	if (!robust || median_line(f, n, c0, c1) < 0) {
		m = ls_inliers(f, n, c0, c1, sumsq);
		robust = 0;
	} else
		m = n; /* refitted below: the first pass always changes the set or breaks */
	for (uint32_t it = 0; robust && it < f->p.max_iter; it++) {
		for (size_t i = 0; i < n; i++) {
			f->r[i] = f->d[i] - *c0 - *c1 * f->dx[i];
			f->t1[i] = f->r[i];
		}
		/* The median line's offset is its residuals' median. */
		double med = it == 0 ? 0.0 : gsl_stats_median(f->t1, 1, n);
		for (size_t i = 0; i < n; i++)
			f->t1[i] = fabs(f->r[i] - med);
		double sig = MAD_TO_SIGMA * gsl_stats_median(f->t1, 1, n);
		if (sig < f->p.sigma_floor)
			sig = f->p.sigma_floor;
		double thr = f->p.reject_k * sig;
		int changed = it == 0;
		size_t keep = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned char ok = fabs(f->r[i] - med) <= thr;
			changed |= ok != f->in[i];
			f->in[i] = ok;
			keep += ok;
		}
		if (keep < 3)
			return -EAGAIN;
		if (!changed)
			break;
		m = ls_inliers(f, n, c0, c1, sumsq);
	}
	for (size_t i = 0; i < n; i++)
		f->r[i] = f->d[i] - *c0 - *c1 * f->dx[i];
	return (int)m;
}

/* Mean x and Sxx of the inliers. */
static void centre(const sync_fit *f, size_t n, double *xbar, double *sxx)
{
	double s = 0.0, q = 0.0;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (f->in[i]) {
			s += f->dx[i];
			m++;
		}
	*xbar = s / (double)m;
	for (size_t i = 0; i < n; i++)
		if (f->in[i])
			q += (f->dx[i] - *xbar) * (f->dx[i] - *xbar);
	*sxx = q;
}

/* The envelope's dependence on its support: the line rests on two points
 * (the least residuals), and with a sparse floor (delays whose least values
 * are rare: a few early points below a thick band) either one alone may set
 * the slope.  Refit without each in turn; *js and *jc get the sums of the
 * squared changes of the slope and of the line at x = xbar, the
 * deletion-jackknife variances the caller states when they exceed its
 * model's.  Calibration (libsync's fit over 3000 seeds at m = 130): the
 * model alone put 1.0 % of exponential, 2.2 % of uniform and 4.7 % of
 * delays resampled from snd-dummy's kpatch records under qemu beyond 3
 * stated s.e. (RMS z 0.80, 1.01, 1.27); with the larger of the two, 0.5 %,
 * 0.6 % and 1.5 % (RMS z 0.67, 0.72, 0.93): the envelope's error is
 * heavier-tailed than a normal one, and this is what keeps its tail near
 * the stated one.  f->in and f->d are restored. */
static void support_jackknife(sync_fit *f, size_t n, double c0, double c1, double xbar, double *js, double *jc)
{
	size_t sup[2] = {n, n};
	double rs[2] = {0, 0};
	for (size_t i = 0; i < n; i++) {
		if (!f->in[i])
			continue;
		double r = f->d[i] - c0 - c1 * f->dx[i];
		if (sup[0] == n || r < rs[0]) {
			sup[1] = sup[0];
			rs[1] = rs[0];
			sup[0] = i;
			rs[0] = r;
		} else if (sup[1] == n || r < rs[1]) {
			sup[1] = i;
			rs[1] = r;
		}
	}
	*js = *jc = 0.0;
	for (int q = 0; q < 2; q++) {
		if (sup[q] == n)
			continue;
		double e0, e1;
		f->in[sup[q]] = 0;
		if (sync_envelope_lower(f->dx, f->d, f->in, n, f->hull, &e0, &e1) >= 0) {
			*js += (e1 - c1) * (e1 - c1);
			double dc = (e0 - c0) + (e1 - c1) * xbar;
			*jc += dc * dc;
		}
		f->in[sup[q]] = 1;
	}
}

/* Lower envelope (sign = +1) or upper (sign = -1) of the robustly pre-fitted
 * points: drop points impossibly far on the early side of the robust line,
 * take the LP line, correct its bias, and model its variance. */
static int envelope_fit(sync_fit *f, size_t n, double sign, double *c0, double *c1, double *var_c,
			double *var_s, double *rms, size_t *used)
{
	double sumsq;
	if (robust_ls(f, n, c0, c1, &sumsq) < 0)
		return -EAGAIN;
	/* Robust scale of the residuals around their median (all points). */
	for (size_t i = 0; i < n; i++)
		f->t1[i] = f->r[i];
	double med = gsl_stats_median(f->t1, 1, n);
	for (size_t i = 0; i < n; i++)
		f->t1[i] = fabs(f->r[i] - med);
	double sig = MAD_TO_SIGMA * gsl_stats_median(f->t1, 1, n);
	if (sig < f->p.sigma_floor)
		sig = f->p.sigma_floor;
	/* Delays only push points to the late side: a point more than k robust
	 * sigmas early is not a delayed observation but a wrong one.  Late
	 * outliers cannot pull a lower envelope, so they all stay. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		f->in[i] = f->p.reject_k <= 0.0 || sign * (f->r[i] - med) >= -f->p.reject_k * sig;
		m += f->in[i];
		f->d[i] *= sign;
	}
	if (m < 3)
		return -EAGAIN;
	int rc = sync_envelope_lower(f->dx, f->d, f->in, n, f->hull, c0, c1);
	if (rc < 0)
		return rc;
	double sr = 0.0, sr2 = 0.0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (!f->in[i])
			continue;
		double r = f->d[i] - *c0 - *c1 * f->dx[i];
		sr += r;
		sr2 += r * r;
		f->t1[k++] = r;
	}
	/* theta: the exponential scale, sum of residuals over the m - 2 degrees
	 * of freedom left by the two fitted parameters. */
	double theta = sr / (double)(m - 2);
	if (theta < f->p.sigma_floor)
		theta = f->p.sigma_floor;
	double mm = (double)m;
	/* The envelope's accuracy is set by how densely the delays crowd the
	 * floor: theta = 1/f(0) only for exponential ones.  Lighter-tailed
	 * delays (normal, the minimum of a batch of uniform ones) leave the
	 * floor sparse and the hull wanders further.  Near the floor let
	 * F(r) ~ (r/a)^alpha: the K-th lowest residual above the two hull
	 * points is r_(K) ~ a (K/m)^(1/alpha), r_(2K)/r_(K) ~ 2^(1/alpha) gives
	 * alpha, and the hull's own scale is a m^(-1/alpha) = r_(K)
	 * K^(-1/alpha) — m r_(K) / K = theta for exponential delays.  The
	 * larger of the two scales is stated (tests/test_fit: RMS z 0.78 for
	 * exponential, 0.87 uniform, 1.47 normal, was 1.00, 1.31, 6.09). */
	double theta_v = theta;
	if (m > 2 * ENV_LOCAL_K + 4) {
		gsl_sort_smallest(f->t2, 2 * ENV_LOCAL_K + 2, f->t1, 1, m);
		double rk = f->t2[ENV_LOCAL_K + 1], r2k = f->t2[2 * ENV_LOCAL_K + 1];
		double alpha = rk > 0 && r2k > rk ? log(2.0) / log(r2k / rk) : ENV_LOCAL_ALPHA_MAX;
		alpha = fmin(fmax(alpha, 1.0), ENV_LOCAL_ALPHA_MAX);
		double loc = mm * rk * pow((double)ENV_LOCAL_K, -1.0 / alpha);
		if (loc > theta_v)
			theta_v = loc;
	}
	/* Remembered over about a window: each new observation moves the
	 * running mean by 1/window, and the larger of it and now is stated. */
	if (2 * m >= f->p.window) { /* a young window's scale is not remembered */
		double w = fmin(1.0, (double)(f->added - f->added_at) / (double)f->p.window);
		f->added_at = f->added;
		f->scale2 = f->scale2 > 0.0 ? f->scale2 + w * (theta_v * theta_v - f->scale2) : theta_v * theta_v;
		theta_v = fmax(theta_v, sqrt(f->scale2));
	}
	double xbar, sxx, js, jc;
	centre(f, n, &xbar, &sxx);
	support_jackknife(f, n, *c0, *c1, xbar, &js, &jc);
	*c0 -= ENV_BIAS * theta / mm;
	*var_c = fmax(ENV_VAR_C * (theta_v / mm) * (theta_v / mm), jc);
	*var_s = fmax(ENV_VAR_S * theta_v * theta_v / (mm * sxx), js);
	*rms = sqrt(sr2 / mm);
	*c0 *= sign;
	*c1 *= sign;
	for (size_t i = 0; i < n; i++)
		f->d[i] *= sign;
	*used = m;
	return 0;
}

/* Errors correlated in time (a loaded machine delays a run of receptions
 * alike) leave the residuals' scatter, and with it the least-squares
 * variances, too small: for errors with lag-1 correlation phi the mean's
 * variance is (1 + phi) / (1 - phi) times the white-noise one.  The lag-1
 * autocorrelation of the inliers' residuals in x order is estimated; when
 * it exceeds AR1_SIGNIF / sqrt(m) (white noise does so about 1 time in
 * 45) the variances are scaled by that factor, at most AR1_MAX.  Returns
 * the factor (1: none). */
#define AR1_SIGNIF 2.0
#define AR1_MAX 10.0

static double ar1_inflation(sync_fit *f, size_t n, double c0, double c1, size_t m)
{
	if (m < 8)
		return 1.0;
	double num = 0, den = 0, prev = 0;
	int have = 0;
	for (size_t i = 0; i < n; i++) {
		if (!f->in[i])
			continue;
		double r = f->d[i] - c0 - c1 * f->dx[i];
		den += r * r;
		if (have)
			num += r * prev;
		prev = r;
		have = 1;
	}
	if (!(den > 0))
		return 1.0;
	double rho = num / den;
	if (!(rho > AR1_SIGNIF / sqrt((double)m)))
		return 1.0;
	return fmin(AR1_MAX, (1 + rho) / (1 - fmin(rho, 0.99)));
}

/* The fit of observations first..last-1 (oldest first) into *out, without
 * wander; *noise_end gets the stated variance at x[last - 1].  Sets
 * f->rejected.  0 or as sync_fit_solve. */
static int solve_range(sync_fit *f, size_t first, size_t last, sync_conv *out, double *noise_end, const char **why)
{
	size_t n = last - first;
	if (n < 3) {
		*why = "fewer than 3 observations";
		return -EAGAIN;
	}
	int64_t xa = f->x[slot(f, first)], xb = f->x[slot(f, last - 1)];
	if (xa == xb) {
		*why = "all observations have the same x";
		return -EDOM;
	}
	/* Reference point: the middle observation, so |x - x0| is at most half
	 * the window and the doubles below hold small numbers exactly. */
	size_t mid = first + n / 2;
	int64_t x0 = f->x[slot(f, mid)], y0 = f->y[slot(f, mid)];
	double nominal = f->p.nominal_slope;
	if (nominal == 0.0)
		nominal = (double)(f->y[slot(f, last - 1)] - f->y[slot(f, first)]) / (double)(xb - xa);
	for (size_t i = 0; i < n; i++) {
		size_t s = slot(f, first + i);
		f->dx[i] = (double)(f->x[s] - x0);
		f->d[i] = (double)(f->y[s] - y0) - nominal * f->dx[i];
	}
	double c0, c1, var_c, var_s, rms, xbar, sxx;
	size_t m;
	if (f->p.mode == SYNC_FIT_MEAN) {
		double sumsq;
		int rc = robust_ls(f, n, &c0, &c1, &sumsq);
		if (rc < 3) {
			*why = "fewer than 3 observations left after outlier rejection";
			return -EAGAIN;
		}
		m = (size_t)rc;
		centre(f, n, &xbar, &sxx);
		if (sxx <= 0.0) {
			*why = "the observations kept all have the same x";
			return -EDOM;
		}
		double s2 = sumsq / (double)(m - 2);
		if (s2 < f->p.sigma_floor * f->p.sigma_floor)
			s2 = f->p.sigma_floor * f->p.sigma_floor;
		/* s2 is itself estimated from m - 2 degrees of freedom, so an
		 * error divided by the stated s.e. follows Student's t with
		 * nu = m - 2, whose variance is nu / (nu - 2): scale by it so the
		 * stated variance is the error's variance at any m (a young fit
		 * of a few points says how little it knows; -> 1 for large m). */
		double nu = (double)m - 2.0;
		double tvar = nu > 2.0 ? nu / (nu - 2.0) : 4.0;
		double ar = ar1_inflation(f, n, c0, c1, m);
		var_c = ar * tvar * s2 / (double)m;
		var_s = ar * tvar * s2 / sxx;
		rms = sqrt(sumsq / (double)m);
	} else {
		double sign = f->p.mode == SYNC_FIT_LOWER ? 1.0 : -1.0;
		int rc = envelope_fit(f, n, sign, &c0, &c1, &var_c, &var_s, &rms, &m);
		if (rc < 0) {
			*why = rc == -EDOM ? "the observations kept all have the same x"
					   : "fewer than 3 observations left after outlier rejection";
			return rc;
		}
		centre(f, n, &xbar, &sxx);
	}
	double dend = f->dx[n - 1] - xbar;
	*noise_end = var_c + var_s * dend * dend;
	sync_conv c;
	memset(&c, 0, sizeof c);
	double k = nearbyint(c0); /* move the integer part of the line's offset into y0 */
	c.x0 = x0;
	c.y0 = y0 + (int64_t)k;
	c.yoff = c0 - k;
	c.slope = nominal + c1;
	c.xbar = xbar;
	c.var_c = var_c;
	c.var_s = var_s;
	c.rms = rms;
	c.wander = f->p.wander;
	c.xmin = xa;
	c.xmax = xb;
	c.updated_ns = 0;
	c.n = (uint32_t)m;
	c.flags = f->p.mode == SYNC_FIT_LOWER   ? SYNC_CONV_LOWER
		  : f->p.mode == SYNC_FIT_UPPER ? SYNC_CONV_UPPER
						: 0;
	f->rejected = (uint32_t)(n - m);
	*out = c;
	return 0;
}

/* Measure the wander on the whole window (its two halves' slopes) once
 * each half has WANDER_MIN_POINTS and a sixteenth of a window is new (every
 * observation while the window is young: its estimate supersedes the
 * older ones and a ramp's bias grows fastest then); update the running
 * sums. */
static void measure_wander(sync_fit *f)
{
	size_t n = f->count;
	/* Every window/16 new observations: the estimate moves little with
	 * one, and the two half fits cost twice the solve. */
	uint64_t every = f->p.window / 16 && f->added != f->count ? f->p.window / 16 : 1;
	if (n < 2 * WANDER_MIN_POINTS || f->added < f->wq_at + every)
		return;
	uint32_t rejected = f->rejected;
	sync_conv a, b;
	double na, nb;
	const char *why;
	size_t h = n / 2;
	int ok = solve_range(f, 0, h, &a, &na, &why) == 0 && solve_range(f, h, n, &b, &nb, &why) == 0;
	f->rejected = rejected;
	if (!ok)
		return;
	double tau = 0.5 * ((double)(a.xmax - a.xmin) + (double)(b.xmax - b.xmin));
	if (!(tau > 0))
		return;
	double ds = b.slope - a.slope, v = a.var_s + b.var_s;
	double q2 = 1.5 * (ds * ds - v) / tau, q2var = 2.0 * (1.5 * v / tau) * (1.5 * v / tau);
	double w = fmin(1.0, (double)(f->added - f->wq_at) / (double)f->p.window);
	if (!(q2var > 0) || !isfinite(q2var))
		return; /* exact halves (no noise, no floor): no variance to weigh by */
	double lam = exp(-w / WANDER_MEMORY);
	/* Inverse-variance weights, scaled by the share of a window that is
	 * new (estimates of overlapping windows are not independent): a
	 * young fit's noisy estimate weighs little. */
	double u = w / q2var;
	if (f->added == f->count) {
		/* Nothing has left the window yet: it holds every observation,
		 * and its estimate supersedes those of its younger self. */
		f->ws_w = 1.0 / q2var;
		f->ws_q = q2 / q2var;
		f->ws_k = 1.0;
	} else {
		f->ws_w = lam * f->ws_w + u;
		f->ws_q = lam * f->ws_q + u * q2;
		f->ws_k = lam * f->ws_k + w;
	}
	f->wq_at = f->added;
}

double sync_fit_wander(const sync_fit *f)
{
	if (!(f->ws_w > 0))
		return 0.0;
	/* The weighted mean's variance is 1 / (sum of weights). */
	double mean = f->ws_q / f->ws_w, se = 1.0 / sqrt(f->ws_w);
	double k = WANDER_SIGNIF + WANDER_SIGNIF_K1 / sqrt(fmax(1.0, f->ws_k));
	return mean > k * se ? mean : 0.0;
}

double sync_fit_wander_stated(const sync_fit *f)
{
	if (!(f->ws_w > 0))
		return 0.0;
	if (f->p.mode == SYNC_FIT_MEAN && (double)f->added < WANDER_YOUNG_WINDOWS * (double)f->p.window)
		return sync_fit_wander_bound(f);
	double mean = f->ws_q / f->ws_w;
	if (f->p.mode == SYNC_FIT_MEAN) {
		/* The bound fades over the second window (K from 1 to
		 * WANDER_FADE_K): the first window's estimate still weighs most
		 * in the mean when it slides. */
		double k = fmin(1.0, fmax(0.0, WANDER_FADE_K - f->ws_k));
		mean += k * WANDER_BOUND_K / sqrt(f->ws_w);
	}
	return fmax(0.0, mean);
}

double sync_fit_wander_bound(const sync_fit *f)
{
	if (!(f->ws_w > 0))
		return 0.0;
	return fmax(0.0, f->ws_q / f->ws_w + WANDER_BOUND_K / sqrt(f->ws_w));
}

size_t sync_fit_used_from(const sync_fit *f)
{
	return f->first;
}

int sync_fit_solve(sync_fit *f, sync_conv *out, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	sync_conv c;
	double noise;
	int rc = solve_range(f, 0, f->count, &c, &noise, why);
	if (rc < 0)
		return rc;
	measure_wander(f);
	double q2 = sync_fit_wander(f), span = (double)(c.xmax - c.xmin);
	f->first = 0;
	if (q2 > 0 && noise > 0) {
		/* Shorten the window where the wander costs more than the noise
		 * it averages: the noise's variance at the newest point falls as
		 * T^-a (a = 1 for least squares, 2 for an envelope, whose error
		 * goes as 1/m), the wander's grows as T^3; their sum is least at
		 * T* = T (3 W / (a N))^(-1 / (a + 3)). */
		double a = f->p.mode == SYNC_FIT_MEAN ? 1.0 : 2.0;
		double wv = WANDER_K_END * q2 * span * span * span;
		double t_opt = span * pow(3.0 * wv / (a * noise), -1.0 / (a + 3.0));
		if (t_opt < 0.8 * span) {
			int64_t from = f->x[slot(f, f->count - 1)] - (int64_t)llround(t_opt);
			size_t first = 0;
			size_t keep = MAX(2 * WANDER_MIN_POINTS, f->p.window / 4);
			while (first + keep < f->count && f->x[slot(f, first)] < from)
				first++;
			sync_conv c2;
			double noise2;
			uint32_t rejected = f->rejected;
			if (first > 0 && solve_range(f, first, f->count, &c2, &noise2, why) == 0) {
				c = c2;
				span = (double)(c.xmax - c.xmin);
				f->first = first;
			} else
				f->rejected = rejected;
		}
	}
	/* State it (the mean, believed or not; the bound while young): the
	 * line's error split between its centre and its slope as a ramp's is,
	 * the frequency's error beyond the data into the wander term
	 * (conv.h). */
	double q2s = sync_fit_wander_stated(f);
	if (q2s > 0) {
		c.var_c += WANDER_K_CENTRE * q2s * span * span * span;
		c.var_s += WANDER_K_SLOPE * q2s * span;
		if (c.slope != 0)
			c.wander = hypot(c.wander, sqrt(WANDER_K_FREQ * q2s * span) / fabs(c.slope));
	}
	*out = c;
	return 0;
}
