/* test_tdoa_doppler.c — a moving caller's Doppler measured between clips
 * and taken out before the delays (apps/collab/tdoa_doppler.h; issue 12,
 * bench/field's moving row).
 *
 * scale_of_a_slid_chirp: the moving row's exponential chirp (1.2-2.4 kHz
 * over 250 ms) heard slid by rho = 0.985, 1 and 1.02 about its onset,
 * 30 dB over white noise in its band: the scale measured within its stated
 * s.d. (z-scores over 30 noise draws: RMS z between 0.2 and 2, none
 * beyond 5), the coupling slope near the chirp's 1 / k = 0.36 s, and the
 * delay measured after undoing it (GCC-PHAT) is the arrival difference.
 * A pulse train's scale is measured as well; slid about its onset, its
 * delay moves by its pulses' mean time after the onset (0.135 s) per unit
 * of scale.
 *
 * flying_chirp_located: the moving row's flying chirp (5 m/s, 2 m up,
 * across the six-node field) rendered by sim/world as the nodes hear it.
 * Told its callers keep still, collab puts it 2.4-2.7 m ahead and calls
 * some of those `ok` (the premise: 10 of 18); told they may fly at 10 m/s, no
 * `ok` answer is more than 1 m off and each lies inside its 99.9 %
 * ellipse (Mahalanobis: the stated covariance is the claim), most calls
 * located.  still_caller_told_it_may_fly: the same chirp kept still, its
 * team told it may fly: every call located within 5 cm, inside its
 * ellipse.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/collab/tdoa.h"
#include "apps/collab/tdoa_doppler.h"
#include "apps/dsp/air.h"
#include "apps/dsp/gccphat.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"
#include "tests/tdoa_fixture.h"
#include "tests/world_fixture.h"

#define RATE 16000.0

static dsp_wave *chirp(void)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	return dsp_wave_new(&wp, RATE, NULL);
}

static dsp_wave *pulses(void)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10};
	return dsp_wave_new(&wp, RATE, NULL);
}

/* Noise s.d. for a call of amplitude 1 at snr_db in its band [lo, hi]:
 * white noise spreads over RATE / 2. */
static double noise_sd(const dsp_wave *w, double snr_db, double lo, double hi)
{
	double e = 0, L = dsp_wave_length_s(w);
	for (double t = 0; t < L; t += 1 / RATE)
		e += pow(dsp_wave_eval(w, t), 2);
	double p = e / (L * RATE);
	return sqrt(p / pow(10, snr_db / 10) * (RATE / 2) / (hi - lo));
}

/* The reference hears the call start at ta (s from its clip's start), the
 * other clip (starting t0 later) at tb, slid by rho about it. */
static void render(gsl_rng *g, const dsp_wave *w, double ta, double tb, double rho, double sd, float *a, float *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double t = i / RATE;
		a[i] = (float)(dsp_wave_eval(w, t - ta) + gsl_ran_gaussian(g, sd));
		b[i] = (float)(dsp_wave_eval(w, rho * (t - tb)) + gsl_ran_gaussian(g, sd));
	}
}

