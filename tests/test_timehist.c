/* test_timehist.c — piecewise history against a synthetic drifting clock
 * with known truth: old times convert with the fit of their time, breaks
 * are never crossed, bounds and errors say what happened. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "timehist/timehist.h"
#include "tests/check_run.h"

#define X0 ((int64_t)1 << 62) /* ns near 2^62 */
#define PERIOD 10000000LL     /* 10 ms between observations, ns */
#define JITTER 2000.0         /* Gaussian jitter, ns */

/* The true clock: y = x + off + skew (x - X0) + drift/2 (x - X0)^2, with a
 * frequency drifting by drift per ns (1e-16/ns = 0.1 ppm per second: fast,
 * so a fit extrapolated 25 s back is 31 us wrong). */
typedef struct {
	int64_t off;
	double skew, drift;
} clk;

static double truth_frac(clk c, int64_t x)
{
	double t = (double)(x - X0);
	return c.skew * t + 0.5 * c.drift * t * t;
}

static int64_t observe(clk c, gsl_rng *r, int64_t x, double jitter)
{
	return x + c.off + (int64_t)llround(truth_frac(c, x) + gsl_ran_gaussian(r, jitter));
}

static double err(clk c, sync_tval y, int64_t x)
{
	return (double)(y.i - (x + c.off)) + y.f - truth_frac(c, x);
}

static timehist *mk(uint32_t window, uint32_t max_pieces)
{
	timehist_params p;
	timehist_params_default(&p);
	p.fit.window = window;
	p.max_pieces = max_pieces;
	p.tolerance = 50 * PERIOD;
	const char *why = NULL;
	timehist *h = timehist_new(&p, &why);
	ck_assert_msg(h != NULL, "timehist_new: %s", why);
	return h;
}

START_TEST(old_times_use_old_fits)
{
	timehist *h = mk(32, 256);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 11);
	clk c = {5000000, 30e-6, 1e-16};
	int n = 3000; /* 30 s */
	for (int i = 0; i < n; i++) {
		int64_t x = X0 + i * PERIOD;
		ck_assert_int_eq(timehist_add(h, x, observe(c, r, x, JITTER), NULL, 0), 0);
	}
	ck_assert_uint_eq(timehist_segment(h), 0);
	ck_assert_uint_ge(timehist_npieces(h), n / 32 - 1);
	sync_conv now;
	ck_assert_int_eq(timehist_current(h, &now), 0);
	/* 400 random times over the first 29 s: the z-scores of the history are
	 * standard — RMS within 20 % (the z's share one history, so they are
	 * correlated and the 3.5 % s.d. of 400 independent draws would be too
	 * tight; 20 % still fails an uncertainty off by a quarter), none beyond
	 * 6 s.e. (a t with
	 * 30 dof exceeds 6 with p ~ 1e-6, so 4e-4 for 400).  The curvature of
	 * the clock inside one 0.32 s piece is drift/2 * (0.16 s)^2 = 1.3 ns,
	 * negligible against the s.e. (~350 ns). */
	double s2 = 0;
	int m = 400, far_off = 0;
	for (int k = 0; k < m; k++) {
		int64_t x = X0 + (int64_t)(gsl_rng_uniform(r) * 29e9);
		sync_tval y;
		double var;
		char why[160];
		ck_assert_msg(timehist_convert(h, sync_tval_of(x), &y, &var, why, sizeof why) == 0, "%s", why);
		double z = err(c, y, x) / sqrt(var);
		ck_assert_msg(fabs(z) < 6, "z = %.2f at %lld", z, (long long)(x - X0));
		s2 += z * z;
		/* Today's fit extrapolated back is wrong by drift/2 * dt^2. */
		far_off += fabs(err(c, sync_conv_apply(&now, sync_tval_of(x)), x)) > 10 * sqrt(var);
		/* And back again through the inverse. */
		sync_tval xb;
		ck_assert_msg(timehist_invert(h, y, &xb, &var, why, sizeof why) == 0, "%s", why);
		ck_assert(fabs(sync_tval_diff(xb, x)) < 1e-3);
	}
	double rms = sqrt(s2 / m);
	ck_assert_msg(fabs(rms - 1) < 0.2, "history RMS z %.3f", rms);
	ck_assert_int_ge(far_off, m / 2);
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

/* Feed a segment of n observations starting at x; returns the next x. */
static int64_t segment(timehist *h, gsl_rng *r, clk c, int64_t x, int n)
{
	for (int i = 0; i < n; i++, x += PERIOD)
		ck_assert_int_eq(timehist_add(h, x, observe(c, r, x, JITTER), NULL, 0), 0);
	return x - PERIOD;
}

