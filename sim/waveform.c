/* waveform.c — source waveforms, analytic and from files (see waveform.h). */
#include "sim/waveform.h"

#include <math.h>
#include <sndfile.h>
#include <string.h>

#define SINC_HALF 16      /* kernel half-width, in output-band samples */
#define SINC_STEPS 512    /* table points per sample: linear-interp error ~1e-6 */

struct sim_wave {
	sim_wave_params p;
	double length_s;   /* s */
	/* file sources */
	float *data;       /* mono samples, full scale 1.0 */
	sf_count_t frames;
	double rate;       /* Hz, the file's */
	double cut;        /* kernel cutoff as a fraction of the file's Nyquist (<= 1) */
	double *kernel;    /* h(u) for u = i / SINC_STEPS, u in [0, SINC_HALF] band samples */
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

static void build_kernel(sim_wave *w)
{
	size_t n = SINC_HALF * SINC_STEPS + 2;
	w->kernel = g_new(double, n);
	for (size_t i = 0; i < n; i++) {
		double u = (double)i / SINC_STEPS;
		double s = u == 0 ? 1.0 : sin(M_PI * u) / (M_PI * u);
		w->kernel[i] = u >= SINC_HALF ? 0.0 : s * blackman(u / SINC_HALF);
	}
}

static int load_file(sim_wave *w, double world_rate, GError **err)
{
	SF_INFO info;
	memset(&info, 0, sizeof info);
	SNDFILE *sf = sf_open(w->p.file, SFM_READ, &info);
	if (!sf) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", w->p.file, sf_strerror(NULL));
		return -1;
	}
	if (w->p.file_channel < 0 || w->p.file_channel >= info.channels || info.frames <= 0) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			    "%s: has %d channel(s) and %lld frames; channel %d is not there", w->p.file,
			    info.channels, (long long)info.frames, w->p.file_channel);
		sf_close(sf);
		return -1;
	}
	float *all = g_new(float, (gsize)info.frames * info.channels);
	sf_count_t got = sf_readf_float(sf, all, info.frames);
	sf_close(sf);
	w->frames = got;
	w->data = g_new(float, got > 0 ? got : 1);
	for (sf_count_t i = 0; i < got; i++)
		w->data[i] = all[i * info.channels + w->p.file_channel];
	g_free(all);
	w->rate = info.samplerate;
	w->cut = world_rate < w->rate ? world_rate / w->rate : 1.0;
	w->length_s = (double)got / w->rate;
	build_kernel(w);
	return 0;
}

sim_wave *sim_wave_new(const sim_wave_params *p, double world_rate, GError **err)
{
	sim_wave *w = g_new0(sim_wave, 1);
	w->p = *p;
	w->p.file = NULL;
	switch (p->kind) {
	case SIM_WAVE_PULSE_TRAIN:
		w->length_s = ((p->pulses - 1) * p->pulse_interval_ms + p->pulse_ms) * 1e-3;
		break;
	case SIM_WAVE_CHIRP:
	case SIM_WAVE_TONE:
		w->length_s = p->length_ms * 1e-3;
		break;
	case SIM_WAVE_CLICK:
		w->length_s = 10 * p->click_width_us * 1e-6;
		break;
	case SIM_WAVE_FILE:
		w->p.file = g_strdup(p->file);
		if (load_file(w, world_rate, err) < 0) {
			sim_wave_free(w);
			return NULL;
		}
		break;
	}
	return w;
}

void sim_wave_free(sim_wave *w)
{
	if (!w)
		return;
	g_free((char *)w->p.file);
	g_free(w->data);
	g_free(w->kernel);
	g_free(w);
}

double sim_wave_length_s(const sim_wave *w)
{
	return w->length_s;
}

static double kernel_at(const sim_wave *w, double u) /* u >= 0, band samples */
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
static double file_eval(const sim_wave *w, double pos)
{
	double reach = SINC_HALF / w->cut;
	sf_count_t k0 = (sf_count_t)ceil(pos - reach), k1 = (sf_count_t)floor(pos + reach);
	if (k0 < 0)
		k0 = 0;
	if (k1 > w->frames - 1)
		k1 = w->frames - 1;
	double acc = 0;
	for (sf_count_t k = k0; k <= k1; k++)
		acc += w->data[k] * kernel_at(w, fabs(pos - (double)k) * w->cut);
	return acc * w->cut;
}

double sim_wave_eval(const sim_wave *w, double tau)
{
	const sim_wave_params *p = &w->p;
	if (!(tau >= 0 && tau < w->length_s))
		return 0.0;
	switch (p->kind) {
	case SIM_WAVE_PULSE_TRAIN: {
		double iv = p->pulse_interval_ms * 1e-3, len = p->pulse_ms * 1e-3;
		double k = floor(tau / iv);
		double u = tau - k * iv;
		if (u >= len || k >= p->pulses)
			return 0.0;
		double env = sin(M_PI * u / len);
		return env * env * sin(2 * M_PI * p->carrier_hz * u);
	}
	case SIM_WAVE_TONE:
		return taper_gain(tau, w->length_s, p->taper_ms * 1e-3) * sin(2 * M_PI * p->freq_hz * tau);
	case SIM_WAVE_CHIRP: {
		double L = w->length_s, phase;
		if (p->sweep == SIM_SWEEP_LINEAR || p->f1_hz == p->f0_hz)
			phase = 2 * M_PI * (p->f0_hz * tau + (p->f1_hz - p->f0_hz) * tau * tau / (2 * L));
		else {
			double lk = log(p->f1_hz / p->f0_hz) / L; /* f(tau) = f0 exp(lk tau) */
			phase = 2 * M_PI * p->f0_hz * expm1(lk * tau) / lk;
		}
		return taper_gain(tau, L, p->taper_ms * 1e-3) * sin(phase);
	}
	case SIM_WAVE_CLICK: {
		double s = p->click_width_us * 1e-6;
		double z = (tau - 5 * s) / s;
		return exp(-0.5 * z * z);
	}
	case SIM_WAVE_FILE:
		return file_eval(w, tau * w->rate);
	}
	return 0.0;
}
