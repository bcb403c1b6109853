/* tdoa_pick.c — each pair's delay picked where a source predicts it, the
 * solve of those picks with its checks, and the repair of a pair that
 * slipped to a side lobe (see tdoa_pick.h). */
#include "apps/collab/tdoa_pick.h"
#include "apps/collab/tdoa_solve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Every pair (r, j)'s delay at the largest peak within 1.5 samples (plus
 * three s.d. of the two microphones' survey error) of what a source at `at`
 * and speed c predict (of hint[j], samples, where hint is given and
 * hint[j] finite); each arrival's standard error.
 * Fills out->ok, a_s, sigma_s, delay_se, coherence; the used inputs'
 * indices go to idx.  Returns how many (the reference included), 0 when no
 * pair has a delay. */
static int pick(const dsp_srp *bank, const tdoa_input *in, int n, int r, double rr, const double at[3], double c,
		const tdoa_params *p, const double *hint, tdoa_result *out, int *idx)
{
	double var_d[TDOA_MAX];
	int nv = 0;
	for (int j = 0; j < n; j++) {
		out->ok[j] = j == r;
		out->a_s[j] = 0;
		if (j == r)
			continue;
		dsp_srp_delay d;
		double half = 1.5 + 3 * M_SQRT2 * p->pos_sd_m / c * rr;
		int drc = hint && isfinite(hint[j]) ? dsp_srp_delay_near(bank, r, j, hint[j], half, &d)
						    : dsp_srp_delay_at(bank, r, j, at, c, half, &d);
		if (drc < 0 || !isfinite(d.se))
			continue;
		out->ok[j] = 1;
		out->delay_se[j] = d.se;
		out->coherence[j] = d.peak;
		/* a_j = (T_j - T_r) + d_j / R_r: d.delay already holds the clips'
		 * offset, in reference samples. */
		out->a_s[j] = d.delay / rr;
		var_d[nv++] = d.se * d.se;
	}
	if (nv == 0)
		return 0;
	/* var(d_j) is the sum of two arrivals' noise: the reference gets half
	 * the median, each other arrival the rest of its own. */
	double sorted[TDOA_MAX];
	memcpy(sorted, var_d, (size_t)nv * sizeof(double));
	qsort(sorted, (size_t)nv, sizeof(double), cmp_double);
	double var_ref = sorted[nv / 2] / 2; /* samples^2 */
	int m = 0;
	for (int j = 0; j < n; j++) {
		if (!out->ok[j])
			continue;
		double v = j == r ? var_ref : fmax(out->delay_se[j] * out->delay_se[j] - var_ref, out->delay_se[j] * out->delay_se[j] / 2);
		/* A floor of 0.01 sample: interpolation and model error never vanish. */
		double fl = 0.01 / rr,
		       s2 = v / (rr * rr) + in[j].t0_se_ns * in[j].t0_se_ns * 1e-18 + fl * fl + out->doppler_var_s2[j];
		out->meas_sigma_s[j] = sqrt(s2);
		out->sigma_s[j] = sqrt(s2 + (p->pos_sd_m / p->c_m_s) * (p->pos_sd_m / p->c_m_s));
		idx[m++] = j;
	}
	return m;
}

/* Closure over the pairs the solve did not use: for one sound, the delays
 * of the pairs (r, i) and (r, j) measured say where pair (i, j)'s peak is
 * (a_j - a_i), whatever the microphones' survey error; its delay at the
 * largest peak within 1.5 samples of there minus that, over the s.d. of
 * the three pairs' delays, is a z-score.  Returns the chi-square
 * of those z-scores, the pairs in *npairs.  A position that only the
 * reference's pairs agree on — a set of two sounds' cross-correlation
 * peaks that happens to be consistent — puts the other pairs' peaks
 * anywhere in the window: tens of s.d.  Input `skip` (the arrival the
 * solve rejected, or -1) is left out. */
