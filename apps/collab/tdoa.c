/* tdoa.c — GCC-PHAT arrivals and the TDOA solve (see tdoa.h). */
#include "apps/collab/tdoa.h"
#include "apps/collab/tdoa_doppler.h"
#include "apps/collab/tdoa_onsets.h"
#include "apps/collab/tdoa_solve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "apps/dsp/nullsteer.h"
#include "apps/dsp/srp.h"

_Static_assert(TDOA_MAX <= DSP_SRP_MAX, "every clip collab solves with fits the SRP bank");
#include "apps/dsp/wave.h"

void tdoa_params_default(tdoa_params *p)
{
	p->f_lo_hz = 1000;
	p->f_hi_hz = 3200;
	p->beta = 1;
	p->weighting = DSP_GCC_PHAT;
	p->onset_floor_s = 0.005;
	p->margin_m = 30;
	p->ambiguity_ratio = 0.9;
	p->ambiguity_radius_m = 1;
	p->dominance_ratio = 0.5;
	p->separate = 1;
	p->depth_m = 3;
	p->c_m_s = 343;
	p->c_sd_m_s = 0;
	p->pos_sd_m = 0;
	memset(p->wind_m_s, 0, sizeof p->wind_m_s);
	p->source_z_m = NAN;
	p->alpha = 1e-3;
	p->onset_check_k = 5;
	p->onset_check_floor_s = 0.5e-3;
	p->onset_timing = 1;
	p->coarse_m = 1;
	p->source_speed_m_s = 0;
	p->flank_radius_m = 3;
}

/* Clip J on the reference's sample period: y[k] = x_J at J's own time
 * k / rr (band-limited interpolation at J's effective rate rj), so that
 * both clips sample global time at the same rate and GCC-PHAT measures a
 * pure delay, wherever in the clip its weight lies.  (Before, the two
 * rates' difference was corrected at the reference clip's energy
 * centroid, which is not where PHAT's whitened correlation measures:
 * a bias of up to 60 ms x the skew difference, microseconds.)  A new
 * array of *n_out samples (g_free it). */
static float *on_ref_rate(const float *x, size_t n, double rj, double rr, size_t *n_out)
{
	dsp_wave *w = dsp_wave_from_samples(x, n, rj, rj);
	size_t m = (size_t)floor((double)n * rr / rj);
	float *y = g_new(float, m ? m : 1);
	for (size_t k = 0; k < m; k++)
		y[k] = (float)dsp_wave_eval(w, (double)k / rr);
	dsp_wave_free(w);
	*n_out = m;
	return y;
}

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

/* The reference's arrival (a = 0) on the global timescale, from every used
 * node's detected onset rather than the reference's alone: node j's onset
 * minus its measured arrival a_j estimates it, and the median of those
 * estimates is taken.  One onset a pulse interval off (a pulse train's
 * template matched one pulse early or late: 30 ms for the default frog,
 * seen in the soak as emission times 12-30 ms off, stated to 5 ms) is
 * outvoted; with every onset honest the median lies among them.  Its
 * standard error: the median member's stated onset error (the mean of
 * the two middle ones' for an even count) with the onset floor, as for a
 * single onset (the floor is a template's misfit, which every node's
 * onset of one call shares).  Skips the arrival the solve rejected. */
static void ref_arrival(const tdoa_input *in, int n, const tdoa_params *p, int skip, tdoa_result *out)
{
	const tdoa_input *R = &in[out->ref];
	typedef struct {
		double x, se, crb;
	} est;
	est e[TDOA_MAX];
	int m = 0;
	for (int j = 0; j < n; j++) {
		if (!out->ok[j] || j == skip)
			continue;
		e[m].x = (double)(in[j].onset_ns - R->onset_ns) - out->a_s[j] * 1e9; /* ns after R's onset */
		e[m].se = in[j].onset_se_ns;
		e[m].crb = in[j].onset_crb_se_ns > 0 ? in[j].onset_crb_se_ns : in[j].onset_se_ns;
		m++;
	}
	/* insertion sort by x: at most TDOA_MAX */
	for (int i = 1; i < m; i++)
		for (int k = i; k > 0 && e[k].x < e[k - 1].x; k--) {
			est t = e[k];
			e[k] = e[k - 1];
			e[k - 1] = t;
		}
	double x = 0, se = R->onset_se_ns, crb = R->onset_crb_se_ns > 0 ? R->onset_crb_se_ns : R->onset_se_ns;
	if (m > 0) {
		x = m % 2 ? e[m / 2].x : (e[m / 2 - 1].x + e[m / 2].x) / 2;
		se = m % 2 ? e[m / 2].se : (e[m / 2 - 1].se + e[m / 2].se) / 2;
		crb = m % 2 ? e[m / 2].crb : (e[m / 2 - 1].crb + e[m / 2].crb) / 2;
	}
	double w = floor(x);
	out->ref_t_ns = R->onset_ns + (int64_t)w;
	out->ref_t_frac_ns = x - w;
	out->ref_t_se_ns = hypot(se, p->onset_floor_s * 1e9);
	out->ref_t_crb_se_ns = hypot(crb, p->onset_floor_s * 1e9);
}

