/* gccphat.h — time delay between two clips by generalized cross-correlation
 * with the phase transform (Knapp & Carter 1976), sub-sample peak.
 *
 * Delay sign: the result d is the delay of b relative to a, in samples:
 * b(t) ~ a(t - d), so d > 0 means b heard the sound later.  Both clips'
 * index 0 must be the same instant (the caller converts clip start times).
 *
 * Weighting: Psi_k = R_k / (|R_k| + eps * mean|R|)^beta inside [f_lo, f_hi],
 * zero outside; eps keeps empty bins from amplifying rounding noise.  beta = 1
 * is pure PHAT (every bin one vote: sharp peak, robust to reverberation, but
 * noise-only bins vote too — so give the call's band); beta < 1 (PHAT-beta,
 * 0.7-0.8 is common) keeps some of the spectral magnitude, which helps
 * narrow-band calls in broadband noise; beta = 0 is plain correlation.
 * Other weightings (`weighting`): SCOT Psi_k = R_k / sqrt(G_aa G_bb) and
 * Roth Psi_k = R_k / G_aa, with the auto-spectra G smoothed over +-smooth_hz
 * (one clip gives one periodogram: unsmoothed, |R_k| = |A_k||B_k| and SCOT
 * would be PHAT again); CC (plain correlation).  PHAT gives the empty bins
 * of a narrow-band call as many votes as the call's; SCOT and Roth weight
 * them by how much of both clips (Roth: of the reference) they hold.
 * Interpolation: Newton on the exact band-limited interpolant of the PHAT
 * correlation (xcorr.h) — no parabolic bias, accuracy limited by noise only.
 * Error estimate: the peak is the M-estimator solving
 *     g(d) = sum_k w_k |Psi_k| sin(phi_k + w_k d) = 0
 * (phi_k the phase of Psi_k); its sandwich variance from the residual
 * phases, times the zero-padding oversampling factor (neighbouring bins of a
 * padded spectrum are correlated), see docs/localization.md.  That is the
 * error once the right peak is picked; for narrow-band calls at low SNR the
 * peak can slip a whole carrier cycle — `second` flags that risk.
 *
 * Pure: no I/O.  Errors: negative errno with a static reason.
 */
#ifndef CHORUS_DSP_GCCPHAT_H
#define CHORUS_DSP_GCCPHAT_H

#include <stddef.h>

#include <fftw3.h>

typedef enum {
	DSP_GCC_PHAT = 0, /* phase transform (with beta) */
	DSP_GCC_SCOT = 1, /* smoothed coherence transform */
	DSP_GCC_ROTH = 2, /* Roth: the reference's smoothed auto-spectrum */
	DSP_GCC_CC = 3,   /* no weighting */
} dsp_gcc_weighting;

typedef struct {
	double rate_hz;              /* sample rate of both clips, Hz */
	double f_lo_hz, f_hi_hz;     /* band used, Hz; f_hi <= 0 means up to Nyquist */
	double eps;                  /* PHAT regularisation, fraction of the mean |R| (e.g. 1e-3) */
	double beta;                 /* PHAT exponent, 0..1 (1 = pure PHAT) */
	int max_lag;                 /* largest |delay| searched, samples; <= 0: every lag */
	dsp_gcc_weighting weighting; /* PHAT (default), SCOT, Roth, CC */
	double smooth_hz;            /* auto-spectrum smoothing half-width for SCOT and Roth, Hz */
} dsp_gcc_params;

typedef struct {
	double delay;  /* delay of b relative to a, samples */
	double se;     /* standard error of delay, samples */
	double peak;   /* PHAT coherence at the peak, 0..1 (1 = every bin's phase agrees) */
	int nbins;     /* frequency bins used */
	double second; /* runner-up peak over the main one (0..1): near 1 means
	                    * a neighbouring carrier cycle or pulse nearly ties, a
	                    * cycle slip risk that se does not include */
} dsp_gcc_result;

typedef struct dsp_gcc dsp_gcc;

/* Fill *p with defaults: 48 kHz, whole band, eps 1e-3, beta 1, every lag,
 * PHAT, smoothing 30 Hz. */
void dsp_gcc_params_default(dsp_gcc_params *p);

/* A new estimator.  Returns it, or NULL with the reason in *why. */
dsp_gcc *dsp_gcc_new(const dsp_gcc_params *p, const char **why);

/* Free g (NULL is fine). */
void dsp_gcc_free(dsp_gcc *g);

/* Delay of b relative to a.  Returns 0; -EINVAL (empty clip, band empty at
 * this size); -EDOM (no peak: silent or constant clips); -ENOMEM.  The reason
 * goes to *why. */
int dsp_gcc_delay(dsp_gcc *g, const float *a, size_t na, const float *b, size_t nb,
		  dsp_gcc_result *out, const char **why);

/* The same, searching only lags in [lag_lo, lag_hi] samples (e.g. around a
 * prior from the coarse onsets, to stay off the neighbouring pulse of a
 * periodic call).  Same returns. */
int dsp_gcc_delay_window(dsp_gcc *g, const float *a, size_t na, const float *b, size_t nb,
			 int lag_lo, int lag_hi, dsp_gcc_result *out, const char **why);

/* Name of a weighting ("phat", "scot", "roth", "cc"), and back: returns
 * 0, or -EINVAL for an unknown name. */
const char *dsp_gcc_weighting_name(dsp_gcc_weighting w);
int dsp_gcc_weighting_parse(const char *name, dsp_gcc_weighting *w);

/* Bins [*k_lo, *k_hi] of p's band at FFT size nfft (DC and Nyquist left
 * out).  Returns 0, or -EINVAL when the band holds no bin. */
int dsp_gcc_band(const dsp_gcc_params *p, size_t nfft, int *k_lo, int *k_hi);

/* Weight the cross spectrum R = conj(A) B (nfft/2 + 1 bins) in place as p
 * says, zero outside [k_lo, k_hi]; *wsum = sum of 2 |Psi_k| (the value of
 * a correlation whose every bin agrees: divide by it, times nfft, for a
 * coherence in -1..1).  Returns 0, or -EDOM (no signal in the band). */
int dsp_gcc_weigh(const dsp_gcc_params *p, fftwf_complex *R, const fftwf_complex *A, const fftwf_complex *B,
		  size_t nfft, int k_lo, int k_hi, double *wsum);

/* Sandwich standard error (samples) of a peak at tau of the weighted
 * spectrum Psi (see above); L = the longer clip's length (the padding's
 * oversampling factor is nfft / L). */
double dsp_gcc_se(const fftwf_complex *Psi, size_t nfft, int k_lo, int k_hi, double tau, size_t L);

#endif
