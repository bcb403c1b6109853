/* test_tdoa_slip.c — a pair on a side lobe of its correlation is repaired
 * (apps/collab/tdoa.c repair_slip; issue 12: candidates, not one peak).
 *
 * The soak's world (sim/scenarios/default.ini) without the rest of the
 * pipeline: six microphones 1 m up on a flat 30 x 30 m array, the chirp of
 * source 3 (1.2-2.4 kHz, 250 ms) from the ground at (12, 26), 3.3 m from
 * node 6, at the scenario's level over its noise floor; the source's height
 * untold and the speed of sound from an unmeasured temperature (collab's
 * default, 20 +- 10 C), as chorus-demo tells collab.  Heard by five of the
 * nodes (node 1 or 2 not: down, or cut off), the steered response's best
 * put the pair (node 6, node 4) on a side lobe, 519 us off, with
 * coherence 0.34 against 0.99 on every other pair, and the solve rejected
 * a good arrival: `untested` on every call (the lost call of the chaos
 * soak).  With the repair, every call is located, inside its 99.9 %
 * ellipse (the stated covariance is a claim: Mahalanobis, not a slack);
 * with all six nodes nothing changes.
 *
 * onsets_slipped_at_two_nodes: the gated best on the flank of the call's
 * own peak, which the onsets' gate cut (tdoa.c flank_radius_m).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/collab/tdoa.h"
#include "apps/dsp/air.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"

static const double mics[6][3] = {{0, 0, 1}, {29.9, 0, 1}, {30, 30, 1}, {0, 30, 1}, {15, 4.9, 1}, {15, 25, 1}};

/* How a call is heard and solved (one_call). */
typedef struct {
	double f_lo_hz, f_hi_hz; /* the band detect states for the template */
	double slip_s[6];        /* each node's onset this far off (a template matched a pulse late) */
	int listed;              /* each slipped onset lists its true start among its alternatives (and a
				  * decoy 12 ms later), as detect's onset_alt does */
	double flank_radius_m;   /* tdoa_params.flank_radius_m */
	double err_m;            /* out: the answer's horizontal error, m (ok or not; NAN without one) */
} call_how;

/* One call of wave w at src heard by every node but `drop` (0-based;
 * -1: all).  *m2: its Mahalanobis^2 when ok.  Returns 1 ok, 0 not. */
static int one_call_how(gsl_rng *g, const dsp_wave *w, const double src[3], int drop, double *m2, call_how *how)
{
	const double R = 16000, c = 343; /* the world's */
	tdoa_input in[6];
	float *x[6];
	int n = 0;
	for (int j = 0; j < 6; j++) {
		if (j == drop)
			continue;
		double r = sqrt(pow(src[0] - mics[j][0], 2) + pow(src[1] - mics[j][1], 2) + pow(src[2] - mics[j][2], 2));
		double arrive = r / c, start = arrive - 0.05 - gsl_rng_uniform(g) / R;
		size_t len = (size_t)(0.45 * R);
		x[n] = g_new(float, len);
		/* level_dbfs 4 at 1 m, spherical spreading; noise -62 dBFS */
		double amp = pow(10, 4 / 20.0) / r, noise = pow(10, -62 / 20.0);
		for (size_t i = 0; i < len; i++)
			x[n][i] = (float)(amp * dsp_wave_eval(w, start + i / R - arrive) + gsl_ran_gaussian(g, noise));
		double st = start * 1e9;
		in[n] = (tdoa_input){.node = (uint32_t)(j + 1),
				     .x = x[n],
				     .n = len,
				     .rate_hz = R,
				     .t0_ns = 1000000000000LL + (int64_t)floor(st),
				     .t0_frac_ns = st - floor(st),
				     .t0_se_ns = 500,
				     .onset_ns = 1000000000000LL + llround((arrive + how->slip_s[j] + gsl_ran_gaussian(g, 20e-6)) * 1e9),
				     .onset_se_ns = 20000,
				     .onset_crb_se_ns = 2000,
				     .snr_db = 40 - r / 5};
		memcpy(in[n].mic_m, mics[j], sizeof in[n].mic_m);
		if (how->listed && how->slip_s[j] != 0) {
			in[n].n_alt = 2;
			in[n].onset_alt_ns[0] = 12e6;
			in[n].onset_alt_ns[1] = -how->slip_s[j] * 1e9;
		}
		n++;
	}
	tdoa_params p;
	tdoa_params_default(&p);
	p.f_lo_hz = how->f_lo_hz;
	p.f_hi_hz = how->f_hi_hz;
	p.flank_radius_m = how->flank_radius_m;
	double dc_dt;
	p.c_m_s = dsp_speed_of_sound_m_s(20, &dc_dt);
	p.c_sd_m_s = 10 * dc_dt;
	tdoa_result r;
	int rc = tdoa_locate(in, n, &p, &r);
	for (int j = 0; j < n; j++)
		g_free(x[j]);
	how->err_m = rc == 0 ? hypot(r.loc.pos_m[0] - src[0], r.loc.pos_m[1] - src[1]) : NAN;
	if (rc < 0 || r.loc.status != DSP_LOC_OK || r.ambiguous)
		return 0;
	double ex = r.loc.pos_m[0] - src[0], ey = r.loc.pos_m[1] - src[1];
	double a = r.loc.cov[0][0], b = r.loc.cov[0][1], d = r.loc.cov[1][1];
	*m2 = (d * ex * ex - 2 * b * ex * ey + a * ey * ey) / (a * d - b * b);
	return 1;
}

