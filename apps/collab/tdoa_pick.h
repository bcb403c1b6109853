/* tdoa_pick.h — the picks and their solve (private to collab's tdoa).
 *
 * Given the steered response's best source position, each pair (reference
 * r, node j)'s delay is picked at its correlation's largest peak near what
 * that position predicts, the picks are solved (tdoa_solve.h), picked
 * again where the solve put the source, and the answer is checked against
 * the onsets' gate and the closure of the pairs the solve did not use.
 * A pair that slipped to a side lobe is repaired from the correlations
 * alone (tdoa_repair_slip).
 */
#ifndef CHORUS_COLLAB_TDOA_PICK_H
#define CHORUS_COLLAB_TDOA_PICK_H

#include "apps/collab/tdoa.h"
#include "apps/dsp/srp.h"

/* Pick at the SRP position src (searched at the stated speed of sound),
 * solve with the speed free under its prior, pick again where the solve
 * put the source at the speed it found, until the picks stand still (a
 * speed off by its prior's 0.35 % moves the peaks of a 40 m baseline by 7
 * samples, more than a carrier cycle); then the checks of the answer: the
 * onsets' gate where the solve put the source (with prior_outliers
 * allowed), and the closure of the pairs without the reference.  in[n]
 * the inputs, r the reference's index, rr its sample rate (Hz); hint (or
 * NULL): the first round's picks near these lags (samples) instead.
 * Fills *out and idx (the used inputs' indices).  Returns 0 or a negative
 * errno (out->why says). */
int tdoa_pick_and_solve(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
			const tdoa_params *p, int prior_outliers, const double *hint, tdoa_result *out, int *idx);

/* Candidates, not one peak: when the answer in *out (tdoa_pick_and_solve
 * returned rc) did not use every arrival or failed a test, each pair whose
 * correlation has a clearly higher peak within 2 ms of its pick is tried
 * there, the others where they were; a repair that uses every arrival the
 * first answer measured and passes every test replaces *out and idx, unless
 * two different repairs would.  Returns 1 when *out was replaced, else 0. */
int tdoa_repair_slip(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
		     const tdoa_params *p, int prior_outliers, int rc, tdoa_result *out, int *idx);

#endif
