/* nullsteer.h — one located sound taken out of a set of clips (null
 * steering; issue 12 item 5, overlapping callers).
 *
 * Two animals calling at once are in every clip.  When one of them (B) is
 * located, its part of each clip is known up to its waveform: at
 * microphone j it arrives at tau_j with amplitude proportional to g_j.  In
 * each frequency bin f the clips' spectra X_j(f) then hold
 *     X_j(f) = g_j exp(-i 2 pi f (tau_j - t0_j)) S(f) + (the rest),
 * with t0_j the clip's start and S(f) B's spectrum (times its unknown
 * emission phase), the same for every j.  The gains g_j (complex: a gain,
 * and a phase that takes in what the arrivals are off by) and S(f) are
 * the best rank-1 fit over the band (alternating least squares from the
 * given gains: the simulator's amplitudes fall as 1 / range, a field's
 * microphones differ by decibels); subtracting it leaves each clip
 * orthogonal to B's fitted steering vector in every bin.  The rest — the
 * other caller A — keeps its own delays, less its projection on B's
 * steering vector (about 1/n of it in each bin, at B's delays: the price
 * of not knowing either waveform).
 *
 * Clips are zero-padded to at least twice the longest before the
 * transform, so the per-bin phase shifts do not wrap data around.  Only the
 * bins in [f_lo_hz, f_hi_hz] are changed (the band the correlations use).
 * Pure: FFTW planning only (not thread safe with other planners).
 */
#ifndef CHORUS_DSP_NULLSTEER_H
#define CHORUS_DSP_NULLSTEER_H

#include <stddef.h>

typedef struct {
	float *x;     /* the clip's samples, changed in place */
	size_t n;     /* how many */
	double t0_s;  /* time of x[0] on the clips' common axis, s */
	double tau_s; /* the located sound's arrival at this microphone on that axis (up to a constant common to
	               * every clip), s */
	double gain;  /* its relative amplitude there (e.g. 1 / range); > 0 */
} dsp_null_clip;

/* Take the sound of the given arrivals and gains out of n >= 2 clips
 * sampled at rate_hz.  *removed (may be NULL): the fraction of the clips'
 * energy in the band that was taken out.  Returns 0, -EINVAL (n < 2, a
 * clip empty, a gain not > 0, the band empty) or -ENOMEM, with *why (may be
 * NULL) saying which. */
int dsp_null_steer(dsp_null_clip *c, int n, double rate_hz, double f_lo_hz, double f_hi_hz, double *removed,
		   const char **why);

#endif