START_TEST(declared_break)
{
	timehist *h = mk(32, 256);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 12);
	clk a = {1000000, -20e-6, 0}, b = {6000000, -20e-6, 0}; /* a 5 ms step */
	int64_t a_end = segment(h, r, a, X0, 100);
	timehist_break(h);
	int64_t b_start = a_end + 3 * PERIOD; /* an xrun of two periods */
	segment(h, r, b, b_start, 100);
	ck_assert_uint_eq(timehist_segment(h), 1);
	sync_tval y;
	double var;
	char why[200];
	int64_t xa = X0 + 50 * PERIOD + 1234, xb = b_start + 50 * PERIOD + 4321;
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(xa), &y, &var, why, sizeof why), 0);
	ck_assert(fabs(err(a, y, xa)) < 5 * sqrt(var));
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(xb), &y, &var, why, sizeof why), 0);
	ck_assert(fabs(err(b, y, xb)) < 5 * sqrt(var));
	/* The last and first observations of the two segments convert; the gap
	 * between them does not, whatever the tolerance. */
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(a_end), &y, &var, why, sizeof why), 0);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(b_start), &y, &var, why, sizeof why), 0);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(a_end + PERIOD), &y, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "falls in the break between segment 0") != NULL, "%s", why);
	/* The inverse refuses a y whose x would be in the gap too: y of the true
	 * clock b one period before b starts. */
	sync_tval yg = {b_start - PERIOD + b.off, truth_frac(b, b_start - PERIOD)};
	sync_tval xg;
	ck_assert_int_eq(timehist_invert(h, yg, &xg, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "break") != NULL, "%s", why);
	/* A break right after another one leaves a segment of no data. */
	timehist_break(h);
	timehist_break(h);
	ck_assert_uint_eq(timehist_segment(h), 2);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(xb + 80 * PERIOD), &y, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "after segment 1 ended") != NULL, "%s", why);
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

/* timehist_break_at(): a restarted run's data begin a period before its
 * first interrupt's observation; those frames convert with the new
 * segment's fit (within its stated s.e.), the frames before them do not. */
START_TEST(break_at_starts_the_segment_early)
{
	timehist *h = mk(32, 256);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 16);
	clk a = {1000000, -20e-6, 0}, b = {6000000, -20e-6, 0};
	int64_t a_end = segment(h, r, a, X0, 100);
	int64_t b_from = a_end + 2 * PERIOD, b_first = b_from + PERIOD;
	timehist_break_at(h, b_from);
	segment(h, r, b, b_first, 100);
	sync_tval y;
	double var;
	char why[200];
	int64_t x = b_from + PERIOD / 3;
	ck_assert_msg(timehist_convert(h, sync_tval_of(x), &y, &var, why, sizeof why) == 0, "%s", why);
	ck_assert_msg(fabs(err(b, y, x)) < 5 * sqrt(var), "error %.0f ns, s.e. %.0f", err(b, y, x), sqrt(var));
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(b_from - 1), &y, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "falls in the break") != NULL, "%s", why);
	/* A start before the newest observation is ignored. */
	timehist_break_at(h, b_first);
	int64_t c_first = b_first + 200 * PERIOD;
	segment(h, r, b, c_first, 100);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(c_first - 1), &y, &var, why, sizeof why), -ERANGE);
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

START_TEST(detected_step_and_outliers)
{
	timehist *h = mk(64, 256);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 13);
	clk a = {0, 15e-6, 0}, b = {1000000, 15e-6, 0}; /* a 1 ms step */
	int breaks = 0;
	int64_t step_x = X0 + 1500 * PERIOD;
	char why[200];
	for (int i = 0; i < 3000; i++) {
		int64_t x = X0 + i * PERIOD;
		int64_t y = observe(x < step_x ? a : b, r, x, JITTER);
		/* 2% isolated 1 ms outliers: never a break (4 in a row: p = 1.6e-7) */
		if (gsl_rng_uniform(r) < 0.02)
			y += 1000000;
		if (i == 1501) {
			/* Two points past the step: the conversion there waits. */
			sync_tval yv;
			double var;
			ck_assert_int_eq(timehist_convert(h, sync_tval_of(step_x + 1), &yv, &var, why, sizeof why),
					 -EAGAIN);
			ck_assert_msg(strstr(why, "awaits confirmation") != NULL, "%s", why);
		}
		int rc = timehist_add(h, x, y, why, sizeof why);
		ck_assert_int_ge(rc, 0);
		if (rc == 1) {
			breaks++;
			ck_assert_int_eq(x, step_x + 3 * PERIOD); /* confirmed by the 4th */
		}
	}
	ck_assert_int_eq(breaks, 1);
	ck_assert_uint_eq(timehist_segment(h), 1);
	/* Both sides convert with their own clock, the step itself does not. */
	sync_tval y;
	double var;
	int64_t xa = step_x - 300 * PERIOD, xb = step_x + 300 * PERIOD;
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(xa), &y, &var, why, sizeof why), 0);
	ck_assert(fabs(err(a, y, xa)) < 5 * sqrt(var));
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(xb), &y, &var, why, sizeof why), 0);
	ck_assert(fabs(err(b, y, xb)) < 5 * sqrt(var));
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(step_x - PERIOD / 2), &y, &var, why, sizeof why),
			 -ERANGE);
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

