/* detect_rig.c — detect's pipeline on synthetic calls, for its tests (see
 * detect_rig.h). */
#include "tests/detect_rig.h"

#include <check.h>
#include <math.h>

#include <gsl/gsl_randist.h>

#include "apps/detect/offline.h"


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


/* What detect does for every frame and every event (apps/detect/offline.h). */
int rig_run(rig *r, const float *x, size_t n, rig_found *out, int max)
{
	det_found *f = g_new(det_found, max > 0 ? max : 1);
	int nf = det_offline_run(&r->prof, r->ref, r->oenv, x, n, RATE, SIZE, HOP, f, max);
	ck_assert_int_ge(nf, 0);
	for (int i = 0; i < nf; i++)
		out[i] = (rig_found){f[i].coarse, f[i].end, f[i].onset, f[i].se, f[i].tmpl};
	g_free(f);
	return nf;
}
