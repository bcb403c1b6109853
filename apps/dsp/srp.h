/* srp.h — where a sound came from, by the steered response power of every
 * pair's generalized cross-correlation (SRP-PHAT, DiBiase 2001), and each
 * pair's delay at the lag a position predicts.
 *
 * Clips i = 0..n-1 sample one time base at one rate R (the caller puts them
 * on one sample period, apps/dsp/wave.h); x_i[0] is at t0_i seconds of a
 * common reference.  For each pair i < j the weighted correlation
 * (gccphat.h: PHAT, SCOT, Roth or CC, in the call's band) is formed once
 * over every physically possible lag: an arrival difference a_j - a_i can
 * be no larger than the microphones' distance over the slowest speed of
 * sound the prior allows (c - 4 c_sd - |wind|), plus 4 s.d. of the two
 * clips' time and of the two positions' survey error.  The correlation is
 * kept 4x oversampled as its analytic signal z(tau): Re z is the
 * correlation, |z| its envelope; both normalised so that a pair whose every
 * bin agrees scores 1 (the PHAT coherence).
 *
 * Steered response power of a position p (on the plane z = z_m):
 *     S(p) = mean over pairs of Re z_ij(d_ij(p)),
 *     d_ij(p) = (r_j / (c + w.u_j) - r_i / (c + w.u_i) - (t0_j - t0_i)) R,
 * r the ranges, u the unit vectors from p to the microphones.  No pair's
 * best peak is trusted on its own: a narrow-band call correlates at every
 * carrier cycle and a reflection adds a peak, but only the true position
 * puts every pair on its true peak at once.
 *
 * Search: best-first branch and bound over squares of the area (the
 * microphones' bounding box plus margin_m), from 8 m squares down to
 * points 8 mm apart, 4 x 4 children per square.  A square's bound is the
 * mean over pairs of the largest |z| (squares over 10 cm) or Re z within
 * the lags its points can produce (a range difference changes by at most
 * twice the distance moved), so a point that beats every square left is
 * the global maximum, not a local one: squares whose bound does not beat
 * the best point seen so far are never kept (after 20000 splits, the best
 * point seen).  An uncertain speed of sound
 * (c_sd_m_s > 0) is a third dimension of the search over c +- 4 s.d.,
 * split with the squares into cells fine enough that the largest travel
 * difference moves by a quarter sample: a speed off by its prior's 0.35 %
 * moves the peaks of a 40 m baseline by 7 samples, more than a carrier
 * cycle, so no position alone fits every pair.  An array not in one
 * plane (microphones on masts) sees the height: z_lo_m < z_hi_m makes the
 * squares cubes and the search 3-D.
 *
 * Overlapping callers: two animals calling at once put both sources and
 * their ghosts (one's arrival at a node with the other's at another) in
 * every pair.  With the gate of use_prior (the onsets of one group of
 * detections), the search keeps to the positions those onsets allow, so
 * each group finds its own caller.
 *
 * Pure: no I/O.  FFTW plans are made per FFT size with FFTW_ESTIMATE (not
 * thread safe: one thread per process plans, as everywhere in apps/dsp).
 */
#ifndef CHORUS_DSP_SRP_H
#define CHORUS_DSP_SRP_H

#include <stddef.h>

#include "apps/dsp/gccphat.h"

#define DSP_SRP_MAX 64 /* most clips (as many as the solver takes, DSP_LOC_MAX) */
#define DSP_SRP_ALT 6  /* most alternative arrivals per clip in the onsets' gate */

typedef struct {
	const float *x; /* samples at rate R (not copied: valid until dsp_srp_free) */
	size_t n;
	double t0_s;     /* time of x[0] relative to a common reference, s */
	double t0_sd_s;  /* its standard uncertainty, s */
	double pos_m[3]; /* microphone, m */
} dsp_srp_clip;