static double closure_chi2(const dsp_srp *bank, const tdoa_result *r, int n, int skip, double rr, int *npairs)
{
	double chi2 = 0;
	*npairs = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			if (i == r->ref || j == r->ref || i == skip || j == skip || !r->ok[i] || !r->ok[j])
				continue;
			dsp_srp_delay d;
			double pred = (r->a_s[j] - r->a_s[i]) * rr; /* samples */
			/* no peak within the window (a lag at the end of the
			 * pair's physical range: a source in line with the two):
			 * nothing to check */
			if (dsp_srp_delay_near(bank, i, j, pred, 1.5, &d) < 0 || !isfinite(d.se))
				continue;
			double v = d.se * d.se + r->delay_se[i] * r->delay_se[i] + r->delay_se[j] * r->delay_se[j];
			chi2 += (d.delay - pred) * (d.delay - pred) / v;
			(*npairs)++;
		}
	return chi2;
}

/* Pick at the SRP position (searched at the stated speed of sound),
 * solve with the speed free under its prior, pick again where the solve
 * put the source at the speed it found, until the picks stand still:
 * a speed off by its prior's 0.35 % moves the peaks of a 40 m baseline
 * by 7 samples, more than a carrier cycle.  Then the checks of the answer
 * against the group.  hint (or NULL): the first round's picks near these
 * lags instead (tdoa_repair_slip).  Returns 0 or a negative errno (out->why
 * says). */
int tdoa_pick_and_solve(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
			const tdoa_params *p, int prior_outliers, const double *hint, tdoa_result *out, int *idx)
{
	int rc = 0;
	double at[3], c_at = src->c_m_s > 0 ? src->c_m_s : p->c_m_s, prev[TDOA_MAX];
	memcpy(at, src->pos_m, sizeof at);
	int m = 0, have = 0;
	tdoa_result best; /* the round that used most arrivals, then fitted best */
	int best_idx[TDOA_MAX];
	for (int round = 0; round < 4 && !rc; round++) {
		memcpy(prev, out->a_s, sizeof prev);
		m = pick(bank, in, n, r, rr, at, c_at, p, round == 0 ? hint : NULL, out, idx);
		if (m == 0) {
			if (!have) {
				snprintf(out->why, sizeof out->why, "no pair's delay could be measured");
				rc = -EDOM;
			}
			break;
		}
		dsp_loc_result loc;
		int src_rc = tdoa_solve(in, out, p, idx, m, &loc);
		if (src_rc < 0) {
			if (!have) {
				out->loc = loc;
				rc = src_rc;
			}
			break;
		}
		out->loc = loc;
		out->n_ok = m;
		if (!have || m > best.n_ok || (m == best.n_ok && loc.p_value > best.loc.p_value)) {
			best = *out;
			memcpy(best_idx, idx, sizeof best_idx);
			have = 1;
		}
		int same = round > 0;
		for (int k = 0; k < m && same; k++)
			same = fabs(out->a_s[idx[k]] - prev[idx[k]]) < 0.5 / rr;
		if (same)
			break;
		/* A 2-D solve without a known height says nothing of z: predict
		 * at the height the steered response found (the plane's ranges
		 * to a near microphone would be a carrier cycle off). */
		memcpy(at, loc.pos_m, sizeof at);
		if (loc.dim == 2 && !isfinite(p->source_z_m))
			at[2] = src->pos_m[2];
		c_at = loc.c_m_s;
	}
	if (have) {
		*out = best;
		memcpy(idx, best_idx, sizeof best_idx);
		rc = 0;
		/* The gate again, where the solve put the source: the search
		 * answers inside it, but a search whose best is on its edge
		 * (the loudest sound in the clips lies outside: another caller,
		 * heard in the same clips) hands the solve a start from which
		 * it walks to that other sound, away from the call the onsets
		 * detected — the group's time with another source's place. */
		double q[3];
		memcpy(q, out->loc.pos_m, sizeof q);
		if (out->loc.dim == 2 && !isfinite(p->source_z_m))
			q[2] = src->pos_m[2];
		int dof = 0, npairs = 0;
		double chi2 = dsp_srp_gate_chi2(bank, q, out->loc.c_m_s, prior_outliers, &dof);
		int skip = out->loc.rejected >= 0 ? idx[out->loc.rejected] : -1;
		double closure = closure_chi2(bank, out, n, skip, rr, &npairs);
		if (dof > 0 && gsl_cdf_chisq_Q(chi2, dof) < p->alpha) {
			snprintf(out->why, sizeof out->why,
				 "the position found does not fit the onsets (chi-square %.1f on %d d.o.f.): the clips' sound is not the detected call (another caller?)",
				 chi2, dof);
			rc = -EDOM;
		} else if (npairs > 0 && gsl_cdf_chisq_Q(closure, npairs) < p->alpha) {
			snprintf(out->why, sizeof out->why,
				 "the pairs without the reference disagree with the arrivals (closure chi-square %.1f on %d pairs): two sounds in the clips?",
				 closure, npairs);
			rc = -EDOM;
		}
	}
	return rc;
}