/* The chirp as detect states it, onsets right. */
static int one_call(gsl_rng *g, const dsp_wave *w, const double src[3], int drop, double *m2)
{
	call_how how = {.f_lo_hz = 1121, .f_hi_hz = 2552, .flank_radius_m = 3};
	return one_call_how(g, w, src, drop, m2, &how);
}

START_TEST(a_side_lobe_pick_is_repaired)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *w = dsp_wave_new(&wp, 16000, NULL);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 1789);
	const double src[3] = {12, 26, 0};
	const double q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	const int calls = 10;
	for (int drop = -1; drop < 2; drop++) {
		int ok = 0, inside = 0;
		for (int k = 0; k < calls; k++) {
			double m2 = INFINITY;
			if (one_call(g, w, src, drop, &m2)) {
				ok++;
				inside += m2 <= q999;
			}
		}
		printf("tdoa slip: %s%d: %d of %d calls ok, %d inside their 99.9 %% ellipse\n", drop < 0 ? "nodes 1-" : "without node ",
		       drop < 0 ? 6 : drop + 1, ok, calls, inside);
		ck_assert_int_eq(ok, calls);
		/* P(one of 10 honest answers outside 99.9 %) = 1 % */
		ck_assert_int_ge(inside, calls - 1);
	}
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST


/* Onsets a little too far off at two nodes (a template matched another
 * syllable of a recorded call: bench/field's duck, 26 ms off at some
 * nodes, rendered from that row's world with detect's own onsets and
 * collab's clip spans, was answered `ok` 1.0-2.4 m off, stated to 1-2
 * cm, in 5 of 15 calls).  The pulse train and the chirp from 12 places,
 * two nodes' onsets 21 and 26 ms late (the gate's half-width is 4 x 5
 * ms): 26 ms put the call outside the gate, and the best left inside was a
 * side lobe of its correlation, answered `ok` 0.8-1.9 m off (with 20
 * places: 6 and 2 of 20); the peak next to it replaces it now, and the
 * onsets' tests refuse the answer: never `ok` farther than 0.5 m.  At 21
 * ms, where the gate only grazes the peak, as many are located as before
 * or more, and no more are wrong (20 places: 17 -> 18 and 17 -> 19 ok;
 * one pulse-train answer 0.52 m off either way, a limit of its own). */
START_TEST(onsets_slipped_at_two_nodes)
{
	dsp_wave_params wps[2] = {{.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10},
				  {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10}};
	const double bands[2][2] = {{1620, 1980}, {1121, 2552}}, slips[2] = {0.021, 0.026};
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int wrong_before = 0;
	for (int wi = 0; wi < 2; wi++) {
		dsp_wave *w = dsp_wave_new(&wps[wi], 16000, NULL);
		for (int si = 0; si < 2; si++) {
			int ok[3] = {0, 0, 0}, wrong[3] = {0, 0, 0};
			for (int flank = 0; flank < 3; flank++) {
				gsl_rng_set(g, 4242);
				for (int k = 0; k < 12; k++) {
					double src[3] = {3 + 24 * gsl_rng_uniform(g), 3 + 24 * gsl_rng_uniform(g), 0};
					int a = (int)gsl_rng_uniform_int(g, 6), b = (a + 1 + (int)gsl_rng_uniform_int(g, 5)) % 6;
					call_how how = {.f_lo_hz = bands[wi][0], .f_hi_hz = bands[wi][1], .flank_radius_m = flank ? 3 : 0, .listed = flank == 2};
					how.slip_s[a] = how.slip_s[b] = slips[si];
					double m2;
					int r = one_call_how(g, w, src, -1, &m2, &how);
					ok[flank] += r && how.err_m < 0.5;
					wrong[flank] += r && how.err_m >= 0.5;
				}
			}
			printf("%s, onsets %.0f ms late at two nodes: without the flank's peak %d ok, %d ok farther than 0.5 m; "
			       "with it %d ok, %d farther; and the true starts listed as alternatives %d ok, %d farther\n",
			       wi ? "chirp" : "pulse train", slips[si] * 1e3, ok[0], wrong[0], ok[1], wrong[1], ok[2], wrong[2]);
			ck_assert_int_eq(wrong[2], 0);
			ck_assert_int_ge(ok[2], ok[1]);
			if (si == 1) /* the slipped onsets' alternatives locate the calls the gate lost */
				ck_assert_int_ge(ok[2], 12 - 2);
			wrong_before += si == 1 ? wrong[0] : 0;
			ck_assert_int_le(wrong[1], wrong[0]);
			if (si == 1)
				ck_assert_int_eq(wrong[1], 0);
			ck_assert_int_ge(ok[1], ok[0]);
		}
		dsp_wave_free(w);
	}
	/* the premise: 26 ms late, the gated best alone answered wrong */
	ck_assert_int_ge(wrong_before, 2);
	gsl_rng_free(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tdoa_slip");
	TCase *tc = tcase_create("tdoa_slip");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_side_lobe_pick_is_repaired);
	tcase_add_test(tc, onsets_slipped_at_two_nodes);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
