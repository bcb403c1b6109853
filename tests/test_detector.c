/* test_detector.c — the energy detector and the onset refiner on synthetic
 * frog calls (analytic, known start times) in seeded white noise: recall,
 * false alarms, floor behaviour, durations, and onset error against its
 * Cramer-Rao prediction. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/dsp/detector.h"
#include "apps/dsp/onset.h"
#include "apps/dsp/stft.h"
#include "apps/dsp/synth.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"

#define RATE 48000.0
#define SIZE 1024
#define HOP 256
#define F_LO 2000.0
#define F_HI 3200.0

/* The simulator's second frog: 3 ms pulses of 2.6 kHz every 12 ms, 20 pulses (231 ms). */
static const dsp_frog FROG = {.carrier_hz = 2600, .pulse_s = 0.003, .interval_s = 0.012, .pulses = 20};

/* SNR convention: the call's mean power over its duration (pulses and gaps)
 * over the noise power in the detector band (white noise of variance 1 has
 * band power (F_HI - F_LO) / (RATE / 2)). */
static double amp_for_snr(const dsp_frog *f, double snr_db)
{
	double duty = f->pulses * f->pulse_s / dsp_frog_length(f);
	double band_noise = (F_HI - F_LO) / (RATE / 2);
	return sqrt(pow(10, snr_db / 10) * band_noise / (dsp_frog_pulse_power(f) * duty));
}

static void params(dsp_det_params *p)
{
	dsp_det_params_default(p);
	p->f_lo_hz = F_LO;
	p->f_hi_hz = F_HI;
	p->on_db = 6;
	p->off_db = 3;
	p->min_dur_s = 0.030;
	p->max_dur_s = 1.0;
	p->hangover_s = 0.030;
}

/* Run x (n samples from index 0) through STFT + detector; events to ev. */
static int detect(const float *x, size_t n, const dsp_det_params *p, dsp_event *ev, int max_ev, dsp_detector **keep)
{
	dsp_stft_params sp;
	dsp_stft_params_default(&sp);
	sp.size = SIZE;
	sp.hop = HOP;
	dsp_stft *s = dsp_stft_new(&sp, 0, NULL);
	dsp_detector *d = dsp_detector_new(p, SIZE, HOP, NULL);
	ck_assert(s && d);
	int ne = 0;
	dsp_frame f;
	for (size_t at = 0; at < n; at += 4800) {
		size_t m = n - at < 4800 ? n - at : 4800;
		ck_assert_int_eq(dsp_stft_push(s, x + at, m), 0);
		while (dsp_stft_next(s, &f)) {
			dsp_event e;
			int r = dsp_detector_feed(d, f.first, dsp_stft_band_power(s, &f, F_LO, F_HI), &e);
			ck_assert_int_ge(r, 0);
			if (r == 1 && ne < max_ev)
				ev[ne++] = e;
		}
	}
	dsp_event e;
	if (dsp_detector_flush(d, &e) == 1 && ne < max_ev)
		ev[ne++] = e;
	dsp_stft_free(s);
	if (keep)
		*keep = d;
	else
		dsp_detector_free(d);
	return ne;
}

static float *noise(gsl_rng *r, size_t n, double sd)
{
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)gsl_ran_gaussian_ziggurat(r, sd);
	return x;
}

#define MAXC 64

/* 60 s of noise with calls every 1.2-2 s at snr_db; returns calls placed. */
static int scene(gsl_rng *r, float *x, size_t n, double snr_db, double *t_call)
{
	int nc = 0;
	double amp = amp_for_snr(&FROG, snr_db);
	for (double t = 1.0 + gsl_rng_uniform(r); t < n / RATE - 1 && nc < MAXC; t += 1.2 + 0.8 * gsl_rng_uniform(r)) {
		t_call[nc++] = t;
		dsp_frog_render(&FROG, amp, t, RATE, x, n);
	}
	return nc;
}

