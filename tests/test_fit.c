/* test_fit.c — fits and conversions against seeded synthetic clocks with
 * known truth; every tolerance is derived from the statistics of the case. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "libsync/conv.h"
#include "libsync/fit.h"
#include "tests/check_run.h"

#define SEEDS 400
#define X0 ((int64_t)1 << 62) /* times near 2^62 ns: no double can hold them */
#define PERIOD 10000000.0     /* 10 ms between observations, ns */
#define JITTER 10000.0        /* Gaussian jitter s.d., ns */
#define P_FAIL 1e-6           /* accepted chance of a spurious test failure */

typedef struct {
	int64_t off_ns; /* y - x at X0, ns */
	double skew;    /* y rate minus x rate, fractional */
} truth;

/* Error of a converted value against the truth at x: fitted minus true. */
static double err_at(truth t, sync_tval y, int64_t x)
{
	return (double)(y.i - (x + t.off_ns)) + y.f - t.skew * (double)(x - X0);
}

/* Feed n observations of a clock with a random skew in +-100 ppm; noise
 * is Gaussian (sd JITTER) plus, with probability p_out, an outlier of +1 ms. */
static truth feed(sync_fit *f, gsl_rng *r, int n, double p_out, int *n_out)
{
	truth t = {(int64_t)(gsl_rng_uniform(r) * 1e12), (gsl_rng_uniform(r) * 2 - 1) * 100e-6};
	*n_out = 0;
	for (int i = 0; i < n; i++) {
		int64_t x = X0 + (int64_t)(i * PERIOD) + (int64_t)gsl_rng_uniform_int(r, 1000);
		double e = gsl_ran_gaussian(r, JITTER);
		if (gsl_rng_uniform(r) < p_out) {
			e += 1e6;
			(*n_out)++;
		}
		int64_t y = x + t.off_ns + (int64_t)llround(t.skew * (double)(x - X0) + e);
		ck_assert_int_eq(sync_fit_add(f, x, y, NULL), 0);
		/* solved as it goes, as syncd does: the wander's estimates pool
		 * over the windows (a fit solved once holds one estimate) */
		sync_conv c;
		if (i % 4 == 3 && i >= 15)
			sync_fit_solve(f, &c, NULL);
	}
	return t;
}

/* Largest count of |z| > 3 among SEEDS draws that has probability >= P_FAIL
 * when each exceeds with probability p. */
static unsigned max_exceed(double p)
{
	unsigned k = 0;
	while (gsl_cdf_binomial_Q(k, p, SEEDS) > P_FAIL)
		k++;
	return k;
}

/* Check the z-scores of SEEDS fits: few beyond 3 (a t variable with dof
 * degrees of freedom exceeds 3 at most this often), and their RMS is 1
 * within the chi-square interval of SEEDS draws (and within 20 %, whatever
 * SEEDS: a stated s.e. off by more than that is a wrong model, not noise):
 * the stated variance includes the t variance dof / (dof - 2) of an
 * error over an estimated s.e., so it is honest at any window size. */
static void check_z(const double *z, int dof, const char *what)
{
	double p3 = 2 * gsl_cdf_tdist_Q(3.0, dof);
	unsigned beyond = 0;
	double s2 = 0;
	for (int k = 0; k < SEEDS; k++) {
		beyond += fabs(z[k]) > 3.0;
		s2 += z[k] * z[k];
	}
	double rms = sqrt(s2 / SEEDS);
	double t_rms = 1.0;
	double lo = t_rms * sqrt(gsl_cdf_chisq_Pinv(P_FAIL / 2, SEEDS) / SEEDS);
	double hi = t_rms * sqrt(gsl_cdf_chisq_Qinv(P_FAIL / 2, SEEDS) / SEEDS);
	ck_assert_msg(beyond <= max_exceed(p3), "%s: %u of %d beyond 3 s.e.", what, beyond, SEEDS);
	ck_assert_msg(rms > lo && rms < hi, "%s: RMS z %.3f outside [%.3f, %.3f]", what, rms, lo, hi);
	ck_assert_msg(fabs(rms - 1) < 0.2, "%s: predicted s.e. off by %.0f%%", what, 100 * (rms - 1));
}