typedef struct {
	dsp_gcc_params gcc;    /* rate, band, weighting of the correlations */
	double c_m_s;          /* speed of sound, m/s */
	double c_sd_m_s;       /* its uncertainty, m/s (widens the lag ranges) */
	double pos_sd_m;       /* survey s.d. of the microphones per axis, m */
	double wind_m_s[3];    /* wind velocity, m/s */
	double z_m;            /* height of the searched plane, m */
	double z_lo_m, z_hi_m; /* z_hi_m > z_lo_m: heights searched too, in cubes (an array
	                        * not in one plane: its plane's ranges are metres off) */
	double margin_m;       /* searched area beyond the microphones' bounding box, m */
	/* A gate from coarse arrival times (detections' onsets), optional: a
	 * position is searched only where the onsets minus its travel times
	 * (each an estimate of the emission) agree with their median within
	 * prior_k s.d. (plus the cell's own reach) at all but prior_outliers
	 * clips. */
	int use_prior;
	double prior_s[DSP_SRP_MAX];    /* arrival at clip i, s (the clips' reference) */
	double prior_sd_s[DSP_SRP_MAX]; /* its s.d., s (with the template's misfit) */
	double prior_k;
	int prior_outliers;
	/* Other arrivals each onset leaves open (a template matching another
	 * syllable of a recorded call, a pulse train one pulse off), each as
	 * good as prior_s, with the same s.d., for the onsets' joint test
	 * (dsp_srp_gate_chi2) — never for the search's gate, which stays on
	 * prior_s: candidates a pulse interval apart under a 5 ms floor cover
	 * most lags, and the gate would no longer keep another caller's place
	 * out. */
	int prior_n_alt[DSP_SRP_MAX];                 /* 0..DSP_SRP_ALT */
	double prior_alt_s[DSP_SRP_MAX][DSP_SRP_ALT]; /* relative to prior_s, s */
} dsp_srp_params;

typedef struct {
	double pos_m[3]; /* the position (z = z_m) */
	double c_m_s;    /* the speed of sound that fits it best (c_m_s when exact) */
	double power;    /* S there, -1..1 */
} dsp_srp_source;

typedef struct {
	double delay;  /* arrival at j minus arrival at i, samples of R, as the pair
	                * correlation's peak nearest the prediction says */
	double se;     /* its sandwich standard error, samples (gccphat.h) */
	double peak;   /* the correlation there, -1..1 */
	double second; /* the best other local maximum more than a sample away in
	                * the window, over this one (0..1): near 1, a neighbouring
	                * carrier cycle nearly ties */
} dsp_srp_delay;

typedef struct dsp_srp dsp_srp;

/* Defaults: gcc defaults (PHAT), c 343, exact; plane z 0, margin 10 m,
 * no onsets' gate. */
void dsp_srp_params_default(dsp_srp_params *p);

/* Correlate every pair of the n clips (2..DSP_SRP_MAX).  Returns the bank,
 * or NULL with the reason in *why (bad parameters, an empty clip, a band
 * without bins, out of memory).  A pair with no common signal in the band
 * is kept with zero correlation. */
dsp_srp *dsp_srp_new(const dsp_srp_clip *c, int n, const dsp_srp_params *p, const char **why);

/* Free s (NULL is fine).  The memory its searches used (their heap of
 * squares, up to ~20 MB for a search that runs out of splits) is kept for
 * the next dsp_srp this thread makes, one at a time: collab makes one per
 * call, and mapping those pages afresh for every call was a third of its
 * time in a reverberant room (tests/test_tdoa_onsets: 68.3 -> 32.4
 * cpu-s). */
void dsp_srp_free(dsp_srp *s);

/* S(p) (with p[2] ignored: the plane's height is used). */
double dsp_srp_power(const dsp_srp *s, const double p[3]);

/* The onsets' joint test at the point p (speed c_m_s, <= 0: the bank's):
 * each onset minus its travel time from p estimates the emission; the
 * chi-square of those estimates about their weighted mean, each weighed by
 * its prior_sd_s, after leaving out the `drop` worst (one at a time, the
 * mean recomputed; never below two kept).  A clip with alternative
 * arrivals (prior_alt_s) takes the candidate nearest the emission most
 * clips agree on.  *dof = clips kept - 1.  NAN without a gate.  Stricter than the per-clip gate of the search, which
 * lets every clip but prior_outliers stray prior_k s.d.: positions whose
 * travel times match the onsets only that loosely (another caller's place,
 * seen with this call's onsets) fail it. */
double dsp_srp_gate_chi2(const dsp_srp *s, const double p[3], double c_m_s, int drop, int *dof);

