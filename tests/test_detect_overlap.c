/* test_detect_overlap.c — detect's overlapping calls (apps/detect/refine.h
 * det_refine_overlaps, through the pipeline of tests/detect_rig.h): two
 * species' calls overlapping, both found and timed; what is left of a
 * subtracted call invents no other; a call beginning at an event's end is
 * not matched early; a pulse train under a louder chirp named right; and
 * the same species calling again within its own call, found where its
 * template does not resemble itself at that shift. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "apps/detect/refine.h"
#include "tests/check_run.h"
#include "tests/detect_rig.h"

START_TEST(pipeline_overlapping_calls_both_found)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	size_t n = (size_t)(20 * RATE);
	float *x = g_new(float, n);
	int both = 0, trials = 0;
	for (int seed = 1; seed <= 6; seed++) {
		gsl_rng_set(g, (unsigned long)seed);
		rig_noise(g, x, n, 0.003);
		/* pulse train 1 at 5 s and the chirp 30-120 ms later; and
		 * pulse train 2 at 12 s with pulse train 1 40-100 ms later */
		double d1 = 0.03 + 0.09 * gsl_rng_uniform(g), d2 = 0.04 + 0.06 * gsl_rng_uniform(g);
		rig_add_call(&r, x, n, 0, 0.2, 5.0);
		rig_add_call(&r, x, n, 2, 0.15, 5.0 + d1);
		rig_add_call(&r, x, n, 1, 0.2, 12.0);
		rig_add_call(&r, x, n, 0, 0.1, 12.0 + d2);
		rig_found f[16];
		int nf = rig_run(&r, x, n, f, 16);
		struct {
			double t;
			int tmpl;
		} want[] = {{5.0, 1}, {5.0 + d1, 3}, {12.0, 2}, {12.0 + d2, 1}};
		for (int w = 0; w < 4; w += 2) {
			int ok = 0;
			for (int k = 0; k < nf; k++)
				for (int v = w; v < w + 2; v++)
					if (f[k].tmpl == want[v].tmpl && fabs(f[k].onset / RATE - want[v].t) < 1e-4)
						ok |= 1 << (v - w);
			both += ok == 3;
			trials++;
		}
		/* and nothing else: no template invented a third call */
		if (nf > 4)
			for (int k = 0; k < nf; k++)
				fprintf(stderr, "  seed %d found %d: t %.5f template %d\n", seed, k, f[k].onset / RATE, f[k].tmpl);
		ck_assert_int_le(nf, 4);
	}
	fprintf(stderr, "overlaps: both calls found (onset within 0.1 ms) in %d of %d pairs\n", both, trials);
	ck_assert_int_ge(both, trials - 1);

	/* Very little noise (ENR ~70 dB) and a card 40 ppm fast: what is left
	 * of a subtracted call must not turn into calls of other templates;
	 * and the same species calling twice within one energy event (0.3 s
	 * apart, gap bridged by the hangover) gives two events. */
	rig_card_skew = 40e-6;
	int extra = 0, twice = 0;
	for (int seed = 1; seed <= 4; seed++) {
		gsl_rng_set(g, (unsigned long)(100 + seed));
		rig_noise(g, x, n, 0.0003);
		rig_add_call(&r, x, n, 0, 0.3, 4.0);
		rig_add_call(&r, x, n, 0, 0.3, 4.3);
		rig_add_call(&r, x, n, 2, 0.3, 10.0);
		/* two events, the first one's clip reaching into the second call */
		rig_add_call(&r, x, n, 0, 0.3, 7.0);
		rig_add_call(&r, x, n, 0, 0.3, 7.42);
		rig_found f[16];
		int nf = rig_run(&r, x, n, f, 16);
		int got[4] = {0};
		for (int k = 0; k < nf; k++) {
			double tt = f[k].onset / (RATE * (1 + rig_card_skew));
			if (f[k].tmpl == 1 && fabs(tt - 4.0) < 1e-4)
				got[0] = 1;
			else if (f[k].tmpl == 1 && fabs(tt - 4.3) < 1e-4)
				got[1] = 1;
			else if (f[k].tmpl == 3 && fabs(tt - 10.0) < 1e-4)
				got[2] = 1;
			else if (f[k].tmpl == 1 && (fabs(tt - 7.0) < 1e-4 || fabs(tt - 7.42) < 1e-4))
				got[3]++;
			else {
				extra++;
				fprintf(stderr, "  skewed seed %d: extra event at %.5f s, template %d (coarse %.3f-%.3f)\n", seed, tt,
					f[k].tmpl, f[k].coarse / RATE, f[k].end / RATE);
			}
		}
		twice += got[0] && got[1];
		ck_assert(got[2]);
		ck_assert_int_eq(got[3], 2);
	}
	rig_card_skew = 0;
	fprintf(stderr, "skewed card at 70 dB: %d extra events, repeated call found %d of 4\n", extra, twice);
	ck_assert_int_eq(extra, 0);
	ck_assert_int_ge(twice, 3);

	/* A call that starts after the event it follows ends, its first
	 * pulses in that event's clip: matched there as an overlapping call,
	 * pulses early (the chaos soak's ghost on node 3: the frog's pulse
	 * train 150 ms early behind a chirp, stated to 0.02 samples; 3 such in
	 * these 24 runs before the halves' check).  Each call once, where it
	 * is, and nothing else. */
	int ghosts = 0;
	for (int k = 0; k < 4; k++) {
		double gap = 0.34 + 0.02 * k;
		for (int seed = 1; seed <= 3; seed++) {
			gsl_rng_set(g, (unsigned long)(seed + 10 * (17 + k)));
			rig_noise(g, x, n, 0.003);
			rig_add_call(&r, x, n, 2, 0.3, 5.0);
			rig_add_call(&r, x, n, 0, 0.2, 5.0 + gap);
			rig_add_call(&r, x, n, 0, 0.3, 12.0);
			rig_add_call(&r, x, n, 0, 0.2, 12.0 + gap);
			rig_found f[16];
			int nf = rig_run(&r, x, n, f, 16);
			for (int j = 0; j < nf; j++) {
				double tt = f[j].onset / RATE;
				int ok = (f[j].tmpl == 3 && fabs(tt - 5.0) < 1e-4) ||
					 (f[j].tmpl == 1 && (fabs(tt - 5.0 - gap) < 1e-4 || fabs(tt - 12.0) < 1e-4 || fabs(tt - 12.0 - gap) < 1e-4));
				if (!ok)
					fprintf(stderr, "  gap %.2f seed %d: a call at %.5f s, template %d, s.e. %.3f samples\n", gap, seed, tt,
						f[j].tmpl, f[j].se);
				ghosts += !ok;
			}
		}
	}
	fprintf(stderr, "calls beginning at an event's end: %d ghosts in 12 runs\n", ghosts);
	ck_assert_int_eq(ghosts, 0);

	/* A pulse train under a louder chirp 54 ms later (bench/field's exact
	 * row at 16 s, at the nodes near the chirp): the train's match
	 * explains under a fifth of the energy under it, and the envelope of
	 * the two together is the chirp's (the envelope named the train so
	 * at three nodes), but the chirp beyond the search window explains
	 * much of its own span: the best match names the train (0 of 6 when
	 * only the window was looked at). */
	int named = 0;
	for (int seed = 1; seed <= 6; seed++) {
		gsl_rng_set(g, (unsigned long)(500 + seed));
		rig_noise(g, x, n, 0.003);
		rig_add_call(&r, x, n, 0, 0.08, 5.0);
		rig_add_call(&r, x, n, 2, 0.3, 5.054);
		rig_found f[16];
		int nf = rig_run(&r, x, n, f, 16), got = 0;
		for (int j = 0; j < nf; j++)
			got |= (f[j].tmpl == 1 && fabs(f[j].onset - 5.0 * RATE) < fmax(1.6, 4 * f[j].se)) |
			       (f[j].tmpl == 3 && fabs(f[j].onset - 5.054 * RATE) < fmax(1.6, 4 * f[j].se)) << 1;
		named += got == 3;
		if (got != 3)
			for (int j = 0; j < nf; j++)
				fprintf(stderr, "  seed %d: %.5f s template %d se %.3f\n", seed, f[j].onset / RATE, f[j].tmpl, f[j].se);
	}
	fprintf(stderr, "a pulse train under a louder chirp: both named and timed (within 4 s.e.) in %d of 6\n", named);
	ck_assert_int_ge(named, 5);
	g_free(x);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