static void run_gaussian(int n, double p_out, int window)
{
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.window = (uint32_t)window;
	sync_fit *f = sync_fit_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double *zs = malloc(SEEDS * sizeof *zs), *zy = malloc(SEEDS * sizeof *zy);
	double *ze = malloc(SEEDS * sizeof *ze), *zi = malloc(SEEDS * sizeof *zi);
	int dof = window - 2;
	unsigned alarms = 0;
	for (int k = 0; k < SEEDS; k++) {
		gsl_rng_set(r, 1000 + k);
		sync_fit_reset(f);
		int n_out;
		truth t = feed(f, r, n, p_out, &n_out);
		sync_conv c;
		const char *why = NULL;
		ck_assert_msg(sync_fit_solve(f, &c, &why) == 0, "solve: %s", why);
		if (p_out > 0) {
			/* Every 1 ms outlier (100 sigma) in the window is rejected, and
			 * at most a few good points (beyond 3.5 robust sigmas). */
			ck_assert_msg(sync_fit_rejected(f) >= 1 || sync_fit_used_from(f) > 0, "seed %d: none rejected", k);
			dof = (int)c.n - 2;
		}
		/* This clock does not wander: the fit believes a wander when its
		 * halves' slopes differ by chi^2_1 > 9 while the window has not
		 * slid (0.27 %), and by less as it pools more windows (at most
		 * chi^2_1 > 1 + 3 sqrt(2) of one window, 2.2 %; fit.c). */
		alarms += sync_fit_wander(f) > 0;
		zs[k] = (c.slope - 1 - t.skew) / sqrt(c.var_s);
		/* An exact timestamp at the centre of the data, and one 1 s past
		 * the newest point.  Outside the data var() adds the wander
		 * allowance (wander * slope * 1 s)^2, a model term for clock
		 * drift that this synthetic clock does not have, so the check
		 * of the statistical part takes it out again. */
		int64_t xc = c.x0 + (int64_t)c.xbar;
		zy[k] = err_at(t, sync_conv_apply(&c, sync_tval_of(xc)), xc) /
			sqrt(sync_conv_var(&c, sync_tval_of(xc)));
		int64_t xe = c.xmax + 1000000000;
		ze[k] = err_at(t, sync_conv_apply(&c, sync_tval_of(xe)), xe) /
			sqrt(sync_conv_var(&c, sync_tval_of(xe)) - pow(c.wander * c.slope * 1e9, 2));
		/* Inverse: the x whose true y is ytrue(xe), back through the fit. */
		sync_tval yt = {xe + t.off_ns, 0};
		yt.f = t.skew * (double)(xe - X0);
		sync_tval xi = sync_conv_invert(&c, yt);
		zi[k] = -((double)(xi.i - xe) + xi.f) * c.slope / sqrt(sync_conv_var_inv(&c, yt) * c.slope * c.slope - pow(c.wander * c.slope * 1e9, 2));
	}
	ck_assert_msg(alarms <= max_exceed(n <= window ? 0.0027 : 0.022), "wander seen in %u of %d fits of a steady clock", alarms, SEEDS);
	check_z(zs, dof, "slope");
	check_z(zy, dof, "value at centre");
	check_z(ze, dof, "value 1 s past the data");
	check_z(zi, dof, "inverse 1 s past the data");
	free(zs);
	free(zy);
	free(ze);
	free(zi);
	gsl_rng_free(r);
	sync_fit_free(f);
}

START_TEST(gaussian_window64)
{
	/* Four windows' worth: past the window's first two, over which the
	 * wander's bound fades (libsync/fit.c WANDER_FADE_K; a just-full window
	 * states the slope at RMS z 0.67, as young fits do). */
	run_gaussian(4 * 64, 0.0, 64);
}
END_TEST

START_TEST(gaussian_small_window8)
{
	/* Eight points: s^2 from 6 degrees of freedom; plain s^2/Sxx would
	 * understate the error's variance by 6/4 (RMS z 1.22). */
	run_gaussian(8, 0.0, 8);
}
END_TEST

