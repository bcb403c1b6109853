/* refine.h — sub-sample onset with several candidate templates: each is
 * matched against the clip (apps/dsp/onset.h) and the best match wins, the
 * one with the largest energy-to-noise ratio (for a known waveform in white
 * noise that is the generalised likelihood ratio, so it also picks the right
 * species or call type).  Pure: no I/O.
 */
#ifndef CHORUS_DETECT_REFINE_H
#define CHORUS_DETECT_REFINE_H

#include <stddef.h>

#include "apps/dsp/edge.h"
#include "apps/dsp/onset.h"

#define DET_REFINE_MAX 8

/* The edge finder's settings (edge.h), the same for a template and a clip
 * (so their offsets compare): the first peak within 20 ms of the
 * threshold, the threshold 8 noise s.d. */
#define DET_EDGE_RISE_S 0.020
#define DET_EDGE_K_SD 8.0

typedef struct det_refiner det_refiner;

typedef struct {
	int template_id;    /* 1-based template that won */
	dsp_onset_result r; /* its onset: tau (samples from clip[0]), se, ENR … */
	size_t length;      /* its length, samples */
	int at_edge;        /* 1: the start was searched near the sound's leading edge (det_refine_at_edge) */
	double explained;   /* fraction of the clip's energy under the template that the
	                           * fitted template explains, amp^2 sum h^2 / sum x^2 (0..1;
	                           * filled by det_refine_all) */
	double halves;      /* the smaller over the larger of the amplitudes fitted to
	                           * the template's two halves (det_refine_halves; filled
	                           * by det_refine_all) */
} det_refine_result;

/* A refiner for n templates (h[i], m[i] samples; copied).  Returns it, or
 * NULL with the reason in *why (n out of 1..DET_REFINE_MAX, an empty or silent
 * template, out of memory). */
det_refiner *det_refiner_new(float *const *h, const size_t *m, int n, const char **why);

/* Free r (NULL is fine). */
void det_refiner_free(det_refiner *r);

/* State how far real calls may differ from their templates: every time
 * scale (and with it every frequency) by up to +-variation (0.03: 3 %).
 * Each template's onset bias under such a call is measured once, here,
 * noise-free (the template stretched about its start by 16 factors evenly
 * over 1 +- variation and matched against itself; the RMS of the onset's
 * shifts), and joins the stated error of every onset that template gives
 * (in quadrature): a pulse train
 * 3 % slower aligns its middle pulses, not its first, and a carrier 3 %
 * off moves the phase peak by a fraction of a cycle — biases no noise term
 * and no single call can show.  The classifier that names a call no
 * template explains (classify.h) then searches scales 1 +- 2.5 variation
 * (at least its fixed 6 %): a relative s.d. of 5 % draws pulse intervals
 * 9 % short often enough.  0 (the default): the calls are the
 * templates.  Returns 0, or -EINVAL (variation outside 0..0.5) / -ENOMEM. */
int det_refiner_set_variation(det_refiner *r, double variation);

/* The bias set for template t (1-based), samples (0 without a variation). */
double det_refiner_variation_bias(const det_refiner *r, int t);

/* How far template t's (1-based) matched onset moves when the call is
 * stretched by a relative rate error: samples of onset shift per unit of
 * stretch (a call k = 1 + eps times its template's length comes out
 * eps * this later than its start).  A sound card fast by eps against the
 * clock its onsets are timed in records every call eps longer in frames,
 * and the matched filter aligns the call's weight, not its start (a pulse
 * train: about its middle, ~0.1 s: 40 ppm moves it 4-5 us).  Measured at
 * det_refiner_new (the template against itself stretched by 1 +- 1e-4, as
 * det_refiner_set_variation does); 0 for an unknown t. */
double det_refiner_rate_shift(const det_refiner *r, int t);

/* Measure where each template's own leading edge lies after its start
 * (apps/dsp/edge.h on the template alone, in the band [f_lo, f_hi] at
 * rate_hz, under a noise 30 dB below its RMS): det_refine_at_edge expects a
 * call's template start that far before the clip's edge.  A template whose
 * edge moves by more than 1 ms when the noise is 10 dB below it (a call
 * that rises slowly or has a weak first part: its edge is where it clears
 * the noise, earlier at a near node than at a far one) is not used at the
 * edge.  With two templates or more it also builds the envelope
 * classifier det_refine uses (classify.h) for that band.  Returns 0;
 * -EINVAL when no template's edge is usable; -ENOMEM. */
int det_refiner_set_band(det_refiner *r, double rate_hz, double f_lo_hz, double f_hi_hz);

/* Template t's (1-based) edge offset, samples (0 before
 * det_refiner_set_band); its move between 30 and 10 dB in *spread and
 * whether it is used in *usable (either may be NULL). */
double det_refiner_edge_offset(const det_refiner *r, int t, double *spread, int *usable);

/* How many of det_refine's choices the envelope classifier made so far. */
/* How many of det_refine's choices went past the loudest match because it
 * explained little and only one half of its template, to a template that
 * explains both halves alike. */
int det_refiner_halves_chosen(const det_refiner *r);

int det_refiner_classified(const det_refiner *r);

/* Longest template, samples. */
size_t det_refiner_max_len(const det_refiner *r);

/* Best onset of any template in clip x (n samples) with its start in
 * [lag_lo, lag_hi].  Which template: the largest ENR, unless every
 * template's own match explains less than a fifth of the energy under it
 * (none is the call) and det_refiner_set_band
 * was done with two templates or more — then the one whose band envelope
 * the clip's resembles most over scales of +-6 % (classify.h), when that
 * correlation reaches 0.5 and beats the largest ENR's by 0.1; its own best
 * onset.  Returns 0 and *out; -EDOM
 * when the match has an ENR under min_enr_db (or none fits the clip),
 * reason in *why. */