/* Recall and false alarms at snr_db over 60 s. */
static void recall_case(unsigned long seed, double snr_db, double min_recall)
{
	size_t n = (size_t)(60 * RATE);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, seed);
	float *x = noise(r, n, 1.0);
	double t_call[MAXC];
	int nc = scene(r, x, n, snr_db, t_call);
	dsp_det_params p;
	params(&p);
	dsp_event ev[2 * MAXC];
	int ne = detect(x, n, &p, ev, 2 * MAXC, NULL);
	int hit = 0, fa = 0;
	int used[2 * MAXC] = {0};
	for (int c = 0; c < nc; c++) {
		int64_t s = (int64_t)llround(t_call[c] * RATE);
		for (int e = 0; e < ne; e++)
			if (!used[e] && llabs(ev[e].onset - s) <= SIZE) {
				used[e] = 1;
				hit++;
				/* duration within a frame of the truth, SNR near the nominal */
				ck_assert_msg(fabs(ev[e].duration_s - dsp_frog_length(&FROG)) < 1.5 * SIZE / RATE,
					      "duration %g", ev[e].duration_s);
				break;
			}
	}
	for (int e = 0; e < ne; e++) {
		fa += !used[e];
		if (!used[e])
			fprintf(stderr, "  unmatched event onset %.4f s dur %.3f snr %.1f\n", ev[e].onset / RATE, ev[e].duration_s, ev[e].peak_snr_db);
	}

	double recall = (double)hit / nc;
	fprintf(stderr, "detector %g dB: %d calls, recall %.3f, false alarms %d in 60 s\n", snr_db, nc, recall, fa);
	ck_assert_msg(recall >= min_recall, "recall %g", recall);
	ck_assert_msg(fa <= 1, "false alarms %d per minute", fa);
	free(x);
	gsl_rng_free(r);
}

START_TEST(recall_10db)
{
	recall_case(1, 10, 0.95);
	recall_case(2, 10, 0.95);
}
END_TEST

START_TEST(recall_20db)
{
	recall_case(3, 20, 1.0);
}
END_TEST

START_TEST(noise_false_alarms)
{
	/* five minutes of pure noise: at most one false alarm per minute */
	size_t n = (size_t)(300 * RATE);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 99);
	float *x = noise(r, n, 0.3);
	dsp_det_params p;
	params(&p);
	dsp_event ev[64];
	dsp_detector *d;
	int ne = detect(x, n, &p, ev, 64, &d);
	fprintf(stderr, "detector noise: %d false alarms in 5 min\n", ne);
	ck_assert_int_le(ne, 5);
	/* a right floor is never re-learned as too high */
	ck_assert_int_eq(dsp_detector_relearned_low(d), 0);
	/* the floor is the band power of the noise: 0.09 * 1200/24000 */
	double want = 0.09 * (F_HI - F_LO) / (RATE / 2);
	ck_assert_msg(fabs(dsp_detector_floor(d) / want - 1) < 0.1, "floor %g want %g", dsp_detector_floor(d), want);
	dsp_detector_free(d);
	free(x);
	gsl_rng_free(r);
}
END_TEST

START_TEST(floor_frozen_during_call_and_durations)
{
	size_t n = (size_t)(10 * RATE);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 5);
	float *x = noise(r, n, 1.0);
	/* a 0.8 s tone call at 20 dB (frozen floor), a 10 ms blip (too short),
	 * then from 6 s on the background rises 10 dB for good (too long: the
	 * floor must follow it, with no event) */
	double a = sqrt(2 * 100 * (F_HI - F_LO) / (RATE / 2));
	for (size_t i = (size_t)(2 * RATE); i < (size_t)(2.8 * RATE); i++)
		x[i] += (float)(a * sin(2 * M_PI * 2500 * i / RATE));
	for (size_t i = (size_t)(4 * RATE); i < (size_t)(4.01 * RATE); i++)
		x[i] += (float)(a * sin(2 * M_PI * 2500 * i / RATE));
	for (size_t i = (size_t)(6 * RATE); i < n; i++)
		x[i] *= (float)sqrt(10.0);
	dsp_det_params p;
	params(&p);
	dsp_event ev[8];
	dsp_detector *d;
	/* run the first 2.9 s to look at the floor right after the call */
	int ne = detect(x, (size_t)(2.9 * RATE), &p, ev, 8, &d);
	double band = (F_HI - F_LO) / (RATE / 2);
	ck_assert_int_eq(ne, 1);
	ck_assert_msg(fabs(dsp_detector_floor(d) / band - 1) < 0.1, "floor moved during the call: %g", dsp_detector_floor(d) / band);
	ck_assert(fabs(ev[0].duration_s - 0.8) < 1.5 * SIZE / RATE);
	ck_assert_msg(fabs(ev[0].peak_snr_db - 20) < 1.5, "peak snr %g", ev[0].peak_snr_db);
	ck_assert(llabs(ev[0].onset - (int64_t)(2 * RATE)) <= SIZE / 2 + HOP);
	dsp_detector_free(d);
	ne = detect(x, n, &p, ev, 8, &d);
	uint64_t ts, tl;
	dsp_detector_rejected(d, &ts, &tl);
	ck_assert_int_eq(ne, 1);
	ck_assert_int_eq(ts, 1);
	ck_assert_int_eq(tl, 1);
	ck_assert_msg(fabs(dsp_detector_floor(d) / (10 * band) - 1) < 0.2, "floor did not follow the new background: %g",
		      dsp_detector_floor(d) / band);
	dsp_detector_free(d);
	free(x);
	gsl_rng_free(r);
}
END_TEST