START_TEST(gaussian_sliding_window256)
{
	/* 1024 observations through a 256 window: the fit sees only the last
	 * 256, its wander's bound faded (as gaussian_window64). */
	run_gaussian(4 * 256, 0.0, 256);
}
END_TEST

START_TEST(outliers_10pct)
{
	/* 10 % outliers through a window of 128, past the window's first two
	 * (as gaussian_window64). */
	run_gaussian(128 * 4, 0.10, 128);
}
END_TEST

/* Five +1 ms outliers in 32 points of 10 us noise, three of them the
 * newest: least squares over all of them tilts the line so far that a
 * rejection started from it keeps the outliers and throws good points out
 * (bench/sync's 10 % outlier row was 14.5x the Cramer-Rao bound from such
 * halves).  Every outlier is rejected, in every seed, and the slope is
 * within 5 of its stated s.e. */
START_TEST(outliers_clustered_at_the_end)
{
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.window = 32;
	sync_fit *f = sync_fit_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	for (int k = 0; k < SEEDS; k++) {
		gsl_rng_set(r, 5000 + k);
		sync_fit_reset(f);
		double skew = (gsl_rng_uniform(r) * 2 - 1) * 100e-6;
		int a = 1 + (int)gsl_rng_uniform_int(r, 14), b = 15 + (int)gsl_rng_uniform_int(r, 13);
		for (int i = 0; i < 32; i++) {
			int64_t x = X0 + (int64_t)(i * PERIOD);
			double e = gsl_ran_gaussian(r, JITTER);
			if (i == a || i == b || i >= 29)
				e += 1e6;
			ck_assert_int_eq(sync_fit_add(f, x, x + (int64_t)llround(skew * (double)(x - X0) + e), NULL), 0);
		}
		sync_conv c;
		ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
		ck_assert_msg(c.n <= 27, "seed %d: %u points kept, the 5 outliers not all rejected", k, c.n);
		double z = (c.slope - 1 - skew) / sqrt(c.var_s);
		ck_assert_msg(fabs(z) < 5, "seed %d: slope %.3g off, %.1f s.e.", k, c.slope - 1 - skew, z);
	}
	gsl_rng_free(r);
	sync_fit_free(f);
}
END_TEST

/* One-sided exponential delays: the lower envelope's error at the centre of
 * the data over many seeds; its bias must stay below 1 us at 300 points (the
 * accuracy chorus promises for a conversion; the mean delay it removes is
 * 20 us). */
static void run_envelope(sync_fit_mode mode, int n, int seeds, double *bias, double *rms_z, double *ls_bias)
{
	const double theta = 20000.0; /* mean delay, ns */
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.window = (uint32_t)n;
	p.mode = mode;
	sync_fit *f = sync_fit_new(&p, NULL);
	p.mode = SYNC_FIT_MEAN;
	p.reject_k = 0; /* plain least squares, for comparison */
	sync_fit *g = sync_fit_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double se = 0, sz2 = 0, sl = 0;
	double sign = mode == SYNC_FIT_LOWER ? 1 : -1;
	for (int k = 0; k < seeds; k++) {
		gsl_rng_set(r, 5000 + k);
		sync_fit_reset(f);
		sync_fit_reset(g);
		truth t = {(int64_t)(gsl_rng_uniform(r) * 1e12), (gsl_rng_uniform(r) * 2 - 1) * 100e-6};
		for (int i = 0; i < n; i++) {
			int64_t x = X0 + (int64_t)(i * 5e6);
			double e = sign * gsl_ran_exponential(r, theta);
			int64_t y = x + t.off_ns + (int64_t)llround(t.skew * (double)(x - X0) + e);
			sync_fit_add(f, x, y, NULL);
			sync_fit_add(g, x, y, NULL);
		}
		sync_conv c, cl;
		ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
		ck_assert_int_eq(sync_fit_solve(g, &cl, NULL), 0);
		ck_assert_uint_eq(c.flags, mode == SYNC_FIT_LOWER ? SYNC_CONV_LOWER : SYNC_CONV_UPPER);
		int64_t xc = c.x0 + (int64_t)c.xbar;
		double e = err_at(t, sync_conv_apply(&c, sync_tval_of(xc)), xc);
		se += e;
		sz2 += e * e / sync_conv_var(&c, sync_tval_of(xc));
		sl += err_at(t, sync_conv_apply(&cl, sync_tval_of(xc)), xc);
	}
	*bias = se / seeds;
	*rms_z = sqrt(sz2 / seeds);
	*ls_bias = sl / seeds;
	gsl_rng_free(r);
	sync_fit_free(f);
	sync_fit_free(g);
}

