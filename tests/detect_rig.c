/* detect_rig.c — detect's pipeline on synthetic calls, for its tests (see
 * detect_rig.h). */
#include "tests/detect_rig.h"

#include <check.h>
#include <math.h>

#include <gsl/gsl_randist.h>

#include "apps/dsp/band.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/stft.h"
#include "apps/fft/frames.h"


void rig_init(rig *r)
{
	GError *err = NULL;
	ck_assert(det_profile_load(&r->prof, "apps/profiles/frog.ini", &err));
	r->nt = det_profile_n_templates(&r->prof);
	float *h[DET_MAX_TEMPLATES];
	size_t m[DET_MAX_TEMPLATES];
	for (int t = 0; t < r->nt; t++) {
		h[t] = det_profile_render(&r->prof, t, RATE, &m[t], &err);
		ck_assert(h[t]);
	}
	const char *why;
	r->ref = det_refiner_new(h, m, r->nt, &why);
	ck_assert(r->ref);
	ck_assert_int_eq(det_refiner_set_band(r->ref, RATE, r->prof.f_lo_hz, r->prof.f_hi_hz), 0);
	r->oenv = det_overlap_env_new(r->ref, h, m, r->nt, RATE, r->prof.f_lo_hz, r->prof.f_hi_hz, NULL, &why);
	ck_assert(r->oenv);
	for (int t = 0; t < r->nt; t++)
		g_free(h[t]);
	/* The same waveforms for the signal, evaluated at fractional times. */
	dsp_wave_params w1 = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10};
	dsp_wave_params w2 = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 2600, .pulse_ms = 3, .pulse_interval_ms = 12, .pulses = 20};
	dsp_wave_params w3 = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	r->wave[0] = dsp_wave_new(&w1, RATE, NULL);
	r->wave[1] = dsp_wave_new(&w2, RATE, NULL);
	r->wave[2] = dsp_wave_new(&w3, RATE, NULL);
}

void rig_free(rig *r)
{
	for (int t = 0; t < 3; t++)
		dsp_wave_free(r->wave[t]);
	det_overlap_env_free(r->oenv);
	det_refiner_free(r->ref);
	det_profile_clear(&r->prof);
}

/* Mean power of waveform t over its length. */
double rig_wave_power(rig *r, int t)
{
	double len = dsp_wave_length_s(r->wave[t]), s = 0;
	int n = (int)(len * RATE);
	for (int i = 0; i < n; i++) {
		double v = dsp_wave_eval(r->wave[t], i / RATE);
		s += v * v;
	}
	return s / n;
}

/* x[0, n) = white Gaussian noise of s.d. sd. */
void rig_noise(gsl_rng *g, float *x, size_t n, double sd)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)gsl_ran_gaussian_ziggurat(g, sd);
}

/* The sound card's rate error, fraction (a card 40 ppm fast samples the
 * call at RATE (1 + 40e-6) true samples per second). */
double rig_card_skew = 0;

void rig_add_wave(const dsp_wave *w, float *x, size_t n, double amp, double start_s)
{
	double len = dsp_wave_length_s(w), fs = RATE * (1 + rig_card_skew);
	size_t i0 = (size_t)floor(start_s * fs), i1 = (size_t)ceil((start_s + len) * fs) + 1;
	for (size_t i = i0; i < i1 && i < n; i++)
		x[i] += (float)(amp * dsp_wave_eval(w, i / fs - start_s));
}

void rig_add_call(rig *r, float *x, size_t n, int t, double amp, double start_s)
{
	rig_add_wave(r->wave[t], x, n, amp, start_s);
}

dsp_wave *rig_varied_wave(gsl_rng *g, int t, double var)
{
	double v[6];
	for (int k = 0; k < 6; k++)
		v[k] = 1 + var * fmax(-3, fmin(3, gsl_ran_gaussian(g, 1.0)));
	dsp_wave_params w = t == 0   ? (dsp_wave_params){.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10}
			    : t == 1 ? (dsp_wave_params){.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 2600, .pulse_ms = 3, .pulse_interval_ms = 12, .pulses = 20}
				     : (dsp_wave_params){.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 250, .taper_ms = 10};
	w.carrier_hz *= v[0];
	w.f0_hz *= v[0];
	w.f1_hz *= v[5];
	w.pulse_interval_ms *= v[1];
	w.pulse_ms = fmin(w.pulse_ms * v[2], w.pulse_interval_ms);
	w.pulses = (int)fmax(1, lround(w.pulses * v[3]));
	w.length_ms *= v[4];
	dsp_wave *wave = dsp_wave_new(&w, RATE, NULL);
	ck_assert(wave);
	return wave;
}


/* What detect does for every frame and every event; frames pass through the
 * wire codec.  Returns the number of events (refined, and overlaps). */