/* A loud call inside the warm-up (the first calls a node hears when its
 * services start in a calling chorus) sets the floor 20 dB high; calls at
 * 12 dB from 1.5 s on must still be heard: the floor, undershot by the band
 * power for a warm-up's worth of frames, is re-learned.  Without that, the
 * floor fell by e per floor_tau_s (5 s) and the node was deaf for ~20 s. */
START_TEST(loud_call_in_warmup)
{
	size_t n = (size_t)(8 * RATE);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 17);
	float *x = noise(r, n, 1.0);
	double a = sqrt(2 * 100 * 2 * (F_HI - F_LO) / (RATE / 2)); /* 23 dB tone */
	for (size_t i = (size_t)(0.05 * RATE); i < (size_t)(0.45 * RATE); i++)
		x[i] += (float)(a * sin(2 * M_PI * 2500 * i / RATE));
	double t_call[] = {1.5, 3.0, 4.5, 6.0};
	int nc = 4;
	for (int c = 0; c < nc; c++)
		dsp_frog_render(&FROG, amp_for_snr(&FROG, 12), t_call[c], RATE, x, n);
	dsp_det_params p;
	params(&p);
	dsp_event ev[16];
	dsp_detector *d;
	int ne = detect(x, n, &p, ev, 16, &d);
	int hit = 0;
	for (int c = 0; c < nc; c++)
		for (int e = 0; e < ne; e++)
			if (llabs(ev[e].onset - (int64_t)llround(t_call[c] * RATE)) <= SIZE) {
				hit++;
				break;
			}
	fprintf(stderr, "detector, loud call in the warm-up: %d of %d calls heard, %d events, floor re-learned %d times\n", hit,
		nc, ne, (int)dsp_detector_relearned_low(d));
	ck_assert_int_eq(hit, nc);
	ck_assert_int_eq(ne, nc);
	ck_assert_int_eq(dsp_detector_relearned_low(d), 1);
	double band = (F_HI - F_LO) / (RATE / 2);
	ck_assert_msg(fabs(dsp_detector_floor(d) / band - 1) < 0.1, "floor %g of the noise's", dsp_detector_floor(d) / band);
	dsp_detector_free(d);
	free(x);
	gsl_rng_free(r);
}
END_TEST

/* Onset refinement over 200 seeds: a call `sig` at a random fractional
 * start in a clip with a coarse prior +-SIZE/2 off, refined against
 * template `tmpl` (the call itself, or a call a few per cent different);
 * the errors' RMS, the stated s.e.'s RMS, and z = error / stated s.e. */