START_TEST(lower_envelope_unbiased)
{
	double bias, rms_z, ls_bias;
	int seeds = 300, n = 300;
	run_envelope(SYNC_FIT_LOWER, n, seeds, &bias, &rms_z, &ls_bias);
	/* The 1 us accuracy bound, and the statistical one: the envelope's error s.d.
	 * is about 1.4 theta/n = 93 ns (docs/clocks.md), so the mean of 300
	 * seeds has s.e. 5.4 ns; 6 s.e. (p ~ 2e-9) = 33 ns. */
	ck_assert_msg(fabs(bias) < 1000.0, "lower envelope bias %.1f ns", bias);
	ck_assert_msg(fabs(bias) < 6 * 1.4 * 20000.0 / n / sqrt(seeds), "lower envelope bias %.1f ns", bias);
	/* The least-squares line sits at the mean delay, 20 us late: that is why
	 * the envelope exists. */
	ck_assert_msg(fabs(ls_bias - 20000.0) < 6 * 20000.0 / sqrt((double)n * seeds), "LS bias %.0f", ls_bias);
	/* The envelope's predicted s.e. covers its empirical error without
	 * hiding it: for exponential delays the stated scale is the larger of
	 * the exponential model's and the local density's at the floor (which
	 * also serves light-tailed delays), so RMS z is 0.72 rather than 1
	 * (measured); the bounds allow the 20 % (five times the 4 % s.d. of
	 * the RMS of 300 draws) either side of [0.72, 1]. */
	ck_assert_msg(rms_z > 0.6 && rms_z < 1.2, "envelope RMS z %.3f", rms_z);
}
END_TEST

/* RMS of error / stated s.e. at the newest point of a 64-point lower
 * envelope whose delays are each the least of 10 draws (audiod forwards the
 * least-latency interrupt of every 10) of `shape`: 0 normal 12 +- 4 us
 * truncated at 0, 1 uniform on [0, 34.6] us. */
static double light_tail_rms_z(int shape, int seeds)
{
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.mode = SYNC_FIT_LOWER;
	p.reject_k = 0;
	sync_fit *f = sync_fit_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double sz2 = 0;
	for (int k = 0; k < seeds; k++) {
		gsl_rng_set(r, 9000 + k);
		sync_fit_reset(f);
		truth t = {(int64_t)(gsl_rng_uniform(r) * 1e12), (gsl_rng_uniform(r) * 2 - 1) * 100e-6};
		int64_t x = X0;
		for (int i = 0; i < 64; i++) {
			x = X0 + (int64_t)i * 100000000;
			double e = 1e18;
			for (int b = 0; b < 10; b++)
				e = fmin(e, shape == 0 ? fmax(0, 12000 + 4000 * gsl_ran_gaussian(r, 1)) : 34641 * gsl_rng_uniform(r));
			sync_fit_add(f, x, x + t.off_ns + (int64_t)llround(t.skew * (double)(x - X0) + e), NULL);
		}
		sync_conv c;
		ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
		double e = err_at(t, sync_conv_apply(&c, sync_tval_of(x)), x);
		sz2 += e * e / sync_conv_var(&c, sync_tval_of(x));
	}
	gsl_rng_free(r);
	sync_fit_free(f);
	return sqrt(sz2 / seeds);
}

