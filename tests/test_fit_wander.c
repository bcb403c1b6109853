/* test_fit_wander.c — fits of clocks whose frequency moves (issue 13 item
 * 3, docs/clocks.md §5): are conversions honest while the window is young?
 * And of errors correlated in time, which a white-noise fit understates.
 *
 * The clock pair follows a temperature cycle as bench/honesty's "temp"
 * rows do (two crystals 0.5 ppm/°C apart, 5 °C amplitude, period 600 s,
 * starting on its steepest ramp: the frequency moves 26 ppb/s), observed
 * once a second (0.5-1.5 s apart) with Gaussian noise of 1.41 us (two
 * receptions of 1 us each), least squares, window 64 as syncd's RBS and
 * pair fits.  After every observation from the 8th the fit is solved and
 * converted at the newest point plus U(0, 1.5 s), where live conversions
 * are made between fits.  Before fit.c stated the measured wander's mean
 * whether or not it was significant, observations 24-39 of this case gave
 * RMS z 1.3-2.2 and 15 of 4800 conversions beyond 5 s.e.; a steady clock
 * must not pay much for the change. */
#include <check.h>
#include <math.h>
#include <string.h>

#include <glib.h>

#include "libsync/conv.h"
#include "libsync/fit.h"
#include "tests/check_run.h"

#define SEEDS 200
#define CYCLE_S 600.0
#define SIGMA_NS 1414.0

/* The clock's offset from the steady line at t s, ns: the integral of a
 * fractional frequency amp * sin(2 pi t / CYCLE_S). */
static double phase_ns(double amp, double t)
{
	return amp * CYCLE_S / (2 * M_PI) * (1 - cos(2 * M_PI * t / CYCLE_S)) * 1e9;
}

/* A least-squares fit as syncd's RBS and pair fits: window 64, outliers
 * beyond 3.5 robust sigmas rejected, ns against ns. */
static sync_fit *new_fit(void)
{
	sync_fit_params p;
	sync_fit_params_default(&p);
	p.mode = SYNC_FIT_MEAN;
	p.window = 64;
	p.reject_k = 3.5;
	p.nominal_slope = 1.0;
	sync_fit *f = sync_fit_new(&p, NULL);
	ck_assert_ptr_nonnull(f);
	return f;
}

typedef struct {
	guint n, beyond, beyond_c; /* conversions; beyond 5 s.e. after the newest point, at the centre */
	double z2, z2c;
} tally;

/* Run `seeds` clocks of amplitude amp for 120 observations each; tally the
 * conversions (after the newest point, and at the data's centre) by the
 * observation count when they were made: young (16-39, where a ramp's bias
 * grows before the window fills) and the rest. */
static void run(double amp, int seeds, tally *young, tally *rest)
{
	memset(young, 0, sizeof *young);
	memset(rest, 0, sizeof *rest);
	for (int s = 0; s < seeds; s++) {
		GRand *g = g_rand_new_with_seed((guint32)(7000 + s));
		sync_fit *f = new_fit();
		double t = 0;
		for (int k = 0; k < 120; k++) {
			t += g_rand_double_range(g, 0.5, 1.5);
			int64_t x = (int64_t)(t * 1e9);
			double u1 = g_rand_double(g), u2 = g_rand_double(g);
			double noise = SIGMA_NS * sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
			ck_assert_int_eq(sync_fit_add(f, x, x + (int64_t)llround(phase_ns(amp, t) + noise), NULL), 0);
			if (k < 7)
				continue;
			sync_conv c;
			const char *why;
			ck_assert_msg(sync_fit_solve(f, &c, &why) == 0, "seed %d obs %d: %s", s, k, why);
			double tq = t + g_rand_double_range(g, 0, 1.5);
			int64_t xq = (int64_t)(tq * 1e9);
			double err = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(xq)), xq) - phase_ns(amp, tq);
			double sd = sqrt(sync_conv_var(&c, sync_tval_of(xq)));
			tally *y = k >= 15 && k < 39 ? young : rest;
			y->n++;
			y->z2 += (err / sd) * (err / sd);
			y->beyond += fabs(err) > sync_tail_k(sync_conv_dof(&c), 5.0) * sd;
			int64_t xc = c.x0 + (int64_t)c.xbar;
			double tc = (double)xc * 1e-9;
			double ec = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(xc)), xc) - phase_ns(amp, tc);
			double sc = sqrt(sync_conv_var(&c, sync_tval_of(xc)));
			y->z2c += (ec / sc) * (ec / sc);
			y->beyond_c += fabs(ec) > sync_tail_k(sync_conv_dof(&c), 5.0) * sc;
		}
		sync_fit_free(f);
		g_rand_free(g);
	}
}

