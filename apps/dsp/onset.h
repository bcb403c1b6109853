/* onset.h — sub-sample onset of a call by matched filter against a
 * template (the call's waveform from its start).
 *
 * r(tau) = sum_t h(t) x(t + tau) over the clip x is computed by FFT and its
 * maximum found on the exact band-limited interpolant (xcorr.h), so tau is
 * where the template starts in x, fractional.  Error model: the Cramer-Rao
 * bound for the delay of a known waveform in white Gaussian noise,
 *     se = 1 / (omega_rms * sqrt(ENR)),  ENR = a^2 sum h^2 / sigma^2,
 *     omega_rms^2 = sum_k w_k^2 |H_k|^2 / sum_k |H_k|^2   (rad/sample)^2,
 * i.e. sigma_t = 1 / (2 pi B_rms sqrt(2 E / N0)), with the amplitude a from
 * the peak (a = r / sum h^2) and the noise sigma^2 from the clip before the
 * onset (at least 32 samples; otherwise from the least-squares residual of
 * the whole clip).  Valid above the ambiguity threshold: a narrow-band
 * template at low ENR can slip a carrier cycle (`second` near 1 warns).
 *
 * Pure: no I/O.  Errors: negative errno with a static reason.
 */
#ifndef CHORUS_DSP_ONSET_H
#define CHORUS_DSP_ONSET_H

#include <stddef.h>

typedef struct {
	double tau;      /* template start in the clip, samples from x[0] */
	double se;       /* standard error of tau, samples (Cramer-Rao) */
	double amp;      /* fitted amplitude a (template units) */
	double noise_sd; /* noise standard deviation, sample units */
	double enr_db;   /* energy-to-noise ratio a^2 sum h^2 / sigma^2, dB */
	double second;   /* runner-up correlation peak over the main one */
} dsp_onset_result;

typedef struct dsp_onset dsp_onset;

/* A refiner for template h (m samples, copied).  Returns it, or NULL with
 * the reason in *why (empty or silent template, out of memory). */
dsp_onset *dsp_onset_new(const float *h, size_t m, const char **why);

/* Free o (NULL is fine). */
void dsp_onset_free(dsp_onset *o);

/* Find the template in clip x (n samples), its start searched in
 * [lag_lo, lag_hi] (samples from x[0]; clamped).  Returns 0; -EINVAL (clip
 * shorter than the template); -EDOM (no peak, or not a positive match);
 * -ENOMEM. */
int dsp_onset_refine(dsp_onset *o, const float *x, size_t n, int lag_lo, int lag_hi,
		     dsp_onset_result *out, const char **why);

#endif
