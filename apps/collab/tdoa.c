/* tdoa.c — GCC-PHAT arrivals and the TDOA solve (see tdoa.h). */
#include "apps/collab/tdoa.h"
#include "apps/collab/tdoa_doppler.h"
#include "apps/collab/tdoa_onsets.h"
#include "apps/collab/tdoa_pick.h"
#include "apps/collab/tdoa_pairs.h"
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

/* Search again for a second explanation within the onsets' check (the
 * gate of dsp_srp_search_above_within): none left clears out->ambiguous
 * and sets alt_ruled_out; another found replaces alt_pos_m and alt_power;
 * an undecided search changes nothing. */
static void rule_out_alt(dsp_srp *bank, const dsp_srp_source *src, const tdoa_input *in, int n, const tdoa_params *p,
			 tdoa_result *out)
{
	double sd[DSP_SRP_MAX];
	int all[TDOA_MAX];
	for (int j = 0; j < n; j++)
		all[j] = j;
	tdoa_onsets_check_se(in, all, n, p->onset_check_floor_s, sd);
	dsp_srp_source alt;
	int arc = dsp_srp_search_above_within(bank, src->pos_m, p->ambiguity_radius_m, p->ambiguity_ratio * src->power, sd,
					      p->onset_check_k, 1, &alt);
	if (arc == -ENOENT) {
		out->ambiguous = 0;
		out->alt_ruled_out = 1;
	} else if (arc == 0) {
		memcpy(out->alt_pos_m, alt.pos_m, sizeof out->alt_pos_m);
		out->alt_power = alt.power;
	}
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
	/* The nodes' second microphones: bearings for the solve. */
	if (!rc && tdoa_measure_pairs(in, n, p, src.pos_m, out) == -ENOMEM)
		rc = -ENOMEM;
	if (!rc) {
		rc = tdoa_pick_and_solve(bank, &src, in, n, r, rr, p, sp.prior_outliers, NULL, out, idx);
		if (tdoa_repair_slip(bank, &src, in, n, r, rr, p, sp.prior_outliers, rc, out, idx))
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
	/* An ambiguous answer the onsets confirm: is the other explanation
	 * one the onsets allow?  Searched again with the gate as tight as
	 * the check above (each onset's whole stated error, the smallest's,
	 * the check's floor; onset_check_k of them, one clip beyond allowed,
	 * as two refuse): none left is no second explanation (bench/field's
	 * overlap row: the second frog's pulses 50 ms later made a position
	 * 2.9 m off score 0.92 of the answer, 1 mm from the truth, while the
	 * onsets put it 6-11 ms off at two nodes). */
	if (!rc && !denied && out->ambiguous && isfinite(out->alt_power) && p->onset_check_k > 0 && out->gated &&
	    out->loc.status == DSP_LOC_OK)
		rule_out_alt(bank, &src, in, n, p, out);
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
	out->pairs_used = out->loc.n_pairs;
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
