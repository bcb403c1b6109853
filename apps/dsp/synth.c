/* synth.c — analytic test calls and exact fractional delays (see synth.h). */
#include "apps/dsp/synth.h"

#include <errno.h>
#include <math.h>

#include <fftw3.h>

double dsp_frog_eval(const dsp_frog *f, double t)
{
	if (t < 0 || f->pulses < 1)
		return 0;
	int j = (int)floor(t / f->interval_s);
	if (j >= f->pulses)
		return 0;
	double u = t - j * f->interval_s;
	if (u >= f->pulse_s)
		return 0;
	return 0.5 * (1 - cos(2 * M_PI * u / f->pulse_s)) * sin(2 * M_PI * f->carrier_hz * u);
}

double dsp_frog_length(const dsp_frog *f)
{
	return (f->pulses - 1) * f->interval_s + f->pulse_s;
}

double dsp_frog_pulse_power(const dsp_frog *f)
{
	/* mean of 0.25 (1 - cos)^2 = 3/8, times mean sin^2 = 1/2 */
	return 3.0 / 16.0;
}

void dsp_frog_render(const dsp_frog *f, double amp, double t_call_s, double rate_hz, float *out, size_t n)
{
	double len = dsp_frog_length(f);
	long i0 = (long)floor(t_call_s * rate_hz), i1 = (long)ceil((t_call_s + len) * rate_hz);
	if (i0 < 0)
		i0 = 0;
	if (i1 > (long)n)
		i1 = (long)n;
	for (long i = i0; i < i1; i++)
		out[i] += (float)(amp * dsp_frog_eval(f, i / rate_hz - t_call_s));
}

int dsp_delay_exact(const float *x, size_t n, double d, float *y)
{
	float *t = fftwf_alloc_real(n);
	fftwf_complex *X = fftwf_alloc_complex(n / 2 + 1);
	if (!t || !X) {
		fftwf_free(t);
		fftwf_free(X);
		return -ENOMEM;
	}
	fftwf_plan f = fftwf_plan_dft_r2c_1d((int)n, t, X, FFTW_ESTIMATE);
	fftwf_plan b = fftwf_plan_dft_c2r_1d((int)n, X, t, FFTW_ESTIMATE);
	for (size_t i = 0; i < n; i++)
		t[i] = x[i];
	fftwf_execute(f);
	for (size_t k = 0; k <= n / 2; k++) {
		if (n % 2 == 0 && k == n / 2) {
			X[k][0] = X[k][1] = 0;
			continue;
		}
		double ph = -2 * M_PI * (double)k * d / (double)n, c = cos(ph), s = sin(ph);
		double re = X[k][0], im = X[k][1];
		X[k][0] = (float)((re * c - im * s) / n);
		X[k][1] = (float)((re * s + im * c) / n);
	}
	fftwf_execute(b);
	for (size_t i = 0; i < n; i++)
		y[i] = t[i];
	fftwf_destroy_plan(f);
	fftwf_destroy_plan(b);
	fftwf_free(t);
	fftwf_free(X);
	return 0;
}