/* How far from its pick a pair's higher peak is looked for (tdoa_repair_slip), s. */
#define SLIP_WINDOW_S 2e-3
/* How much higher (correlation, 0..1) it must be to be tried. */
#define SLIP_MARGIN 0.02

/* Candidates, not one peak.  The steered response's best position can put
 * one pair on a side lobe of its correlation while the others sit on
 * their main peaks: a thin array's plane is searched first, and a source
 * a metre below it, 3 m from the reference, is 15 cm of range off there;
 * the search from that plane's best never leaves the wrong lobe.  The
 * solve then cannot fit every arrival and rejects one, often not the one
 * that slipped (five arrivals with the height unknown leave no degree of
 * freedom after a rejection: `untested`).  Measured on the soak's world:
 * the chirp at (12, 26) heard without node 1 or 2 slipped the pair
 * (node 6, node 4) by -519 us every time, coherence 0.34 against 0.99 on
 * every other pair.  So when the answer did not use every arrival, or
 * failed its tests: for each pair whose correlation has a peak higher
 * than its pick's (by SLIP_MARGIN) within SLIP_WINDOW_S, the picks are
 * made again with that pair there and the others where they were, and
 * solved (pick_and_solve's rounds and checks).  A repair that uses every
 * arrival the first answer measured and passes every test replaces it;
 * when two different repairs would, neither does (which pair slipped is
 * not known).  Nothing but the clips' correlations and the tests decides.
 * Returns 1 when *out was replaced. */
int tdoa_repair_slip(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
		     const tdoa_params *p, int prior_outliers, int rc, tdoa_result *out, int *idx)
{
	if (rc == 0 && out->loc.status == DSP_LOC_OK && out->loc.rejected < 0)
		return 0;
	int measured = 0;
	for (int j = 0; j < n; j++)
		measured += out->ok[j];
	tdoa_result won;
	int won_idx[TDOA_MAX], nwon = 0;
	for (int j = 0; j < n; j++) {
		if (j == r || !out->ok[j])
			continue;
		double cur = out->a_s[j] * rr;
		dsp_srp_delay alt;
		if (dsp_srp_delay_near(bank, r, j, cur, SLIP_WINDOW_S * rr, &alt) < 0 || fabs(alt.delay - cur) < 1.5 ||
		    !(alt.peak > out->coherence[j] + SLIP_MARGIN))
			continue;
		double hint[TDOA_MAX];
		for (int k = 0; k < n; k++)
			hint[k] = out->ok[k] && k != r ? out->a_s[k] * rr : NAN;
		hint[j] = alt.delay;
		tdoa_result t = *out;
		int tidx[TDOA_MAX];
		t.why[0] = '\0';
		if (tdoa_pick_and_solve(bank, src, in, n, r, rr, p, prior_outliers, hint, &t, tidx) < 0 ||
		    t.loc.status != DSP_LOC_OK || t.loc.rejected >= 0 || t.n_ok < measured)
			continue;
		if (nwon > 0) {
			/* a different answer from the one kept: two repairs */
			for (int k = 0; k < n; k++)
				if (t.ok[k] && won.ok[k] && fabs(t.a_s[k] - won.a_s[k]) >= 0.5 / rr)
					return 0;
		}
		if (nwon == 0 || t.loc.p_value > won.loc.p_value) {
			won = t;
			memcpy(won_idx, tidx, sizeof won_idx);
		}
		nwon++;
	}
	if (nwon == 0)
		return 0;
	*out = won;
	memcpy(idx, won_idx, sizeof won_idx);
	return 1;
}