START_TEST(scale_of_a_slid_chirp)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 7);
	dsp_wave *w = chirp();
	const size_t n = (size_t)(0.45 * RATE);
	float *a = g_new(float, n), *b = g_new(float, n), *y;
	double sd = noise_sd(w, 30, 1100, 2500), delta = 2 * 10 / 343.0;
	const double rhos[] = {0.985, 1.0, 1.02};
	/* b's clip starts 13 ms after a's; the call reaches a 50 ms into its
	 * clip and b 20.3 ms after a. */
	const double t0 = 0.013, ta = 0.050, dt = 0.0203, tb = ta + dt - t0;
	double z2 = 0, zmax = 0;
	int draws = 0;
	dsp_gcc_params gp;
	dsp_gcc_params_default(&gp);
	gp.rate_hz = RATE;
	gp.f_lo_hz = 1100;
	gp.f_hi_hz = 2500;
	dsp_gcc *gcc = dsp_gcc_new(&gp, NULL);
	for (size_t q = 0; q < G_N_ELEMENTS(rhos); q++) {
		double dz2 = 0, slope = 0;
		for (int i = 0; i < 30; i++) {
			render(g, w, ta, tb, rhos[q], sd, a, b, n);
			tdoa_doppler dp;
			ck_assert_int_eq(tdoa_doppler_measure(a, n, b, n, t0, RATE, 1100, 2500, 0.2, tb, 0, 1e-4, 1, delta, &dp), 0);
			ck_assert(!dp.at_edge);
			double z = (dp.rho - rhos[q]) / dp.rho_sd;
			z2 += z * z;
			zmax = fmax(zmax, fabs(z));
			draws++;
			slope += dp.slope_s / 30;
			/* Undone, the pair's delay is the arrival difference. */
			y = tdoa_doppler_undo(b, n, RATE, tb, dp.rho, 0);
			dsp_gcc_result gr;
			ck_assert_int_eq(dsp_gcc_delay(gcc, a, n, y, n, &gr, NULL), 0);
			double got = gr.delay / RATE + t0, err = got - dt;
			double se = hypot(gr.se / RATE, sqrt(dp.var_s2));
			dz2 += (err / se) * (err / se);
			ck_assert_msg(fabs(err) < 5 * se + 2e-6, "rho %.3f: delay off by %.1f us, stated %.1f us", rhos[q],
				      err * 1e6, se * 1e6);
			g_free(y);
		}
		printf("chirp slid by %.3f: slope %.3f s per unit scale, delay RMS z %.2f\n", rhos[q], slope, sqrt(dz2 / 30));
		ck_assert(fabs(slope) > 0.2 && fabs(slope) < 0.8);
	}
	double rz = sqrt(z2 / draws);
	printf("scale: RMS z %.2f over %d draws, largest |z| %.2f\n", rz, draws, zmax);
	ck_assert(rz > 0.2 && rz < 2);
	ck_assert(zmax < 5);
	/* A pulse train: its pulses' carrier slides, their times hardly. */
	dsp_wave *pt = pulses();
	double psd = noise_sd(pt, 30, 1500, 2100);
	render(g, pt, ta, tb, 1.01, psd, a, b, n);
	tdoa_doppler dp;
	ck_assert_int_eq(tdoa_doppler_measure(a, n, b, n, t0, RATE, 1500, 2100, 0.2, tb, 0, 1e-4, 1, delta, &dp), 0);
	printf("pulse train slid by 1.010: measured %.6f +- %.6f, slope %.4f s\n", dp.rho, dp.rho_sd, dp.slope_s);
	ck_assert(fabs(dp.rho - 1.01) < 5 * dp.rho_sd);
	/* Slid about its onset, its pulses move by (rho - 1) times their
	 * time after it: 135 ms on average over ten pulses 30 ms apart. */
	ck_assert(dp.slope_s > 0.1 && dp.slope_s < 0.2);
	dsp_wave_free(pt);
	dsp_gcc_free(gcc);
	g_free(a);
	g_free(b);
	dsp_wave_free(w);
	gsl_rng_free(g);
}
END_TEST

/* bench/field's moving row, as sim/world renders it. */
static const char moving_text[] = "[world]\nspeed_of_sound_m_s = 343\nnoise_dbfs = -62\nseed = 2024\nduration_s = 64\n"
				  "[node.1]\nposition_m = 0, 0, 1\n[node.2]\nposition_m = 30, 0, 1\n"
				  "[node.3]\nposition_m = 30, 30, 1\n[node.4]\nposition_m = 0, 30, 1\n"
				  "[node.5]\nposition_m = 15, 5, 1\n[node.6]\nposition_m = 15, 25, 1\n"
				  "[source.1]\npath = -5,15,2 @ 0; 35,15,2 @ 8; -5,15,2 @ 16; 35,15,2 @ 24; -5,15,2 @ 32; "
				  "35,15,2 @ 40; -5,15,2 @ 48; 35,15,2 @ 56; -5,15,2 @ 64\n"
				  "waveform = chirp\nf0_hz = 1200\nf1_hz = 2400\nsweep = exponential\nlength_ms = 250\n"
				  "taper_ms = 10\nlevel_dbfs = 4\n"
				  "call_times_s = 1, 3.5, 6, 9, 11.5, 14, 17, 19.5, 22, 25, 27.5, 30, 33, 35.5, 38, 41, 43.5, 46\n";

static const double field_mics[6][3] = {{0, 0, 1}, {30, 0, 1}, {30, 30, 1}, {0, 30, 1}, {15, 5, 1}, {15, 25, 1}};

/* Call k as collab gets it: each node's clip from 20 ms before its onset,
 * 450 ms long, the onset drawn about the true arrival with s.e. se_s. */
static void moving_call(const sim_world *w, size_t k, gsl_rng *g, double se_s, tdoa_input in[6], float *x[6])
{
	for (int j = 0; j < 6; j++) {
		int node = j + 1;
		double onset = sim_world_arrival_s(w, node, 0, 0, k) + gsl_ran_gaussian(g, se_s);
		int64_t f0 = (int64_t)floor(sim_world_frame_at(w, node, RATE, onset - 0.020));
		size_t len = (size_t)(0.45 * RATE);
		x[j] = g_new(float, len);
		for (size_t i = 0; i < len; i++)
			x[j][i] = (float)sim_world_sample(w, node, 0, RATE, f0 + (int64_t)i);
		in[j] = tdoa_fixture_input(node, x[j], len, RATE, sim_world_frame_time_s(w, node, RATE, f0), onset, se_s, 40 - j,
					   field_mics[j]);
	}
}

