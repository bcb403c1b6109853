/* test_tdoa_pairs.c — a node's two microphones (tdoa_pairs.h): the arrival
 * difference of a broadband call measured within its stated error over
 * many noise draws (z-scores, no slack), and a narrow-band call whose
 * wavelength is shorter than the spacing (a carrier cycle aliases) gives
 * no pair at all. */
#include <check.h>
#include <math.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/collab/tdoa_pairs.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"

#define RATE 16000.0
#define C 343.0
#define DRAWS 200

/* Two channels of one node: the call from src at mics b (ch0) and a (ch1),
 * 0.1 s into a 0.6-s clip, in white noise at snr_db over the band. */
static void render(gsl_rng *g, const dsp_wave *w, const double *src, const double *b, const double *a, double snr_db,
		   float *x0, float *x1, size_t n, double *dt_true)
{
	double rb = 0, ra = 0;
	for (int j = 0; j < 3; j++) {
		rb += (src[j] - b[j]) * (src[j] - b[j]);
		ra += (src[j] - a[j]) * (src[j] - a[j]);
	}
	*dt_true = (sqrt(ra) - sqrt(rb)) / C;
	double amp = pow(10, snr_db / 20) * sqrt(2.0 * 2200 / RATE);
	for (size_t i = 0; i < n; i++) {
		double t = i / RATE - 0.1;
		x0[i] = (float)(amp * dsp_wave_eval(w, t) + gsl_ran_gaussian(g, 1.0));
		x1[i] = (float)(amp * dsp_wave_eval(w, t - *dt_true) + gsl_ran_gaussian(g, 1.0));
	}
}

/* The pair measured from src; told its second microphone turned by
 * told_turn_rad about the vertical (a compass's survey error), stated to
 * heading_sd_rad. */
static int measure_told(gsl_rng *g, const dsp_wave *w, double len_s, const double *src, double told_turn_rad,
			double heading_sd_rad, double *z, double *dt_true)
{
	enum { N = 9600 };
	static float x0[N], x1[N];
	const double b[3] = {15, 4.9, 1}, a[3] = {15, 5.1, 1};
	render(g, w, src, b, a, 20, x0, x1, N, dt_true);
	tdoa_input in[1];
	memset(in, 0, sizeof in);
	memcpy(in[0].mic_m, b, sizeof in[0].mic_m);
	in[0].mic2_m[0] = b[0] - sin(told_turn_rad) * 0.2;
	in[0].mic2_m[1] = b[1] + cos(told_turn_rad) * 0.2;
	in[0].mic2_m[2] = b[2];
	in[0].mic2_heading_sd_rad = heading_sd_rad;
	in[0].x = x0;
	in[0].x2 = x1;
	in[0].n = N;
	in[0].rate_hz = RATE;
	in[0].onset_ns = 100000000;
	in[0].dur_s = len_s;
	tdoa_params p;
	tdoa_params_default(&p);
	tdoa_result out;
	memset(&out, 0, sizeof out);
	int np = tdoa_measure_pairs(in, 1, &p, src, &out);
	ck_assert_int_ge(np, 0);
	if (np == 1) {
		/* against what the told geometry predicts: the test the solve
		 * makes of it */
		double ra = 0, rb = 0;
		for (int j = 0; j < 3; j++) {
			ra += (src[j] - out.pairs[0].a_m[j]) * (src[j] - out.pairs[0].a_m[j]);
			rb += (src[j] - out.pairs[0].b_m[j]) * (src[j] - out.pairs[0].b_m[j]);
		}
		ck_assert_int_eq(out.pair_in[0], 0);
		*z = (out.pairs[0].dt_s - (sqrt(ra) - sqrt(rb)) / C) / out.pairs[0].sigma_s;
	}
	return np;
}

static int measure(gsl_rng *g, const dsp_wave *w, double len_s, const double *src, double *z, double *dt_true)
{
	return measure_told(g, w, len_s, src, 0, 0, z, dt_true);
}

