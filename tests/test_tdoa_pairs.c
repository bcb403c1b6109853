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

static int measure(gsl_rng *g, const dsp_wave *w, double len_s, const double *src, double *z, double *dt_true)
{
	enum { N = 9600 };
	static float x0[N], x1[N];
	const double b[3] = {15, 4.9, 1}, a[3] = {15, 5.1, 1};
	render(g, w, src, b, a, 20, x0, x1, N, dt_true);
	tdoa_input in[1];
	memset(in, 0, sizeof in);
	memcpy(in[0].mic_m, b, sizeof in[0].mic_m);
	memcpy(in[0].mic2_m, a, sizeof in[0].mic2_m);
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
		ck_assert_int_eq(out.pair_in[0], 0);
		*z = (out.pairs[0].dt_s - *dt_true) / out.pairs[0].sigma_s;
	}
	return np;
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
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
