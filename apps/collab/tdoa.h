/* tdoa.h — from the clips of one call to a position (pure: numbers in,
 * numbers out; the clips are already fetched).
 *
 * Each clip j starts at global time T_j (int ns + fraction) and holds the
 * call near index (g_j - T_j) R, g_j the node's detected onset.
 * The reference r is the clip with the strongest detection.  Every clip is
 * first put on the reference's sample period (band-limited interpolation
 * at T_j + k / R_r, apps/dsp/wave.h; sound cards run at R_j = R (1 +
 * skew_j), and the clips' rates in global time say so), so all sample
 * global time alike.  Then no template decides a delay: SRP-PHAT
 * (apps/dsp/srp.h) correlates every pair of clips over every physically
 * possible lag and finds the position whose predicted lags put every pair
 * on a correlation peak at once.  The search is gated by the group's
 * onsets: the arrival differences it may consider match the detections'
 * within 4 s.d. of sqrt(se^2 + onset_floor^2) each, one node excepted (a
 * template's onset may be off by its misfit; a second caller's detection
 * may have joined the group).  A gate that leaves no position is a
 * failure (-EDOM): the detections are not of one call from one place.
 * Without a known source height, the position is then refined in 3-D
 * (heights down to depth_m below the nodes' plane; srp.h).
 * A sound anywhere in the clips (ungated) that the best does not reach
 * dominance_ratio of is another caller: it is taken out of the clips
 * (null steering, apps/dsp/nullsteer.h) and the call searched again in
 * what is left (`separated`, its covariance scaled by chi2/dof when that
 * exceeds 1); still masked, the solve fails (-EDOM).
 * A second search leaves out ambiguity_radius_m around the best: when
 * another position scores ambiguity_ratio of its power or more (or the
 * search cannot rule one out within its split budget), the answer is
 * `ambiguous` (a pulse train's pairs correlate every pulse
 * interval, and positions shifting every pair by whole intervals can fit
 * almost as well; the chi-square of the wrong one may pass).
 * At the position found, each pair (r, j)'s correlation peak nearest its
 * predicted lag (within 1.5 samples) is refined on the exact correlation:
 *     a_r = 0,   a_j = (T_j - T_r) + d_j / R_r
 * with d_j the delay of clip j against the reference in reference samples.
 * (Correcting the rate difference afterwards at one point of the clip was
 * biased by the skew difference times the distance from that point to
 * wherever PHAT's whitened correlation puts its weight: up to 100 ppm x
 * 0.3 s = 30 us.)
 * Errors: var(d_j) from GCC-PHAT is the sum of two arrivals' noise, so each
 * arrival gets sigma_i^2 = its share of it (the reference: half the median
 * var(d)), plus each clip's clock conversion variance.
 * A microphone surveyed to pos_sd_m per axis is off along the line of sight
 * by as much, independently per node: each arrival's variance gains
 * (pos_sd_m / c)^2 (which the chi-square test then also allows).  The
 * speed of sound's uncertainty c_sd_m_s moves every range together: the
 * solve takes c as a further unknown with that prior (apps/dsp/locate.h).
 * The answer's arrivals are checked against the detected onsets with
 * their whole stated errors (two or more beyond onset_check_k s.e.:
 * refused); where the clips do not correlate (no position dominates) or
 * the onsets refuse the correlation's answer, the onsets themselves are
 * the arrivals (`from_onsets`; tdoa_onsets.h: a reverberant room's case).
 * A caller that moves (source_speed_m_s > 0) shifts every frequency of a
 * swept call at each node by its own Doppler factor, which the
 * correlation turns into delay: each clip's scale against the
 * reference's is measured and taken out before anything else
 * (tdoa_doppler.h), the scale's error stated in each arrival's variance,
 * and the onsets' check allows each onset the delay the scale moves
 * detect's template by.
 * Then dsp_locate (closed form + LM, chi-square, one rejection).  With a
 * known source height (`source_z_m` finite) the 2-D solve is corrected for the
 * height difference to each microphone, iterating on the estimate.
 */
#ifndef CHORUS_COLLAB_TDOA_H
#define CHORUS_COLLAB_TDOA_H

#include <stddef.h>
#include <stdint.h>

#include "apps/dsp/gccphat.h"
#include "apps/dsp/locate.h"
#include "apps/dsp/srp.h"

