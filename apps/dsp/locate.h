/* locate.h — source position from arrival times at known microphone
 * positions, with unknown emission time (TDOA localisation).
 *
 * Model: t_i = t0 + |p - m_i| / c + e_i,  e_i ~ N(0, sigma_i^2) independent.
 * Unknowns p (2-D or 3-D, m) and t0 (s).  Solution: a closed-form start
 * (linear least squares in (p, t0, |p|^2 - c^2 t0^2), unweighted), refined
 * by GSL gsl_multifit_nlinear Levenberg-Marquardt (trust region,
 * gsl_multifit_nlinear_trs_lm) on the whitened residuals e_i / sigma_i; when
 * the closed form is unavailable or the fit is poor, LM is restarted from a
 * ring of points around and beyond the array and the best chi-square wins.
 *
 * An uncertain speed of sound (c_sd_m_s > 0) makes c = s c0 a further
 * unknown with the prior residual (s - 1) / (c_sd / c0): the answer's
 * covariance then carries the speed's uncertainty (as far as the arrivals
 * do not pin it), and the chi-square (same dof: one more residual, one more
 * unknown) includes how far the fit had to move c.
 *
 * Covariance: (J^T J)^-1 of the whitened Jacobian at the solution, NOT
 * rescaled by chi2/dof — the sigmas are known, so the spread of the
 * residuals is a test of the model (chi2, p_value), not an input to the
 * error bars.  Consistency: chi2 ~ chi2(N - dim - 1); if it fails at level
 * alpha and N >= dim + 3, each arrival is left out in turn and the subset
 * with the best p-value is kept if it passes (one arrival at most).
 *
 * Degeneracy is reported, never answered confidently: fewer than dim + 2
 * arrivals (no redundancy: the minimal case has up to two solutions and no
 * check) -> DSP_LOC_TOO_FEW; microphones of affine rank < dim (collinear for
 * 2-D, coplanar for 3-D) -> DSP_LOC_DEGENERATE; both return -EDOM with the
 * covariance set to +inf.  A whitened Jacobian with condition number above
 * 1e8 -> DSP_LOC_ILL_CONDITIONED (answer and its huge covariance kept).
 * In 2-D the microphones' z is ignored (source assumed near their plane).
 * With the dimension automatic, a thin array (2-D) whose solve fails the
 * test at N >= 5 is solved again in 3-D in the array's own frame (its
 * plane's axes and normal), the height off the plane folded to one side:
 * the ranges bend with that height, so a source below the microphones is
 * found without being told its height.  The mirror image above the plane
 * fits as well; the folded answer is used only when the two share x and y
 * to a tenth of their standard error (a near-horizontal array), and the
 * one below the plane is reported (its z is ambiguous, x and y are not).
 *
 * Times are doubles in seconds: pass them relative to a nearby reference
 * (e.g. the first arrival), never as seconds since the epoch.  Pure: no I/O.
 */
#ifndef CHORUS_DSP_LOCATE_H
#define CHORUS_DSP_LOCATE_H

#define DSP_LOC_MAX 64 /* most arrivals per solve */

typedef struct {
	double pos_m[3]; /* microphone position, m */
	double t_s;      /* arrival time, s, relative to a common reference */
	double sigma_s;  /* standard error of t_s, s (> 0) */
} dsp_arrival;

/* Two microphones sampled by one clock (a node's second channel): the
 * difference of the call's arrival times at them, t(a) - t(b).  It holds
 * no emission time and none of the clock's conversion error, and moving
 * both microphones together changes it only through the direction: a
 * bearing from that node, which dsp_locate_pairs adds as one residual
 * (dt_s - (T(a) - T(b))) / sigma_s, T the travel time of the model. */
typedef struct {
	double a_m[3], b_m[3]; /* the two microphones' positions, m */
	double dt_s;           /* t(a) - t(b), s */
	double sigma_s;        /* its standard error, s (> 0) */
} dsp_pair;

#define DSP_LOC_MAX_PAIRS 16

