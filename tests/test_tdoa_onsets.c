/* test_tdoa_onsets.c — the detected onsets as a check on the clips'
 * correlation and as the timing where the clips do not correlate
 * (apps/collab/tdoa_onsets.h; issue 12, bench/field's room row).
 *
 * reverberant_room: the room row's aviary (12 x 10 x 4 m, walls absorbing
 * 20 %, image sources to the third order: sim/world.h renders the clips as
 * chorus-sim's microphones hear them) and its pulse-train frog at
 * (8.5, 6, 2.5), heard by the row's six nodes at 16 kHz.  The onsets are
 * what detect states for this call there (its leading edge: s.e. 0.4 ms),
 * drawn about the true arrivals with that error.  The correlation of the
 * reverberant clips finds no position (every call fails without the
 * onsets); timed by the onsets, every call is located, inside its 99.9 %
 * ellipse (Mahalanobis: the stated covariance is the claim).
 *
 * onsets_refuse_and_replace / onsets_that_fit_nothing_do_not: clips of a
 * chirp from one place.  Onsets that all put the call 3 m away, with
 * 0.2 ms errors, refuse the correlation's answer and time the call
 * themselves; onsets two of which are another caller's (8 and 30 ms off,
 * as in the overlap row) fit no position, and the correlation's answer
 * stands.
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
#include "apps/collab/tdoa_onsets.h"
#include "apps/collab/tdoa_solve.h"
#include "apps/dsp/air.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"
#include "tests/tdoa_fixture.h"
#include "tests/world_fixture.h"

#define RATE 16000.0

/* Mahalanobis^2 of the horizontal error of r's answer from truth. */
static double mahal2(const tdoa_result *r, const double truth[2])
{
	double ex = r->loc.pos_m[0] - truth[0], ey = r->loc.pos_m[1] - truth[1];
	double a = r->loc.cov[0][0], b = r->loc.cov[0][1], d = r->loc.cov[1][1];
	return (d * ex * ex - 2 * b * ex * ey + a * ey * ey) / (a * d - b * b);
}

static const char room_text[] = "[world]\nspeed_of_sound_m_s = 343\nnoise_dbfs = -62\nseed = 2024\nduration_s = 60\n"
				"air_absorption = false\n"
				"[room]\nsize = 12, 10, 4\nabsorption = 0.2\nmax_order = 3\n"
				"[node.1]\nposition_m = 1, 1, 2\n[node.2]\nposition_m = 11, 1, 2\n"
				"[node.3]\nposition_m = 11, 9, 2\n[node.4]\nposition_m = 1, 9, 2\n"
				"[node.5]\nposition_m = 6, 2, 3\n[node.6]\nposition_m = 6, 8, 3\n"
				"[source.1]\nposition_m = 8.5, 6, 2.5\nwaveform = pulse_train\ncarrier_hz = 2600\n"
				"pulse_ms = 3\npulse_interval_ms = 12\npulses = 20\nlevel_dbfs = 3\n"
				"call_times_s = 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35\n";

/* Call k of the room's source as collab gets it: each node's clip from
 * 20 ms before its onset, 400 ms long, the onset drawn about the true
 * arrival with s.e. se_s. */
static int room_call(const sim_world *w, size_t k, gsl_rng *g, double se_s, tdoa_input in[6], float *x[6])
{
	for (int j = 0; j < 6; j++) {
		int node = j + 1;
		double arrive = sim_world_arrival_s(w, node, 0, 0, k);
		double onset = arrive + gsl_ran_gaussian(g, se_s);
		int64_t f0 = (int64_t)floor(sim_world_frame_at(w, node, RATE, onset - 0.020));
		size_t len = (size_t)(0.4 * RATE);
		x[j] = g_new(float, len);
		for (size_t i = 0; i < len; i++)
			x[j][i] = (float)sim_world_sample(w, node, 0, RATE, f0 + (int64_t)i);
		static const double room_mics[6][3] = {{1, 1, 2}, {11, 1, 2}, {11, 9, 2}, {1, 9, 2}, {6, 2, 3}, {6, 8, 3}};
		in[j] = tdoa_fixture_input(node, x[j], len, RATE, sim_world_frame_time_s(w, node, RATE, f0), onset, se_s, 30 - j,
					   room_mics[j]);
	}
	return 6;
}

