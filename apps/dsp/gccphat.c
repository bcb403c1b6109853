/* gccphat.c — GCC-PHAT delay with sandwich error (see gccphat.h). */
#include "apps/dsp/gccphat.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/xcorr.h"

struct dsp_gcc {
	dsp_gcc_params p;
	dsp_xcorr *xc;
};

void dsp_gcc_params_default(dsp_gcc_params *p)
{
	*p = (dsp_gcc_params){.rate_hz = 48000.0, .f_lo_hz = 0, .f_hi_hz = 0, .eps = 1e-3, .beta = 1.0, .max_lag = 0, .weighting = DSP_GCC_PHAT, .smooth_hz = 30};
}

dsp_gcc *dsp_gcc_new(const dsp_gcc_params *p, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (!(p->rate_hz > 0) || p->f_lo_hz < 0 || !(p->eps >= 0) || !(p->beta >= 0 && p->beta <= 1) ||
	    p->weighting < DSP_GCC_PHAT || p->weighting > DSP_GCC_CC || !(p->smooth_hz >= 0)) {
		*why = "gccphat: rate must be > 0, f_lo, eps and smooth_hz >= 0, beta in [0, 1], a known weighting";
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
	size_t n = dsp_xcorr_nfft(g->xc);
	int k_lo, k_hi;
	if (dsp_gcc_band(&g->p, n, &k_lo, &k_hi) < 0) {
		*why = "gccphat: the band holds no frequency bin at this clip length";
		return -EINVAL;
	}
	fftwf_complex *R = dsp_xcorr_spec(g->xc);
	double wsum;
	if (dsp_gcc_weigh(&g->p, R, dsp_xcorr_spec_a(g->xc), dsp_xcorr_spec_b(g->xc), n, k_lo, k_hi, &wsum) < 0) {
		*why = "gccphat: no common signal (a clip is silent in the band)";
		return -EDOM;
	}
	dsp_peak pk;
	if (dsp_xcorr_peak(g->xc, lo, hi, k_lo, k_hi, &pk) != 0) {
		*why = "gccphat: no correlation peak";
		return -EDOM;
	}
	out->se = dsp_gcc_se(R, n, k_lo, k_hi, pk.tau, na > nb ? na : nb);
	out->delay = pk.tau;
	out->peak = wsum > 0 ? pk.value * (double)n / wsum : 0;
	out->nbins = k_hi - k_lo + 1;
	out->second = pk.second;
	return 0;
}

static const char *const names[] = {"phat", "scot", "roth", "cc"};

const char *dsp_gcc_weighting_name(dsp_gcc_weighting w)
{
	return w >= DSP_GCC_PHAT && w <= DSP_GCC_CC ? names[w] : "?";
}

int dsp_gcc_weighting_parse(const char *name, dsp_gcc_weighting *w)
{
	for (int i = 0; i <= DSP_GCC_CC; i++)
		if (!strcmp(name, names[i])) {
			*w = (dsp_gcc_weighting)i;
			return 0;
		}
	return -EINVAL;
}

int dsp_gcc_band(const dsp_gcc_params *p, size_t nfft, int *k_lo, int *k_hi)
{
	int n = (int)nfft, last = n / 2;
	double df = p->rate_hz / n;
	int lo = (int)ceil(p->f_lo_hz / df), hi = p->f_hi_hz > 0 ? (int)floor(p->f_hi_hz / df) : last;
	if (lo < 1)
		lo = 1; /* DC carries no delay information, only offset */
	if (hi > last - 1)
		hi = last - 1; /* Nyquist's phase is ambiguous for fractional shifts */
	*k_lo = lo;
	*k_hi = hi;
	return hi < lo ? -EINVAL : 0;
}

/* |X_k|^2 averaged over k +- h (within [lo, hi]) into g[k - lo]: running sums. */
static void smooth_power(const fftwf_complex *X, int lo, int hi, int h, double *g)
{
	int m = hi - lo + 1;
	double *c = malloc(((size_t)m + 1) * sizeof *c);
	if (!c) {
		for (int k = 0; k < m; k++)
			g[k] = (double)X[lo + k][0] * X[lo + k][0] + (double)X[lo + k][1] * X[lo + k][1];
		return;
	}
	c[0] = 0;
	for (int k = 0; k < m; k++)
		c[k + 1] = c[k] + (double)X[lo + k][0] * X[lo + k][0] + (double)X[lo + k][1] * X[lo + k][1];
	for (int k = 0; k < m; k++) {
		int a = k - h < 0 ? 0 : k - h, b = k + h >= m ? m - 1 : k + h;
		g[k] = (c[b + 1] - c[a]) / (b - a + 1);
	}
	free(c);
}

int dsp_gcc_weigh(const dsp_gcc_params *p, fftwf_complex *R, const fftwf_complex *A, const fftwf_complex *B,
		  size_t nfft, int k_lo, int k_hi, double *wsum)
{
	int n = (int)nfft, last = n / 2, m = k_hi - k_lo + 1;
	double mean = 0;
	for (int k = k_lo; k <= k_hi; k++)
		mean += hypot(R[k][0], R[k][1]);
	mean /= m;
	*wsum = 0;
	if (!(mean > 0))
		return -EDOM;
	double *ga = NULL, *gb = NULL, gmean = 0;
	if (p->weighting == DSP_GCC_SCOT || p->weighting == DSP_GCC_ROTH) {
		ga = malloc((size_t)m * sizeof *ga);
		gb = malloc((size_t)m * sizeof *gb);
		if (!ga || !gb) {
			free(ga);
			free(gb);
			return -ENOMEM;
		}
		int h = (int)floor(p->smooth_hz / (p->rate_hz / n));
		smooth_power(A, k_lo, k_hi, h, ga);
		smooth_power(B, k_lo, k_hi, h, gb);
		for (int k = 0; k < m; k++)
			gmean += p->weighting == DSP_GCC_SCOT ? sqrt(ga[k] * gb[k]) : ga[k];
		gmean /= m;
	}
	double reg = p->eps * mean, greg = p->eps * gmean;
	for (int k = 0; k <= last; k++) {
		if (k < k_lo || k > k_hi) {
			R[k][0] = R[k][1] = 0;
			continue;
		}
		double d;
		switch (p->weighting) {
		case DSP_GCC_SCOT:
			d = sqrt(ga[k - k_lo] * gb[k - k_lo]) + greg;
			break;
		case DSP_GCC_ROTH:
			d = ga[k - k_lo] + greg;
			break;
		case DSP_GCC_CC:
			d = mean;
			break;
		default:
			d = pow(hypot(R[k][0], R[k][1]) + reg, p->beta);
		}
		R[k][0] = (float)(R[k][0] / d);
		R[k][1] = (float)(R[k][1] / d);
		*wsum += 2 * hypot(R[k][0], R[k][1]);
	}
	free(ga);
	free(gb);
	return *wsum > 0 ? 0 : -EDOM;
}

double dsp_gcc_se(const fftwf_complex *Psi, size_t nfft, int k_lo, int k_hi, double tau, size_t L)
{
	/* Sandwich variance of the M-estimator: residual phase n_k of each bin at
	 * the estimate; numerator sum w^2 |Psi|^2 sin^2 n_k, denominator
	 * (sum w^2 |Psi| cos n_k)^2 = (n r''/2)^2. */
	double dw = 2.0 * M_PI / (double)nfft, num = 0, den = 0;
	for (int k = k_lo; k <= k_hi; k++) {
		double w = dw * k, c = cos(w * tau), s = sin(w * tau);
		double zr = Psi[k][0] * c - Psi[k][1] * s, zi = Psi[k][0] * s + Psi[k][1] * c;
		num += w * w * zi * zi;
		den += w * w * zr;
	}
	/* A clip of L samples padded to n has about L * (band fraction)
	 * independent bins, n/L times fewer than the bins summed. */
	double over = (double)nfft / (double)L;
	return den > 0 ? sqrt(over * num) / den : INFINITY;
}