typedef enum {
	DSP_LOC_OK = 0,
	DSP_LOC_TOO_FEW = 1,         /* fewer than dim + 2 arrivals */
	DSP_LOC_DEGENERATE = 2,      /* microphones collinear (2-D) / coplanar (3-D) */
	DSP_LOC_ILL_CONDITIONED = 3, /* solved, but the geometry barely constrains it */
	DSP_LOC_INCONSISTENT = 4,    /* chi-square test fails even after one rejection */
	DSP_LOC_NO_CONVERGENCE = 5,  /* LM did not converge from any start */
	DSP_LOC_UNTESTED = 6,        /* solved with no arrival to spare (0 degrees of freedom, e.g. four
	                              * arrivals in the plane with the source's height unknown): the
	                              * arrivals fit exactly whatever they are, so nothing tests them.
	                              * Set by callers that marginalise an unknown (collab), never by
	                              * dsp_locate itself. */
} dsp_loc_status;

typedef struct {
	int dim;            /* 2, 3, or 0: 3 if >= 5 arrivals from a thick array (out-of-plane
	                * singular value >= 0.1 x the largest), else 2 */
	double c_m_s;       /* speed of sound, m/s */
	double c_sd_m_s;    /* its standard uncertainty, m/s; 0: exact.  Else c is an
	                  * unknown with this Gaussian prior (see the model) */
	double wind_m_s[3]; /* the wind's velocity, m/s (0: still air): sound from the
	                     * source to mic i takes r_i / (c + w.u_i), u_i the unit
	                     * vector towards the mic (first order in the Mach number) */
	double alpha;       /* level of the chi-square consistency test (e.g. 1e-3) */
	int reject;         /* nonzero: may reject one inconsistent arrival */
} dsp_loc_params;

typedef struct {
	dsp_loc_status status;
	int dim;          /* dimension solved in */
	double pos_m[3];  /* source position, m (z = 0 in 2-D) */
	double t0_s;      /* emission time, s, same reference as the arrivals */
	double c_m_s;     /* speed of sound of the solution, m/s (c_m_s of the params when exact) */
	double cov[4][4]; /* covariance of (x, y, [z,] t0): m^2, m s, s^2; +inf when degenerate */
	double chi2;      /* sum of squared whitened residuals */
	int dof;          /* n_used + pairs - dim - 1 */
	double p_value;   /* P(chi2(dof) >= chi2) */
	int n_used;       /* arrivals in the final fit */
	int n_pairs;      /* pairs in it (dsp_locate_pairs) */
	int rejected;     /* index of the rejected arrival, or -1 */
	double cond;      /* condition number of the whitened Jacobian */
	const char *why;  /* static reason for a status other than OK */
} dsp_loc_result;

/* Defaults: dim 0 (auto), c 343 m/s, alpha 1e-3, reject on. */
void dsp_loc_params_default(dsp_loc_params *p);

/* Affine rank (0..3) of the microphone positions: 1 collinear, 2 coplanar;
 * a singular value below 1e-6 of the largest counts as zero. */
int dsp_loc_rank(const dsp_arrival *a, int n);

/* Locate the source of n arrivals.  Returns 0 (status OK, ILL_CONDITIONED,
 * INCONSISTENT or NO_CONVERGENCE: read the status), -EDOM (TOO_FEW or
 * DEGENERATE), -EINVAL (n out of range, sigma <= 0, c <= 0, non-finite
 * input).  out->why explains any status but OK. */
int dsp_locate(const dsp_arrival *a, int n, const dsp_loc_params *p, dsp_loc_result *out);

/* dsp_locate with np pairs (0..DSP_LOC_MAX_PAIRS; NULL when 0) beside the
 * arrivals: each a further residual and degree of freedom, no unknown.
 * The arrivals alone decide what the pairs cannot: the dimension, the
 * degeneracy checks, the closed-form start, which arrival a rejection
 * leaves out (pairs are never left out) and the 3-D fold's frame.
 * -EINVAL also for a pair with a non-finite value or sigma <= 0. */
int dsp_locate_pairs(const dsp_arrival *a, int n, const dsp_pair *pr, int np, const dsp_loc_params *p,
		     dsp_loc_result *out);

/* Semi-axes (m) and orientation (rad from +x) of the 2-D position
 * confidence ellipse at probability `prob` (e.g. 0.95) of r.  Returns 0, or
 * -EDOM (covariance not finite / not positive). */
int dsp_loc_ellipse(const dsp_loc_result *r, double prob, double *major, double *minor, double *angle);

#endif