START_TEST(broadband_call_within_its_error)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *w = dsp_wave_new(&wp, RATE, NULL);
	ck_assert_ptr_nonnull(w);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int got = 0, beyond = 0;
	double s2 = 0;
	for (int k = 0; k < DRAWS; k++) {
		gsl_rng_set(g, (unsigned long)(100 + k));
		double th = 2 * M_PI * gsl_rng_uniform(g), r = 5 + 20 * gsl_rng_uniform(g);
		double src[3] = {15 + r * cos(th), 5 + r * sin(th), 0}, z = NAN, dt;
		if (measure(g, w, 0.25, src, &z, &dt) == 1) {
			got++;
			s2 += z * z;
			beyond += fabs(z) > 5;
		}
	}
	double rms = sqrt(s2 / got);
	fprintf(stderr, "chirp pairs: %d of %d measured, RMS z %.2f, %d beyond 5 s.e.\n", got, DRAWS, rms, beyond);
	ck_assert_int_ge(got, DRAWS * 9 / 10);
	ck_assert_int_eq(beyond, 0);
	/* RMS of `got` standard normals: within its chi-square spread */
	ck_assert_msg(rms > 1 - 4 / sqrt(2.0 * got) && rms < 1 + 4 / sqrt(2.0 * got), "RMS z %.3f", rms);
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST

/* The array's heading surveyed to 2 degrees (each trial's told offset
 * turned by a N(0, 2 deg) draw): stated, the pairs' z-scores against the
 * told geometry stay standard; unstated, they are far too confident. */
START_TEST(heading_error_stated)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *w = dsp_wave_new(&wp, RATE, NULL);
	ck_assert_ptr_nonnull(w);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	const double sd = 2 * M_PI / 180;
	double s2[2] = {0, 0};
	int got[2] = {0, 0};
	for (int stated = 0; stated < 2; stated++)
		for (int k = 0; k < DRAWS; k++) {
			gsl_rng_set(g, (unsigned long)(3000 + k));
			double th = 2 * M_PI * gsl_rng_uniform(g), r = 5 + 20 * gsl_rng_uniform(g), turn = gsl_ran_gaussian(g, sd);
			double src[3] = {15 + r * cos(th), 5 + r * sin(th), 0}, z = NAN, dt;
			if (measure_told(g, w, 0.25, src, turn, stated ? sd : 0, &z, &dt) == 1) {
				got[stated]++;
				s2[stated] += z * z;
			}
		}
	double rms0 = sqrt(s2[0] / got[0]), rms1 = sqrt(s2[1] / got[1]);
	fprintf(stderr, "heading 2 deg off: RMS z %.2f stated, %.2f unstated (%d, %d pairs)\n", rms1, rms0, got[1], got[0]);
	ck_assert_int_ge(got[1], DRAWS * 9 / 10);
	ck_assert_msg(rms1 > 1 - 4 / sqrt(2.0 * got[1]) && rms1 < 1 + 4 / sqrt(2.0 * got[1]), "RMS z %.3f stated", rms1);
	ck_assert_msg(rms0 > 3, "RMS z %.3f unstated: the heading error should show", rms0);
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST

START_TEST(aliased_carrier_gives_no_pair)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 2600, .pulse_ms = 3, .pulse_interval_ms = 12, .pulses = 20};
	dsp_wave *w = dsp_wave_new(&wp, RATE, NULL);
	ck_assert_ptr_nonnull(w);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int got = 0, wrong = 0;
	for (int k = 0; k < 40; k++) {
		gsl_rng_set(g, (unsigned long)(900 + k));
		double th = 2 * M_PI * gsl_rng_uniform(g), r = 5 + 20 * gsl_rng_uniform(g);
		double src[3] = {15 + r * cos(th), 5 + r * sin(th), 0}, z = NAN, dt;
		if (measure(g, w, 0.24, src, &z, &dt) == 1) {
			got++;
			wrong += fabs(z) > 5;
		}
	}
	fprintf(stderr, "2.6 kHz train pairs (13 cm wavelength, 20 cm spacing): %d of 40 measured, %d beyond 5 s.e.\n", got,
		wrong);
	ck_assert_int_eq(wrong, 0);
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tdoa_pairs");
	TCase *tc = tcase_create("tdoa_pairs");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, broadband_call_within_its_error);
	tcase_add_test(tc, aliased_carrier_gives_no_pair);
	tcase_add_test(tc, heading_error_stated);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