START_TEST(lower_envelope_light_tails)
{
	/* Issue 13: the exponential model's variance (1.85 (theta/m)^2) claimed
	 * 6.1x too little for normal delays (RMS z 6.09) and 1.3x for uniform;
	 * the local density at the floor now widens it (measured 1.47 and 0.87
	 * over 300 seeds).  Bounds: the measured values with the 20 % allowance
	 * of the exponential case above (the z of these shapes are heavier
	 * tailed still). */
	double zn = light_tail_rms_z(0, 300), zu = light_tail_rms_z(1, 300);
	ck_assert_msg(zn < 1.8, "normal delays: RMS z %.3f", zn);
	ck_assert_msg(zu > 0.6 && zu < 1.2, "uniform delays: RMS z %.3f", zu);
}
END_TEST

START_TEST(upper_envelope_mirror)
{
	double bias, rms_z, ls_bias;
	run_envelope(SYNC_FIT_UPPER, 100, 200, &bias, &rms_z, &ls_bias);
	/* 100 points: error s.d. ~1.4 * 200 ns; mean of 200 seeds, 6 s.e. */
	ck_assert_msg(fabs(bias) < 6 * 1.4 * 20000.0 / 100 / sqrt(200), "upper envelope bias %.1f ns", bias);
	ck_assert_msg(rms_z > 0.6 && rms_z < 1.2, "envelope RMS z %.3f", rms_z);
	ck_assert_msg(ls_bias < -15000.0, "LS should be 20 us early, is %.0f", ls_bias);
}
END_TEST

START_TEST(envelope_rejects_early_outlier)
{
	/* A single observation 1 ms early (impossible for a delay) would tilt the
	 * envelope through it; it must be dropped. */
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.window = 100;
	p.mode = SYNC_FIT_LOWER;
	sync_fit *f = sync_fit_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	for (int i = 0; i < 100; i++) {
		int64_t x = X0 + i * 5000000LL;
		int64_t y = x + 777 + (int64_t)gsl_ran_exponential(r, 20000.0) - (i == 30 ? 1000000 : 0);
		sync_fit_add(f, x, y, NULL);
	}
	sync_conv c;
	ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
	ck_assert_uint_eq(sync_fit_rejected(f), 1);
	int64_t xc = c.x0 + (int64_t)c.xbar;
	truth t = {777, 0};
	double e = err_at(t, sync_conv_apply(&c, sync_tval_of(xc)), xc);
	/* 5 predicted s.e. (each about 1.4 * 200 ns) */
	ck_assert_msg(fabs(e) < 5 * sqrt(sync_conv_var(&c, sync_tval_of(xc))), "error %.0f ns", e);
	gsl_rng_free(r);
	sync_fit_free(f);
}
END_TEST

START_TEST(exact_near_2_62)
{
	/* Noise-free data near 2^62 with a skew whose product with x - x0 is not
	 * an integer: the fitted line reproduces every point to the integer
	 * rounding of the data (|e| <= 0.5 ns plus the fit's own sub-ns error). */
	sync_fit_params p;
	sync_fit_params_default(&p);
	sync_fit *f = sync_fit_new(&p, NULL);
	truth t = {-123456789012345LL, 37.25e-6};
	for (int i = 0; i < 64; i++) {
		int64_t x = X0 + (X0 >> 1) + i * 12345678LL; /* 1.5 * 2^62 */
		int64_t y = x + t.off_ns + (int64_t)llround(t.skew * (double)(x - X0));
		sync_fit_add(f, x, y, NULL);
	}
	sync_conv c;
	ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
	for (int64_t x = c.xmin; x <= c.xmax; x += 77777777) {
		sync_tval y = sync_conv_apply(&c, sync_tval_of(x));
		ck_assert_msg(fabs(err_at(t, y, x)) < 0.6, "error %.3f ns at x=%lld", err_at(t, y, x), (long long)x);
		sync_tval back = sync_conv_invert(&c, y);
		ck_assert_int_eq(back.i, x);
		ck_assert(fabs(back.f) < 1e-3);
	}
	/* The quantization floor keeps the variance honest (>= 1/12 / n). */
	ck_assert(c.var_c >= 1.0 / 12 / 64 * 0.999);
	sync_fit_free(f);
}
END_TEST