/* The gated search for this call's position (and, without a known
 * source height and an array in one plane, its height too, below the
 * array's plane to depth_m: the plane's ranges to a near microphone are a
 * carrier cycle off for a source a metre below it).  A gate no position
 * passes means the detections are not of one call from one place (a call
 * mistimed at two nodes, or two callers mixed): no answer, rather than the
 * loudest thing in the clips.  Returns 0 or -EDOM (out->why says). */
static int find_source(dsp_srp *bank, const tdoa_params *p, int thick, dsp_srp_source *src, tdoa_result *out)
{
	if (dsp_srp_search(bank, src) < 0) {
		snprintf(out->why, sizeof out->why, "the detections' onsets fit no position (two of them off)");
		return -EDOM;
	}
	if (!isfinite(p->source_z_m) && !thick && p->depth_m > 0) {
		dsp_srp_source plane = *src;
		dsp_srp_refine_height(bank, &plane, p->depth_m, src);
	}
	return 0;
}

/* The gated best on the flank of a stronger peak next to it that the
 * onsets' gate left out: the gate cut the sound's own peak (its onsets a
 * little too far off: a template matched another syllable of a recorded
 * call, 26 ms off at two nodes), and the best left inside was a side lobe.
 * Seen with bench/field's recorded duck rendered from that row's world,
 * detect's own onsets and collab's clip spans: 5 of 15 calls answered `ok`
 * 1.0-2.4 m off, stated to 1-2 cm.  A sound's answer is its own peak,
 * whatever the gate: the stronger peak within flank_radius_m (searched
 * without the gate) replaces *src, and the onsets' tests after the solve
 * decide whether the onsets can be this sound's — when that peak is the
 * loudest sound in the clips (TDOA_FLANK_LOUDEST of it): next to a pulse
 * train under a louder chirp (0.02-0.04 of steered power at its place
 * against the chirp's 0.5-0.9) the stronger points are the chirp's
 * ghosts, and the chirp is taken out first (separated_bank; this runs
 * again on what is left: test_tdoa_overlap lost 20 of 60 calls to those
 * ghosts otherwise). */
static void flank_peak(dsp_srp *bank, const tdoa_params *p, dsp_srp_source *src, tdoa_result *out)
{
	dsp_srp_source peak, top;
	if (!(p->flank_radius_m > 0) || !(src->power > 0) ||
	    dsp_srp_search_near(bank, src->pos_m, p->flank_radius_m, 1, &peak) != 0 ||
	    !(peak.power > TDOA_FLANK_RATIO * src->power))
		return;
	/* the whole searched area, ungated: the loudest sound */
	if (dsp_srp_search_near(bank, src->pos_m, 1e6, 1, &top) != 0 || !(peak.power >= TDOA_FLANK_LOUDEST * top.power))
		return;
	out->flank_m += hypot(peak.pos_m[0] - src->pos_m[0], peak.pos_m[1] - src->pos_m[1]);
	*src = peak;
}

/* A sound anywhere in the clips (ungated) whose power the call's best, src,
 * does not reach dominance_ratio of: 0 with *loud, -ENOENT (none, or no
 * check), -EAGAIN (none ruled out within the search's budget, or the call's
 * best not above 0), -ENOMEM. */
