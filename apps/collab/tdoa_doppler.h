/* tdoa_doppler.h — a moving caller's Doppler measured between two clips
 * and taken out of them before their delay is measured (pure: numbers in,
 * numbers out).
 *
 * A source moving at v hears at node j as s(alpha_j (t - tau_j)), alpha_j =
 * 1 / (1 - v_j / c) with v_j its speed towards the node and tau_j the
 * arrival of the call's start.  Correlating two nodes' clips then measures
 * not tau_j - tau_r but that plus a *coupling* term: for a swept call the
 * frequencies slide by rho = alpha_j / alpha_r, and a sweep matches its
 * slid self best at another lag — for an exponential chirp of rate k =
 * ln(f1/f0) / L, a lag of ln(rho) / k (2.77 s^-1 for 1.2-2.4 kHz over
 * 250 ms: 5 m/s across the array, rho - 1 = 0.03, is 10 ms, 3.5 m of
 * range; bench/field's moving row put its flying chirp 2.5 m ahead on
 * every call).  A pulse train or a tone hardly couples.
 *
 * The remedy is the wideband ambiguity search: clip x_j is resampled about
 * its detected onset p by each rho of a grid over [1 - delta, 1 + delta],
 *     y(t) = x_j(p + (t - p) / rho),
 * and correlated with the reference in the call's band; the rho whose
 * normalised correlation peak is highest (a parabola through the grid's
 * best three) is the clips' scale.  y at that rho is s(alpha_r (t -
 * tau_j)) up to (rho - 1) times the onset's own error: the reference's
 * time scale, so every pair of such clips correlates at its arrival
 * difference and the steered response, the pairs' delays and the solve
 * run on them unchanged.  delta bounds |rho - 1| by what the team states
 * of its callers (2 v_max / c: each of two nodes may see v_max towards or
 * away).
 *
 * What remains of the scale's own error moves the delay by the coupling
 * slope times it: the slope d(lag)/d(rho) is measured on the grid (the
 * peak's lag at the neighbours of the best), the scale's s.d. from the
 * parabola's curvature and the correlation coefficient's noise,
 * (1 - C^2) / sqrt(2 B T) (B the band, T the clip).  Both enter the
 * delay's variance (tdoa_doppler.var_s2).
 *
 * A call is long enough for its Doppler to change (a bird 15 m from a
 * node at 5 m/s turns its line of sight by 5 degrees in 0.25 s): one
 * scale per clip is then the call's mean, and the sweep's ridge trades
 * the difference into delay (0.0016 of scale, 0.8 ms, 0.3 m, stated at
 * 1 cm, in test_tdoa_doppler before this).  So the velocity the scales
 * and the position found say gives each pair's Doppler rate
 * (tdoa_doppler_rate), taken out with the scale, and tdoa_locate runs
 * again with it (TDOA_DOPPLER_PASSES at most).
 */
#ifndef CHORUS_COLLAB_TDOA_DOPPLER_H
#define CHORUS_COLLAB_TDOA_DOPPLER_H

#include <stddef.h>

#include "apps/collab/tdoa.h"
#include "apps/dsp/srp.h"

typedef struct {
	double rho;     /* the clip's time scale over the reference's (1: none) */
	double rho_sd;  /* its standard deviation */
	double slope_s; /* d(delay)/d(rho), s: how far a scale error moves the delay */
	double peak;    /* the normalised correlation at rho (0..1) */
	double peak1;   /* the same at rho = 1 (no compensation) */
	int at_edge;    /* the best scale is the grid's end: beyond delta, rho_sd is the grid's width */
	double var_s2;  /* the delay's variance the scale leaves, s^2: slope^2 rho_sd^2 + ((rho - 1) onset_sd)^2 */
} tdoa_doppler;

/* Measure clip x[n]'s scale against ref[nr] (both at rate_hz, index 0 of x
 * at t0_s after ref's), correlating in [f_lo_hz, f_hi_hz] at lags whose
 * arrival difference is within max_lag_s, x resampled about pivot_s (its
 * onset, s from x's start; onset_sd_s its error) over rho in [rho0 -
 * delta, rho0 + delta], with the curvature quad (1/s: x(pivot + dt / rho + quad
 * dt^2); 0 for none) taken out as well.  Returns 0 with *out; -EINVAL (empty clip, bad band or
 * delta <= 0), -EDOM (no correlation peak at any scale), -ENOMEM. */
int tdoa_doppler_measure(const float *ref, size_t nr, const float *x, size_t n, double t0_s, double rate_hz,
			 double f_lo_hz, double f_hi_hz, double max_lag_s, double pivot_s, double quad, double onset_sd_s,
			 double rho0, double delta, tdoa_doppler *out);

/* x[n] at rate_hz resampled about pivot_s by rho and quad onto the same
 * grid: y[k] = x(pivot + dt / rho + quad dt^2), dt = k / rate - pivot,
 * band-limited interpolation, 0 beyond x's ends.  A new array of n
 * samples (g_free it). */
float *tdoa_doppler_undo(const float *x, size_t n, double rate_hz, double pivot_s, double rho, double quad);

/* Passes of tdoa_locate with the Doppler rate (tdoa_doppler_rate), and
 * how far from the scale found without it the scale is searched again. */
#define TDOA_DOPPLER_PASSES 3
#define TDOA_DOPPLER_AGAIN 0.003

/* tdoa_locate's: each clip sc[j] but the reference's (r, at rate rr) put
 * on the reference's time scale about its onset (g_free'd and replaced
 * in own[j]), with the pair's Doppler rate quad[j] (1/s; NULL: none)
 * taken out as well — then searched within TDOA_DOPPLER_AGAIN of prev's
 * scales; the onsets' errors din[] and the search's gate sp widened by
 * the delay the scale moves detect's template by (detect matched it to
 * the slid call).  Fills out->doppler, rho, rho_sd, doppler_var_s2. */
void tdoa_doppler_compensate(const tdoa_input *in, int n, int r, double rr, const tdoa_params *p, const double *quad,
			     const tdoa_result *prev, dsp_srp_clip *sc, float **own, tdoa_input *din, dsp_srp_params *sp,
			     tdoa_result *out);

/* The caller's velocity from the clips' scales o->rho (with o->rho_sd)
 * and the position o->loc found, and from it each pair's Doppler rate:
 * quad[j] = q_j - q_r, q = v_t^2 / (2 d c) the curvature of a node's
 * arrival time against the emission time (d the range, v_t the velocity
 * across the line of sight: a straight flight's range is convex in
 * time).  rho_j - 1 = v.(u_j - u_r) / c (u the unit vector from the
 * source to a microphone) for every measured scale, solved for v by
 * least squares (damped by 1e-3 of the normal matrix's trace: a flat
 * array barely sees v_z).  Returns 0, or -EDOM (fewer than two scales,
 * no position). */
int tdoa_doppler_rate(const tdoa_input *in, int n, const tdoa_result *o, const tdoa_params *p, double *quad);

#endif