typedef struct {
	int calls, still_off, ok, off, inside;
	double worst_m;
} world_tally;

/* Every call of the world text's source 1 located told still, then told
 * its callers may fly at 10 m/s; the second's verdicts tallied. */
static world_tally locate_world(const char *name, const char *text)
{
	fixture f = fixture_make(name, text);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 11);
	const double q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	world_tally t = {0};
	t.calls = (int)sim_world_n_calls(f.w, 0);
	for (int k = 0; k < t.calls; k++) {
		tdoa_input in[6];
		float *x[6];
		moving_call(f.w, (size_t)k, g, 1e-3, in, x);
		double truth[3];
		ck_assert(sim_world_call_pos(f.w, 0, (size_t)k, truth));
		tdoa_params p;
		tdoa_fixture_chirp_params(&p);
		tdoa_result r;
		int rc = tdoa_locate(in, 6, &p, &r);
		int still_ok = rc == 0 && r.loc.status == DSP_LOC_OK && !r.ambiguous && !r.coarse;
		double e0 = hypot(r.loc.pos_m[0] - truth[0], r.loc.pos_m[1] - truth[1]);
		t.still_off += still_ok && e0 > 1;
		p.source_speed_m_s = 10;
		rc = tdoa_locate(in, 6, &p, &r);
		int rok = rc == 0 && r.loc.status == DSP_LOC_OK && !r.ambiguous && !r.coarse;
		double ex = r.loc.pos_m[0] - truth[0], ey = r.loc.pos_m[1] - truth[1], e = hypot(ex, ey);
		double a = r.loc.cov[0][0], b = r.loc.cov[0][1], d = r.loc.cov[1][1];
		double m2 = (d * ex * ex - 2 * b * ex * ey + a * ey * ey) / (a * d - b * b);
		printf("%s call %d at (%.1f, %.1f): still %s %.2f m; told 10 m/s rc %d status %d%s: (%.3f, %.3f) m, %.3f m "
		       "off, s.d. (%.3f, %.3f), mahal2 %.1f, scales",
		       name, k, truth[0], truth[1], still_ok ? "ok" : "not ok", e0, rc, r.loc.status,
		       r.ambiguous ? " ambiguous" : "", r.loc.pos_m[0], r.loc.pos_m[1], e, sqrt(a), sqrt(d), m2);
		for (int j = 0; j < 6; j++)
			printf(" %.4f", r.rho[j]);
		printf("%s\n", r.why[0] ? r.why : "");
		if (rok) {
			t.ok++;
			t.off += e > 1;
			t.inside += m2 <= q999;
			t.worst_m = fmax(t.worst_m, e);
		}
		for (int j = 0; j < 6; j++)
			g_free(x[j]);
	}
	printf("%s: %d calls; told still: %d ok more than 1 m off; told 10 m/s: %d ok, %d more than 1 m off, %d inside "
	       "99.9 %%, worst ok %.3f m\n",
	       name, t.calls, t.still_off, t.ok, t.off, t.inside, t.worst_m);
	gsl_rng_free(g);
	fixture_drop(f);
	return t;
}

START_TEST(flying_chirp_located)
{
	world_tally t = locate_world("moving.ini", moving_text);
	/* The premise: told its callers keep still, the solve puts the bird
	 * 2.4-2.7 m ahead (the chirp's coupling, 0.5 s of flight) and calls
	 * it ok (10 of 18 with seed 11). */
	ck_assert_int_ge(t.still_off, t.calls / 4);
	ck_assert_int_eq(t.off, 0);
	/* One honest answer of 18 outside its 99.9 % ellipse: 1.8 %. */
	ck_assert_int_ge(t.inside, t.ok - 1);
	ck_assert_int_ge(t.ok, t.calls * 3 / 4);
}
END_TEST

/* The same chirp kept still at (3, 15, 2), its team told it may fly:
 * every scale 1 within its error, every call located as well as told
 * still, inside its ellipse. */
START_TEST(still_caller_told_it_may_fly)
{
	gchar *txt = g_strdup(moving_text);
	char *pth = strstr(txt, "path = "), *eol = strchr(pth, '\n');
	gchar *still = g_strdup_printf("%.*sposition_m = 3, 15, 2%s", (int)(pth - txt), txt, eol);
	world_tally t = locate_world("still.ini", still);
	ck_assert_int_eq(t.ok, t.calls);
	ck_assert_int_ge(t.inside, t.ok - 1);
	ck_assert(t.worst_m < 0.05);
	g_free(still);
	g_free(txt);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tdoa_doppler");
	TCase *tc = tcase_create("tdoa_doppler");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, scale_of_a_slid_chirp);
	tcase_add_test(tc, flying_chirp_located);
	tcase_add_test(tc, still_caller_told_it_may_fly);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