START_TEST(young_window_on_a_ramp)
{
	tally young, rest;
	run(2.5e-6, SEEDS, &young, &rest);
	/* Honest: none beyond 5 s.e. (a Gaussian's chance 5.7e-7 each, 0.013
	 * expected among these 22400), and no more than bench/honesty's
	 * over-confidence limit of RMS z 1.5 in the young windows or after. */
	ck_assert_msg(young.beyond == 0 && rest.beyond == 0, "beyond 5 s.e.: %u of %u young, %u of %u later",
		      young.beyond, young.n, rest.beyond, rest.n);
	double zy = sqrt(young.z2 / young.n), zr = sqrt(rest.z2 / rest.n);
	ck_assert_msg(zy < 1.5 && zr < 1.5, "RMS z %.2f young, %.2f later (aim <= 1.5)", zy, zr);
}
END_TEST

START_TEST(steady_clock_pays_little)
{
	tally young, rest;
	run(0, SEEDS, &young, &rest);
	/* A steady clock's stated error carries the chance-positive mean of
	 * its wander estimate once its window is full (measured 0.84 later),
	 * and while the window fills that mean plus one of its standard errors
	 * (libsync/fit.c WANDER_YOUNG_WINDOWS): an unresolved ramp of one s.e.
	 * costs ~5.3 s^2/n at the newest point against the line's own ~4 s^2/n,
	 * so RMS z ~sqrt(4 / 9.3) = 0.66 young (measured 0.68) — wide, the
	 * price of young_window_on_a_ramp's 0 beyond 5 s.e. (aim 0.6-1.5 young,
	 * bench/honesty's 0.7-1.5 later). */
	ck_assert_msg(young.beyond == 0 && rest.beyond == 0, "beyond 5 s.e.: %u young, %u later", young.beyond,
		      rest.beyond);
	double zy = sqrt(young.z2 / young.n), zr = sqrt(rest.z2 / rest.n);
	ck_assert_msg(zy > 0.6 && zy < 1.5 && zr > 0.7 && zr < 1.5,
		      "RMS z %.2f young, %.2f later (aim 0.6-1.5 young, 0.7-1.5 later)", zy, zr);
}
END_TEST

/* A slower ramp (13 ppb/s, half the one above) over many more clocks: the
 * two halves of a young window resolve it to only ~2.5 of their standard
 * errors, so now and then its wander estimate is 0 by chance and a line
 * that errs by ydot T^2 / 12 at its newest point states no ramp at all.
 * Before a young fit stated its wander's bound (libsync/fit.c
 * WANDER_YOUNG_WINDOWS) and split the ramp's term between the centre and
 * the slope, this gave 11 conversions after the newest point and 3 at the
 * centre beyond 5 s.e. (6 and 2 of them while the window filled; of 113000
 * each); now none (a Gaussian's chance 5.7e-7 each: 0.06 expected), with
 * the centre's RMS z within bench/honesty's band. */
START_TEST(young_window_on_a_slow_ramp)
{
	tally young, rest;
	run(1.24e-6, 5 * SEEDS, &young, &rest);
	ck_assert_msg(young.beyond + rest.beyond == 0 && young.beyond_c + rest.beyond_c == 0,
		      "beyond 5 s.e.: %u + %u after the newest point, %u + %u at the centre (young + later, of %u)",
		      young.beyond, rest.beyond, young.beyond_c, rest.beyond_c, young.n + rest.n);
	double zc = sqrt((young.z2c + rest.z2c) / (young.n + rest.n));
	ck_assert_msg(zc > 0.7 && zc < 1.5, "RMS z %.2f at the centre (aim 0.7-1.5)", zc);
}
END_TEST

/* The second window.  When the window slides, the first window's wander
 * estimate still weighs most in the running mean; a ramp just below what
 * one window resolves, whose estimate came out near 0 by chance, was then
 * stated at the mean (the young bound dropped at once).  A constant ramp
 * of `ydot` (fraction per s), two observations a second (0.45-0.55 s
 * apart), 1.3 us of noise, 200 observations; conversions up to 1.5 s after
 * the newest point, tallied for observations 64-127 (the second window).
 * Before the bound faded over it (libsync/fit.c WANDER_FADE_K), 8 ppb/s
 * gave 17 of 56000 beyond 5 s.e. (RMS z 1.42) over 1000 clocks. */