static void room_params(tdoa_params *p)
{
	tdoa_params_default(p);
	p->f_lo_hz = 2025; /* the band detect states for this template */
	p->f_hi_hz = 3200;
	double dc_dt;
	p->c_m_s = dsp_speed_of_sound_m_s(20, &dc_dt);
	p->c_sd_m_s = 10 * dc_dt;
}

START_TEST(reverberant_room)
{
	fixture f = fixture_make("room.ini", room_text);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 42);
	const double truth[2] = {8.5, 6}, q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	size_t calls = sim_world_n_calls(f.w, 0);
	int corr_ok = 0, ok = 0, coarse = 0, inside = 0;
	for (size_t k = 0; k < calls; k++) {
		tdoa_input in[6];
		float *x[6];
		int n = room_call(f.w, k, g, 0.4e-3, in, x);
		tdoa_params p;
		room_params(&p);
		tdoa_result r;
		p.onset_timing = 0;
		int rc = tdoa_locate(in, n, &p, &r);
		corr_ok += rc == 0 && r.loc.status == DSP_LOC_OK && !r.ambiguous;
		p.onset_timing = 1;
		rc = tdoa_locate(in, n, &p, &r);
		if (rc == 0 && r.loc.status == DSP_LOC_OK && !r.ambiguous && !r.coarse) {
			ck_assert(r.from_onsets);
			ok++;
			double m2 = mahal2(&r, truth);
			inside += m2 <= q999;
			printf("room call %zu: (%.3f, %.3f) m, s.d. (%.3f, %.3f) m, mahal2 %.2f\n", k, r.loc.pos_m[0],
			       r.loc.pos_m[1], sqrt(r.loc.cov[0][0]), sqrt(r.loc.cov[1][1]), m2);
		} else {
			coarse += rc == 0 && r.loc.status == DSP_LOC_OK && r.coarse;
			printf("room call %zu: rc %d status %d coarse %d: %s\n", k, rc, r.loc.status, r.coarse, r.why);
		}
		for (int j = 0; j < n; j++)
			g_free(x[j]);
	}
	printf("room: %zu calls, %d ok by the correlation alone, %d ok timed by the onsets (%d coarse), %d inside 99.9 %%\n",
	       calls, corr_ok, ok, coarse, inside);
	/* The premise: reverberation defeats the clips' correlation here. */
	ck_assert_int_le(corr_ok, 1);
	/* Every call timed by its onsets: located, or coarse where the
	 * source's unknown height leaves a 95 % ellipse over 1 m (2 of 12
	 * with seed 42); one of 12 honest answers outside its 99.9 % ellipse
	 * has probability 1.2 %. */
	ck_assert_int_eq(ok + coarse, (int)calls);
	ck_assert_int_ge(ok, 3 * (int)calls / 4);
	ck_assert_int_ge(inside, ok - 1);
	gsl_rng_free(g);
	fixture_drop(f);
}
END_TEST

static const double mics[6][3] = {{0, 0, 1}, {29.9, 0, 1}, {30, 30, 1}, {0, 30, 1}, {15, 4.9, 1}, {15, 25, 1}};

/* The chirp from `src` in every clip (free field); the onsets are those of
 * a source at `said` (s.e. se_s), node `off1` and `off2` (-1: none) moved
 * by 30 and 8 ms.  Locates it into *r; returns tdoa_locate's rc. */
static int chirp_call(gsl_rng *g, const dsp_wave *w, const double src[3], const double said[3], double se_s, int off1,
		      int off2, tdoa_result *r)
{
	const double c = 343;
	tdoa_input in[6];
	float *x[6];
	for (int j = 0; j < 6; j++) {
		double d = sqrt(pow(src[0] - mics[j][0], 2) + pow(src[1] - mics[j][1], 2) + pow(src[2] - mics[j][2], 2));
		double ds = sqrt(pow(said[0] - mics[j][0], 2) + pow(said[1] - mics[j][1], 2) + pow(said[2] - mics[j][2], 2));
		double arrive = d / c, start = arrive - 0.05 - gsl_rng_uniform(g) / RATE;
		double onset = ds / c + gsl_ran_gaussian(g, se_s) + (j == off1 ? 0.030 : j == off2 ? -0.008
												   : 0);
		size_t len = (size_t)(0.45 * RATE);
		x[j] = g_new(float, len);
		double amp = pow(10, 4 / 20.0) / d, noise = pow(10, -62 / 20.0);
		for (size_t i = 0; i < len; i++)
			x[j][i] = (float)(amp * dsp_wave_eval(w, start + i / RATE - arrive) + gsl_ran_gaussian(g, noise));
		in[j] = tdoa_fixture_input(j + 1, x[j], len, RATE, start, onset, se_s, 40 - d / 5, mics[j]);
	}
	tdoa_params p;
	tdoa_fixture_chirp_params(&p);
	int rc = tdoa_locate(in, 6, &p, r);
	for (int j = 0; j < 6; j++)
		g_free(x[j]);
	return rc;
}

