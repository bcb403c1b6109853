/* xcorr.h — FFT cross-correlation of two real clips with a continuous
 * (band-limited) peak: the engine under GCC-PHAT and the matched filter.
 *
 * Sign convention: with clips a and b whose index 0 is the same instant,
 *     r(tau) = sum_t a(t) b(t + tau)   <=>   R_k = conj(A_k) B_k,
 * so if b(t) = a(t - d) (b hears it d samples later) r peaks at tau = +d.
 *
 * Both clips are zero padded to nfft >= na + nb (a 2^a 3^b 5^c size), so the
 * correlation is linear, not circular, for every lag in [-(na-1), nb-1].
 * The caller may weight R_k in place (PHAT, band limit) before the peak
 * search.  The peak is found on the inverse FFT at integer lags, then
 * refined by Newton's method on the exact band-limited interpolant
 *     r(tau) = (1/N) sum_k c_k Re(R_k exp(2 pi i k tau / N)),
 * c_k = 1 at DC and Nyquist, 2 elsewhere — i.e. ideal (sinc) interpolation,
 * with no parabolic-fit bias.
 *
 * Pure: no I/O.  Plans (FFTW_ESTIMATE) are made when nfft changes and kept.
 * Errors: negative errno.
 */
#ifndef CHORUS_DSP_XCORR_H
#define CHORUS_DSP_XCORR_H

#include <stddef.h>

#include <fftw3.h>

typedef struct dsp_xcorr dsp_xcorr;

typedef struct {
	double tau;    /* lag of the maximum, samples (fractional) */
	double value;  /* r(tau) */
	double curv;   /* r''(tau), per sample^2 (negative at a maximum) */
	int lag0;      /* integer lag of the discrete maximum */
	double second; /* largest other local maximum at integer lags more than
	                 * 2 samples away, over the main one (ambiguity, < 1) */
} dsp_peak;

/* A new correlator.  Returns it, or NULL (out of memory). */
dsp_xcorr *dsp_xcorr_new(void);

/* Free x (NULL is fine). */
void dsp_xcorr_free(dsp_xcorr *x);

/* Smallest 2^a 3^b 5^c >= n. */
size_t dsp_good_size(size_t n);

/* Forget what FFTW's planner remembers (fftwf_forget_wisdom).  Every size
 * ever planned stays in it, even with FFTW_ESTIMATE and the plan
 * destroyed: planning 400 new sizes a round kept 0.1-0.5 MB more each
 * round, flat at 0.4 MB when forgotten after each plan (measured with
 * mallinfo2).  A solver whose transform sizes follow its clips (collab's:
 * every good size up to its longest clips) calls this after each solve.
 * Not thread-safe, as no FFTW planner call is: call it from the thread
 * that plans, with no plan being made elsewhere. */
void dsp_fft_forget(void);

/* Transform a and b (padded to nfft = dsp_good_size(max(na + nb, min_nfft)))
 * and form R = conj(A) B.  Returns 0, -EINVAL (empty clip), -ENOMEM. */
int dsp_xcorr_cross(dsp_xcorr *x, const float *a, size_t na, const float *b, size_t nb, size_t min_nfft);

/* FFT size of the last dsp_xcorr_cross. */
size_t dsp_xcorr_nfft(const dsp_xcorr *x);

/* The cross spectrum R (nfft/2 + 1 bins), writable for weighting. */
fftwf_complex *dsp_xcorr_spec(dsp_xcorr *x);

/* The spectra of a and b themselves (nfft/2 + 1 bins). */
const fftwf_complex *dsp_xcorr_spec_a(const dsp_xcorr *x);
const fftwf_complex *dsp_xcorr_spec_b(const dsp_xcorr *x);

/* r(tau) and its first two derivatives from bins [k_lo, k_hi] of R. */
void dsp_xcorr_eval(const dsp_xcorr *x, double tau, int k_lo, int k_hi,
		    double *r, double *d1, double *d2);

/* The same for any (weighted) cross spectrum R of nfft/2 + 1 bins, e.g. one
 * kept after the correlator moved on to another pair. */
void dsp_spec_eval(const fftwf_complex *R, size_t nfft, double tau, int k_lo, int k_hi, double *r, double *d1,
		   double *d2);

/* The analytic correlation at tau from bins [k_lo, k_hi] of R: *re = r(tau)
 * and *im = its Hilbert transform, so re^2 + im^2 is the squared envelope
 * (the DC and Nyquist bins have no quadrature part). */
void dsp_spec_analytic(const fftwf_complex *R, size_t nfft, double tau, int k_lo, int k_hi, double *re, double *im);

/* Find the largest r at integer lags in [lag_lo, lag_hi] (clamped to the
 * linear range), then refine it on bins [k_lo, k_hi].  Returns 0, or -EDOM
 * (empty lag range, or no maximum: r'' >= 0 everywhere near the peak). */
int dsp_xcorr_peak(dsp_xcorr *x, int lag_lo, int lag_hi, int k_lo, int k_hi, dsp_peak *out);

/* r(l) at integer lag l, after dsp_xcorr_peak (which transformed the
 * cross spectrum back); 0 outside the linear range. */
double dsp_xcorr_lag(const dsp_xcorr *x, int l);

#endif