START_TEST(bounds_and_errors)
{
	timehist_params p;
	timehist_params_default(&p);
	const char *cwhy = NULL;
	p.confirm = 0;
	ck_assert_ptr_null(timehist_new(&p, &cwhy));
	ck_assert_ptr_nonnull(cwhy);
	timehist *h = mk(16, 8);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 14);
	clk c = {42, 1e-6, 0};
	sync_tval y;
	double var;
	char why[200];
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(X0), &y, &var, why, sizeof why), -EAGAIN);
	ck_assert_str_eq(why, "no observations yet");
	timehist_add(h, X0, observe(c, r, X0, JITTER), NULL, 0);
	timehist_add(h, X0 + PERIOD, observe(c, r, X0 + PERIOD, JITTER), NULL, 0);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(X0), &y, &var, why, sizeof why), -EAGAIN);
	ck_assert_msg(strstr(why, "only 2 observation") != NULL, "%s", why);
	ck_assert_int_eq(timehist_add(h, X0, 0, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "out of order") != NULL, "%s", why);
	/* 16 * 20 points: pieces bounded by 8 (the 12 oldest forgotten). */
	int64_t last = segment(h, r, c, X0 + 2 * PERIOD, 16 * 20 - 2);
	ck_assert_uint_eq(timehist_npieces(h), 8);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(X0 + 5 * PERIOD), &y, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "before the history kept") != NULL, "%s", why);
	/* Past the newest observation: within the tolerance (50 periods) it
	 * extrapolates, beyond it refuses. */
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(last + 50 * PERIOD), &y, &var, why, sizeof why), 0);
	ck_assert_int_eq(timehist_convert(h, sync_tval_of(last + 51 * PERIOD), &y, &var, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "beyond the tolerance") != NULL, "%s", why);
	/* Pieces are disjoint, in order, and every one belongs to segment 0. */
	sync_conv prev, pc;
	uint32_t seg;
	for (size_t k = 0; k < timehist_npieces(h); k++) {
		ck_assert_int_eq(timehist_piece(h, k, &pc, &seg), 0);
		ck_assert_uint_eq(seg, 0);
		if (k)
			ck_assert_int_gt(pc.xmin, prev.xmax);
		prev = pc;
	}
	ck_assert_int_eq(timehist_piece(h, 8, &pc, &seg), -ENOENT);
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

/* A clock whose frequency random-walks fast enough that the fit shortens its
 * window (libsync/fit.h): every observed x of a segment, from its first
 * observation on, still converts — the piece or live fit answers for all the
 * data fed since the piece before, not only for what its shortened window
 * kept — and at the observations the errors stay within their stated s.e.
 * (|z| < 5, p ~ 6e-7 each for Gaussian errors). */
