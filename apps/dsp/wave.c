/* wave.c — call waveforms, analytic and recorded (see wave.h). */
#include "apps/dsp/wave.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "apps/dsp/synth.h"

#define SINC_HALF 16   /* kernel half-width, in output-band samples */
#define SINC_STEPS 512 /* table points per sample: linear-interp error ~1e-6 */

struct dsp_wave {
	dsp_wave_params p;
	double length_s; /* s */
	/* file sources */
	float *data; /* mono samples, full scale 1.0 */
	int64_t frames;
	double rate_hz; /* Hz, the file's */
	double cut;     /* kernel cutoff as a fraction of the file's Nyquist (<= 1) */
	double *kernel; /* h(u) for u = i / SINC_STEPS, u in [0, SINC_HALF] band samples */
};

/* Raised-cosine fade of `taper` s at both ends of [0, len). */
static double taper_gain(double tau, double len, double taper)
{
	if (taper <= 0)
		return 1.0;
	if (taper > len / 2)
		taper = len / 2;
	if (tau < taper)
		return 0.5 - 0.5 * cos(M_PI * tau / taper);
	if (tau > len - taper)
		return 0.5 - 0.5 * cos(M_PI * (len - tau) / taper);
	return 1.0;
}

static double blackman(double u) /* u in [-1, 1] */
{
	return 0.42 + 0.5 * cos(M_PI * u) + 0.08 * cos(2 * M_PI * u);
}

static void build_kernel(dsp_wave *w)
{
	size_t n = SINC_HALF * SINC_STEPS + 2;
	w->kernel = g_new(double, n);
	for (size_t i = 0; i < n; i++) {
		double u = (double)i / SINC_STEPS;
		double s = u == 0 ? 1.0 : sin(M_PI * u) / (M_PI * u);
		w->kernel[i] = u >= SINC_HALF ? 0.0 : s * blackman(u / SINC_HALF);
	}
}

dsp_wave *dsp_wave_from_samples(const float *x, size_t n, double rate_hz, double world_rate_hz)
{
	dsp_wave *w = g_new0(dsp_wave, 1);
	w->p.kind = DSP_WAVE_FILE;
	w->frames = (int64_t)n;
	w->data = g_memdup2(x, (n ? n : 1) * sizeof *x);
	w->rate_hz = rate_hz;
	w->cut = world_rate_hz < w->rate_hz ? world_rate_hz / w->rate_hz : 1.0;
	w->length_s = (double)n / w->rate_hz;
	build_kernel(w);
	return w;
}

dsp_wave *dsp_wave_new(const dsp_wave_params *p, double world_rate_hz, GError **err)
{
	dsp_wave *w = g_new0(dsp_wave, 1);
	w->p = *p;
	w->p.file = NULL;
	switch (p->kind) {
	case DSP_WAVE_PULSE_TRAIN: {
		const dsp_frog f = {.pulse_s = p->pulse_ms * 1e-3, .interval_s = p->pulse_interval_ms * 1e-3, .pulses = p->pulses};
		w->length_s = dsp_frog_length(&f);
		break;
	}
	case DSP_WAVE_CHIRP:
	case DSP_WAVE_TONE:
		w->length_s = p->length_ms * 1e-3;
		break;
	case DSP_WAVE_CLICK:
		w->length_s = 10 * p->click_width_us * 1e-6;
		break;
	case DSP_WAVE_FILE: {
		g_free(w);
		size_t n = 0;
		double rate_hz = 0;
		float *x = dsp_wave_read_file(p->file, p->file_channel, &n, &rate_hz, err);
		if (!x)
			return NULL;
		size_t i0 = (size_t)llround(fmax(p->file_start_s, 0) * rate_hz);
		if (i0 >= n) {
			g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: file_start %g s is past its end (%.3f s)",
				    p->file, p->file_start_s, (double)n / rate_hz);
			g_free(x);
			return NULL;
		}
		size_t len = n - i0;
		if (p->file_length_s > 0)
			len = MIN(len, MAX((size_t)1, (size_t)llround(p->file_length_s * rate_hz)));
		w = dsp_wave_from_samples(x + i0, len, rate_hz, world_rate_hz);
		g_free(x);
		return w;
	}
	}
	return w;
}

void dsp_wave_free(dsp_wave *w)
{
	if (!w)
		return;
	g_free(w->data);
	g_free(w->kernel);
	g_free(w);
}

double dsp_wave_length_s(const dsp_wave *w)
{
	return w->length_s;
}

static double kernel_at(const dsp_wave *w, double u) /* u >= 0, band samples */
{
	double x = u * SINC_STEPS;
	size_t i = (size_t)x;
	if (i >= SINC_HALF * SINC_STEPS)
		return 0.0;
	double f = x - (double)i;
	return w->kernel[i] + f * (w->kernel[i + 1] - w->kernel[i]);
}

/* Band-limited value of the file at `pos` file samples:
 * sum_k x[k] * cut * h(cut * (pos - k)), h a Blackman-windowed sinc. */
static double file_eval(const dsp_wave *w, double pos)
{
	double reach = SINC_HALF / w->cut;
	int64_t k0 = (int64_t)ceil(pos - reach), k1 = (int64_t)floor(pos + reach);
	if (k0 < 0)
		k0 = 0;
	if (k1 > w->frames - 1)
		k1 = w->frames - 1;
	double acc = 0;
	for (int64_t k = k0; k <= k1; k++)
		acc += w->data[k] * kernel_at(w, fabs(pos - (double)k) * w->cut);
	return acc * w->cut;
}

double dsp_wave_eval(const dsp_wave *w, double tau)
{
	const dsp_wave_params *p = &w->p;
	if (!(tau >= 0 && tau < w->length_s))
		return 0.0;
	switch (p->kind) {
	case DSP_WAVE_PULSE_TRAIN: {
		const dsp_frog f = {.carrier_hz = p->carrier_hz, .pulse_s = p->pulse_ms * 1e-3, .interval_s = p->pulse_interval_ms * 1e-3, .pulses = p->pulses};
		return dsp_frog_eval(&f, tau);
	}
	case DSP_WAVE_TONE:
		return taper_gain(tau, w->length_s, p->taper_ms * 1e-3) * sin(2 * M_PI * p->freq_hz * tau);
	case DSP_WAVE_CHIRP: {
		double L = w->length_s, phase;
		if (p->sweep == DSP_SWEEP_LINEAR || p->f1_hz == p->f0_hz)
			phase = 2 * M_PI * (p->f0_hz * tau + (p->f1_hz - p->f0_hz) * tau * tau / (2 * L));
		else {
			double lk = log(p->f1_hz / p->f0_hz) / L; /* f(tau) = f0 exp(lk tau) */
			phase = 2 * M_PI * p->f0_hz * expm1(lk * tau) / lk;
		}
		return taper_gain(tau, L, p->taper_ms * 1e-3) * sin(phase);
	}
	case DSP_WAVE_CLICK: {
		double s = p->click_width_us * 1e-6;
		double z = (tau - 5 * s) / s;
		return exp(-0.5 * z * z);
	}
	case DSP_WAVE_FILE:
		return file_eval(w, tau * w->rate_hz);
	}
	return 0.0;
}
