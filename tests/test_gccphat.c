/* test_gccphat.c — GCC-PHAT delays of synthetic clips with exactly known
 * fractional delays (analytic frog pulses, phase-shifted noise bursts) in
 * seeded noise: accuracy against truth and against the estimator's own
 * predicted standard error. */
#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/dsp/gccphat.h"
#include "apps/dsp/synth.h"
#include "apps/dsp/xcorr.h"
#include "tests/check_run.h"

#define RATE 48000.0
#define SEEDS 200
#define CLIP 4800 /* 100 ms */

/* Like the simulator's second frog: 3 ms pulses of 2.6 kHz, 12 ms apart. */
static const dsp_frog FROG = {.carrier_hz = 2600, .pulse_s = 0.003, .interval_s = 0.012, .pulses = 4};

/* Frog call starting 15 ms into a, d samples later in b; noise s.d. sn. */
static void frog_pair(gsl_rng *r, double d, double sn, float *a, float *b)
{
	memset(a, 0, CLIP * sizeof *a);
	memset(b, 0, CLIP * sizeof *b);
	dsp_frog_render(&FROG, 1.0, 0.015, RATE, a, CLIP);
	dsp_frog_render(&FROG, 1.0, 0.015 + d / RATE, RATE, b, CLIP);
	for (int i = 0; i < CLIP; i++) {
		a[i] += (float)gsl_ran_gaussian(r, sn);
		b[i] += (float)gsl_ran_gaussian(r, sn);
	}
}

/* White noise burst of unit variance (20 ms, raised-cosine 1 ms ends) in
 * the middle of the clip, delayed exactly by d in b. */
static void burst_pair(gsl_rng *r, double d, double sn, float *a, float *b)
{
	memset(a, 0, CLIP * sizeof *a);
	int n = 960, ramp = 48, at = 1900;
	for (int i = 0; i < n; i++) {
		double g = 1;
		if (i < ramp)
			g = 0.5 * (1 - cos(M_PI * i / ramp));
		if (i >= n - ramp)
			g = 0.5 * (1 - cos(M_PI * (n - 1 - i) / ramp));
		a[at + i] = (float)(g * gsl_ran_gaussian(r, 1.0));
	}
	ck_assert_int_eq(dsp_delay_exact(a, CLIP, d, b), 0);
	for (int i = 0; i < CLIP; i++) {
		a[i] += (float)gsl_ran_gaussian(r, sn);
		b[i] += (float)gsl_ran_gaussian(r, sn);
	}
}

typedef void (*pair_fn)(gsl_rng *, double, double, float *, float *);

/* Run SEEDS trials; check RMS error <= 1.5 x RMS predicted s.e., the
 * prediction not over 2x pessimistic, and the mean within 4 standard errors
 * of zero. */
static void trials(pair_fn make, double sn, double f_lo, double f_hi, double beta, double *rms_out)
{
	static float a[CLIP], b[CLIP];
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	p.f_lo_hz = f_lo;
	p.f_hi_hz = f_hi;
	p.max_lag = 100;
	p.beta = beta;
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	ck_assert_ptr_nonnull(g);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double s1 = 0, s2 = 0, se2 = 0;
	for (int seed = 1; seed <= SEEDS; seed++) {
		gsl_rng_set(r, (unsigned long)seed);
		double d = gsl_rng_uniform(r) * 80 - 40;
		make(r, d, sn, a, b);
		dsp_gcc_result res;
		ck_assert_int_eq(dsp_gcc_delay(g, a, CLIP, b, CLIP, &res, NULL), 0);
		double e = res.delay - d;
		s1 += e;
		s2 += e * e;
		se2 += res.se * res.se;
	}
	double rms = sqrt(s2 / SEEDS), pred = sqrt(se2 / SEEDS), mean = s1 / SEEDS;
	fprintf(stderr, "gcc sn=%g band=[%g,%g] beta %g: rms %.4g pred %.4g mean %.3g\n", sn, f_lo, f_hi, beta, rms, pred, mean);
	ck_assert_msg(rms <= 1.5 * pred, "rms %g > 1.5 x predicted %g", rms, pred);
	ck_assert_msg(pred <= 2.0 * rms, "prediction %g over 2x pessimistic (rms %g)", pred, rms);
	ck_assert_msg(fabs(mean) <= 4 * rms / sqrt(SEEDS), "mean error %g biased (rms %g)", mean, rms);
	*rms_out = rms;
	gsl_rng_free(r);
	dsp_gcc_free(g);
}