START_TEST(audio_ratio)
{
	/* cpu ns (x, near 2^62) -> frames of a 48 kHz card running 40 ppm fast
	 * (y): slope ~4.8e-5 frames/ns.  Given or estimated nominal slope, the
	 * conversion matches the truth to within 4 predicted s.e.; the inverse
	 * too. */
	for (int given = 0; given < 2; given++) {
		sync_fit_params p;
		sync_fit_params_default(&p);
		p.nominal_slope = given ? 48000e-9 : 0.0;
		p.sigma_floor = 0.0; /* frames are exact counts */
		sync_fit *f = sync_fit_new(&p, NULL);
		gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
		gsl_rng_set(r, 99);
		double rate = 48000e-9 * (1 + 40e-6); /* frames per ns */
		int64_t f0 = 123456789;
		for (int i = 0; i < 64; i++) {
			/* period interrupts every 1024 frames, cpu time with 5 us jitter */
			int64_t fr = f0 + 1024LL * i;
			int64_t x = X0 + (int64_t)llround((double)(fr - f0) / rate + gsl_ran_gaussian(r, 5000.0));
			sync_fit_add(f, x, fr, NULL);
		}
		sync_conv c;
		ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
		ck_assert(fabs(c.slope - rate) < 4 * sqrt(c.var_s));
		int64_t x = X0 + 500000000;
		sync_tval y = sync_conv_apply(&c, sync_tval_of(x));
		double truth_fr = (double)(x - X0) * rate; /* frames after f0 */
		double e = (double)(y.i - f0) + y.f - truth_fr;
		ck_assert_msg(fabs(e) < 4 * sqrt(sync_conv_var(&c, sync_tval_of(x))), "frame error %.4f", e);
		ck_assert_msg(fabs(e) < 0.05, "frame error %.4f", e); /* 5 us / sqrt(64) = 0.03 frame */
		sync_tval xb = sync_conv_invert(&c, y);
		ck_assert_int_eq(xb.i, x);
		gsl_rng_free(r);
		sync_fit_free(f);
	}
}
END_TEST

START_TEST(window_and_errors)
{
	sync_fit_params p;
	sync_fit_params_default(&p);
	const char *why = NULL;
	p.window = 2;
	ck_assert_ptr_null(sync_fit_new(&p, &why));
	ck_assert_ptr_nonnull(why);
	p.window = 16;
	p.max_span = 1000;
	sync_fit *f = sync_fit_new(&p, &why);
	sync_conv c;
	ck_assert_int_eq(sync_fit_solve(f, &c, &why), -EAGAIN);
	for (int i = 0; i < 3; i++)
		sync_fit_add(f, 5, 10 + i, NULL);
	ck_assert_int_eq(sync_fit_solve(f, &c, &why), -EDOM);
	ck_assert_int_eq(sync_fit_add(f, 4, 10, &why), -EINVAL);
	ck_assert_str_eq(why, "observation out of order (x went backwards)");
	/* By count: 16 kept of 40. */
	sync_fit_reset(f);
	for (int i = 0; i < 40; i++)
		sync_fit_add(f, 100 + 10 * i, 3 * i, NULL);
	ck_assert_uint_eq(sync_fit_count(f), 16);
	/* By span: x jumps to 4100 .. 5000; a span of 1000 keeps x >= 4000, so
	 * the 10 new points only. */
	for (int i = 40; i < 50; i++)
		sync_fit_add(f, 100 + 100 * i, 3 * i, NULL);
	ck_assert_uint_eq(sync_fit_count(f), 10);
	ck_assert_int_eq(sync_fit_solve(f, &c, &why), 0);
	ck_assert_int_eq(c.xmin, 100 + 100 * 40);
	ck_assert_int_eq(c.xmax, 100 + 100 * 49);
	ck_assert_int_eq(sync_fit_last_x(f), c.xmax);
	sync_fit_free(f);
}
END_TEST

