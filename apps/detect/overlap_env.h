/* overlap_env.h — a call of another kind overlapping the one found, when it
 * is none of the templates exactly: found by the shape of its own band's
 * envelope, timed by its leading edge in that band.
 *
 * detect's overlap search (refine.h det_refine_overlaps) subtracts the call
 * found and asks each template's matched filter for half of what is left.
 * A call a few per cent off its template keeps none of the matched
 * filter's coherence (a pulse train's carrier phases drift apart): in
 * bench/field's variation row (every parameter x (1 + 0.05 g)) the 2.6 kHz
 * pulse train under the chirp or after the 1.8 kHz train explained 2-3 %
 * of the residual, and those calls were heard by no node (6 of the row's
 * 31 calls; the recorded and grass rows lost the same ones).
 *
 * Here each template has an envelope classifier (classify.h) of its own,
 * in its own band: the residual's envelope there, correlated with the
 * template's over scales of +-6 %, says whether such a call is in the clip
 * and roughly where (1-ms blocks; a pulse train's envelope matches about
 * as well a pulse interval late).  Where it starts is the sound's leading
 * edge in the template's band (edge.h), looked for from one repetition
 * period of the template (the first shift at which it resembles itself by
 * a half: a pulse interval; none: 5 ms) plus 3 ms before the envelope's
 * start to the period plus 5 ms after it, above the noise before the
 * first call and above what the 30 ms before the search hold (edge.h
 * other_lo: the threshold at least twice that stretch's peak over its
 * mean) — so the edge is where this call rises above whatever the first
 * call leaks into the band.  No edge there: no call (an envelope that fits
 * by chance over the first call's leakage has none).  Only after the
 * first call found (plus min_sep): near its start what is left of it, a
 * varied call the subtraction took little of, fits other envelopes.  The
 * start is the edge less the template's own edge offset, and the call must
 * end by the event's end: a call that begins after the event, its first
 * pulses at the clip's end, fits the envelope pulses early (the chirp's
 * sweep into the band giving it an edge; tests/test_detect_overlap's
 * ghosts) and outlasts the event.  The start's stated error adds that
 * offset in quadrature (no template fits the call, so where its
 * edge lies after its start is known only to about the template's).
 *
 * Pure: no I/O.
 */
#ifndef CHORUS_DETECT_OVERLAP_ENV_H
#define CHORUS_DETECT_OVERLAP_ENV_H

#include <stddef.h>

#include "apps/detect/refine.h"

/* An envelope's best correlation with a template below this is no call of
 * it.  det_refine names a call none fits at 0.5; here the first call's
 * remains share the band (a varied chirp passing through the 2.6 kHz
 * train's band, the 1.8 kHz train's sidebands), so true calls score lower
 * — in bench/field's variation row 0.55-0.98 where they rise clear of the
 * first call, 0.39-0.49 under the chirp — and the edge is the test: a
 * chance fit (0.38-0.59 there, and in tests/test_detect_overlap) has no
 * edge rising above the first call where it placed the call. */
#define DET_OVERLAP_ENV_MIN 0.35

/* A call found so is at least this far from every call found before it,
 * s: within it, two kinds' leading edges are one edge. */
#define DET_OVERLAP_ENV_SEP_S 0.010

typedef struct det_overlap_env det_overlap_env;

/* A template's own band: where 95 % of its energy lies within the
 * profile's [f_lo_hz, f_hi_hz], widened by 10 % each side (calls vary by
 * per cents from their template) and kept within the profile's.  Into
 * *lo, *hi (the profile's band when the template's cannot be measured).
 * detect's events carry it as the call's band. */
void det_template_band(const float *h, size_t m, double rate_hz, double f_lo_hz, double f_hi_hz, double *lo,
		       double *hi);

/* The search for the n templates h[i] (m[i] samples at rate_hz) of refiner
 * r (its edge offsets and self-similarity; det_refiner_set_band done), each
 * in its own band (det_template_band within the profile's [f_lo_hz,
 * f_hi_hz]); call[i] names template i + 1's call type ("" or call NULL:
 * none; profile.h).  Templates whose edge r does not trust (edge.h: a slow
 * rise) are never looked for.  Returns it, or NULL with *why (bad
 * arguments, out of memory). */
det_overlap_env *det_overlap_env_new(const det_refiner *r, float *const *h, const size_t *m, int n, double rate_hz,
				     double f_lo_hz, double f_hi_hz, const char *const *call, const char **why);

void det_overlap_env_free(det_overlap_env *oe);

/* The repetition period used for template t (1-based), samples (0: none). */
double det_overlap_env_period(const det_overlap_env *oe, int t);

/* Calls of another kind than the calls found (found[0..n_found): the
 * primary and the overlaps det_refine_overlaps found; neither their
 * templates nor templates of their call type are looked for) in clip x (n
 * samples: the residual after those were subtracted, band-limited to the
 * profile's band; x[0, noise_hi) holding only noise), each starting in
 * [lag_lo, lag_hi] and at least min_sep
 * samples from every start found, and ending (its template's length less
 * 6 %, the scales searched, of it) by the energy event's end (`end`, samples
 * from x[0], plus 20 ms; 0: not checked): at most one per template, best envelope
 * first, up to max into out[] (template_id, length, at_edge 1, r.tau and
 * r.se, r.se_crb the edge's own error, r.enr_db the edge's SNR; no
 * alternatives).  Returns how many, or -ENOMEM. */
int det_overlap_env_find(const det_overlap_env *oe, const float *x, size_t n, size_t noise_hi, int lag_lo, int lag_hi,
			 size_t end, const det_refine_result *found, int n_found, double min_sep, det_refine_result *out, int max);

#endif
