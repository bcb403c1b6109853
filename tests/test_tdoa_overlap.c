/* test_tdoa_overlap.c — two callers in the same clips (apps/collab/tdoa.h).
 *
 * overlap6.ini's world without the rest of the pipeline: six microphones
 * at several heights, a frog-like pulse train at A and, 80 ms later, a
 * louder chirp at B.  The group's detections are of A's call (their
 * onsets are A's arrivals, as a template matched to A's call gives them);
 * every clip holds both calls.  Whatever collab answers must be about the
 * call the onsets detected: an ok answer is at A, inside its stated
 * ellipse; an answer at B with A's time is the failure seen in make check
 * (a group of held detections located at the other caller, 9.4 m off,
 * stated to 2 mm).  A refusal is honest.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/collab/tdoa.h"
#include "apps/dsp/band.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"

#define NM 6

static const double mics[NM][3] = {{0, 0, 1}, {20, 0, 1}, {20, 20, 1}, {0, 20, 1}, {10, 3, 5}, {9, 17, 3.5}};

typedef struct {
	int ok;         /* solved, status ok, not ambiguous */
	double err_a_m; /* horizontal distance from A */
	double err_b_m; /* ... from B */
	double m2_a;    /* Mahalanobis^2 of A under the stated covariance */
	tdoa_result tr;
} outcome;

/* One call of A at a, the chirp at b `lag_s` later and `louder` times as
 * loud, white noise at 25 dB below the chirp; onsets are A's arrivals with
 * a template's misfit of onset_sd_s. */
static outcome solve_two(gsl_rng *g, const double a[3], const double b[3], double lag_s, double louder,
			 double onset_sd_s)
{
	const double R = 16000, c = 343;
	dsp_wave_params pa = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10};
	dsp_wave_params pb = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *wa = dsp_wave_new(&pa, R, NULL), *wb = dsp_wave_new(&pb, R, NULL);
	const int64_t E = 1796000000000000000LL; /* A's emission, global ns */
	tdoa_input in[NM];
	float *x[NM];
	double sigma = 0.1 * fmax(louder, 1) * pow(10, -25.0 / 20) * 0.7;
	for (int j = 0; j < NM; j++) {
		double ra = sqrt(pow(a[0] - mics[j][0], 2) + pow(a[1] - mics[j][1], 2) + pow(a[2] - mics[j][2], 2));
		double rb = sqrt(pow(b[0] - mics[j][0], 2) + pow(b[1] - mics[j][1], 2) + pow(b[2] - mics[j][2], 2));
		double arrive_a = ra / c, arrive_b = lag_s + rb / c;
		/* collab's clip: from 50 ms before the detected onset, 0.45 s */
		double start = arrive_a - 0.05 - gsl_rng_uniform(g) / R;
		size_t n = (size_t)(0.45 * R);
		x[j] = g_new(float, n);
		for (size_t i = 0; i < n; i++) {
			double t = start + i / R;
			x[j][i] = (float)(0.1 * dsp_wave_eval(wa, t - arrive_a) + 0.1 * louder * dsp_wave_eval(wb, t - arrive_b) +
					  gsl_ran_gaussian(g, sigma));
		}
		double st = start * 1e9;
		in[j] = (tdoa_input){.node = (uint32_t)(j + 1), .x = x[j], .n = n, .rate_hz = R, .t0_ns = E + (int64_t)floor(st), .t0_frac_ns = st - floor(st), .t0_se_ns = 200, .onset_ns = E + (int64_t)llround((arrive_a + gsl_ran_gaussian(g, onset_sd_s)) * 1e9), .onset_se_ns = 60, .snr_db = 20 - fmin(ra, rb) / 5};
		for (int k = 0; k < 3; k++)
			in[j].mic_m[k] = mics[j][k];
	}
	tdoa_params p;
	tdoa_params_default(&p); /* the source's height unknown, as chorus-demo tells collab */
	/* the band detect states for A's template: its 95 % energy band
	 * widened by 10 % each side, within the profile's 1000-3200 Hz */
	size_t tn = (size_t)(0.35 * R);
	float *h = g_new0(float, tn);
	for (size_t i = 0; i < tn; i++)
		h[i] = (float)dsp_wave_eval(wa, i / R);
	double lo, hi;
	ck_assert_int_eq(dsp_band_of(h, tn, R, 0.95, 1000, 3200, &lo, &hi), 0);
	p.f_lo_hz = fmax(1000, lo * 0.9);
	p.f_hi_hz = fmin(3200, hi * 1.1);
	g_free(h);
	tdoa_result tr;
	int rc = tdoa_locate(in, NM, &p, &tr);
	for (int j = 0; j < NM; j++)
		g_free(x[j]);
	dsp_wave_free(wa);
	dsp_wave_free(wb);
	outcome o = {.ok = rc == 0 && tr.loc.status == DSP_LOC_OK && !tr.ambiguous, .tr = tr};
	if (o.ok) {
		double ex = tr.loc.pos_m[0] - a[0], ey = tr.loc.pos_m[1] - a[1];
		o.err_a_m = hypot(ex, ey);
		o.err_b_m = hypot(tr.loc.pos_m[0] - b[0], tr.loc.pos_m[1] - b[1]);
		double s = tr.loc.cov[0][0], u = tr.loc.cov[0][1], d = tr.loc.cov[1][1], det = s * d - u * u;
		o.m2_a = (d * ex * ex - 2 * u * ex * ey + s * ey * ey) / det;
	}
	return o;
}