/* The position of largest power (inside the gate, if any).  Returns 0, or
 * -EDOM (the gate leaves no position), -ENOMEM. */
int dsp_srp_search(dsp_srp *s, dsp_srp_source *out);

/* The same, leaving out every point within radius_m of avoid (x, y): the
 * best other explanation of the clips (a pulse train's correlations repeat
 * every pulse interval, and positions that shift every pair by whole
 * intervals can score nearly as well as the source).  Same returns. */
int dsp_srp_search_avoiding(dsp_srp *s, const double avoid[2], double radius_m, dsp_srp_source *out);

/* Whether any point farther than radius_m from avoid (x, y) (NULL: none
 * left out) has power >= floor: the search's bounds prune every square
 * that cannot reach the floor, and the first point at or above it ends the
 * search, so the answer is exact and much cheaper than the best other
 * point.  Returns 0 with *found (a point at or above the floor, not
 * necessarily the best), -ENOENT (no point reaches the floor, or the gate
 * leaves none), -EAGAIN (undecided: the split budget ran out first),
 * -EINVAL (floor not finite), -ENOMEM.  ungated: the onsets' gate
 * (use_prior) is left out for this search: any sound in the clips, not
 * only one the onsets allow. */
int dsp_srp_search_above(dsp_srp *s, const double avoid[2], double radius_m, double floor, int ungated,
			 dsp_srp_source *found);

/* dsp_srp_search_above (gated) with the onsets' gate drawn as tight as the
 * caller's check of an answer: each clip's s.d. sd_s[i] (s), k s.d. and
 * `outliers` clips allowed beyond, in place of the bank's prior_sd_s,
 * prior_k and prior_outliers for this search (the onsets themselves,
 * prior_s, kept).  A second explanation of the clips the onsets would
 * refuse as they refuse a wrong answer is none.  Same returns; -EINVAL
 * also when k is not > 0 or the bank has no gate. */
int dsp_srp_search_above_within(dsp_srp *s, const double avoid[2], double radius_m, double floor, const double *sd_s,
				double k, int outliers, dsp_srp_source *found);

/* The position of largest power within radius_m (> 0) of near (x, y):
 * the squares reaching into that disc are searched (the point found may
 * lie up to a finest square's reach beyond it).  ungated: the onsets'
 * gate left out.  Returns as dsp_srp_search (-EINVAL: no centre, or a
 * radius not > 0). */
int dsp_srp_search_near(dsp_srp *s, const double near[2], double radius_m, int ungated, dsp_srp_source *found);

/* A source found on the plane, refined in 3-D: heights from the plane
 * z_m down to depth_m below it (an array in one plane hears a source above
 * it as its mirror image below: x and y are the same), x and y within 40
 * cm, at the source's speed.  Near a microphone the plane's ranges are
 * decimetres off for a source a metre below it (sqrt(h^2 + dz^2) - h): a
 * carrier cycle or more, which the pairs' peaks would be picked at.
 * Returns 0 with *out (the plane's point itself when nothing beats it),
 * -EINVAL (depth < 0). */
int dsp_srp_refine_height(const dsp_srp *s, const dsp_srp_source *in, double depth_m, dsp_srp_source *out);

/* Delay of the pair (i, j) (any order) at the largest correlation peak
 * within +-half_samples of the lag that position p (3-D: the solver's
 * answer may leave the plane) and speed of sound c_m_s (<= 0: the bank's)
 * predict, refined on the exact band-limited correlation.  Returns 0, or
 * -EDOM (no maximum there), -EINVAL (i == j or out of range). */
int dsp_srp_delay_at(const dsp_srp *s, int i, int j, const double p[3], double c_m_s, double half_samples,
		     dsp_srp_delay *out);

/* The same around a given arrival difference `lag` (at j minus at i,
 * samples; e.g. two other pairs' delays combined, for a closure check). */
int dsp_srp_delay_near(const dsp_srp *s, int i, int j, double lag, double half_samples, dsp_srp_delay *out);

/* The arrival difference, at j minus at i, that a source at p (3-D) predicts
 * at speed c_m_s (<= 0: the bank's), samples. */
double dsp_srp_predict(const dsp_srp *s, int i, int j, const double p[3], double c_m_s);

#endif