START_TEST(noiseless_exact)
{
	static float a[CLIP], b[CLIP];
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	for (int i = 0; i < 20; i++) {
		double d = -30.0 + 3.137 * i;
		frog_pair(r, d, 0, a, b);
		dsp_gcc_result res;
		ck_assert_int_eq(dsp_gcc_delay(g, a, CLIP, b, CLIP, &res, NULL), 0);
		/* float samples: rounding noise ~1e-7 relative; 1e-3 sample is far above it */
		ck_assert_msg(fabs(res.delay - d) < 1e-3, "d %g got %g", d, res.delay);
		ck_assert(res.peak > 0.99);
	}
	gsl_rng_free(r);
	dsp_gcc_free(g);
}
END_TEST

/* Narrow-band frog pulses at 10 dB (pulse power over noise variance): pure
 * PHAT over a band matched to the call, PHAT-beta 0.75 and plain correlation
 * (beta 0) over a wider band.  At this SNR no trial slips a carrier cycle;
 * at 0 dB some do (docs/localization.md), which is why 0 dB is tested with
 * broadband bursts only. */
START_TEST(frog_10db)
{
	double rms, sn = sqrt(3.0 / 16.0 / pow(10, 1.0));
	trials(frog_pair, sn, 2000, 3200, 1.0, &rms);
	ck_assert(rms < 0.3);
	trials(frog_pair, sn, 1600, 3600, 0.75, &rms);
	ck_assert(rms < 0.2);
	trials(frog_pair, sn, 1600, 3600, 0.0, &rms);
	ck_assert(rms < 0.1);
}
END_TEST

START_TEST(frog_20db)
{
	double rms, sn = sqrt(3.0 / 16.0 / pow(10, 2.0));
	trials(frog_pair, sn, 2000, 3200, 1.0, &rms);
	ck_assert(rms < 0.1);
}
END_TEST

START_TEST(burst_0db)
{
	double rms;
	trials(burst_pair, 1.0, 0, 0, 1.0, &rms);
}
END_TEST

START_TEST(burst_20db)
{
	double rms;
	trials(burst_pair, 0.1, 0, 0, 1.0, &rms);
	ck_assert(rms < 0.05);
}
END_TEST

START_TEST(unequal_lengths_and_sign)
{
	/* b is shorter and starts at the same instant; b hears 12.3 samples later. */
	static float a[CLIP], b[CLIP];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 7);
	frog_pair(r, 12.3, 0.01, a, b);
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	p.f_lo_hz = 2000;
	p.f_hi_hz = 3200;
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	dsp_gcc_result res;
	ck_assert_int_eq(dsp_gcc_delay(g, a, CLIP, b, 3500, &res, NULL), 0);
	ck_assert_msg(fabs(res.delay - 12.3) < 5 * res.se + 1e-3, "got %g se %g", res.delay, res.se);
	/* swapping the clips flips the sign */
	ck_assert_int_eq(dsp_gcc_delay(g, b, 3500, a, CLIP, &res, NULL), 0);
	ck_assert_msg(fabs(res.delay + 12.3) < 5 * res.se + 1e-3, "got %g se %g", res.delay, res.se);
	gsl_rng_free(r);
	dsp_gcc_free(g);
}
END_TEST

START_TEST(max_lag_bounds_search)
{
	static float a[CLIP], b[CLIP];
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 3);
	burst_pair(r, 60.4, 0.1, a, b);
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	p.max_lag = 30;
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	dsp_gcc_result res;
	int e = dsp_gcc_delay(g, a, CLIP, b, CLIP, &res, NULL);
	/* the true peak is outside: whatever is found lies within the bound and
	 * has low coherence */
	if (e == 0) {
		ck_assert(fabs(res.delay) <= 30.75);
		ck_assert(res.peak < 0.3);
	}
	gsl_rng_free(r);
	dsp_gcc_free(g);
}
END_TEST

/* The analytic correlation of one spectral bin k (R_k = 1) is
 * (2/n) exp(i w_k tau): its real part what dsp_spec_eval gives, its
 * squared envelope (2/n)^2 at every tau; a band's real part is
 * dsp_spec_eval's r whatever the bins. */