/* Counts of one batch of calls. */
typedef struct {
	int calls, ok, honest, at_b, elsewhere;
} tally;

/* n calls at each of the three placements, B `louder` times as loud as A
 * (0: A alone). */
static tally batch(gsl_rng *g, int n, double louder)
{
	static const double place[3][2][3] = {
		{{6, 8, 0}, {14, 13, 0}},
		{{4, 14, 0}, {15, 6, 0}},
		{{12, 10, 0}, {6, 16, 0}},
	};
	tally t = {0};
	double q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	for (int s = 0; s < 3; s++)
		for (int k = 0; k < n; k++) {
			outcome o = solve_two(g, place[s][0], place[s][1], 0.08, louder, 1e-3);
			t.calls++;
			if (!o.ok) {
				if (getenv("OVERLAP_DEBUG"))
					fprintf(stderr, "overlap: B %.1f x: placement %d call %d refused: %s\n", louder, s, k, o.tr.why);
				continue;
			}
			t.ok++;
			if (o.m2_a <= q999) {
				t.honest++;
				continue;
			}
			if (louder > 0 && o.err_b_m < 1.0)
				t.at_b++;
			else if (t.elsewhere++ < 3)
				fprintf(stderr, "overlap: placement %d call %d: at (%.2f, %.2f, %.2f), %.3f m from A (%.3f m from B), Mahalanobis^2 %.1f; chi2 %.2f on %d, SRP power %.3f (other %.3f), %d arrivals\n",
					s, k, o.tr.loc.pos_m[0], o.tr.loc.pos_m[1], o.tr.loc.pos_m[2], o.err_a_m, o.err_b_m, o.m2_a,
					o.tr.loc.chi2, o.tr.loc.dof, o.tr.srp_power, o.tr.alt_power, o.tr.n_ok);
		}
	fprintf(stderr, "overlap: B %.1f x as loud as A: %d calls, %d ok answers: %d at A inside their 99.9 %% ellipse, %d at the other caller, %d elsewhere\n",
		louder, t.calls, t.ok, t.honest, t.at_b, t.elsewhere);
	return t;
}

/* Equally loud (as in overlap6.ini): no ok answer is at the other caller
 * or anywhere but A.  PHAT gives each frequency of the band detect states
 * for A's template equal weight, and the chirp fills every one where the
 * pulse train has only its lines: A's own position scores 0.02-0.04 of
 * steered power, B's 0.5-0.9, even with B 10 dB quieter than A.  In the
 * clips as they are, A cannot be located, and the ghosts the onsets' gate
 * lets through (sets of A x B cross-correlation peaks consistent pair by
 * pair, 6 m off at the top of the searched heights, stated to millimetres:
 * 30 of 90 answered `ok` before collab looked for a louder sound) are
 * refused.  With B located and taken out of the clips (nullsteer.h), A is
 * located: 60 of 90, every one inside its 99.9 % ellipse (placement 2's
 * onsets' gate holds B's own place, which the onsets' test then refuses).
 * Alone, A is located every time, honestly.  With B 10 dB quieter, 20 of
 * 30 are located honestly; one answer (placement 2) lies 13.5 cm off,
 * stated to 2.6 mm: a carrier cycle slipped in one pair and absorbed along
 * the array's weak direction (chi2 5.4 on 2 d.o.f.), which no test here
 * sees yet (issue 12: candidates, not one peak) — counted, not asserted. */
START_TEST(the_answer_is_the_detected_call)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 4242);
	tally both = batch(g, 30, 1.0);
	ck_assert_int_eq(both.at_b, 0);
	ck_assert_int_eq(both.elsewhere, 0);
	ck_assert_int_ge(both.honest, both.calls / 2);
	tally alone = batch(g, 10, 0);
	ck_assert_int_eq(alone.honest, alone.calls);
	tally quiet = batch(g, 10, 0.3);
	ck_assert_int_eq(quiet.at_b, 0);
	ck_assert_int_ge(quiet.honest, quiet.calls / 2);
	gsl_rng_free(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tdoa_overlap");
	TCase *tc = tcase_create("tdoa_overlap");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_answer_is_the_detected_call);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