static dsp_wave *chirp(void)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	return dsp_wave_new(&wp, RATE, NULL);
}

START_TEST(onsets_refuse_and_replace)
{
	dsp_wave *w = chirp();
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 7);
	const double src[3] = {12, 14, 0}, said[3] = {15, 14, 0};
	const double q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	int inside = 0;
	const int calls = 10;
	for (int k = 0; k < calls; k++) {
		tdoa_result r;
		int rc = chirp_call(g, w, src, said, 0.2e-3, -1, -1, &r);
		ck_assert_msg(rc == 0 && r.loc.status == DSP_LOC_OK, "call %d: rc %d status %d: %s", k, rc, r.loc.status, r.why);
		ck_assert_msg(r.from_onsets, "call %d: the correlation's answer (%.2f, %.2f) stood: %s", k, r.loc.pos_m[0],
			      r.loc.pos_m[1], r.why);
		ck_assert_msg(strstr(r.why, "disagree"), "%s", r.why);
		inside += mahal2(&r, said) <= q999;
	}
	ck_assert_int_ge(inside, calls - 1);
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST

START_TEST(onsets_that_fit_nothing_do_not)
{
	dsp_wave *w = chirp();
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 8);
	const double src[3] = {12, 14, 0};
	const double q999 = gsl_cdf_chisq_Pinv(0.999, 2);
	int inside = 0;
	const int calls = 10;
	for (int k = 0; k < calls; k++) {
		tdoa_result r;
		int rc = chirp_call(g, w, src, src, 0.1e-3, 2, 4, &r);
		ck_assert_msg(rc == 0 && r.loc.status == DSP_LOC_OK && !r.ambiguous, "call %d: rc %d status %d: %s", k, rc,
			      r.loc.status, r.why);
		ck_assert(!r.from_onsets);
		inside += mahal2(&r, src) <= q999;
	}
	ck_assert_int_ge(inside, calls - 1);
	gsl_rng_free(g);
	dsp_wave_free(w);
}
END_TEST

/* The check alone: arrivals equal to the onsets but for a constant (the
 * reference onset's own error) disagree nowhere; two moved by 10 s.e.
 * are named. */
START_TEST(disagreement_counted)
{
	tdoa_input in[5];
	tdoa_result r;
	memset(in, 0, sizeof in);
	memset(&r, 0, sizeof r);
	int idx[5];
	for (int j = 0; j < 5; j++) {
		in[j].node = (uint32_t)(j + 1);
		in[j].onset_ns = TDOA_FIXTURE_T0_NS + j * 1000000LL;
		in[j].onset_se_ns = 100000; /* 0.1 ms */
		r.a_s[j] = j * 1e-3 + 0.7e-3;
		idx[j] = j;
	}
	char why[96];
	ck_assert_int_eq(tdoa_onsets_disagree(in, &r, idx, 5, 5, 0, why, sizeof why), 0);
	r.a_s[1] += 2e-3;
	r.a_s[3] -= 2e-3;
	ck_assert_int_eq(tdoa_onsets_disagree(in, &r, idx, 5, 5, 0, why, sizeof why), 2);
	ck_assert_msg(strstr(why, "node2 +2.00 ms") && strstr(why, "node4 -2.00 ms"), "%s", why);
	/* Over a 0.5 ms floor 2 ms is 3.8 of hypot(0.1, 0.1, 0.5) ms: within
	 * 5, beyond 3. */
	ck_assert_int_eq(tdoa_onsets_disagree(in, &r, idx, 5, 5, 0.5e-3, why, sizeof why), 0);
	ck_assert_int_eq(tdoa_onsets_disagree(in, &r, idx, 5, 3, 0.5e-3, why, sizeof why), 2);
}
END_TEST