START_TEST(analytic_correlation)
{
	enum { N = 512,
	       K = 37 };
	fftwf_complex *R = fftwf_alloc_complex(N / 2 + 1);
	memset(R, 0, (N / 2 + 1) * sizeof *R);
	R[K][0] = 1;
	for (double tau = -40; tau <= 40; tau += 0.37) {
		double re, im, r, d1, d2, w = 2 * M_PI * K / N;
		dsp_spec_analytic(R, N, tau, 0, N / 2, &re, &im);
		dsp_spec_eval(R, N, tau, 0, N / 2, &r, &d1, &d2);
		ck_assert_double_eq_tol(re, 2.0 / N * cos(w * tau), 1e-12);
		ck_assert_double_eq_tol(im, 2.0 / N * sin(w * tau), 1e-12);
		ck_assert_double_eq_tol(re, r, 1e-15);
		ck_assert_double_eq_tol(re * re + im * im, 4.0 / ((double)N * N), 1e-15);
	}
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 3);
	for (int k = 0; k <= N / 2; k++) {
		R[k][0] = (float)gsl_ran_gaussian(g, 1);
		R[k][1] = (float)gsl_ran_gaussian(g, 1);
	}
	for (double tau = -5; tau <= 5; tau += 0.5) {
		double re, im, r;
		dsp_spec_analytic(R, N, tau, 20, 200, &re, &im);
		dsp_spec_eval(R, N, tau, 20, 200, &r, NULL, NULL);
		ck_assert_double_eq_tol(re, r, 1e-12);
	}
	gsl_rng_free(g);
	fftwf_free(R);
}
END_TEST

START_TEST(bad_input)
{
	static float a[CLIP], b[CLIP];
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	dsp_gcc_result res;
	const char *why = NULL;
	ck_assert_int_eq(dsp_gcc_delay(g, a, 0, b, CLIP, &res, &why), -EINVAL);
	ck_assert_ptr_nonnull(why);
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	ck_assert_int_eq(dsp_gcc_delay(g, a, CLIP, b, CLIP, &res, &why), -EDOM);
	p.rate_hz = -1;
	ck_assert_ptr_null(dsp_gcc_new(&p, &why));
	dsp_gcc_free(g);
}
END_TEST

/* Heap in use (mallinfo2: the arenas' blocks and the mmapped ones), kB. */
static long in_use_kb(void)
{
	struct mallinfo2 m = mallinfo2();
	return (long)((m.uordblks + m.hblkhd) / 1024);
}

/* A solver whose clip lengths vary plans a new transform size for many
 * calls.  FFTW keeps every one: from the second round of new sizes to the
 * fifth the heap in use grows (41 kB here); with dsp_fft_forget after each
 * plan it grows by less than half that (13 kB). */
START_TEST(fft_forget_keeps_the_planner_flat)
{
	long at[2][5];
	static float a[40000], b[40000];
	for (int i = 0; i < 40000; i++)
		a[i] = b[i] = (float)sin(0.01 * i * (i % 977));
	for (int forget = 0; forget < 2; forget++) {
		for (int round = 0; round < 5; round++) {
			/* each round its own correlator (its buffers freed before
			 * the count) and lengths whose padded sizes are new */
			dsp_xcorr *x = dsp_xcorr_new();
			for (int k = 0; k < 40; k++) {
				size_t n = 600 + (size_t)((forget * 5 + round) * 40 + k) * 19;
				ck_assert_int_eq(dsp_xcorr_cross(x, a, n, b, n, 0), 0);
				if (forget)
					dsp_fft_forget();
			}
			dsp_xcorr_free(x);
			at[forget][round] = in_use_kb();
		}
	}
	printf("FFTW planner: in use after rounds 2..5 of new sizes: %ld %ld %ld %ld kB kept; %ld %ld %ld %ld kB forgotten\n",
	       at[0][1], at[0][2], at[0][3], at[0][4], at[1][1], at[1][2], at[1][3], at[1][4]);
#if !defined(__SANITIZE_ADDRESS__) /* ASan's malloc is not the one mallinfo2 reads */
	ck_assert_int_gt(at[0][4] - at[0][1], 0);
	ck_assert_int_lt(at[1][4] - at[1][1], (at[0][4] - at[0][1]) / 2);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gccphat");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, noiseless_exact);
	tcase_add_test(tc, frog_10db);
	tcase_add_test(tc, frog_20db);
	tcase_add_test(tc, burst_0db);
	tcase_add_test(tc, burst_20db);
	tcase_add_test(tc, unequal_lengths_and_sign);
	tcase_add_test(tc, max_lag_bounds_search);
	tcase_add_test(tc, analytic_correlation);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, fft_forget_keeps_the_planner_flat);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
