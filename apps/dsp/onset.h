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
 * the whole clip) taken where the template has its energy: the stretch's
 * Hann-windowed periodogram weighted by |H_k|^2 (sigma^2 for white noise; a
 * background loud outside the call's band, wind below a frog's, does not
 * count): se_crb, valid for an exact template above the ambiguity
 * threshold.  noise_sd stays the stretch's plain s.d. (the misfit's
 * reference).
 *
 * A real call is never the template, and a pulse train or a narrow-band
 * call correlates almost as well one pulse or one carrier cycle off, so
 * the stated se adds what the data leave open (issue 12):
 *  - the misfit: the energy under the template that a h does not explain,
 *    beyond the noise, treated as more white noise (misfit_sd), so the
 *    local error is the bound at the effective ENR a^2 sum h^2 /
 *    (sigma^2 + misfit_sd^2);
 *  - the alternatives: every other local maximum r(l) of the correlation
 *    in the search window is the true start with likelihood exp(-z^2/2),
 *    z = (r(best) - r(l)) / sqrt(2 (sigma^2 + misfit_sd^2) sum h^2
 *    (1 - acf(l - best))), acf the template's normalised autocorrelation
 *    (lags alike in the template share their noise); their weighted
 *    spread about tau is a variance (`alternatives`) added to the local
 *    one's;
 *  - the shape: for a call that is the template, the correlation's phase
 *    peak and its envelope's peak coincide (an autocorrelation is
 *    symmetric); a carrier a few per cent off moves the phase peak within
 *    the envelope, a bias of samples that no noise term shows.  Their gap,
 *    where it exceeds 3 s.e. of the envelope's peak (1 / (B_env sqrt(ENR)),
 *    B_env the template's rms bandwidth about its centroid), is model_sd.
 * An exact template at high ENR keeps the bound (no alternative has any
 * weight); a template that explains half a call states tens of
 * milliseconds where its peak may be off by that much.
 *
 * Pure: no I/O.  Errors: negative errno with a static reason.
 */
#ifndef CHORUS_DSP_ONSET_H
#define CHORUS_DSP_ONSET_H

#include <stddef.h>

/* How many of the other alignments a result lists, and the least
 * likelihood (relative to the best) one must have to be listed. */
#define DSP_ONSET_ALT 16
#define DSP_ONSET_ALT_MIN_W 0.1

typedef struct {
	double tau;          /* template start in the clip, samples from x[0] */
	double se;           /* standard error of tau, samples: misfit and alternatives included (below) */
	double se_crb;       /* the Cramer-Rao bound alone (an exact template), samples */
	double amp;          /* fitted amplitude a (template units) */
	double noise_sd;     /* the stretch before the onset: its standard deviation, sample units */
	double misfit_sd;    /* what the template leaves of the call beyond the noise, per sample (sample units) */
	double explained;    /* fraction of the clip's energy under the template that a h explains, 0..1 */
	double alternatives; /* variance of tau from the other alignments the data leave open, samples^2 */
	double model_sd;     /* the shape's bias: phase peak minus envelope peak, when beyond 3 s.e. (else 0), samples */
	double enr_db;       /* energy-to-noise ratio a^2 sum h^2 / sigma^2, dB */
	double second;       /* runner-up correlation peak over the main one */
	/* The other alignments the data leave most open (those in
	 * `alternatives` with likelihood >= DSP_ONSET_ALT_MIN_W of the best's),
	 * heaviest first: where the call may start instead (a recorded call's
	 * template matching several of its syllables; a varied pulse train
	 * one pulse off). */
	int n_alt;
	double alt_tau[DSP_ONSET_ALT]; /* samples from x[0] (integer lags) */
	double alt_w[DSP_ONSET_ALT];   /* likelihood relative to the best (0..1] */
	/* How far before the largest peak the start was taken (an earlier
	 * path: dsp_onset_set_first_arrival), samples; 0: the largest. */
	double lead;
} dsp_onset_result;

typedef struct dsp_onset dsp_onset;

/* A refiner for template h (m samples, copied).  Returns it, or NULL with
 * the reason in *why (empty or silent template, out of memory). */
dsp_onset *dsp_onset_new(const float *h, size_t m, const char **why);

/* Free o (NULL is fine). */
void dsp_onset_free(dsp_onset *o);

/* Echoes come later: look up to `lead` samples before the correlation's
 * largest peak for an earlier path of the call (0, the default: off).  In
 * a reverberant place a call's matched filter has a peak per path, and
 * paths of nearly equal length add, so the largest is often an echo (a
 * chirp in bench/field's room row: 3-6 ms late at five nodes of six, one
 * stating 0.2 ms).  The earliest local maximum r(l) in that stretch that
 * stands DSP_ONSET_FIRST_K noise s.d. of the correlation above what the
 * largest peak's own side lobes put there (the template's autocorrelation
 * envelope, within two carrier cycles of l - best, times the largest) and
 * reaches DSP_ONSET_FIRST_MIN of the largest, at a shift where the template
 * resembles itself by less than DSP_ONSET_FIRST_MIN (a pulse train one
 * pulse early is another alignment, not another path), and where the
 * template's part before the largest peak's start alone matches the clip
 * at least half as well as a path of that amplitude would and
 * DSP_ONSET_FIRST_K noise s.d. clear of nothing (the call begins there: a
 * narrow-band template shifted early matches the reverberation between a
 * pulse train's later pulses with its later part, its first part over the
 * silence before the call), is the direct path (its own main lobe's
 * peak): the
 * start is its peak, its amplitude amp and its error the bound at that
 * amplitude with the later paths as misfit; enr_db and explained stay the
 * largest peak's (how well the template fits the call, whichever path
 * times it).  In free field no such peak exists (a chirp's
 * side lobes, a pulse train's other alignments are what the largest
 * explains), and nothing changes. */
#define DSP_ONSET_FIRST_K 5.0
#define DSP_ONSET_FIRST_MIN 0.25
void dsp_onset_set_first_arrival(dsp_onset *o, int lead);

/* Find the template in clip x (n samples), its start searched in
 * [lag_lo, lag_hi] (samples from x[0]; clamped).  Returns 0; -EINVAL (clip
 * shorter than the template); -EDOM (no peak, or not a positive match);
 * -ENOMEM. */
int dsp_onset_refine(dsp_onset *o, const float *x, size_t n, int lag_lo, int lag_hi,
		     dsp_onset_result *out, const char **why);

#endif