typedef struct {
	double rms, pred, med, mean, crb, rms_z, max_z;
	int beyond3;
	int slipped; /* picks more than 1 ms from the true start */
	int listed;  /* of those, the true start within 1 ms of an alternative listed (res.alt_tau) */
	int any_alt; /* results listing any alternative */
} onset_stats;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static onset_stats onset_trials(const dsp_frog *tmpl, const dsp_frog *sig, double snr_db)
{
	int m = (int)ceil(dsp_frog_length(tmpl) * RATE) + 1;
	float *h = calloc((size_t)m, sizeof *h);
	dsp_frog_render(tmpl, 1.0, 0.0, RATE, h, (size_t)m);
	dsp_onset *o = dsp_onset_new(h, (size_t)m, NULL);
	ck_assert_ptr_nonnull(o);
	int ms = (int)ceil(dsp_frog_length(sig) * RATE) + 1;
	int n = MAX(m, ms) + 2 * SIZE + 400;
	float *x = malloc((size_t)n * sizeof *x);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double s1 = 0, s2 = 0, se2 = 0, crb2 = 0, z2 = 0, amp = amp_for_snr(sig, snr_db), se_all[200];
	onset_stats st = {0};
	int seeds = 200;
	for (int seed = 1; seed <= seeds; seed++) {
		gsl_rng_set(r, (unsigned long)seed);
		for (int i = 0; i < n; i++)
			x[i] = (float)gsl_ran_gaussian(r, 1.0);
		double t = SIZE + 200 + 50 * gsl_rng_uniform(r); /* true start, samples */
		dsp_frog_render(sig, amp, t / RATE, RATE, x, (size_t)n);
		int coarse = (int)t + (int)((gsl_rng_uniform(r) - 0.5) * SIZE);
		dsp_onset_result res;
		ck_assert_int_eq(dsp_onset_refine(o, x, (size_t)n, coarse - SIZE / 2 - HOP, coarse + SIZE / 2 + HOP, &res, NULL), 0);
		ck_assert(res.se >= res.se_crb);
		double e = res.tau - t, z = e / res.se;
		s1 += e;
		s2 += e * e;
		se2 += res.se * res.se;
		se_all[seed - 1] = res.se;
		crb2 += res.se_crb * res.se_crb;
		z2 += z * z;
		st.max_z = MAX(st.max_z, fabs(z));
		st.beyond3 += fabs(z) > 3;
		st.any_alt += res.n_alt > 0;
		if (fabs(e) > 1e-3 * RATE) {
			int near = 0;
			for (int a = 0; a < res.n_alt; a++)
				near |= fabs(res.alt_tau[a] - t) <= 1e-3 * RATE;
			st.slipped++;
			st.listed += near;
		}
	}
	st.rms = sqrt(s2 / seeds);
	st.pred = sqrt(se2 / seeds);
	st.crb = sqrt(crb2 / seeds);
	qsort(se_all, (size_t)seeds, sizeof *se_all, cmp_double);
	st.med = se_all[seeds / 2];
	st.mean = s1 / seeds;
	st.rms_z = sqrt(z2 / seeds);
	fprintf(stderr,
		"onset %g dB (%d pulses, carrier %g/%g Hz, interval %g/%g ms): rms %.4g stated %.4g (bound %.4g) mean %.3g samples; "
		"median stated %.4g; RMS z %.2f, max |z| %.2f, %d beyond 3; %d slipped past 1 ms, %d of them listing the true "
		"start; %d listing alternatives\n",
		snr_db, sig->pulses, tmpl->carrier_hz, sig->carrier_hz, tmpl->interval_s * 1e3, sig->interval_s * 1e3, st.rms,
		st.pred, st.crb, st.mean, st.med, st.rms_z, st.max_z, st.beyond3, st.slipped, st.listed, st.any_alt);
	free(x);
	free(h);
	dsp_onset_free(o);
	gsl_rng_free(r);
	return st;
}

START_TEST(onset_crb)
{
	/* The exact template: the Cramer-Rao bound is the error, and what the
	 * onset states keeps to it: z-scores of RMS within 0.7-1.3 (200 seeds:
	 * about +-0.1 by chance), the typical (median) stated s.e. within 2x
	 * of the RMS error (the alternatives and the shape term state more
	 * for the odd clip whose noise makes them plausible). */
	onset_stats st = onset_trials(&FROG, &FROG, 10);
	ck_assert(st.rms < 0.1);
	/* no other alignment is left open for an exact call */
	ck_assert_int_le(st.any_alt, 10);
	ck_assert_msg(st.rms_z >= 0.7 && st.rms_z <= 1.3, "RMS z %.2f", st.rms_z);
	ck_assert_msg(st.med <= 2 * st.rms && st.rms <= 2 * st.med, "median stated %g, rms %g", st.med, st.rms);
	ck_assert_msg(fabs(st.mean) <= 4 * st.rms / sqrt(200), "biased: mean %g", st.mean);
	/* a short call (4 pulses) at 10 dB: a fifth of the energy (at 3 dB and below it starts to slip carrier cycles) */
	dsp_frog f4 = FROG;
	f4.pulses = 4;
	st = onset_trials(&f4, &f4, 10);
	ck_assert_msg(st.rms_z >= 0.7 && st.rms_z <= 1.3, "RMS z %.2f", st.rms_z);
	ck_assert_msg(st.med <= 2 * st.rms && st.rms <= 2 * st.med, "median stated %g, rms %g", st.med, st.rms);
}
END_TEST