#define TDOA_MAX DSP_LOC_MAX
#define TDOA_ALT DSP_SRP_ALT

/* An answer whose misfit is this unlikely under the stated errors (the
 * chi-square's upper tail, short of the test's alpha) has its covariance
 * scaled by chi2/dof (tdoa.c). */
#define TDOA_MISFIT_Q 0.05

typedef struct {
	uint32_t node;
	double mic_m[3]; /* m */
	const float *x;  /* clip samples */
	size_t n;
	double rate_hz;     /* nominal, Hz */
	double rate_eff_hz; /* frames per global second; 0 = nominal */
	int64_t t0_ns;      /* global time of x[0]: t0_ns + t0_frac_ns, ns */
	double t0_frac_ns;
	double t0_se_ns;               /* ns */
	int64_t onset_ns;              /* detected global onset, ns */
	double onset_se_ns;            /* ns: every alignment detect's template left open included */
	double onset_crb_se_ns;        /* ns: as if the call were exactly detect's template (the onsets' gate); 0 = onset_se_ns */
	int n_alt;                     /* other onsets detect's match left open (its onset_alt): 0..TDOA_ALT */
	double onset_alt_ns[TDOA_ALT]; /* ns relative to onset_ns, each admitted by the onsets' gate too */
	double snr_db;                 /* detection SNR (picks the reference) */
	double dur_s;                  /* the detection's length, s (the pair's span: tdoa_pairs.h) */
	const float *x2;               /* the node's second channel, n samples, frame for frame with x; NULL: none */
	double mic2_m[3];              /* its microphone, m */
	double mic2_heading_sd_rad;    /* how well mic2_m - mic_m's heading is known (a turn about the vertical), rad */
} tdoa_input;

typedef struct {
	double f_lo_hz, f_hi_hz;     /* GCC-PHAT band, Hz */
	double beta;                 /* PHAT exponent */
	dsp_gcc_weighting weighting; /* PHAT, SCOT, Roth, CC */
	double onset_floor_s;        /* onsets' misfit s.d. beyond their stated se, s (the search's gate) */
	double margin_m;             /* searched area beyond the nodes' bounding box, m */
	double ambiguity_ratio;      /* a position ambiguity_radius_m or more away scoring this fraction
	                          * of the best's power makes the answer ambiguous (0: no check) */
	double ambiguity_radius_m;
	double dominance_ratio;     /* a sound anywhere in the clips (outside the onsets' gate too) whose
	                         * steered power the answer's does not reach this fraction of: the
	                         * answer is refused (0: no check) */
	int separate;               /* a masking sound found: take it out of the clips (nullsteer.h) and search again */
	double depth_m;             /* without a known source height: heights searched below the nodes' plane, m */
	double c_m_s;               /* speed of sound, m/s */
	double c_sd_m_s;            /* its standard uncertainty, m/s (0: exact) */
	double pos_sd_m;            /* survey s.d. of every microphone position per axis, m (0: exact) */
	double wind_m_s[3];         /* the wind's velocity, m/s (0: still air; apps/dsp/locate.h) */
	double source_z_m;          /* known source height, m; NAN = unknown */
	double alpha;               /* chi-square level */
	double onset_check_k;       /* two or more arrivals this many of their onsets' stated errors from
				 * the onsets refuse the correlation's answer (tdoa_onsets.h; 0: no check) */
	double onset_check_floor_s; /* the check's floor on each onset's error, s (tdoa_onsets.h) */
	int onset_timing;           /* where the clips do not correlate, or the onsets refuse their
				 * answer: solve from the onsets alone (tdoa_onsets.h) */
	double coarse_m;            /* an answer timed by the onsets whose 95 % ellipse's semi-major axis
				 * exceeds this is `coarse`, not ok (m; 0: never) */
	double source_speed_m_s;    /* the fastest the team's callers move, m/s: each clip's Doppler against
				 * the reference's measured and taken out (tdoa_doppler.h); 0: still */
	double flank_radius_m;      /* the steered response's peak within this of the gated best, searched
				 * without the gate, is the sound's own when stronger (TDOA_FLANK_RATIO):
				 * the gate cut it, and the gated best was on its flank (0: no check) */
} tdoa_params;

/* How much stronger than the gated best the peak next to it must be to
 * replace it (flank_radius_m). */
