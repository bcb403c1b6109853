/* tdoa.h — from the clips of one call to a position (pure: numbers in,
 * numbers out; the clips are already fetched).
 *
 * Each clip j starts at global time T_j (int ns + fraction) and holds the
 * call near index (g_j - T_j) R, g_j the node's detected onset.  The
 * reference r is the clip with the strongest detection.  For every other j,
 * GCC-PHAT (apps/dsp/gccphat.h, band of the detection) measures the delay
 * d_j of clip j against clip r, searched in a window around the delay the
 * onsets predict, (g_j - T_j) R - (g_r - T_r) R, of half-width
 * 4 sqrt(se_j^2 + se_r^2) R + min_window samples (the onsets are already
 * sub-sample when a template matched; a wide window would invite carrier
 * cycle slips).  Arrival times relative to the reference's arrival:
 *     a_r = 0,   a_j = (T_j - T_r) + d_j / R.
 * Sound cards run at R_j = R (1 + skew_j): with the clips' rates in global
 * time, a sample i of clip j is at T_j + i / R_j.  Clip j is first put on
 * the reference's sample period (band-limited interpolation at T_j + k /
 * R_r, apps/dsp/wave.h), so both sample global time alike and GCC-PHAT
 * measures a pure delay d_j in reference samples:
 *     a_j = (T_j - T_r) + d_j / R_r.
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
 * Then dsp_locate (closed form + LM, chi-square, one rejection).  With a
 * known source height (`source_z_m` finite) the 2-D solve is corrected for the
 * height difference to each microphone, iterating on the estimate.
 */
#ifndef CHORUS_COLLAB_TDOA_H
#define CHORUS_COLLAB_TDOA_H

#include <stddef.h>
#include <stdint.h>

#include "apps/dsp/locate.h"

#define TDOA_MAX DSP_LOC_MAX

typedef struct {
	uint32_t node;
	double mic_m[3]; /* m */
	const float *x;  /* clip samples */
	size_t n;
	double rate_hz;     /* nominal, Hz */
	double rate_eff_hz; /* frames per global second; 0 = nominal */
	int64_t t0_ns;      /* global time of x[0]: t0_ns + t0_frac_ns, ns */
	double t0_frac_ns;
	double t0_se_ns;    /* ns */
	int64_t onset_ns;   /* detected global onset, ns */
	double onset_se_ns; /* ns */
	double snr_db;      /* detection SNR (picks the reference) */
} tdoa_input;

typedef struct {
	double f_lo_hz, f_hi_hz; /* GCC-PHAT band, Hz */
	double beta;             /* PHAT exponent */
	double min_window;       /* samples added to the lag window half-width */
	double c_m_s;            /* speed of sound, m/s */
	double c_sd_m_s;         /* its standard uncertainty, m/s (0: exact) */
	double pos_sd_m;         /* survey s.d. of every microphone position per axis, m (0: exact) */
	double wind_m_s[3];      /* the wind's velocity, m/s (0: still air; apps/dsp/locate.h) */
	double source_z_m;       /* known source height, m; NAN = unknown */
	double alpha;            /* chi-square level */
} tdoa_params;

typedef struct {
	int ref;                    /* index of the reference input */
	double a_s[TDOA_MAX];       /* arrival relative to the reference's, s */
	double sigma_s[TDOA_MAX];   /* s */
	double delay_se[TDOA_MAX];  /* GCC-PHAT standard error, samples (0 for ref) */
	double coherence[TDOA_MAX]; /* GCC-PHAT peak coherence */
	int ok[TDOA_MAX];           /* arrival used (GCC-PHAT succeeded) */
	int n_ok;
	dsp_loc_result loc;   /* position; loc.t0_s relative to the reference arrival */
	int64_t ref_t_ns;     /* global time of the reference arrival, ns (a = 0) */
	double ref_t_frac_ns; /* ns */
	int rejected_node;    /* node id the solver rejected, or -1 */
	char why[160];        /* what failed, if anything */
} tdoa_result;

/* Fill defaults: band 1-3.2 kHz, beta 1, min_window 3, c 343, z unknown, alpha 1e-3. */
void tdoa_params_default(tdoa_params *p);

/* Locate from n clips.  Returns 0 (read out->loc.status), -EDOM (too few
 * usable arrivals or degenerate: out->why), -EINVAL (n out of range). */
int tdoa_locate(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out);

#endif
