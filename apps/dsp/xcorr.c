/* xcorr.c — FFT cross-correlation with a sinc-exact peak (see xcorr.h). */
#include "apps/dsp/xcorr.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dsp_xcorr {
	size_t nfft, cap;             /* current FFT size; size the arrays hold */
	size_t na, nb;                /* lengths of the last clips */
	float *ta;                    /* real work array, cap */
	fftwf_complex *A, *B, *R, *W; /* spectra and the c2r scratch, cap/2+1 */
	fftwf_plan fwd, inv;          /* r2c ta->A (executed on other arrays too), c2r W->ta */
};

dsp_xcorr *dsp_xcorr_new(void)
{
	return calloc(1, sizeof(dsp_xcorr));
}

static void drop(dsp_xcorr *x)
{
	if (x->fwd)
		fftwf_destroy_plan(x->fwd);
	if (x->inv)
		fftwf_destroy_plan(x->inv);
	fftwf_free(x->ta);
	fftwf_free(x->A);
	fftwf_free(x->B);
	fftwf_free(x->R);
	fftwf_free(x->W);
	x->fwd = x->inv = NULL;
	x->ta = NULL;
	x->A = x->B = x->R = x->W = NULL;
	x->nfft = x->cap = 0;
}

void dsp_xcorr_free(dsp_xcorr *x)
{
	if (!x)
		return;
	drop(x);
	free(x);
}

void dsp_fft_forget(void)
{
	fftwf_forget_wisdom();
}

size_t dsp_good_size(size_t n)
{
	for (size_t m = n < 1 ? 1 : n;; m++) {
		size_t r = m;
		while (r % 2 == 0)
			r /= 2;
		while (r % 3 == 0)
			r /= 3;
		while (r % 5 == 0)
			r /= 5;
		if (r == 1)
			return m;
	}
}

static int plan(dsp_xcorr *x, size_t n)
{
	if (n == x->nfft)
		return 0;
	drop(x);
	size_t nb = n / 2 + 1;
	x->ta = fftwf_alloc_real(n);
	x->A = fftwf_alloc_complex(nb);
	x->B = fftwf_alloc_complex(nb);
	x->R = fftwf_alloc_complex(nb);
	x->W = fftwf_alloc_complex(nb);
	if (!x->ta || !x->A || !x->B || !x->R || !x->W) {
		drop(x);
		return -ENOMEM;
	}
	x->fwd = fftwf_plan_dft_r2c_1d((int)n, x->ta, x->A, FFTW_ESTIMATE);
	x->inv = fftwf_plan_dft_c2r_1d((int)n, x->W, x->ta, FFTW_ESTIMATE);
	if (!x->fwd || !x->inv) {
		drop(x);
		return -ENOMEM;
	}
	x->nfft = x->cap = n;
	return 0;
}

int dsp_xcorr_cross(dsp_xcorr *x, const float *a, size_t na, const float *b, size_t nb, size_t min_nfft)
{
	if (na == 0 || nb == 0)
		return -EINVAL;
	size_t n = na + nb > min_nfft ? na + nb : min_nfft;
	int e = plan(x, dsp_good_size(n));
	if (e)
		return e;
	n = x->nfft;
	x->na = na;
	x->nb = nb;
	memcpy(x->ta, a, na * sizeof *a);
	memset(x->ta + na, 0, (n - na) * sizeof *a);
	fftwf_execute_dft_r2c(x->fwd, x->ta, x->A);
	memcpy(x->ta, b, nb * sizeof *b);
	memset(x->ta + nb, 0, (n - nb) * sizeof *b);
	fftwf_execute_dft_r2c(x->fwd, x->ta, x->B);
	for (size_t k = 0; k <= n / 2; k++) {
		double ar = x->A[k][0], ai = x->A[k][1], br = x->B[k][0], bi = x->B[k][1];
		x->R[k][0] = (float)(ar * br + ai * bi); /* conj(A) B */
		x->R[k][1] = (float)(ar * bi - ai * br);
	}
	return 0;
}

size_t dsp_xcorr_nfft(const dsp_xcorr *x)
{
	return x->nfft;
}

fftwf_complex *dsp_xcorr_spec(dsp_xcorr *x)
{
	return x->R;
}

const fftwf_complex *dsp_xcorr_spec_a(const dsp_xcorr *x)
{
	return x->A;
}

const fftwf_complex *dsp_xcorr_spec_b(const dsp_xcorr *x)
{
	return x->B;
}

void dsp_xcorr_eval(const dsp_xcorr *x, double tau, int k_lo, int k_hi, double *r, double *d1, double *d2)
{
	dsp_spec_eval((const fftwf_complex *)x->R, x->nfft, tau, k_lo, k_hi, r, d1, d2);
}

/* The sums behind dsp_spec_eval and dsp_spec_analytic: r (re), its Hilbert
 * transform (im) and r's first two derivatives, each NULL when not wanted. */