static int masking_sound(dsp_srp *bank, const tdoa_params *p, const dsp_srp_source *src, dsp_srp_source *loud)
{
	if (!(p->dominance_ratio > 0))
		return -ENOENT;
	/* The call's best no sound at all (its steered power not above 0:
	 * bench/field's room, -0.005 at a place 25 m outside the room, solved
	 * `ok` from pairs that each picked an echo): nothing is ruled out. */
	if (!(src->power > 0))
		return -EAGAIN;
	if (src->power >= p->dominance_ratio)
		return -ENOENT;
	return dsp_srp_search_above(bank, src->pos_m, p->ambiguity_radius_m, src->power / p->dominance_ratio, 1, loud);
}

/* The clips with the located sound `loud` taken out (its arrivals from its
 * position and speed, its gains 1 / range), as a new bank; the new clips in
 * nulled[] (the caller frees them).  NULL when it cannot be built. */
static dsp_srp *separated_bank(const dsp_srp_clip *sc, int n, double rr, const dsp_srp_params *sp, const dsp_srp *bank,
			       const dsp_srp_source *loud, const tdoa_params *p, float **nulled)
{
	dsp_null_clip nc[TDOA_MAX];
	dsp_srp_clip c2[TDOA_MAX];
	for (int j = 0; j < n; j++) {
		g_free(nulled[j]);
		nulled[j] = g_memdup2(sc[j].x, sc[j].n * sizeof *sc[j].x);
		double d[3] = {loud->pos_m[0] - sc[j].pos_m[0], loud->pos_m[1] - sc[j].pos_m[1], loud->pos_m[2] - sc[j].pos_m[2]};
		double range = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
		nc[j] = (dsp_null_clip){.x = nulled[j],
					.n = sc[j].n,
					.t0_s = sc[j].t0_s,
					.tau_s = dsp_srp_predict(bank, 0, j, loud->pos_m, loud->c_m_s) / rr,
					.gain = 1 / fmax(range, 0.1)};
		c2[j] = sc[j];
		c2[j].x = nulled[j];
	}
	const char *why = NULL;
	if (dsp_null_steer(nc, n, rr, p->f_lo_hz, p->f_hi_hz, NULL, &why) < 0)
		return NULL;
	return dsp_srp_new(c2, n, sp, &why);
}

/* Pick at the SRP position (searched at the stated speed of sound),
 * solve with the speed free under its prior, pick again where the solve
 * put the source at the speed it found, until the picks stand still:
 * a speed off by its prior's 0.35 % moves the peaks of a 40 m baseline
 * by 7 samples, more than a carrier cycle.  Then the checks of the answer
 * against the group.  hint (or NULL): the first round's picks near these
 * lags instead (repair_slip).  Returns 0 or a negative errno (out->why
 * says). */
