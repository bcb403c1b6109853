/* onset.c — matched-filter onset with a Cramer-Rao error (see onset.h). */
#include "apps/dsp/onset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/xcorr.h"

struct dsp_onset {
	float *h; /* template */
	size_t m;
	double eh; /* sum h^2 */
	dsp_xcorr *xc;
};

dsp_onset *dsp_onset_new(const float *h, size_t m, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	double eh = 0;
	for (size_t i = 0; i < m; i++)
		eh += (double)h[i] * h[i];
	if (m == 0 || !(eh > 0) || !isfinite(eh)) {
		*why = "onset: the template is empty, silent or not finite";
		return NULL;
	}
	dsp_onset *o = calloc(1, sizeof *o);
	if (o) {
		o->h = malloc(m * sizeof *h);
		o->xc = dsp_xcorr_new();
	}
	if (!o || !o->h || !o->xc) {
		dsp_onset_free(o);
		*why = "onset: out of memory";
		return NULL;
	}
	memcpy(o->h, h, m * sizeof *h);
	o->m = m;
	o->eh = eh;
	return o;
}

void dsp_onset_free(dsp_onset *o)
{
	if (!o)
		return;
	free(o->h);
	dsp_xcorr_free(o->xc);
	free(o);
}

int dsp_onset_refine(dsp_onset *o, const float *x, size_t n, int lag_lo, int lag_hi,
		     dsp_onset_result *out, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (n < o->m) {
		*why = "onset: clip shorter than the template";
		return -EINVAL;
	}
	int e = dsp_xcorr_cross(o->xc, o->h, o->m, x, n, 0);
	if (e) {
		*why = "onset: out of memory";
		return e;
	}
	/* the template must lie inside the clip */
	if (lag_lo < 0)
		lag_lo = 0;
	if (lag_hi > (int)(n - o->m))
		lag_hi = (int)(n - o->m);
	int nf = (int)dsp_xcorr_nfft(o->xc);
	dsp_peak pk;
	if (dsp_xcorr_peak(o->xc, lag_lo, lag_hi, 0, nf / 2, &pk) != 0 || !(pk.value > 0)) {
		*why = "onset: no positive match of the template in the search window";
		return -EDOM;
	}
	/* rms frequency of the template, from its spectrum */
	const fftwf_complex *H = dsp_xcorr_spec_a(o->xc);
	double s0 = 0, s2 = 0;
	for (int k = 1; k < nf / 2; k++) {
		double w = 2 * M_PI * k / nf, p = (double)H[k][0] * H[k][0] + (double)H[k][1] * H[k][1];
		s0 += p;
		s2 += w * w * p;
	}
	double w_rms = s0 > 0 ? sqrt(s2 / s0) : 0;
	double a = pk.value / o->eh;
	/* noise: the clip before the onset (minus its mean), else the residual */
	int pre = (int)floor(pk.tau) - 1;
	double var;
	if (pre >= 32) {
		double mu = 0, ss = 0;
		for (int i = 0; i < pre; i++)
			mu += x[i];
		mu /= pre;
		for (int i = 0; i < pre; i++)
			ss += (x[i] - mu) * (x[i] - mu);
		var = ss / (pre - 1);
	} else {
		double ex = 0;
		for (size_t i = 0; i < n; i++)
			ex += (double)x[i] * x[i];
		var = (ex - pk.value * pk.value / o->eh) / (double)(n > 1 ? n - 1 : 1);
	}
	if (!(var > 0))
		var = 1e-30;
	double enr = a * a * o->eh / var;
	out->tau = pk.tau;
	out->amp = a;
	out->noise_sd = sqrt(var);
	out->enr_db = 10 * log10(enr);
	out->se = w_rms > 0 ? 1.0 / (w_rms * sqrt(enr)) : INFINITY;
	out->second = pk.second;
	return 0;
}