/* The same species calling again before its first call ended (bench/field's
 * overlap row: two frogs of one kind 50-150 ms apart, whose second calls
 * were all lost).  After the first call is subtracted, the same template
 * matched again half a call or less away used to be refused as the first
 * call's side peak (a periodic call resembles itself one pulse interval
 * off); it is one only where the template resembles itself at that
 * shift.  Pulse train 1 (10 pulses of 6 ms every 30 ms) again 50-200 ms
 * later, its pulses between the first's, and the chirp again 60-90 ms
 * later: both calls found and timed (6 of 24 before: the 170 and 200 ms
 * cases); where the second call's pulses fall on the first's (90 and 150
 * ms: its template's side peaks) nothing that is not a call is found. */
START_TEST(the_same_species_calling_again_within_its_call)
{
	rig r;
	rig_init(&r);
	/* The template against itself: whole at 0; nine pulses of ten a pulse
	 * interval off, half at five; nothing between its pulses or past its
	 * end; the chirp only near 0. */
	ck_assert_double_eq_tol(det_refiner_self_similarity(r.ref, 1, 0), 1, 1e-9);
	ck_assert_double_eq_tol(det_refiner_self_similarity(r.ref, 1, 0.030 * RATE), 0.9, 0.02);
	ck_assert_double_eq_tol(det_refiner_self_similarity(r.ref, 1, 0.150 * RATE), 0.5, 0.02);
	ck_assert_double_lt(det_refiner_self_similarity(r.ref, 1, 0.050 * RATE), 0.01);
	ck_assert_double_eq(det_refiner_self_similarity(r.ref, 1, 0.4 * RATE), 0);
	ck_assert_double_lt(det_refiner_self_similarity(r.ref, 3, 0.060 * RATE), DET_OVERLAP_SELF);
	ck_assert_double_eq(det_refiner_self_similarity(r.ref, 9, 0), 0);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	size_t n = (size_t)(10 * RATE);
	float *x = g_new(float, n);
	struct {
		int tmpl;
		double d, a1, a2;
	} cases[] = {{0, 0.05, 0.2, 0.15}, {0, 0.10, 0.15, 0.2}, {0, 0.07, 0.2, 0.2}, {0, 0.13, 0.2, 0.1}, {0, 0.17, 0.1, 0.2}, {0, 0.20, 0.2, 0.15}, {2, 0.06, 0.2, 0.15}, {2, 0.09, 0.15, 0.2}};
	int both = 0, trials = 0, extra = 0;
	for (unsigned c = 0; c < G_N_ELEMENTS(cases); c++)
		for (int seed = 1; seed <= 3; seed++) {
			gsl_rng_set(g, (unsigned long)(700 + 10 * c + seed));
			rig_noise(g, x, n, 0.003);
			rig_add_call(&r, x, n, cases[c].tmpl, cases[c].a1, 3.0);
			rig_add_call(&r, x, n, cases[c].tmpl, cases[c].a2, 3.0 + cases[c].d);
			rig_found f[16];
			int nf = rig_run(&r, x, n, f, 16), got = 0;
			for (int k = 0; k < nf; k++) {
				int id = cases[c].tmpl + 1;
				if (f[k].tmpl == id && fabs(f[k].onset / RATE - 3.0) < 1e-4)
					got |= 1;
				else if (f[k].tmpl == id && fabs(f[k].onset / RATE - 3.0 - cases[c].d) < 1e-4)
					got |= 2;
				else {
					extra++;
					fprintf(stderr, "  template %d, %.0f ms apart, seed %d: a call at %.5f s, template %d\n", id,
						cases[c].d * 1e3, seed, f[k].onset / RATE, f[k].tmpl);
				}
			}
			both += got == 3;
			trials++;
			if (got != 3)
				fprintf(stderr, "  template %d, %.0f ms apart, seed %d: found %s\n", cases[c].tmpl + 1,
					cases[c].d * 1e3, seed, got == 1 ? "the first only" : got == 2 ? "the second only"
												       : "neither");
		}
	/* On its side peaks the second call cannot be told from what is left
	 * of the first: the first is found, nothing else is invented, and a
	 * call slipped by a pulse interval (the two calls' coinciding pulses
	 * outweigh the first's own: seen once in these six, 150 ms apart) is
	 * counted — a known limit of a periodic template under its own
	 * species' overlapping call. */
	int side_extra = 0, slipped = 0;
	const double side[] = {0.09, 0.15};
	for (unsigned c = 0; c < G_N_ELEMENTS(side); c++)
		for (int seed = 1; seed <= 3; seed++) {
			gsl_rng_set(g, (unsigned long)(800 + 10 * c + seed));
			rig_noise(g, x, n, 0.003);
			rig_add_call(&r, x, n, 0, 0.2, 3.0);
			rig_add_call(&r, x, n, 0, 0.2, 3.0 + side[c]);
			rig_found f[16];
			int nf = rig_run(&r, x, n, f, 16);
			for (int k = 0; k < nf; k++) {
				double t = f[k].onset / RATE, off = fmin(fabs(t - 3.0), fabs(t - 3.0 - side[c]));
				slipped += f[k].tmpl == 1 && off >= 1e-4 && fabs(off - 0.030) < 1e-4;
				int ok = f[k].tmpl == 1 && (off < 1e-4 || fabs(off - 0.030) < 1e-4);
				if (!ok)
					fprintf(stderr, "  side peak %.0f ms, seed %d: a call at %.5f s, template %d\n", side[c] * 1e3,
						seed, t, f[k].tmpl);
				side_extra += !ok;
			}
		}
	fprintf(stderr, "the same species again within its call: both found in %d of %d, %d others; on its side peaks "
			"%d others, %d slipped by a pulse\n",
		both, trials, extra, side_extra, slipped);
	ck_assert_int_ge(both, trials - 2);
	ck_assert_int_eq(extra, 0);
	ck_assert_int_eq(side_extra, 0);
	ck_assert_int_le(slipped, 1);
	g_free(x);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

/* Varied calls of another kind overlapping (bench/field's variation row:
 * every parameter x (1 + 0.05 g)): the 2.6 kHz pulse train 40-140 ms into
 * the chirp, or 100-250 ms after the 1.8 kHz train's start, the first
 * call 20-35 dB over the noise in the profile's band and the second
 * 12-25 dB.  No template's match explains a varied call (2-3 % of the
 * residual), so det_refine_overlaps finds none of the second calls; its
 * own band's envelope and edge (overlap_env.h) find and time it.  Counted:
 * second calls found (template 2 within 3 ms), their onsets' z against the
 * wave's start, and anything else found; and the same calls alone, where
 * nothing but the call may be found. */
START_TEST(varied_calls_of_another_kind_overlapping)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	size_t n = (size_t)(3 * RATE);
	float *x = g_new(float, n);
	double band = (r.prof.f_hi_hz - r.prof.f_lo_hz) / (RATE / 2);
	int found = 0, trials = 0, beyond3 = 0, extra = 0, alone_extra = 0, found_by[2] = {0, 0};
	double worst = 0;
	for (int seed = 1; seed <= 40; seed++) {
		gsl_rng_set(g, (unsigned long)(1300 + seed));
		int first = seed % 2 ? 2 : 0; /* the chirp, or pulse train 1 */
		dsp_wave *w1 = rig_varied_wave(g, first, 0.05), *w2 = rig_varied_wave(g, 1, 0.05);
		double d = first == 2 ? 0.04 + 0.10 * gsl_rng_uniform(g) : 0.10 + 0.15 * gsl_rng_uniform(g);
		double snr1 = 20 + 15 * gsl_rng_uniform(g), snr2 = 12 + 13 * gsl_rng_uniform(g);
		double p1 = 0, p2 = 0;
		for (int i = 0; i < (int)(0.2 * RATE); i++) {
			p1 += pow(dsp_wave_eval(w1, i / RATE), 2);
			p2 += pow(dsp_wave_eval(w2, i / RATE), 2);
		}
		p1 /= 0.2 * RATE;
		p2 /= 0.2 * RATE;
		double t1 = 1.0 + gsl_rng_uniform(g) / RATE, t2 = t1 + d;
		for (int alone = 0; alone < 2; alone++) {
			rig_noise(g, x, n, 1.0);
			rig_add_wave(w1, x, n, sqrt(pow(10, snr1 / 10) * band / p1), t1);
			if (!alone)
				rig_add_wave(w2, x, n, sqrt(pow(10, snr2 / 10) * band / p2), t2);
			rig_found f[16];
			int nf = rig_run(&r, x, n, f, 16), got = 0;
			for (int k = 0; k < nf; k++) {
				double t = f[k].onset / RATE;
				if (fabs(t - t1) < 0.04 && !(got & 1)) {
					got |= 1; /* the first call (its own tests time it; a varied chirp's onset may lie 20 ms off) */
					continue;
				}
				if (!alone && f[k].tmpl == 2 && fabs(t - t2) < 0.003 && !(got & 2)) {
					double z = (f[k].onset - t2 * RATE) / f[k].se;
					worst = fmax(worst, fabs(z));
					beyond3 += fabs(z) > 3;
					got |= 2;
					continue;
				}
				fprintf(stderr, "  seed %d%s: a call at %+.1f ms from the second, template %d\n", seed,
					alone ? " (alone)" : "", (t - t2) * 1e3, f[k].tmpl);
				if (alone)
					alone_extra++;
				else
					extra++;
			}
			if (!alone && !(got & 2) && getenv("RIG_DEBUG")) {
				fprintf(stderr, "  seed %d: first t%d at %.0f, second at %.0f, %.0f / %.0f dB: second not found; found", seed,
					first + 1, t1 * RATE, t2 * RATE, snr1, snr2);
				for (int k = 0; k < nf; k++)
					fprintf(stderr, " t%d@%+.1fms", f[k].tmpl, (f[k].onset / RATE - t2) * 1e3);
				fprintf(stderr, "\n");
			}
			if (!alone) {
				found += (got & 2) != 0;
				found_by[first == 2] += (got & 2) != 0;
				trials++;
			}
		}
		dsp_wave_free(w1);
		dsp_wave_free(w2);
	}
	fprintf(stderr,
		"varied calls of another kind overlapping: the second found and timed in %d of %d (%d of %d after the 1.8 kHz "
		"train, %d of %d under the chirp; %d beyond 3 s.e., worst %.2f); %d others; the first alone: %d others\n",
		found, trials, found_by[0], trials / 2, found_by[1], trials / 2, beyond3, worst, extra, alone_extra);
	ck_assert_int_ge(found, (int)ceil(0.6 * trials));
	ck_assert_int_le(beyond3, (int)ceil(0.05 * found));
	ck_assert_int_eq(extra, 0);
	ck_assert_int_eq(alone_extra, 0);
	g_free(x);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("detect_overlap");
	TCase *tc = tcase_create("detect_overlap");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, pipeline_overlapping_calls_both_found);
	tcase_add_test(tc, the_same_species_calling_again_within_its_call);
	tcase_add_test(tc, varied_calls_of_another_kind_overlapping);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
