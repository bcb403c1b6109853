/* tdoa_solve.c — arrivals to a position, the source's height marginalised
 * where it is unknown (tdoa_solve.h). */
#include "apps/collab/tdoa_solve.h"

#include "apps/collab/tdoa_pairs.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

/* The travel time a source at height z_src adds at microphone q over the
 * horizontal range from pos (the 2-D solve ignores heights), s. */
static double height_corr(const double *pos, const double *q, double z_src, double c)
{
	double h2 = (pos[0] - q[0]) * (pos[0] - q[0]) + (pos[1] - q[1]) * (pos[1] - q[1]);
	double dz = z_src - q[2];
	return (sqrt(h2 + dz * dz) - sqrt(h2)) / c;
}

/* Solve; with a source height z_src (finite), 2-D with the arrivals
 * corrected for the height difference (3-D range minus horizontal range)
 * at the current estimate; without (NAN), dsp_locate's automatic choice
 * (2-D ignoring the microphones' z, or the folded 3-D solve). */
static int solve_at_as(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, const int *idx, int m,
		       double z_src, int grid, int pairs, dsp_loc_result *loc)
{
	dsp_arrival arr[TDOA_MAX];
	dsp_loc_params lp;
	dsp_loc_params_default(&lp);
	lp.c_m_s = p->c_m_s;
	lp.c_sd_m_s = p->c_sd_m_s;
	memcpy(lp.wind_m_s, p->wind_m_s, sizeof lp.wind_m_s);
	lp.alpha = p->alpha;
	if (grid) {
		/* One point of a height grid: the fit from the closed form's
		 * start, no multi-start and no rejection (the subset is the
		 * caller's, the test the caller's too). */
		lp.alpha = 0;
		lp.reject = 0;
	}
	lp.dim = isfinite(z_src) ? 2 : 0;
	double corr[TDOA_MAX] = {0}, pcorr[DSP_LOC_MAX_PAIRS] = {0};
	dsp_pair pr0[DSP_LOC_MAX_PAIRS], pr[DSP_LOC_MAX_PAIRS];
	int np = pairs ? tdoa_pairs_of(r, idx, m, pr0, NULL) : 0;
	int rc = 0;
	for (int iter = 0; iter < (isfinite(z_src) ? 4 : 1); iter++) {
		for (int k = 0; k < m; k++) {
			int i = idx[k];
			memcpy(arr[k].pos_m, in[i].mic_m, sizeof arr[k].pos_m);
			arr[k].t_s = r->a_s[i] - corr[k];
			arr[k].sigma_s = r->sigma_s[i];
		}
		for (int k = 0; k < np; k++) {
			pr[k] = pr0[k];
			pr[k].dt_s -= pcorr[k];
		}
		rc = dsp_locate_pairs(arr, m, pr, np, &lp, loc);
		if (rc < 0 || !isfinite(z_src))
			break;
		for (int k = 0; k < m; k++)
			corr[k] = height_corr(loc->pos_m, in[idx[k]].mic_m, z_src, p->c_m_s);
		for (int k = 0; k < np; k++)
			pcorr[k] = height_corr(loc->pos_m, pr0[k].a_m, z_src, p->c_m_s) -
				   height_corr(loc->pos_m, pr0[k].b_m, z_src, p->c_m_s);
		loc->pos_m[2] = z_src;
	}
	return rc;
}

static int solve_at(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, int *idx, int m, double z_src,
		    int pairs, dsp_loc_result *loc)
{
	return solve_at_as(in, r, p, idx, m, z_src, 0, pairs, loc);
}

/* Solve.  A known source height is used (solve_at).  Without one, a 2-D
 * answer (a flat array, where the automatic solve kept the plane) rests on
 * a height the arrivals see only weakly: the ranges bend with the source's
 * height h below the microphones' plane as sqrt(d^2 + h^2), a bias that a
 * speed and position shift absorb well enough to pass the chi-square test
 * at 1-2 degrees of freedom while leaving the answer millimetres to
 * centimetres off its sub-millimetre ellipse.  So the height is
 * marginalised: with the source anywhere from the plane down to depth_m
 * below it (the heights the steered response searches; uniform, the prior
 * a field team states by depth_m), the arrivals are solved at heights on a
 * grid of HEIGHT_STEPS, each weighted by its likelihood exp(-chi2/2).  The
 * answer (x, y, t0) is the weighted mean of the grid's answers and its
 * covariance the weighted mean of theirs plus the spread of the answers
 * about the mean (the law of total covariance over the grid: no
 * linearisation, however the answer bends with the height).  The
 * chi-square is the best height's, with one degree of freedom fewer.  A
 * flat likelihood leaves the prior's spread; a sharp one, the data's.
 * Where the 2-D solve failed and the folded 3-D one found the height, its
 * answer stands. */
#define HEIGHT_STEPS 24

/* The height marginalised over the arrivals sub[ms] (the description
 * above); rejected: the index in the caller's set left out, or -1; zp the
 * microphones' plane.  Fills *out; returns 0, or -1 when no height of the
 * grid solved. */
