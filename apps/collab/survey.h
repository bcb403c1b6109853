/* survey.h — the microphones' positions from the calls themselves: a
 * bundle adjustment over many located calls (pure: numbers in, numbers out).
 *
 * Survey error of the microphones is what limits field arrays (GPS under a
 * canopy is metres off; a tape survey centimetres).  Every located call
 * gives arrival times at several nodes; over many calls the node positions
 * are over-determined, as ENSBox found with its own chirps.  Unknowns:
 * every node's horizontal position (z stays as surveyed: a flat array does
 * not see heights), every call's source position and emission time, and
 * one speed of sound for the session (the air changes slowly):
 *     a_kj = t0_k + r(p_k, m_j) / c + e_kj,   e_kj ~ N(0, sigma_kj^2)
 * with r the horizontal range (the 2-D model collab solves in) or, for a
 * known source height, the 3-D range.  Priors: each node at its surveyed
 * position, s.d. pos_sd_m per axis; the speed at c0 +- c_sd.  sigma_kj is
 * the measurement's own error (collab's "sigma_us": the correlation peak
 * and the clock, without the survey term, which is what is estimated
 * here).  Solved by GSL's Levenberg-Marquardt (gsl_multifit_nlinear,
 * finite-difference Jacobian) from the calls' own solutions; the positions'
 * covariance is (J^T J)^-1 of the whitened problem at the answer.  A whole
 * array's shift and rotation are barely seen by time differences: there
 * the answer stays near the survey and its stated s.d. near pos_sd_m; the
 * array's shape is what the calls sharpen.
 */
#ifndef CHORUS_COLLAB_SURVEY_H
#define CHORUS_COLLAB_SURVEY_H

#include <stdint.h>

#define SURVEY_MAX_NODES 64

typedef struct {
	int n_nodes;
	uint32_t id[SURVEY_MAX_NODES];
	double pos_m[SURVEY_MAX_NODES][3]; /* surveyed, m */
	double pos_sd_m;                   /* survey s.d. per axis, m (> 0) */
	double c_m_s, c_sd_m_s;            /* speed of sound prior, m/s */
	double source_z_m;                 /* known source height, m; NAN: the 2-D model */
} survey_params;

typedef struct survey survey;

typedef struct {
	int n_calls, n_obs; /* calls and arrivals used */
	double pos_m[SURVEY_MAX_NODES][3];
	double sd_m[SURVEY_MAX_NODES][2]; /* s.d. of x and y, m */
	double c_m_s, c_sd_m_s;           /* the session's speed of sound */
	double chi2;                      /* at the answer (arrivals and priors) */
	int dof;                          /* residuals minus unknowns */
} survey_result;

/* A new adjustment.  Returns it, or NULL with the reason in *why (no nodes,
 * more than SURVEY_MAX_NODES, pos_sd_m or c not > 0). */
survey *survey_new(const survey_params *p, const char **why);

void survey_free(survey *s);

/* One located call: m arrivals at nodes node[i] (ids), times a_s[i] (s,
 * relative to any common reference), s.d. sigma_s[i] (> 0), and the
 * call's solved position (x, y) as the start.  Returns 0, or -EINVAL (fewer
 * than 4 arrivals, a node not in the params, a sigma not > 0, a time not
 * finite). */
int survey_add(survey *s, const uint32_t *node, const double *a_s, const double *sigma_s, int m, double x_m,
	       double y_m);

/* Calls added so far. */
int survey_calls(const survey *s);

/* Solve.  Returns 0 with *out, -EDOM (no call; or LM failed: *why),
 * -ENOMEM. */
int survey_solve(survey *s, survey_result *out, const char **why);

#endif
