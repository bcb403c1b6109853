/* edge.h — where a call begins, from the leading edge of its band
 * envelope, whatever its waveform.
 *
 * A matched filter finds the start of a call that *is* its template to a
 * fraction of a sample, but a pulse train or a call with repeated
 * syllables correlates almost as well a pulse or a syllable later, and a
 * call a few per cent off its template (a pulse more or fewer, another
 * interval) lets the best alignment land on the second or third pulse at
 * one node and the first at another (bench/field's variation row: onsets
 * 30-90 ms apart at the nodes of one call; the recorded duck quack: 84 ms).
 * The leading edge of the sound's energy has no such ambiguity: it is
 * where the first pulse starts, whatever the call's interval or carrier.
 *
 * Method: the clip band-limited to [f_lo, f_hi] as an analytic signal (FFT,
 * the band's positive bins only), its squared magnitude averaged over a
 * centred window of w samples (w about 4 / bandwidth, at least 1 ms: it
 * tames the noise's Rayleigh fluctuation without moving the edge); the
 * noise's mean mu and s.d. from a stretch of the clip known to hold none of
 * the call; the first sample of the search window above mu + k s.d. (k 8) is
 * the sound; A the largest envelope within rise_s after it, less mu; the
 * first crossing of half of A from there, and walking back the crossing of
 * a fifth of it (not 80 %: a pulse train's first pulse may fall short of
 * its louder neighbour's 80 % in noise).  The filter and the smoothing
 * alone make a step's edge span about w + rate / bandwidth samples centred
 * on the start; a 20-50 % rise slower than that is the sound's own taper,
 * which begins at the start, so the start is the half-height crossing less
 * half the taper.  Error: the crossing's jitter (the envelope's noise at
 * half height over the edge's slope), a sample's quantisation, and a tenth
 * of the taper (the shape's bias).  Measured (tests/test_edge): the frog's
 * pulse trains at 6-30 dB, the edge a fixed 27.6 / 8.4-9.1 samples after
 * the start, RMS z 0.3-0.9.
 *
 * Pure: no I/O.  Errors: negative errno with a static reason.
 */
#ifndef CHORUS_DSP_EDGE_H
#define CHORUS_DSP_EDGE_H

#include <stddef.h>

typedef struct {
	double rate_hz;              /* sample rate, Hz */
	double f_lo_hz, f_hi_hz;     /* the call's band, Hz */
	size_t noise_lo, noise_hi;   /* samples of x holding only noise: [noise_lo, noise_hi) */
	size_t search_lo, search_hi; /* the edge is looked for in [search_lo, search_hi) */
	double rise_s;               /* how long after the threshold the first peak is looked for, s (detect: 0.020) */
	double k_sd;                 /* threshold in noise s.d. of the smoothed envelope (e.g. 8) */
	/* Optional (both 0: none): a stretch [other_lo, other_hi) just before
	 * the search window holding another sound, not this call (an earlier
	 * call's leakage into this call's band).  The edge is where this call
	 * rises above it: the threshold is also at least its envelope's mean
	 * plus twice (its largest less its mean), the rise is measured from
	 * its mean where that is above the noise's, its s.d. joins the
	 * crossing's jitter where larger than the noise's, and the rise is
	 * not walked back into it. */
	size_t other_lo, other_hi;
} dsp_edge_params;

typedef struct {
	double t;      /* the call's start, samples from x[0] (fractional) */
	double se;     /* its standard error, samples */
	double rise;   /* the 20-50 % rise time, samples */
	double snr_db; /* peak envelope over the noise's mean, dB */
	size_t smooth; /* the smoothing window w, samples */
} dsp_edge_result;

/* The leading edge of the sound in x (n samples) under p.  Returns 0 with
 * the edge in *out; -EINVAL (bad parameters, a noise stretch under 32
 * samples, windows outside x); -EDOM (nothing above the threshold in the
 * search window, or no clean rise); -ENOMEM.  *why says which. */
int dsp_edge_find(const float *x, size_t n, const dsp_edge_params *p, dsp_edge_result *out, const char **why);

/* The squared magnitude of x's analytic signal in [f_lo_hz, f_hi_hz]
 * (n samples at rate_hz; FFT, the band's positive bins doubled, nothing
 * else) into e[n].  Returns 0 or -ENOMEM. */
int dsp_band_envelope(const float *x, size_t n, double rate_hz, double f_lo_hz, double f_hi_hz, double *e);

#endif