START_TEST(shortened_windows_leave_no_holes)
{
	timehist *h = mk(256, 256);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 15);
	enum { N = 2000 };
	static int64_t xs[N];
	static double tf[N];
	const double q = 2e-6; /* frequency random walk, 1/sqrt(s): 2 ppm/sqrt(s) */
	double freq = 10e-6, ph = 0;
	/* Segment 0: 3 s of the same clock, then a declared break (an xrun). */
	for (int i = 0; i < 300; i++) {
		char why[200];
		int64_t x = X0 - (int64_t)(400 - i) * PERIOD;
		ck_assert_int_ge(timehist_add(h, x, x + (int64_t)llround(gsl_ran_gaussian(r, JITTER)), why, sizeof why), 0);
	}
	timehist_break(h);
	for (int i = 0; i < N; i++) {
		xs[i] = X0 + (int64_t)i * PERIOD;
		if (i) {
			ph += freq * PERIOD;
			freq += q * sqrt(PERIOD * 1e-9) * gsl_ran_gaussian(r, 1.0);
		}
		tf[i] = ph;
		char why[200];
		int64_t y = xs[i] + (int64_t)llround(ph + gsl_ran_gaussian(r, JITTER));
		ck_assert_int_ge(timehist_add(h, xs[i], y, why, sizeof why), 0);
	}
	ck_assert_uint_ge(timehist_npieces(h), 2);
	/* The case: segment 1's first piece was fitted on a shortened window. */
	sync_conv pc;
	uint32_t seg = 0;
	size_t k = 0;
	while (timehist_piece(h, k, &pc, &seg) == 0 && seg == 0)
		k++;
	ck_assert_uint_eq(seg, 1);
	ck_assert_msg(pc.xmin > xs[0], "segment 1's first piece starts at its first observation: not exercised");
	int beyond = 0;
	double zz = 0;
	for (int i = 0; i < N; i++) {
		sync_tval y;
		double var;
		char why[200];
		ck_assert_msg(timehist_convert(h, sync_tval_of(xs[i]), &y, &var, why, sizeof why) == 0,
			      "observation %d (x=%lld) does not convert: %s", i, (long long)xs[i], why);
		double e = (double)(y.i - xs[i]) + y.f - tf[i], z = e / sqrt(var);
		zz += z * z;
		beyond += fabs(z) >= 5;
	}
	ck_assert_msg(beyond == 0, "%d of %d conversions beyond 5 s.e. (RMS z %.2f)", beyond, N, sqrt(zz / N));
	gsl_rng_free(r);
	timehist_free(h);
}
END_TEST

/* Solving the live fit every 8th observation (audiod's refit): the pieces
 * cover the same data as solving at every one (a piece is solved over all
 * its data; its line differs a little, as the fit's running wander estimate
 * is updated at each solve), and every observation's time, converted right
 * after it was fed (the newest ones by the line before them, extrapolated)
 * and again from the history at the end, lies within 5 of its stated
 * standard errors of the truth. */
START_TEST(refit_every_eighth)
{
	timehist *h1 = mk(64, 256), *h8;
	timehist_params p;
	timehist_params_default(&p);
	p.fit.window = 64;
	p.tolerance = 50 * PERIOD;
	p.refit = 8;
	const char *why0 = NULL;
	ck_assert((h8 = timehist_new(&p, &why0)) != NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 88);
	clk c = {123456789, 3e-5, 1e-17};
	int beyond = 0, n = 0;
	double zz = 0;
	for (int i = 0; i < 1000; i++) {
		int64_t x = X0 + i * PERIOD, y = observe(c, r, x, JITTER);
		char why[200];
		ck_assert_int_ge(timehist_add(h1, x, y, why, sizeof why), 0);
		ck_assert_int_ge(timehist_add(h8, x, y, why, sizeof why), 0);
		sync_tval yv;
		double var;
		if (timehist_convert(h8, sync_tval_of(x), &yv, &var, why, sizeof why) == 0) {
			double z = err(c, yv, x) / sqrt(var);
			zz += z * z;
			beyond += fabs(z) >= 5;
			n++;
		}
	}
	ck_assert_int_gt(n, 990);
	ck_assert_msg(beyond == 0, "%d of %d conversions beyond 5 s.e. (RMS z %.2f)", beyond, n, sqrt(zz / n));
	ck_assert_uint_eq(timehist_npieces(h1), timehist_npieces(h8));
	ck_assert_uint_gt(timehist_npieces(h1), 10);
	for (size_t k = 0; k < timehist_npieces(h1); k++) {
		sync_conv a, b;
		ck_assert_int_eq(timehist_piece(h1, k, &a, NULL), 0);
		ck_assert_int_eq(timehist_piece(h8, k, &b, NULL), 0);
		ck_assert(a.n == b.n && a.xmin == b.xmin && a.xmax == b.xmax);
	}
	for (int i = 0; i < 1000; i++) {
		int64_t x = X0 + i * PERIOD;
		sync_tval yv;
		double var;
		char why[200];
		if (timehist_convert(h8, sync_tval_of(x), &yv, &var, why, sizeof why) == 0) {
			double z = err(c, yv, x) / sqrt(var);
			beyond += fabs(z) >= 5;
		}
	}
	ck_assert_msg(beyond == 0, "%d conversions from the history beyond 5 s.e.", beyond);
	gsl_rng_free(r);
	timehist_free(h1);
	timehist_free(h8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timehist");
	TCase *tc = tcase_create("timehist");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, old_times_use_old_fits);
	tcase_add_test(tc, declared_break);
	tcase_add_test(tc, break_at_starts_the_segment_early);
	tcase_add_test(tc, detected_step_and_outliers);
	tcase_add_test(tc, bounds_and_errors);
	tcase_add_test(tc, shortened_windows_leave_no_holes);
	tcase_add_test(tc, refit_every_eighth);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
