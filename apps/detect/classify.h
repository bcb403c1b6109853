/* classify.h — which of a profile's templates a call is, when it is none
 * of them exactly: by the shape of its band envelope, over a family of
 * time scales.
 *
 * The refiner (refine.h) picks the template with the largest matched-filter
 * energy-to-noise ratio: for a call that is its template, in white noise,
 * the generalised likelihood ratio.  A pulse train 1 % off its template
 * loses that coherence (its pulses' carrier phases drift apart: the frog's
 * 1.8 kHz train at 1 % off explains none of its energy and drops 24 dB,
 * tests/test_detect), to where a chirp template's partial match of its
 * band wins: bench/field's variation row (every call scaled by up to 5 %)
 * labelled most of source 1's pulse trains as the chirp at some nodes and
 * not at others, and collab, which groups one kind only, split those calls
 * (four of its seven calls not located).
 *
 * The envelope carries no carrier phase.  Each template's band envelope
 * (its magnitude, averaged over 1 ms blocks) with DET_CLASSIFY_MARGIN_S of
 * silence on both sides is stretched to every scale 1 + k DET_CLASSIFY_STEP
 * within +-DET_CLASSIFY_SCALE, and correlated (Pearson) with the clip's
 * envelope in the same band at every start in the search window; a
 * template's score is its best.  The margins make "sound here, none
 * before or after" part of the shape, so a 250-ms sweep (a box) and a train
 * of ten pulses (ten bumps) differ in both directions.  Pure: no I/O.
 */
#ifndef CHORUS_DETECT_CLASSIFY_H
#define CHORUS_DETECT_CLASSIFY_H

#include <stddef.h>

#define DET_CLASSIFY_SCALE 0.06    /* scales searched: 1 +- this at least (det_classifier_new) */
#define DET_CLASSIFY_STEP 0.01     /* … in steps of this */
#define DET_CLASSIFY_BLOCK_S 1e-3  /* envelope block, s */
#define DET_CLASSIFY_MARGIN_S 0.03 /* silence around each template's envelope, s */

typedef struct det_classifier det_classifier;

/* A classifier for n templates (h[i], m[i] samples at rate_hz) in the band
 * [f_lo_hz, f_hi_hz], searching scales 1 +- max(scale, DET_CLASSIFY_SCALE)
 * in steps of DET_CLASSIFY_STEP (a profile stating call-to-call variation
 * widens it: det_refiner_set_variation).  Returns it, or NULL with *why
 * (no templates, a bad band, rate or scale, out of memory). */
det_classifier *det_classifier_new(float *const *h, const size_t *m, int n, double rate_hz, double f_lo_hz,
				   double f_hi_hz, double scale, const char **why);

void det_classifier_free(det_classifier *c);

/* Score every template against clip x (n samples) for a start in
 * [lag_lo, lag_hi] (samples from x[0]): score[i] in -1..1 for template
 * i + 1 (-2 when it cannot be placed: the clip too short).  Returns the
 * 1-based template with the best score, 0 when none could be placed, or
 * -ENOMEM. */
int det_classify(const det_classifier *c, const float *x, size_t n, int lag_lo, int lag_hi, double *score);

/* As det_classify, and where each template's best score lies: lag[i], the
 * start (samples from x[0], a multiple of the envelope's block) of template
 * i + 1 at its best score (-1 when it could not be placed).  lag may be
 * NULL. */
int det_classify_lags(const det_classifier *c, const float *x, size_t n, int lag_lo, int lag_hi, double *score,
		      int *lag);

#endif
