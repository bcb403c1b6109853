/* srp_prior.h — the onsets' gate of the steered response (srp.h's
 * use_prior), on the emission estimates: each clip's onset minus its
 * travel time from a candidate position, e[k] (s).  Pure; srp.c computes
 * the estimates for each position it searches or tests. */
#ifndef CHORUS_DSP_SRP_PRIOR_H
#define CHORUS_DSP_SRP_PRIOR_H

#include "apps/dsp/srp.h"

/* Clips whose estimate lies farther from the estimates' median than
 * prior_k of its prior_sd_s plus slack (the search's gate: the onsets'
 * alternatives are not taken; the median, not the reference's, since the
 * reference's own onset may be the one that is off). */
int dsp_srp_prior_misfits(const dsp_srp_params *p, int n, const double *e, double slack);

/* The onsets' joint test (dsp_srp_gate_chi2) on the estimates e[0..n):
 * each clip's candidate (its estimate, or it plus one of its
 * prior_alt_s) nearest the emission most of them agree on, the
 * chi-square of those about their weighted mean, the `drop` worst left
 * out one at a time (the mean recomputed; never below two kept).  *dof =
 * clips kept - 1. */
double dsp_srp_prior_chi2(const dsp_srp_params *p, int n, const double *e, int drop, int *dof);

#endif
