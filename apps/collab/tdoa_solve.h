/* tdoa_solve.h — arrivals to a position (pure): the solve tdoa_locate
 * makes from the correlation's arrivals and from the detected onsets alike.
 *
 * The arrivals are r->a_s[i] with standard errors r->sigma_s[i] for the
 * inputs idx[0..m-1]; in[i].mic_m are the microphones.  With a known
 * source height (p->source_z_m finite) a 2-D solve corrected for each
 * microphone's height difference, iterated on the estimate.  Without
 * one, dsp_locate's own choice (2-D in the plane, or the folded 3-D
 * solve); a 2-D answer then has the height marginalised over the plane
 * down to p->depth_m below it (a grid of heights weighted by each one's
 * likelihood; the covariance by the law of total covariance, the
 * chi-square the best height's with one degree of freedom fewer, four
 * arrivals `untested`: tdoa_solve.c says why).
 */
#ifndef CHORUS_COLLAB_TDOA_SOLVE_H
#define CHORUS_COLLAB_TDOA_SOLVE_H

#include "apps/collab/tdoa.h"

/* Solve the arrivals of idx[0..m-1] (above) into *loc: dsp_locate's
 * return (0, or -EDOM with loc->status and loc->why saying why).  idx is
 * not changed (int * for dsp_locate's rejection bookkeeping only). */
int tdoa_solve(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, int *idx, int m,
	       dsp_loc_result *loc);

/* The factor an answer's covariance is scaled by for its misfit: chi2/dof
 * when that exceeds 1 and either the clips were separated (another caller
 * taken out: what the projection left) or the chi-square's upper tail
 * probability is below TDOA_MISFIT_Q (the stated errors too small to
 * explain the residuals); else 1.  Pure. */
double tdoa_misfit_scale(const dsp_loc_result *loc, int separated);

#endif