static int pick_and_solve(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
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

/* How far from its pick a pair's higher peak is looked for (repair_slip), s. */
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
static int repair_slip(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, int r, double rr,
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
		if (pick_and_solve(bank, src, in, n, r, rr, p, prior_outliers, hint, &t, tidx) < 0 ||
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

/* One pass of tdoa_locate; quad: each pair's Doppler rate to take out
 * (tdoa_doppler_rate) about prev's scales, or NULL. */
static int locate_pass(const tdoa_input *in, int n, const tdoa_params *p, const double *quad, const tdoa_result *prev,
		       tdoa_result *out)
{
	memset(out, 0, sizeof *out);
	out->rejected_node = -1;
	out->cov_scale = 1;
	if (n < 1 || n > TDOA_MAX) {
		snprintf(out->why, sizeof out->why, "%d clips (1..%d)", n, TDOA_MAX);
		return -EINVAL;
	}
	int r = 0;
	for (int i = 1; i < n; i++)
		if (in[i].snr_db > in[r].snr_db)
			r = i;
	out->ref = r;
	const tdoa_input *R = &in[r];
	double rate_hz = R->rate_hz, rr = R->rate_eff_hz > 0 ? R->rate_eff_hz : rate_hz;
	dsp_srp_params sp;
	dsp_srp_params_default(&sp);
	sp.gcc.rate_hz = rr;
	sp.gcc.f_lo_hz = p->f_lo_hz;
	sp.gcc.f_hi_hz = p->f_hi_hz;
	sp.gcc.beta = p->beta;
	sp.gcc.weighting = p->weighting;
	sp.c_m_s = p->c_m_s;
	sp.c_sd_m_s = p->c_sd_m_s;
	sp.pos_sd_m = p->pos_sd_m;
	memcpy(sp.wind_m_s, p->wind_m_s, sizeof sp.wind_m_s);
	sp.margin_m = p->margin_m;
	double zsum = 0;
	for (int j = 0; j < n; j++)
		zsum += in[j].mic_m[2];
	sp.z_m = isfinite(p->source_z_m) ? p->source_z_m : zsum / n;
	/* Microphones at different heights: the height is searched as well,
	 * from depth_m below the lowest to the highest. */
	double zlo = INFINITY, zhi = -INFINITY;
	for (int j = 0; j < n; j++) {
		zlo = fmin(zlo, in[j].mic_m[2]);
		zhi = fmax(zhi, in[j].mic_m[2]);
	}
	int thick = !isfinite(p->source_z_m) && zhi - zlo > 0.25;
	if (thick) {
		sp.z_lo_m = zlo - p->depth_m;
		sp.z_hi_m = zhi;
	}
	/* Every clip on the reference's sample period; times relative to the
	 * reference clip's start. */
	dsp_srp_clip sc[TDOA_MAX];
	float *own[TDOA_MAX] = {0};
	for (int j = 0; j < n; j++) {
		const tdoa_input *J = &in[j];
		double rj = J->rate_eff_hz > 0 ? J->rate_eff_hz : J->rate_hz;
		size_t nj = J->n;
		own[j] = rj != rr ? on_ref_rate(J->x, J->n, rj, rr, &nj) : NULL;
		sc[j] = (dsp_srp_clip){.x = own[j] ? own[j] : J->x,
				       .n = nj,
				       .t0_s = ((double)(J->t0_ns - R->t0_ns) + (J->t0_frac_ns - R->t0_frac_ns)) * 1e-9,
				       .t0_sd_s = J->t0_se_ns * 1e-9};
		memcpy(sc[j].pos_m, J->mic_m, sizeof sc[j].pos_m);
		sp.prior_s[j] = ((double)(J->onset_ns - R->t0_ns) - R->t0_frac_ns) * 1e-9;
		/* The onsets' gate: each onset within its error were the call
		 * exactly detect's template (the Cramer-Rao bound), plus the
		 * floor; a slip to another pulse or cycle is one of the gate's
		 * outliers.  Deliberately strict: the gate is what refuses
		 * another caller's position in the same clips, and with the
		 * onsets' whole error (every alignment the template leaves open)
		 * it let through three answers 13-15 m off in bench/field's
		 * variation and recorded rows (overlapping callers, one of them
		 * not detected), with the shape term one; it also refuses calls
		 * whose onsets slipped (15 more located in those rows without
		 * it).  Per-source separation of overlapping callers (issue 12
		 * item 5) is what can loosen it. */
		double ls = J->onset_crb_se_ns > 0 ? J->onset_crb_se_ns : J->onset_se_ns;
		sp.prior_sd_s[j] = sqrt(ls * ls * 1e-18 + p->onset_floor_s * p->onset_floor_s);
		/* The other starts detect's match left open (a recorded call's
		 * template matching another of its syllables: bench/field's
		 * duck, its onsets 9.5, 20.4 and 46.9 ms off at some nodes):
		 * the onsets' joint test after the solve takes each node's
		 * nearest, within the same s.d.; the search's gate does not
		 * (apps/dsp/srp.h). */
		sp.prior_n_alt[j] = MIN(J->n_alt, DSP_SRP_ALT);
		for (int a = 0; a < sp.prior_n_alt[j]; a++)
			sp.prior_alt_s[j][a] = J->onset_alt_ns[a] * 1e-9;
	}
	/* A moving caller: each clip put on the reference's time scale. */
	tdoa_input din[TDOA_MAX];
	memcpy(din, in, (size_t)n * sizeof *in);
	for (int j = 0; j < n; j++)
		out->rho[j] = 1;
	if (p->source_speed_m_s > 0 && n >= 2 && p->c_m_s > 0)
		tdoa_doppler_compensate(in, n, r, rr, p, quad, prev, sc, own, din, &sp, out);
	in = din;
	sp.prior_k = 4;
	sp.prior_outliers = n >= 5 ? 1 : 0;
	sp.use_prior = 1;
	const char *why = NULL;
	int rc = 0;
	dsp_srp_source src = {0};
	dsp_srp *bank = NULL;
	float *nulled[TDOA_MAX] = {0};
	if (n < 2) {
		snprintf(out->why, sizeof out->why, "one clip: no pair");
		rc = -EDOM;
	} else if (!(bank = dsp_srp_new(sc, n, &sp, &why))) {
		snprintf(out->why, sizeof out->why, "%s", why);
		rc = -EINVAL;
	} else {
		out->gated = 1;
		rc = find_source(bank, p, thick, &src, out);
	}
	/* A louder sound elsewhere in the same clips, outside the onsets' gate:
	 * another caller.  Its correlations with this call (one's arrival at
	 * one node with the other's at another) form ghosts, sets of peaks
	 * consistent pair by pair, that the gate lets through where the
	 * detected call itself barely correlates (a pulse train under a chirp
	 * in one band: PHAT gives each frequency equal weight, and the chirp
	 * fills every one).  Measured in test_tdoa_overlap: the gated best
	 * scored 0.2-0.34, the other caller 0.7-0.94, the detected call's own
	 * position 0.02-0.04, and every answer stated `ok` was a ghost 6 m
	 * off.  The louder sound, located, is taken out of the clips (null
	 * steering, apps/dsp/nullsteer.h) and this call searched again in
	 * what is left; an answer that still does not reach dominance_ratio
	 * of the loudest sound is refused, not guessed. */
	out->flank_m = 0;
	if (!rc)
		flank_peak(bank, p, &src, out);
	dsp_srp_source loud;
	int drc = rc ? -ENOENT : masking_sound(bank, p, &src, &loud);
	/* The louder sound may be this call itself, its place outside the
	 * gate (onsets slipped at several nodes, each by another syllable of a
	 * recorded call): taken out of the clips as another caller, it left a
	 * ghost that passed every test (bench/field's recorded row: the duck
	 * answered 3.3 m off, stated to 4-8 cm).  When the onsets' joint test
	 * (their other open starts with them) accepts its place, it is this
	 * call: answered, not taken out. */
	int ldof = 0;
	if (drc == 0) {
		/* every onset, none dropped: a group that mixes two callers'
		 * detections (one species 50 ms apart) has some that are the
		 * louder one's, and fits it with one dropped (bench/field's
		 * overlap row: the first caller answered twice, once for the
		 * second call) */
		double lchi2 = dsp_srp_gate_chi2(bank, loud.pos_m, loud.c_m_s, 0, &ldof);
		if (ldof > 0 && gsl_cdf_chisq_Q(lchi2, ldof) >= p->alpha) {
			out->flank_m += hypot(loud.pos_m[0] - src.pos_m[0], loud.pos_m[1] - src.pos_m[1]);
			src = loud;
			drc = -ENOENT;
		}
	}
	if (drc == 0 && p->separate) {
		dsp_srp *b2 = separated_bank(sc, n, rr, &sp, bank, &loud, p, nulled);
		dsp_srp_source s2;
		if (b2 && find_source(b2, p, thick, &s2, out) == 0) {
			dsp_srp_source loud2;
			int drc2 = masking_sound(b2, p, &s2, &loud2);
			if (drc2 == -ENOENT) {
				dsp_srp_free(bank);
				bank = b2;
				b2 = NULL;
				src = s2;
				out->separated = 1;
				memcpy(out->masker_pos_m, loud.pos_m, sizeof out->masker_pos_m);
				out->masker_power = loud.power;
				drc = -ENOENT;
			}
		}
		dsp_srp_free(b2);
		out->why[0] = '\0';
	}
	if (drc == 0) {
		snprintf(out->why, sizeof out->why,
			 "a louder sound elsewhere in the clips (steered power %.2f at %.1f, %.1f m; this call's best %.2f): another caller masks it",
			 loud.power, loud.pos_m[0], loud.pos_m[1], src.power);
		rc = -EDOM;
	} else if (drc == -EAGAIN) {
		snprintf(out->why, sizeof out->why,
			 "this call's best position scores only %.2f, and no louder sound elsewhere could be ruled out", src.power);
		rc = -EDOM;
	} else if (drc != -ENOENT) {
		snprintf(out->why, sizeof out->why, "out of memory");
		rc = drc;
	}
	if (!rc && out->separated)
		flank_peak(bank, p, &src, out);
	memcpy(out->srp_pos_m, src.pos_m, sizeof out->srp_pos_m);
	out->srp_power = src.power;
	/* Another explanation, away from this one, nearly as good: the
	 * answer is ambiguous, whatever its chi-square says.
	 * Only whether one exists is asked (a search that prunes every square
	 * below that power), not which is best: exact, and far cheaper.  A
	 * search that runs out of splits undecided leaves the answer
	 * ambiguous: no second explanation was ruled out. */
	dsp_srp_source alt;
	out->alt_power = NAN;
	if (!rc && p->ambiguity_ratio > 0 && src.power > 0) {
		int arc = dsp_srp_search_above(bank, src.pos_m, p->ambiguity_radius_m, p->ambiguity_ratio * src.power, 0, &alt);
		if (arc == 0) {
			memcpy(out->alt_pos_m, alt.pos_m, sizeof out->alt_pos_m);
			out->alt_power = alt.power;
		}
		out->ambiguous = arc == 0 || arc == -EAGAIN;
	}
	out->ref_t_ns = R->onset_ns; /* a = 0 is the reference's arrival: its detected onset */
	out->ref_t_frac_ns = 0;
	out->ref_t_se_ns = hypot(R->onset_se_ns, p->onset_floor_s * 1e9);
	out->ref_t_crb_se_ns = hypot(R->onset_crb_se_ns > 0 ? R->onset_crb_se_ns : R->onset_se_ns, p->onset_floor_s * 1e9);
	int idx[TDOA_MAX];
	if (!rc) {
		rc = pick_and_solve(bank, &src, in, n, r, rr, p, sp.prior_outliers, NULL, out, idx);
		if (repair_slip(bank, &src, in, n, r, rr, p, sp.prior_outliers, rc, out, idx))
			rc = 0;
	}
	/* A call found in clips another caller was taken out of carries what
	 * the projection left: the other's residue and its own part along the
	 * other's delays (about 1/n of it in each bin), which the peaks'
	 * variances do not state.  Its fit's misfit measures it: the
	 * covariance is scaled by chi2/dof when that exceeds 1 (in
	 * test_tdoa_overlap 2 of 76 such answers lay beyond their 99.9 %
	 * ellipses, 6 mm off with chi2 12 on 2 d.o.f., without it).  So is
	 * any answer whose misfit is itself unlikely under the stated errors
	 * (Q < TDOA_MISFIT_Q, short of the test's alpha): bench/field's
	 * overlap row answered the second caller 6-7 mm off, stated to 2 mm,
	 * three times with chi2 7.7-9.1 on 2 d.o.f. (its clips hold the first
	 * caller's tail) — 5 of 37 ok answers outside their 95 % ellipses. */
	double k = rc == 0 ? tdoa_misfit_scale(&out->loc, out->separated) : 1;
	if (k > 1) {
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 4; b++)
				out->loc.cov[a][b] *= k;
		out->cov_scale = k;
	}
	/* The onsets deny the correlation's arrivals at two nodes or more:
	 * it timed echoes or another sound, not this call's first arrival. */
	int denied = 0, corr_idx[TDOA_MAX];
	tdoa_result corr;
	if (!rc && out->loc.status == DSP_LOC_OK) {
		char who[96];
		int used[TDOA_MAX], m = 0;
		for (int k = 0; k < out->n_ok; k++)
			if (k != out->loc.rejected)
				used[m++] = idx[k];
		if (tdoa_onsets_disagree(in, out, used, m, p->onset_check_k, p->onset_check_floor_s, who, sizeof who) >= 2 ||
		    tdoa_onsets_joint_q(in, out, used, m, p->onset_check_floor_s) < TDOA_ONSETS_JOINT_Q) {
			if (!*who)
				snprintf(who, sizeof who, "jointly");
			snprintf(out->why, sizeof out->why,
				 "the correlation's delays and the detected onsets disagree (%.64s): echoes or another sound",
				 who);
			corr = *out;
			memcpy(corr_idx, idx, sizeof corr_idx);
			rc = -EDOM;
			denied = 1;
		}
	}
	dsp_srp_free(bank);
	for (int j = 0; j < n; j++) {
		g_free(own[j]);
		g_free(nulled[j]);
	}
	/* No coherent sound, or the onsets denied the correlation: the onsets
	 * themselves time the call.  Onsets that deny the correlation but fit
	 * no position themselves are not believed over it: in overlapping
	 * bouts some nodes' detections are the other caller's (bench/field's
	 * overlap row: onsets 8-31 ms off at two nodes, stating 0.1 ms, while
	 * the correlation's answer was 3 mm from the truth). */
	/* … and where the clips correlated at too few nodes to solve (a
	 * sound found, most pairs incoherent: bench/field's room, the chirp
	 * measured at 2 of 6 nodes and `too_few` while every onset was within
	 * 0.13 ms) the onsets time it too. */
	int sparse = rc < 0 && drc == -ENOENT && out->n_ok < n;
	if (rc < 0 && p->onset_timing && (drc == -EAGAIN || denied || sparse)) {
		char why0[sizeof out->why];
		snprintf(why0, sizeof why0, "%s", out->why);
		tdoa_result keep = *out;
		int orc = tdoa_solve_onsets(in, n, p, out, idx);
		if (orc == 0 && (!denied || out->loc.status == DSP_LOC_OK)) {
			rc = 0;
			out->from_onsets = 1;
			out->ambiguous = 0;
			snprintf(out->why, sizeof out->why, "timed by the detected onsets: %.120s", why0);
			double ma = NAN, mi, an;
			out->coarse = p->coarse_m > 0 && dsp_loc_ellipse(&out->loc, 0.95, &ma, &mi, &an) == 0 && ma > p->coarse_m;
		} else if (denied) {
			*out = corr;
			memcpy(idx, corr_idx, sizeof corr_idx);
			rc = 0;
			snprintf(out->why, sizeof out->why,
				 "the detected onsets disagree with the correlation but fit no position themselves");
		} else
			*out = keep;
	}
	if (rc < 0) {
		if (!*out->why)
			snprintf(out->why, sizeof out->why, "%s", out->loc.why ? out->loc.why : "solver refused");
		return rc;
	}
	if (out->loc.rejected >= 0)
		out->rejected_node = (int)in[idx[out->loc.rejected]].node;
	ref_arrival(in, n, p, out->loc.rejected >= 0 ? idx[out->loc.rejected] : -1, out);
	return 0;
}

int tdoa_locate(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out)
{
	int rc = locate_pass(in, n, p, NULL, NULL, out);
	if (!(p->source_speed_m_s > 0) || n < 2 || rc != 0)
		return rc;
	/* A moving caller: its Doppler changes along the call (the line of
	 * sight turns), which one scale per clip cannot follow; the
	 * correlation then trades the scale against the delay along the
	 * sweep's ridge — 0.0016 and 0.8 ms at the moving row's nodes, 0.3 m
	 * off stated at 1 cm.  The velocity the scales say, at the position
	 * found, gives each pair's Doppler rate: taken out as well, the call
	 * is located again, until the position moves less than 1 cm (at
	 * most TDOA_DOPPLER_PASSES). */
	/* A caller that kept still (every scale within 3 s.d. of 1) has no
	 * rate to take out. */
	int moved = 0;
	for (int j = 0; j < n; j++)
		moved |= out->rho_sd[j] > 0 && fabs(out->rho[j] - 1) > 3 * out->rho_sd[j];
	for (int pass = 0; pass < TDOA_DOPPLER_PASSES && moved; pass++) {
		double quad[TDOA_MAX];
		if (tdoa_doppler_rate(in, n, out, p, quad) < 0)
			break;
		tdoa_result o2;
		if (locate_pass(in, n, p, quad, out, &o2) != 0)
			break;
		double step = hypot(o2.loc.pos_m[0] - out->loc.pos_m[0], o2.loc.pos_m[1] - out->loc.pos_m[1]);
		*out = o2;
		if (step < 0.01)
			break;
	}
	return rc;
}