#define TDOA_FLANK_RATIO 1.05
/* ... and how close to the loudest sound in the clips it must come. */
#define TDOA_FLANK_LOUDEST 0.9

typedef struct {
	int ref;                       /* index of the reference input */
	double a_s[TDOA_MAX];          /* arrival relative to the reference's, s */
	double sigma_s[TDOA_MAX];      /* s */
	double meas_sigma_s[TDOA_MAX]; /* the same without the survey term (the measurement's own), s */
	double delay_se[TDOA_MAX];     /* GCC-PHAT standard error, samples (0 for ref) */
	double coherence[TDOA_MAX];    /* the pair's correlation at its peak (PHAT coherence) */
	double srp_pos_m[3];           /* where SRP put the source (the solve's start) */
	double srp_power;              /* its steered response power */
	int gated;                     /* 1: the onsets' gate held; 0: dropped */
	double alt_pos_m[3];           /* a position ambiguity_radius_m or more from srp_pos_m scoring
	                                * ambiguity_ratio x srp_power or more (not necessarily the best) */
	double alt_power;              /* its power (NAN: none found) */
	int ambiguous;                 /* such a position found, or none ruled out */
	int alt_ruled_out;             /* alt_pos_m was found, but the onsets refuse it and every other
	                                * such position as they refuse a wrong answer (onset_check_k
	                                * over onset_check_floor_s): not ambiguous */
	int separated;                 /* a louder sound (another caller) was taken out of the clips first */
	double flank_m;                /* the gated best was on the flank of the sound's own peak this far
					* away, which replaced it (flank_radius_m); 0 = it was the peak */
	double masker_pos_m[3];        /* where it was */
	double masker_power;           /* its steered power */
	double cov_scale;              /* loc.cov was scaled by chi2/dof (>= 1: separated, or its misfit's
					* Q below TDOA_MISFIT_Q); else 1 */
	int ok[TDOA_MAX];              /* arrival used (GCC-PHAT succeeded) */
	int n_ok;
	dsp_loc_result loc;     /* position; loc.t0_s relative to the reference arrival */
	int64_t ref_t_ns;       /* global time of the reference arrival, ns (a = 0): the median over the
	                       * used arrivals of their detected onsets minus their a (the
	                       * reference's onset until the solve succeeded) */
	double ref_t_frac_ns;   /* ns */
	double ref_t_se_ns;     /* its standard error: the median onset's stated one and the onset floor, ns */
	double ref_t_crb_se_ns; /* the same from the onsets' bounds alone (onset_crb_se_ns): collab's
				 * duplicate rule, as its grouping, keeps to it */
	int from_onsets;        /* 1: timed by the detected onsets (tdoa_onsets.h): the clips did not
				 * correlate, or their answer was refused (why says which) */
	int coarse;             /* from_onsets, and its 95 % ellipse wider than coarse_m */
	int doppler;            /* 1: source_speed_m_s > 0 and each clip's scale was measured */
	double rho[TDOA_MAX];   /* each clip's time scale over the reference's (1: none, or not measured) */
	double rho_sd[TDOA_MAX];
	double doppler_var_s2[TDOA_MAX]; /* the variance its scale's error leaves in the arrival, s^2 */
	int rejected_node;               /* node id the solver rejected, or -1 */
	int n_pairs;                     /* nodes' second microphones measured (tdoa_pairs.h) */
	dsp_pair pairs[DSP_LOC_MAX_PAIRS];
	int pair_in[DSP_LOC_MAX_PAIRS]; /* each one's input */
	int pairs_used;                 /* of them in the answer's solve */
	char why[160];                  /* what failed, if anything */
} tdoa_result;

/* Fill defaults: band 1-3.2 kHz, PHAT with beta 1, onset floor 5 ms,
 * margin 30 m, ambiguity 0.9 beyond 1 m, depth 3 m, c 343, z unknown, alpha 1e-3,
 * the onsets' check at 5 s.e. over a 0.5 ms floor, timing by the onsets on, coarse beyond 1 m,
 * the callers still (source_speed_m_s 0). */
void tdoa_params_default(tdoa_params *p);

/* Locate from n clips.  Returns 0 (read out->loc.status), -EDOM (too few
 * usable arrivals or degenerate: out->why), -EINVAL (n out of range). */
int tdoa_locate(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out);

#endif