/* Calls a few per cent off their template (issue 12: a carrier 2 % off gave
 * errors hundreds of times the bound the onset stated; a pulse interval
 * 1 ms longer, a pulse off): the stated s.e. covers the errors, and a pick
 * that slipped a pulse lists the true start among its alternatives (172 of
 * 172 slipped for the interval 4 % off).  Coverage
 * by z-scores over 200 seeds each: sum z^2 within chi-square(200)'s 99.9 %
 * point (267.5) and at most 2 % beyond 3 s.e. (a normal gives 0.27 %; the
 * errors of a slipped alignment are discrete, so a few are allowed), while
 * the bound alone is far too confident. */
START_TEST(onset_mismatched_template_is_honest)
{
	dsp_frog carrier = FROG, interval = FROG;
	carrier.carrier_hz = FROG.carrier_hz * 1.02;
	interval.interval_s = FROG.interval_s + 0.0005;
	const dsp_frog *sig[] = {&carrier, &interval};
	for (int k = 0; k < 2; k++) {
		onset_stats st = onset_trials(&FROG, sig[k], 20);
		ck_assert_msg(st.rms > 5 * st.crb, "case %d: the bound alone (%g) was not too confident (rms %g)", k, st.crb, st.rms);
		ck_assert_msg(st.rms_z * st.rms_z * 200 <= 267.5, "case %d: sum z^2 %.1f over chi-square(200)'s 99.9 %% point", k,
			      st.rms_z * st.rms_z * 200);
		ck_assert_msg(st.beyond3 <= 4, "case %d: %d of 200 beyond 3 s.e.", k, st.beyond3);
		/* A pick a pulse or more off lists where the call starts among
		 * its alternatives (what collab's gate admits beside it). */
		ck_assert_msg(st.listed >= st.slipped - st.slipped / 20, "case %d: %d of %d slipped picks list the start",
			      k, st.listed, st.slipped);
		if (k == 1)
			ck_assert_int_ge(st.slipped, 100); /* the premise: a pulse train 4 % off slips */
	}
}
END_TEST

/* Echoes come later (onset.h dsp_onset_set_first_arrival): a chirp (the
 * frog profile's: 1.2-2.4 kHz, 250 ms) heard directly and, 2-8 ms later,
 * by an echo 1.3 times as loud and another 10-20 ms later at 0.8 (a
 * room's floor and wall; bench/field's room row), 20 dB over the noise
 * directly, 100 seeds.  The largest correlation peak is the loud echo's;
 * with the first arrival looked for, the start is the direct sound's,
 * within its stated error, in at least 95 (where the direct sound's first
 * 2 ms, the chirp's taper, hold too little energy to show the call begins
 * there, the largest peak stays, as without); without echoes it changes
 * nothing (every seed's onset identical to the largest peak's). */