int det_refine(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, double min_enr_db,
	       det_refine_result *out, const char **why);

/* As det_refine, but each template's start is looked for only near where
 * the sound's leading edge (edge, from dsp_edge_find on the same clip)
 * puts it: edge->t less the template's edge offset, +- 4 edge s.e. plus a
 * quarter of the offset (a call a few per cent off its template moves its
 * edge by that much) plus half a millisecond.  A pulse train or a call of
 * repeated syllables matches almost as well a pulse or a syllable late;
 * the edge, which no such repetition moves, says which alignment is the
 * call's start, so the other alignments leave the window and the stated
 * error with them.  The edge must agree with the templates: when the best
 * match near it has an ENR more than 3 dB below the best anywhere in
 * [lag_lo, lag_hi] (the edge rose on something else: a noise burst, the
 * tail of an earlier call) the unconstrained match is returned (at_edge
 * 0).  A match pinned to the window's end is no longer the local peak: the
 * window's half-width joins its error.  Returns as det_refine. */
int det_refine_at_edge(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, const dsp_edge_result *edge,
		       double min_enr_db, det_refine_result *out, const char **why);

/* What detect does with a call's clip: the sound's leading edge found in
 * the profile's band [f_lo, f_hi] (x[0, noise_hi) holding only noise, the
 * edge looked for from noise_hi to a quarter of `size` past lag_hi), and
 * det_refine_at_edge with it; det_refine when no edge is found or
 * det_refiner_set_band was not done.  *edge_found (may be NULL) says
 * whether an edge was found.  Returns as det_refine. */
int det_refine_clip(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, size_t noise_hi, size_t size,
		    double f_lo_hz, double f_hi_hz, double min_enr_db, det_refine_result *out, int *edge_found,
		    const char **why);

/* Subtract the matched call of res (its template at res->r.tau, scaled by
 * res->r.amp; fractional shift by phase, apps/dsp/synth.h) from x in place,
 * so that a second call overlapping it can be looked for in the residual.
 * Returns 0 or -ENOMEM / -EINVAL (res from another refiner). */
int det_refine_subtract(det_refiner *r, float *x, size_t n, const det_refine_result *res);

/* How evenly the match res explains clip x (n samples): the template's two
 * halves (split where half its energy lies before) fitted alone at the
 * match's start (rounded), the smaller amplitude over the larger (0..1; 0
 * when either is <= 0; 1 for a template with an empty half).  A call
 * matched where it is: near 1 (noise and the call's variation apart); a
 * match that hangs over the call's start (a pulse train matched pulses
 * early because the clip ends before the call does, its first pulses over
 * nothing): near 0.  Pure. */
double det_refine_halves(const det_refiner *r, const float *x, size_t n, const det_refine_result *res);

/* Every template's own best match (all[i] for template i + 1; all[i].template_id
 * is 0 when it did not match at all).  Returns the number of templates. */
int det_refine_all(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, det_refine_result *all);

/* The same template matched again after a call of it was subtracted is a
 * further call only where the template does not resemble itself at that
 * shift: its autocorrelation's envelope there (the largest |R| within 1
 * ms, over R(0)) below this.  A periodic call's side peaks (a pulse
 * interval off: 0.9 for the frog's ten-pulse train) feed on what is left
 * of the call subtracted; the same species calling again 50 ms later, its
 * pulses between the first's (bench/field's overlap row), resembles
 * nothing there (0), and a second call whose pulses fall on half the
 * first's (0.5) cannot be told from that rest.  Before, every match of
 * the same template within half a call was refused: bench/field's overlap
 * row lost every second call 50-150 ms after the first. */
#define DET_OVERLAP_SELF 0.25

/* The other starts res leaves most open (its dsp_onset alternatives, most
 * likely first), as offsets from res->r.tau in samples, each more than 1
 * ms from the start and from every offset kept: at most max to off[].
 * Returns how many.  Pure. */
int det_refine_alternatives(const det_refiner *r, const det_refine_result *res, double *off, int max);

/* How much template template_id resembles itself shifted by `shift`
 * samples: the largest |autocorrelation| within 1 ms of the shift over its
 * energy (0..1; 1 at 0; 0 past the template's length or for an unknown
 * id).  Pure. */
double det_refiner_self_similarity(const det_refiner *r, int template_id, double shift);

/* Other calls overlapping the one found (`primary`) in clip x (n samples,
 * modified: each call found is subtracted): successive cancellation.  After
 * each subtraction every template is matched again in [lag_lo, lag_hi]; the
 * best match counts as a further call when its ENR >= min_enr_db, it explains
 * at least `min_explained` of the energy under it (at high SNR a wrong
 * template reaches a large ENR on any call's energy — the remains of the one
 * subtracted, the tail of a previous call — but explains little of it), and
 * it starts at least min_sep samples from every call found, and where its
 * template resembles itself by less than a quarter at its shift from a
 * call found of the same template (det_refiner_self_similarity: a
 * periodic call's side peaks feed on what is left of the call subtracted;
 * a second call of the species, its pulses between the first's, is
 * found), and it explains both halves of its template
 * alike (det_refine_halves >= 0.5: a call that begins after the event, its
 * first pulses at the clip's end, matches pulses early with half its
 * template over nothing).  Up to max calls go to out[].  Returns how many. */
int det_refine_overlaps(det_refiner *r, float *x, size_t n, int lag_lo, int lag_hi, const det_refine_result *primary,
			double min_enr_db, double min_explained, double min_sep, det_refine_result *out, int max);

#endif