static void second_window(double ydot, int clocks, tally *t)
{
	memset(t, 0, sizeof *t);
	for (int s = 0; s < clocks; s++) {
		GRand *g = g_rand_new_with_seed((guint32)(11000 + s));
		sync_fit *f = new_fit();
		double t0 = g_rand_double_range(g, 0, 600), sign = s % 2 ? 1 : -1, tx = 0;
		for (int k = 0; k < 128; k++) {
			tx += g_rand_double_range(g, 0.45, 0.55);
			int64_t x = (int64_t)(tx * 1e9);
			double u1 = g_rand_double(g), u2 = g_rand_double(g);
			double noise = 1300.0 * sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
			double ts = tx + t0;
			ck_assert_int_eq(sync_fit_add(f, x, x + (int64_t)llround(sign * 0.5 * ydot * ts * ts * 1e9 + noise), NULL),
					 0);
			if (k < 64)
				continue;
			sync_conv c;
			ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
			double tq = tx + g_rand_double_range(g, 0, 1.5);
			int64_t xq = (int64_t)(tq * 1e9);
			double tqs = tq + t0;
			double err = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(xq)), xq) - sign * 0.5 * ydot * tqs * tqs * 1e9;
			double sd = sqrt(sync_conv_var(&c, sync_tval_of(xq)));
			t->n++;
			t->z2 += (err / sd) * (err / sd);
			t->beyond += fabs(err) > sync_tail_k(sync_conv_dof(&c), 5.0) * sd;
		}
		sync_fit_free(f);
		g_rand_free(g);
	}
}

START_TEST(second_window_on_a_slow_ramp)
{
	tally t;
	second_window(8e-9, 1000, &t);
	double z = sqrt(t.z2 / t.n);
	ck_assert_msg(t.beyond == 0 && z < 1.5, "8 ppb/s, second window: %u of %u beyond 5 s.e., RMS z %.2f", t.beyond,
		      t.n, z);
	/* a steady clock pays for it in its second window: RMS z 0.76 (0.91
	 * before), the aim's 0.7 at the least */
	second_window(0, 1000, &t);
	z = sqrt(t.z2 / t.n);
	ck_assert_msg(t.beyond == 0 && z > 0.7 && z < 1.5, "steady, second window: %u beyond 5 s.e., RMS z %.2f",
		      t.beyond, z);
}
END_TEST

/* Errors correlated in time (AR(1), lag-1 correlation 0.8: a loaded
 * machine delaying runs of receptions alike) on a steady clock: before the
 * fit measured its residuals' correlation (libsync/fit.c ar1_inflation) it
 * stated half the error (RMS z 2.03 at the window's centre in a Monte
 * Carlo of 300 clocks); now within bench/honesty's 1.5. */
START_TEST(correlated_errors)
{
	double z2c = 0, z2e = 0;
	int n = 0;
	for (int s = 0; s < SEEDS; s++) {
		GRand *g = g_rand_new_with_seed((guint32)(9100 + s));
		sync_fit *f = new_fit();
		double e = 0;
		for (int k = 0; k < 160; k++) {
			double u1 = g_rand_double(g), u2 = g_rand_double(g);
			e = 0.8 * e + 0.6 * 1000.0 * sqrt(-2 * log(1 - u1)) * cos(2 * M_PI * u2);
			int64_t x = (int64_t)(k + 1) * 1000000000LL;
			ck_assert_int_eq(sync_fit_add(f, x, x + (int64_t)llround(e), NULL), 0);
			if (k < 64 || k % 4)
				continue;
			sync_conv c;
			ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
			int64_t xc = c.x0 + (int64_t)c.xbar;
			double ec = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(xc)), xc);
			double ee = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(x)), x);
			z2c += ec * ec / sync_conv_var(&c, sync_tval_of(xc));
			z2e += ee * ee / sync_conv_var(&c, sync_tval_of(x));
			n++;
		}
		sync_fit_free(f);
		g_rand_free(g);
	}
	double zc = sqrt(z2c / n), ze = sqrt(z2e / n);
	ck_assert_msg(zc < 1.5 && ze < 1.5, "RMS z %.2f at the centre, %.2f at the newest point (aim <= 1.5)", zc, ze);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fit_wander");
	TCase *tc = tcase_create("wander");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, young_window_on_a_ramp);
	tcase_add_test(tc, young_window_on_a_slow_ramp);
	tcase_add_test(tc, steady_clock_pays_little);
	tcase_add_test(tc, second_window_on_a_slow_ramp);
	tcase_add_test(tc, correlated_errors);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
