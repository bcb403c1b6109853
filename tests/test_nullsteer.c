/* test_nullsteer.c — one located sound taken out of a set of clips
 * (apps/dsp/nullsteer.h).
 *
 * overlap6.ini's six microphones; a chirp B (1.2-2.4 kHz, 250 ms) at a
 * known place, and a pulse train A (1.8 kHz) at another, in clips that
 * start at different times.  Taking B out with its true arrivals must
 * leave (nearly) nothing of B alone, whatever the clips' gains (the
 * simulator's 1 / range, or off by decibels as field microphones are),
 * and must leave A as it was but for its projection on B's steering
 * vector.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/dsp/nullsteer.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"

#define NM 6
#define R 16000.0
#define C 343.0
#define N 7200 /* 0.45 s */

static const double mics[NM][3] = {{0, 0, 1}, {20, 0, 1}, {20, 20, 1}, {0, 20, 1}, {10, 3, 5}, {9, 17, 3.5}};
static const double A[3] = {6, 8, 0}, B[3] = {14, 13, 0};

static double range(const double *p, const double *m)
{
	return sqrt((p[0] - m[0]) * (p[0] - m[0]) + (p[1] - m[1]) * (p[1] - m[1]) + (p[2] - m[2]) * (p[2] - m[2]));
}

/* Clips of A (amplitude a) and B (amplitude b) at each microphone, B's gain
 * there times gain_err[j]; starts t0[j]; A at 0 s, B 80 ms later. */
static void render(double a, double b, const double *gain_err, const double *t0, float x[NM][N])
{
	dsp_wave_params pa = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10};
	dsp_wave_params pb = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *wa = dsp_wave_new(&pa, R, NULL), *wb = dsp_wave_new(&pb, R, NULL);
	for (int j = 0; j < NM; j++) {
		double ra = range(A, mics[j]), rb = range(B, mics[j]);
		for (int i = 0; i < N; i++) {
			double t = t0[j] + i / R;
			x[j][i] = (float)(a / ra * dsp_wave_eval(wa, t - ra / C) + b * gain_err[j] / rb * dsp_wave_eval(wb, t - 0.08 - rb / C));
		}
	}
	dsp_wave_free(wa);
	dsp_wave_free(wb);
}

/* Energy of x in 1.0-3.2 kHz (a plain sum of squares: the clips are
 * band-limited already). */
static double energy(const float *x)
{
	double e = 0;
	for (int i = 0; i < N; i++)
		e += (double)x[i] * x[i];
	return e;
}

static void null_b(float x[NM][N], const double *t0, double *removed)
{
	dsp_null_clip c[NM];
	for (int j = 0; j < NM; j++)
		c[j] = (dsp_null_clip){.x = x[j], .n = N, .t0_s = t0[j], .tau_s = range(B, mics[j]) / C, .gain = 1 / range(B, mics[j])};
	const char *why = NULL;
	ck_assert_msg(dsp_null_steer(c, NM, R, 1000, 3200, removed, &why) == 0, "%s", why ? why : "?");
}

START_TEST(takes_out_the_located_sound)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 7);
	static float x[NM][N], a_only[NM][N];
	double t0[NM], one[NM], err[NM];
	for (int j = 0; j < NM; j++) {
		t0[j] = -0.02 + 0.01 * j + gsl_rng_uniform(g) / R;
		one[j] = 1;
		err[j] = pow(10, gsl_ran_gaussian(g, 3) / 20); /* microphones +-3 dB */
	}
	/* B alone, gains exactly 1 / range and off by decibels: what is left
	 * is B's part that fell outside a clip (its start or end cut off) */
	for (int k = 0; k < 2; k++) {
		render(0, 1, k ? err : one, t0, x);
		double e0 = 0, e1 = 0, removed;
		for (int j = 0; j < NM; j++)
			e0 += energy(x[j]);
		null_b(x, t0, &removed);
		for (int j = 0; j < NM; j++)
			e1 += energy(x[j]);
		printf("B alone, gains %s: %.4f of the energy left (removed %.4f)\n", k ? "+-3 dB" : "1 / range", e1 / e0, removed);
		ck_assert_double_lt(e1 / e0, 1e-3);
	}
	/* A and B equally loud: A is left but for its projection on B's
	 * steering vector, about 1 / n of its energy in each bin */
	render(1, 1, err, t0, x);
	render(1, 0, one, t0, a_only);
	double removed;
	null_b(x, t0, &removed);
	double ea = 0, ed = 0;
	for (int j = 0; j < NM; j++) {
		ea += energy(a_only[j]);
		for (int i = 0; i < N; i++)
			ed += ((double)x[j][i] - a_only[j][i]) * ((double)x[j][i] - a_only[j][i]);
	}
	printf("A and B: A changed by %.3f of its energy (1 / n = %.3f)\n", ed / ea, 1.0 / NM);
	ck_assert_double_lt(ed / ea, 2.0 / NM);
	gsl_rng_free(g);
}
END_TEST

START_TEST(bad_input)
{
	static float x[2][16];
	dsp_null_clip c[2] = {{.x = x[0], .n = 16, .gain = 1}, {.x = x[1], .n = 16, .gain = 1}};
	const char *why = NULL;
	ck_assert_int_eq(dsp_null_steer(c, 1, R, 1000, 3200, NULL, &why), -EINVAL);
	ck_assert_int_eq(dsp_null_steer(c, 2, R, 3200, 1000, NULL, &why), -EINVAL);
	c[1].gain = 0;
	ck_assert_int_eq(dsp_null_steer(c, 2, R, 1000, 3200, NULL, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);
	c[1].gain = 1;
	c[1].n = 0;
	ck_assert_int_eq(dsp_null_steer(c, 2, R, 1000, 3200, NULL, &why), -EINVAL);
	c[1].n = 16;
	ck_assert_int_eq(dsp_null_steer(c, 2, R, 1000, 3200, NULL, &why), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("nullsteer");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, takes_out_the_located_sound);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