START_TEST(onset_first_arrival_under_echoes)
{
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	dsp_wave *w = dsp_wave_new(&wp, RATE, NULL);
	ck_assert_ptr_nonnull(w);
	int m = (int)ceil(dsp_wave_length_s(w) * RATE);
	float *h = malloc((size_t)m * sizeof *h);
	double p = 0;
	for (int i = 0; i < m; i++) {
		h[i] = (float)dsp_wave_eval(w, i / RATE);
		p += (double)h[i] * h[i];
	}
	p /= m;
	dsp_onset *plain = dsp_onset_new(h, (size_t)m, NULL), *first = dsp_onset_new(h, (size_t)m, NULL);
	ck_assert(plain && first);
	dsp_onset_set_first_arrival(first, (int)(0.030 * RATE));
	int n = m + (int)(0.2 * RATE);
	float *x = malloc((size_t)n * sizeof *x);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	double amp = sqrt(pow(10, 20 / 10.0) / p); /* 20 dB over unit noise */
	int late_plain = 0, beyond3 = 0, moved = 0, same_free = 0;
	double e2 = 0, worst = 0;
	for (int seed = 1; seed <= 100; seed++) {
		gsl_rng_set(r, (unsigned long)(5000 + seed));
		double t0 = 0.05 * RATE + 50 * gsl_rng_uniform(r), d1 = (0.002 + 0.006 * gsl_rng_uniform(r)) * RATE,
		       d2 = (0.010 + 0.010 * gsl_rng_uniform(r)) * RATE;
		for (int echoes = 1; echoes >= 0; echoes--) {
			for (int i = 0; i < n; i++) {
				double v = gsl_ran_gaussian(r, 1.0) + amp * dsp_wave_eval(w, (i - t0) / RATE);
				if (echoes)
					v += 1.3 * amp * dsp_wave_eval(w, (i - t0 - d1) / RATE) + 0.8 * amp * dsp_wave_eval(w, (i - t0 - d2) / RATE);
				x[i] = (float)v;
			}
			dsp_onset_result a, b;
			ck_assert_int_eq(dsp_onset_refine(plain, x, (size_t)n, (int)(0.01 * RATE), (int)(0.1 * RATE), &a, NULL), 0);
			ck_assert_int_eq(dsp_onset_refine(first, x, (size_t)n, (int)(0.01 * RATE), (int)(0.1 * RATE), &b, NULL), 0);
			if (!echoes) {
				same_free += b.tau == a.tau && b.se == a.se && b.lead == 0;
				continue;
			}
			late_plain += fabs(a.tau - t0) > 1e-3 * RATE;
			if (!(b.lead > 0))
				continue; /* not found: the largest peak, as without (detect's edge term covers it) */
			moved++;
			double z = (b.tau - t0) / b.se;
			e2 += (b.tau - t0) * (b.tau - t0);
			worst = fmax(worst, fabs(z));
			beyond3 += fabs(z) > 3;
		}
	}
	fprintf(stderr,
		"chirp under echoes: the largest peak more than 1 ms late in %d of 100; the first arrival taken in %d, its RMS "
		"error %.2f samples, %d beyond 3 s.e. (worst %.2f); without echoes unchanged in %d of 100\n",
		late_plain, moved, sqrt(e2 / fmax(moved, 1)), beyond3, worst, same_free);
	ck_assert_int_ge(late_plain, 90); /* the premise: the echo's peak is the largest */
	ck_assert_int_ge(moved, 95);
	ck_assert_int_le(beyond3, 1);
	ck_assert_int_eq(same_free, 100);
	free(x);
	free(h);
	dsp_onset_free(plain);
	dsp_onset_free(first);
	dsp_wave_free(w);
	gsl_rng_free(r);
}
END_TEST

START_TEST(bad_input)
{
	dsp_det_params p;
	params(&p);
	const char *why = NULL;
	p.on_db = 1;
	ck_assert_ptr_null(dsp_detector_new(&p, SIZE, HOP, &why));
	ck_assert_ptr_nonnull(why);
	params(&p);
	p.max_dur_s = 0.01;
	ck_assert_ptr_null(dsp_detector_new(&p, SIZE, HOP, &why));
	params(&p);
	dsp_detector *d = dsp_detector_new(&p, SIZE, HOP, &why);
	dsp_event e;
	ck_assert_int_eq(dsp_detector_feed(d, 1000, 1.0, &e), 0);
	ck_assert_int_eq(dsp_detector_feed(d, 1000, 1.0, &e), -EINVAL);
	ck_assert_int_eq(dsp_detector_feed(d, 2000, NAN, &e), -EINVAL);
	dsp_detector_free(d);
	float h[4] = {0};
	ck_assert_ptr_null(dsp_onset_new(h, 4, &why));
	h[1] = 1;
	dsp_onset *o = dsp_onset_new(h, 4, &why);
	dsp_onset_result res;
	ck_assert_int_eq(dsp_onset_refine(o, h, 3, 0, 3, &res, &why), -EINVAL);
	dsp_onset_free(o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("detector");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, recall_10db);
	tcase_add_test(tc, recall_20db);
	tcase_add_test(tc, noise_false_alarms);
	tcase_add_test(tc, floor_frozen_during_call_and_durations);
	tcase_add_test(tc, loud_call_in_warmup);
	tcase_add_test(tc, onset_crb);
	tcase_add_test(tc, onset_mismatched_template_is_honest);
	tcase_add_test(tc, onset_first_arrival_under_echoes);
	tcase_add_test(tc, bad_input);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