/* The joint verdict (tdoa_onsets_joint_q): bench/field's room, a
 * correlation timed on echoes, its arrivals 3.2, -4.4, 3.3 and -1.9 ms
 * from five nodes' onsets (s.e. 0.41-0.51 ms, floor 0.5): one beyond 5
 * s.e. (a slip, for the count), the rest jointly far beyond chance —
 * denied.  Honest onsets (their offsets drawn at their stated errors,
 * 20000 draws): denied at most twice (the test's level is 1e-6; the
 * median and the slip allowance make it a little looser). */
START_TEST(joint_disagreement)
{
	tdoa_input in[5];
	tdoa_result r;
	memset(in, 0, sizeof in);
	memset(&r, 0, sizeof r);
	int idx[5];
	const double se_ms[5] = {0.423, 0.436, 0.49, 0.509, 0.413}, off_ms[5] = {-1.88, 0, -4.44, 3.32, 3.18};
	for (int j = 0; j < 5; j++) {
		in[j].node = (uint32_t)(j + 1);
		in[j].onset_ns = TDOA_FIXTURE_T0_NS + j * 3000000LL;
		in[j].onset_se_ns = se_ms[j] * 1e6;
		r.a_s[j] = j * 3e-3 + off_ms[j] * 1e-3;
		idx[j] = j;
	}
	char why[96];
	ck_assert_int_eq(tdoa_onsets_disagree(in, &r, idx, 5, 5, 0.5e-3, why, sizeof why), 1);
	double q = tdoa_onsets_joint_q(in, &r, idx, 5, 0.5e-3);
	ck_assert_msg(q < TDOA_ONSETS_JOINT_Q, "room case: joint Q %g", q);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 77);
	int denied = 0;
	for (int t = 0; t < 20000; t++) {
		double c = gsl_ran_gaussian(g, 1e-3);
		for (int j = 0; j < 5; j++)
			r.a_s[j] = j * 3e-3 + c + gsl_ran_gaussian(g, se_ms[j] * 1e-3);
		denied += tdoa_onsets_joint_q(in, &r, idx, 5, 0.5e-3) < TDOA_ONSETS_JOINT_Q;
	}
	fprintf(stderr, "joint onsets' verdict: the room's echo-timed answer Q %.2g (denied); honest onsets denied %d of 20000\n", q,
		denied);
	ck_assert_int_le(denied, 2);
	gsl_rng_free(g);
}
END_TEST

/* The covariance's scale for the misfit (tdoa_solve.h tdoa_misfit_scale):
 * bench/field's overlap row, the second caller 6-7 mm off stated to 2 mm
 * with chi2 7.7 on 2 d.o.f. (Q 0.021): scaled by 3.85; a chance misfit
 * (chi2 3 on 2, Q 0.22) is not; separated clips are at any chi2 > dof;
 * below dof, or without a degree of freedom, never. */
START_TEST(misfit_scale)
{
	dsp_loc_result loc;
	memset(&loc, 0, sizeof loc);
	loc.dof = 2;
	loc.chi2 = 7.7;
	ck_assert_double_eq_tol(tdoa_misfit_scale(&loc, 0), 3.85, 1e-12);
	loc.chi2 = 3;
	ck_assert_double_eq(tdoa_misfit_scale(&loc, 0), 1);
	ck_assert_double_eq_tol(tdoa_misfit_scale(&loc, 1), 1.5, 1e-12);
	loc.chi2 = 1.5;
	ck_assert_double_eq(tdoa_misfit_scale(&loc, 1), 1);
	loc.dof = 0;
	loc.chi2 = 50;
	ck_assert_double_eq(tdoa_misfit_scale(&loc, 1), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tdoa_onsets");
	TCase *tc = tcase_create("tdoa_onsets");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, disagreement_counted);
	tcase_add_test(tc, joint_disagreement);
	tcase_add_test(tc, misfit_scale);
	tcase_add_test(tc, onsets_refuse_and_replace);
	tcase_add_test(tc, onsets_that_fit_nothing_do_not);
	tcase_add_test(tc, reverberant_room);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