START_TEST(conv_reverse_pack_aging)
{
	sync_conv c;
	memset(&c, 0, sizeof c);
	c.x0 = X0;
	c.y0 = 987654321;
	c.yoff = 0.25;
	c.slope = 48000e-9 * (1 - 20e-6);
	c.xbar = -3e8;
	c.var_c = 1e-4;
	c.var_s = 1e-24;
	c.rms = 0.01;
	c.wander = 1e-7;
	c.xmin = X0 - 600000000;
	c.xmax = X0 + 10000000;
	c.updated_ns = 42;
	c.n = 64;
	ck_assert_int_eq(sync_conv_check(&c, NULL), 0);
	sync_conv rv;
	ck_assert_int_eq(sync_conv_reverse(&c, &rv), 0);
	ck_assert(fabs(rv.yoff) <= 0.5);
	for (int64_t x = c.xmin - 2000000000; x < c.xmax + 2000000000; x += 99999999) {
		sync_tval y = sync_conv_apply(&c, sync_tval_of(x));
		sync_tval xb = sync_conv_apply(&rv, y);
		ck_assert(llabs(xb.i - x) <= 1);
		ck_assert(fabs((double)(xb.i - x) + xb.f) < 1e-3);
		/* The reverse edge's variance is the inverse's, and both equal the
		 * forward one divided by slope^2 (delta method).  Outside the data
		 * the reverse's validity bounds are whole frames, so its distance
		 * differs by < 1 frame (20.8 us) in >= 0.1 s: relative 2e-4 on
		 * the wander term. */
		double v = sync_conv_var(&c, sync_tval_of(x)) / (c.slope * c.slope);
		double tol = sync_conv_outside(&c, sync_tval_of(x)) > 0 ? 5e-4 : 1e-9;
		ck_assert_msg(fabs(sync_conv_var(&rv, y) - v) < tol * v, "%g vs %g", sync_conv_var(&rv, y), v);
		ck_assert(fabs(sync_conv_var_inv(&c, y) - v) < 1e-6 * v);
	}
	/* Aging: 100 s past the data the variance grows by exactly
	 * (wander * slope * 100 s)^2 over the statistical part. */
	sync_tval far = sync_tval_of(c.xmax + 100000000000LL);
	double stat = c.var_c + c.var_s * pow((double)(far.i - c.x0) - c.xbar, 2);
	double w = 1e-7 * c.slope * 1e11;
	ck_assert(fabs(sync_conv_var(&c, far) - stat - w * w) < 1e-9 * (stat + w * w));
	ck_assert(sync_conv_outside(&c, far) == 1e11);
	ck_assert(sync_conv_outside(&c, sync_tval_of(c.xmin)) == 0.0);
	/* Wire form round trip, and refusals. */
	uint8_t buf[SYNC_CONV_WIRE_SIZE];
	ck_assert_uint_eq(sync_conv_pack(&c, buf), SYNC_CONV_WIRE_SIZE);
	sync_conv back;
	const char *why = NULL;
	ck_assert_int_eq(sync_conv_unpack(buf, sizeof buf, &back, &why), 0);
	ck_assert_mem_eq(&back, &c, sizeof c);
	ck_assert_int_eq(sync_conv_unpack(buf, sizeof buf - 1, &back, &why), -EMSGSIZE);
	c.slope = 0;
	sync_conv_pack(&c, buf);
	ck_assert_int_eq(sync_conv_unpack(buf, sizeof buf, &back, &why), -EINVAL);
	ck_assert_str_eq(why, "slope is zero or not finite");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fit");
	TCase *tc = tcase_create("fit");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gaussian_window64);
	tcase_add_test(tc, gaussian_small_window8);
	tcase_add_test(tc, gaussian_sliding_window256);
	tcase_add_test(tc, outliers_10pct);
	tcase_add_test(tc, outliers_clustered_at_the_end);
	tcase_add_test(tc, lower_envelope_unbiased);
	tcase_add_test(tc, lower_envelope_light_tails);
	tcase_add_test(tc, upper_envelope_mirror);
	tcase_add_test(tc, envelope_rejects_early_outlier);
	tcase_add_test(tc, exact_near_2_62);
	tcase_add_test(tc, audio_ratio);
	tcase_add_test(tc, window_and_errors);
	tcase_add_test(tc, conv_reverse_pack_aging);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