static int marginal(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, const int *sub, int ms,
		    int rejected, int pairs, dsp_loc_result *out)
{
	double zp = 0;
	for (int k = 0; k < ms; k++)
		zp += in[sub[k]].mic_m[2] / ms;
	const double step = p->depth_m / HEIGHT_STEPS;
	dsp_loc_result g[HEIGHT_STEPS + 1];
	int best = -1;
	for (int k = 0; k <= HEIGHT_STEPS; k++) {
		if (solve_at_as(in, r, p, sub, ms, zp - k * step, 1, pairs, &g[k]) < 0 || !isfinite(g[k].chi2) || !isfinite(g[k].cov[0][0]))
			g[k].chi2 = INFINITY;
		else if (best < 0 || g[k].chi2 < g[best].chi2)
			best = k;
	}
	if (best < 0)
		return -1;
	double w[HEIGHT_STEPS + 1], wsum = 0, mean[3] = {0, 0, 0};
	for (int k = 0; k <= HEIGHT_STEPS; k++) {
		w[k] = isfinite(g[k].chi2) ? exp(-0.5 * (g[k].chi2 - g[best].chi2)) : 0;
		wsum += w[k];
	}
	for (int k = 0; k <= HEIGHT_STEPS; k++) {
		if (!(w[k] > 0))
			continue;
		double a[3] = {g[k].pos_m[0], g[k].pos_m[1], g[k].t0_s - g[best].t0_s};
		for (int j = 0; j < 3; j++)
			mean[j] += w[k] / wsum * a[j];
	}
	*out = g[best];
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 3; i++)
			out->cov[j][i] = 0;
	for (int k = 0; k <= HEIGHT_STEPS; k++) {
		if (!(w[k] > 0))
			continue;
		double a[3] = {g[k].pos_m[0] - mean[0], g[k].pos_m[1] - mean[1], g[k].t0_s - g[best].t0_s - mean[2]};
		for (int j = 0; j < 3; j++)
			for (int i = 0; i < 3; i++)
				out->cov[j][i] += w[k] / wsum * (g[k].cov[j][i] + a[j] * a[i]);
	}
	out->pos_m[0] = mean[0];
	out->pos_m[1] = mean[1];
	out->t0_s = g[best].t0_s + mean[2];
	/* One more unknown, the height; the test at the caller's level. */
	out->dof = out->dof > 0 ? out->dof - 1 : 0;
	out->p_value = out->dof > 0 ? gsl_cdf_chisq_Q(out->chi2, out->dof) : 1.0;
	if (out->status == DSP_LOC_OK && out->p_value < p->alpha) {
		out->status = DSP_LOC_INCONSISTENT;
		out->why = "locate: arrivals inconsistent with one source at any height (chi-square test fails)";
	} else if (out->status == DSP_LOC_OK && out->dof == 0) {
		/* Four arrivals in the plane fit x, y, the emission and a height
		 * exactly, whatever they are: one of them another caller's (the
		 * soak: 18 of 71 such answers more than 10 cm off, one 9.6 m,
		 * each stated to centimetres) is not seen.  The answer is given,
		 * not claimed. */
		out->status = DSP_LOC_UNTESTED;
		out->why = "locate: no arrival to spare with the source's height unknown (0 degrees of freedom): nothing tests the answer";
	}
	out->rejected = rejected;
	out->n_used = ms;
	return 0;
}

static int solve_with(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, int *idx, int m, int pairs,
		      dsp_loc_result *loc)
{
	if (isfinite(p->source_z_m))
		return solve_at(in, r, p, idx, m, p->source_z_m, pairs, loc);
	int rc = solve_at(in, r, p, idx, m, NAN, pairs, loc);
	if (rc < 0 || loc->dim != 2 || !(p->depth_m > 0))
		return rc;
	/* Every arrival first: the in-plane solve may have left one out for
	 * the bend the height puts in the ranges, which the height explains.
	 * Only when no height fits them all, the arrivals the plain solve
	 * kept. */
	dsp_loc_result out;
	int have = marginal(in, r, p, idx, m, -1, pairs, &out) == 0;
	if ((!have || out.status == DSP_LOC_INCONSISTENT) && loc->rejected >= 0) {
		int sub[TDOA_MAX], ms = 0;
		for (int k = 0; k < m; k++)
			if (k != loc->rejected)
				sub[ms++] = idx[k];
		dsp_loc_result o2;
		if (marginal(in, r, p, sub, ms, loc->rejected, pairs, &o2) == 0) {
			out = o2;
			have = 1;
		}
	}
	if (!have)
		return rc; /* the plain 2-D answer, as before */
	/* The height is estimated only this weakly: z as the plain 2-D
	 * answer has it (not solved). */
	out.pos_m[2] = loc->pos_m[2];
	*loc = out;
	return 0;
}

/* The nodes' second microphones test what the arrivals cannot: an answer
 * the arrivals leave untested is solved again with the pairs of its nodes
 * (tdoa_pairs.h).  Where the arrivals test the answer themselves the pairs
 * stay out: a pair over a call another caller overlaps measures the mix
 * (bench/field's overlap row: two chirps' answers 4 mm from the truth made
 * inconsistent by their node-5 pairs, 7 s.e. off), and an arrival that is
 * another caller's can be left out while a pair cannot. */
int tdoa_solve(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, int *idx, int m,
	       dsp_loc_result *loc)
{
	int rc = solve_with(in, r, p, idx, m, 0, loc);
	dsp_pair scratch[DSP_LOC_MAX_PAIRS];
	if (rc == 0 && loc->status == DSP_LOC_UNTESTED && tdoa_pairs_of(r, idx, m, scratch, NULL) > 0) {
		dsp_loc_result with;
		if (solve_with(in, r, p, idx, m, 1, &with) == 0 && with.n_pairs > 0)
			*loc = with;
	}
	return rc;
}

double tdoa_misfit_scale(const dsp_loc_result *loc, int separated)
{
	if (!(loc->dof > 0) || !(loc->chi2 > loc->dof))
		return 1;
	if (separated || gsl_cdf_chisq_Q(loc->chi2, loc->dof) < TDOA_MISFIT_Q)
		return loc->chi2 / loc->dof;
	return 1;
}