int rig_run(rig *r, const float *x, size_t n, rig_found *out, int max)
{
	dsp_stft_params sp;
	dsp_stft_params_default(&sp);
	sp.size = SIZE;
	sp.hop = HOP;
	sp.rate_hz = RATE;
	dsp_stft *s = dsp_stft_new(&sp, 0, NULL);
	dsp_det_params dp;
	det_profile_detector(&r->prof, RATE, &dp);
	dsp_detector *det = dsp_detector_new(&dp, SIZE, HOP, NULL);
	ck_assert(s && det);
	const float *w = dsp_stft_window(s);
	double ss = 0;
	for (int i = 0; i < SIZE; i++)
		ss += (double)w[i] * w[i];
	float P[SIZE / 2 + 1], Q[SIZE / 2 + 1];
	uint8_t *buf = g_malloc(fft_frame_bytes(SIZE / 2 + 1));
	int ne = 0;
	size_t pos = 0;
	dsp_event evs[256];
	int nev = 0;
	while (pos < n) {
		size_t k = MIN((size_t)4000, n - pos);
		dsp_stft_push(s, x + pos, k);
		pos += k;
		dsp_frame f;
		while (dsp_stft_next(s, &f) == 1) {
			for (int b = 0; b < f.nbins; b++) {
				double m2 = (double)f.X[b][0] * f.X[b][0] + (double)f.X[b][1] * f.X[b][1];
				P[b] = (float)((b == 0 || b == f.nbins - 1 ? 1 : 2) * m2 / (SIZE * ss));
			}
			fft_frame_msg m = {.first = f.first, .size = SIZE, .hop = HOP, .nbins = SIZE / 2 + 1, .rate_hz = RATE, .P = P};
			size_t len = (size_t)fft_frame_encode(&m, buf, fft_frame_bytes(m.nbins));
			fft_frame_msg d;
			const char *why;
			ck_assert_int_eq(fft_frame_decode(buf, len, &d, Q, SIZE / 2 + 1, &why), 0);
			if (dsp_detector_feed(det, d.first, fft_frame_band(&d, r->prof.f_lo_hz, r->prof.f_hi_hz), &evs[nev]) == 1 &&
			    nev < 255)
				nev++;
		}
	}
	g_free(buf);
	for (int e = 0; e < nev && ne < max; e++) {
		/* The clip detect fetches, and its lag windows. */
		int pre = (int)ceil(r->prof.pre_ms * 1e-3 * RATE);
		pre = MAX(pre, 64);
		int64_t first = evs[e].onset - SIZE - pre;
		int lag_hi = SIZE * 3 / 2 + pre, lag_all = MAX((int)(evs[e].end - first) - (int)(r->prof.min_dur_s * RATE), lag_hi);
		size_t cn = (size_t)lag_all + det_refiner_max_len(r->ref) + (size_t)pre;
		float *clip = g_new0(float, cn);
		for (size_t i = 0; i < cn; i++)
			if (first + (int64_t)i >= 0 && first + (int64_t)i < (int64_t)n)
				clip[i] = x[first + (int64_t)i];
		det_refine_result rr;
		const char *why;
		ck_assert_int_eq(dsp_band_pass(clip, cn, RATE, r->prof.f_lo_hz, r->prof.f_hi_hz), 0);
		if (det_refine_clip(r->ref, clip, cn, pre / 2, lag_hi, (size_t)(SIZE / 2 + pre - HOP), SIZE, r->prof.f_lo_hz,
				    r->prof.f_hi_hz, r->prof.min_enr_db, &rr, NULL, &why) == 0) {
			out[ne++] = (rig_found){evs[e].onset, evs[e].end, (double)first + rr.r.tau, rr.r.se, rr.template_id};
			det_refine_result more[DET_REFINE_MAX + 1], env[DET_REFINE_MAX];
			more[0] = rr;
			int nm = det_refine_overlaps(r->ref, clip, cn, pre / 2, lag_all, &rr, r->prof.overlap_enr_db,
						     r->prof.overlap_explained, 0.002 * RATE, more + 1, DET_REFINE_MAX);
			int nv = nm < DET_REFINE_MAX ? det_overlap_env_find(r->oenv, clip, cn, (size_t)(SIZE / 2 + pre - HOP), pre / 2, lag_all,
									    (size_t)(evs[e].end - first), more, nm + 1,
									    DET_OVERLAP_ENV_SEP_S * RATE, env, DET_REFINE_MAX - nm)
						     : 0;
			ck_assert_int_ge(nv, 0);
			for (int i = 0; i < nv; i++)
				more[++nm] = env[i];
			for (int i = 1; i <= nm && ne < max; i++)
				out[ne++] = (rig_found){evs[e].onset, evs[e].end, (double)first + more[i].r.tau, more[i].r.se,
							more[i].template_id};
		} else {
			out[ne++] = (rig_found){evs[e].onset, evs[e].end, (double)evs[e].onset, SIZE / sqrt(12.0), 0};
		}
		g_free(clip);
	}
	dsp_detector_free(det);
	dsp_stft_free(s);
	return ne;
}
