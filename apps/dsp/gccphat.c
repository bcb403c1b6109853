/* gccphat.c — GCC-PHAT delay with sandwich error (see gccphat.h). */
#include "apps/dsp/gccphat.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "apps/dsp/xcorr.h"

struct dsp_gcc {
	dsp_gcc_params p;
	dsp_xcorr *xc;
};

void dsp_gcc_params_default(dsp_gcc_params *p)
{
	*p = (dsp_gcc_params){.rate_hz = 48000.0, .f_lo_hz = 0, .f_hi_hz = 0, .eps = 1e-3, .beta = 1.0, .max_lag = 0};
}

dsp_gcc *dsp_gcc_new(const dsp_gcc_params *p, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (!(p->rate_hz > 0) || p->f_lo_hz < 0 || !(p->eps >= 0) || !(p->beta >= 0 && p->beta <= 1)) {
		*why = "gccphat: rate must be > 0, f_lo and eps >= 0, beta in [0, 1]";
		return NULL;
	}
	dsp_gcc *g = calloc(1, sizeof *g);
	if (g)
		g->xc = dsp_xcorr_new();
	if (!g || !g->xc) {
		free(g);
		*why = "gccphat: out of memory";
		return NULL;
	}
	g->p = *p;
	return g;
}

void dsp_gcc_free(dsp_gcc *g)
{
	if (!g)
		return;
	dsp_xcorr_free(g->xc);
	free(g);
}

int dsp_gcc_delay(dsp_gcc *g, const float *a, size_t na, const float *b, size_t nb,
		  dsp_gcc_result *out, const char **why)
{
	int lo = g->p.max_lag > 0 ? -g->p.max_lag : -(int)na + 1;
	int hi = g->p.max_lag > 0 ? g->p.max_lag : (int)nb - 1;
	return dsp_gcc_delay_window(g, a, na, b, nb, lo, hi, out, why);
}

int dsp_gcc_delay_window(dsp_gcc *g, const float *a, size_t na, const float *b, size_t nb,
			 int lo, int hi, dsp_gcc_result *out, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	int e = dsp_xcorr_cross(g->xc, a, na, b, nb, 0);
	if (e) {
		*why = e == -ENOMEM ? "gccphat: out of memory" : "gccphat: empty clip";
		return e;
	}
	int n = (int)dsp_xcorr_nfft(g->xc), last = n / 2;
	double df = g->p.rate_hz / n;
	int k_lo = (int)ceil(g->p.f_lo_hz / df), k_hi = g->p.f_hi_hz > 0 ? (int)floor(g->p.f_hi_hz / df) : last;
	if (k_lo < 1)
		k_lo = 1; /* DC carries no delay information, only offset */
	if (k_hi > last - 1)
		k_hi = last - 1; /* Nyquist's phase is ambiguous for fractional shifts */
	if (k_hi < k_lo) {
		*why = "gccphat: the band holds no frequency bin at this clip length";
		return -EINVAL;
	}
	fftwf_complex *R = dsp_xcorr_spec(g->xc);
	double mean = 0;
	for (int k = k_lo; k <= k_hi; k++)
		mean += hypot(R[k][0], R[k][1]);
	mean /= (k_hi - k_lo + 1);
	if (!(mean > 0)) {
		*why = "gccphat: no common signal (a clip is silent in the band)";
		return -EDOM;
	}
	double reg = g->p.eps * mean;
	double wsum = 0;
	for (int k = 0; k <= last; k++) {
		if (k < k_lo || k > k_hi) {
			R[k][0] = R[k][1] = 0;
			continue;
		}
		double m = pow(hypot(R[k][0], R[k][1]) + reg, g->p.beta);
		R[k][0] = (float)(R[k][0] / m);
		R[k][1] = (float)(R[k][1] / m);
		wsum += 2 * hypot(R[k][0], R[k][1]);
	}
	dsp_peak pk;
	if (dsp_xcorr_peak(g->xc, lo, hi, k_lo, k_hi, &pk) != 0) {
		*why = "gccphat: no correlation peak";
		return -EDOM;
	}
	/* Sandwich variance of the M-estimator: residual phase n_k of each bin at
	 * the estimate; numerator sum w^2 |Psi|^2 sin^2 n_k, denominator
	 * (sum w^2 |Psi| cos n_k)^2 = (n r''/2)^2. */
	double dw = 2.0 * M_PI / n, num = 0, den = 0;
	for (int k = k_lo; k <= k_hi; k++) {
		double w = dw * k, c = cos(w * pk.tau), s = sin(w * pk.tau);
		double zr = R[k][0] * c - R[k][1] * s, zi = R[k][0] * s + R[k][1] * c;
		num += w * w * zi * zi;
		den += w * w * zr;
	}
	/* A clip of L samples padded to n has about L * (band fraction)
	 * independent bins, n/L times fewer than the bins summed. */
	size_t L = na > nb ? na : nb;
	double over = (double)n / (double)L;
	out->delay = pk.tau;
	out->se = den > 0 ? sqrt(over * num) / den : INFINITY;
	out->peak = wsum > 0 ? pk.value * n / wsum : 0;
	out->nbins = k_hi - k_lo + 1;
	out->second = pk.second;
	return 0;
}