static void spec_sums(const fftwf_complex *R, size_t nfft, double tau, int k_lo, int k_hi, double *re, double *im,
		      double *d1, double *d2)
{
	int n = (int)nfft, last = n / 2;
	if (k_lo < 0)
		k_lo = 0;
	if (k_hi > last)
		k_hi = last;
	double s0 = 0, s1 = 0, s2 = 0, sh = 0;
	double dw = 2.0 * M_PI / n;
	/* exp(i w_k tau) by rotation from k_lo; re-anchored every 256 bins so
	 * rounding does not build up over long spectra. */
	double cr = 0, ci = 0, rr = cos(dw * tau), ri = sin(dw * tau);
	for (int k = k_lo; k <= k_hi; k++) {
		if (k == k_lo || (k - k_lo) % 256 == 0) {
			cr = cos(dw * k * tau);
			ci = sin(dw * k * tau);
		}
		double c = (k == 0 || (k == last && n % 2 == 0)) ? 1.0 : 2.0;
		double w = dw * k;
		double zr = R[k][0] * cr - R[k][1] * ci; /* Re(R e^{i w tau}) */
		double zi = R[k][0] * ci + R[k][1] * cr; /* Im(R e^{i w tau}) */
		s0 += c * zr;
		sh += c * zi;
		s1 -= c * w * zi;
		s2 -= c * w * w * zr;
		double t = cr * rr - ci * ri;
		ci = cr * ri + ci * rr;
		cr = t;
	}
	if (re)
		*re = s0 / n;
	if (im)
		*im = sh / n;
	if (d1)
		*d1 = s1 / n;
	if (d2)
		*d2 = s2 / n;
}

void dsp_spec_eval(const fftwf_complex *R, size_t nfft, double tau, int k_lo, int k_hi, double *r, double *d1, double *d2)
{
	spec_sums(R, nfft, tau, k_lo, k_hi, r, NULL, d1, d2);
}

void dsp_spec_analytic(const fftwf_complex *R, size_t nfft, double tau, int k_lo, int k_hi, double *re, double *im)
{
	spec_sums(R, nfft, tau, k_lo, k_hi, re, im, NULL, NULL);
}

/* Index of lag l in the c2r output (negative lags sit at the top). */
static inline int wrap(int l, int n)
{
	return l >= 0 ? l % n : (l % n + n) % n;
}

int dsp_xcorr_peak(dsp_xcorr *x, int lag_lo, int lag_hi, int k_lo, int k_hi, dsp_peak *out)
{
	int n = (int)x->nfft;
	if (lag_lo < -(int)x->na + 1)
		lag_lo = -(int)x->na + 1;
	if (lag_hi > (int)x->nb - 1)
		lag_hi = (int)x->nb - 1;
	if (lag_lo > lag_hi || n == 0)
		return -EDOM;
	memcpy(x->W, x->R, (size_t)(n / 2 + 1) * sizeof *x->W);
	fftwf_execute(x->inv); /* ta[m] = n * r(m) for m >= 0, n * r(m - n) above */
	int best = lag_lo;
	float bv = -INFINITY;
	for (int l = lag_lo; l <= lag_hi; l++) {
		float v = x->ta[wrap(l, n)];
		if (v > bv) {
			bv = v;
			best = l;
		}
	}
	/* The runner-up: a neighbouring carrier cycle or pulse that nearly ties
	 * means the peak choice itself is uncertain (a cycle slip risk the
	 * local error estimate cannot see). */
	float second = -INFINITY;
	for (int l = lag_lo + 1; l < lag_hi; l++) {
		if (abs(l - best) <= 2)
			continue;
		float v = x->ta[wrap(l, n)];
		if (v > second && v >= x->ta[wrap(l - 1, n)] && v >= x->ta[wrap(l + 1, n)])
			second = v;
	}
	/* Parabola through the three integer lags for the start, then Newton on
	 * the exact interpolant; steps are kept within +-0.5 sample of the start
	 * so a noisy side lobe cannot pull us to another peak. */
	double ym = x->ta[wrap(best - 1, n)], y0 = bv, yp = x->ta[wrap(best + 1, n)];
	double den = ym - 2 * y0 + yp;
	double tau = best + (den < 0 ? 0.5 * (ym - yp) / den : 0);
	if (fabs(tau - best) > 0.5)
		tau = best;
	double r = 0, d1 = 0, d2 = 0;
	for (int it = 0; it < 30; it++) {
		dsp_xcorr_eval(x, tau, k_lo, k_hi, &r, &d1, &d2);
		if (!(d2 < 0))
			break;
		double step = -d1 / d2;
		double nt = tau + step;
		if (nt > best + 0.75)
			nt = best + 0.75;
		if (nt < best - 0.75)
			nt = best - 0.75;
		step = nt - tau;
		tau = nt;
		if (fabs(step) < 1e-10)
			break;
	}
	dsp_xcorr_eval(x, tau, k_lo, k_hi, &r, &d1, &d2);
	if (!(d2 < 0))
		return -EDOM;
	*out = (dsp_peak){.tau = tau, .value = r, .curv = d2, .lag0 = best, .second = bv > 0 && second > 0 ? second / bv : 0};
	return 0;
}

double dsp_xcorr_lag(const dsp_xcorr *x, int l)
{
	int n = (int)x->nfft;
	if (n == 0 || l < -(int)x->na + 1 || l > (int)x->nb - 1)
		return 0;
	return x->ta[wrap(l, n)] / (double)n;
}
