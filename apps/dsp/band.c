/* band.c — the band a waveform occupies (see band.h). */
#include "apps/dsp/band.h"

#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/xcorr.h"

int dsp_band_of(const float *h, size_t n, double rate_hz, double frac, double f_min_hz, double f_max_hz, double *lo,
		double *hi)
{
	if (n == 0 || !(rate_hz > 0) || !(frac > 0 && frac <= 1))
		return -EINVAL;
	size_t N = dsp_good_size(n < 4096 ? 4096 : n), nb = N / 2 + 1;
	float *x = fftwf_alloc_real(N);
	fftwf_complex *X = fftwf_alloc_complex(nb);
	double *cum = malloc((nb + 1) * sizeof *cum);
	fftwf_plan pl = x && X ? fftwf_plan_dft_r2c_1d((int)N, x, X, FFTW_ESTIMATE) : NULL;
	if (!pl || !cum) {
		if (pl)
			fftwf_destroy_plan(pl);
		fftwf_free(x);
		fftwf_free(X);
		free(cum);
		return -ENOMEM;
	}
	memcpy(x, h, n * sizeof *x);
	memset(x + n, 0, (N - n) * sizeof *x);
	fftwf_execute(pl);
	double df = rate_hz / (double)N, fmax = f_max_hz > 0 ? f_max_hz : rate_hz / 2;
	cum[0] = 0;
	for (size_t k = 0; k < nb; k++) {
		double f = k * df, p = (double)X[k][0] * X[k][0] + (double)X[k][1] * X[k][1];
		cum[k + 1] = cum[k] + (f >= f_min_hz && f <= fmax ? p : 0);
	}
	double total = cum[nb];
	int rc = -EINVAL;
	if (total > 0) {
		double a = total * (1 - frac) / 2, b = total - a;
		size_t k = 0;
		while (k < nb && cum[k + 1] < a)
			k++;
		*lo = k * df;
		while (k < nb && cum[k + 1] < b)
			k++;
		*hi = (k + 1) * df;
		rc = 0;
	}
	fftwf_destroy_plan(pl);
	fftwf_free(x);
	fftwf_free(X);
	free(cum);
	return rc;
}

int dsp_band_pass(float *x, size_t n, double rate_hz, double f_lo_hz, double f_hi_hz)
{
	if (!x || n < 2 || !(rate_hz > 0) || !(f_hi_hz > f_lo_hz) || !(f_lo_hz >= 0))
		return -EINVAL;
	fftwf_complex *X = fftwf_alloc_complex(n / 2 + 1);
	float *t = fftwf_alloc_real(n);
	fftwf_plan fwd = X && t ? fftwf_plan_dft_r2c_1d((int)n, t, X, FFTW_ESTIMATE) : NULL;
	fftwf_plan bwd = X && t ? fftwf_plan_dft_c2r_1d((int)n, X, t, FFTW_ESTIMATE) : NULL;
	int rc = -ENOMEM;
	if (fwd && bwd) {
		memcpy(t, x, n * sizeof *t);
		fftwf_execute(fwd);
		for (size_t k = 0; k <= n / 2; k++) {
			double f = (double)k * rate_hz / (double)n;
			if (f < f_lo_hz || f > f_hi_hz)
				X[k][0] = X[k][1] = 0;
		}
		fftwf_execute(bwd);
		for (size_t i = 0; i < n; i++)
			x[i] = t[i] / (float)n;
		rc = 0;
	}
	if (fwd)
		fftwf_destroy_plan(fwd);
	if (bwd)
		fftwf_destroy_plan(bwd);
	fftwf_free(X);
	fftwf_free(t);
	return rc;
}
