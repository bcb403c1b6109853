/* tdoa.c — GCC-PHAT arrivals and the TDOA solve (see tdoa.h). */
#include "apps/collab/tdoa.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/gccphat.h"
#include "apps/dsp/wave.h"

void tdoa_params_default(tdoa_params *p)
{
	p->f_lo_hz = 1000;
	p->f_hi_hz = 3200;
	p->beta = 1;
	p->min_window = 3;
	p->c_m_s = 343;
	p->c_sd_m_s = 0;
	p->pos_sd_m = 0;
	memset(p->wind_m_s, 0, sizeof p->wind_m_s);
	p->source_z_m = NAN;
	p->alpha = 1e-3;
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

/* Solve; with a known source height, correct the arrivals for the height
 * difference (3-D range minus horizontal range) at the current estimate. */
static int solve(const tdoa_input *in, const tdoa_result *r, const tdoa_params *p, int *idx, int m,
		 dsp_loc_result *loc)
{
	dsp_arrival arr[TDOA_MAX];
	dsp_loc_params lp;
	dsp_loc_params_default(&lp);
	lp.c_m_s = p->c_m_s;
	lp.c_sd_m_s = p->c_sd_m_s;
	memcpy(lp.wind_m_s, p->wind_m_s, sizeof lp.wind_m_s);
	lp.alpha = p->alpha;
	lp.dim = isfinite(p->source_z_m) ? 2 : 0;
	double corr[TDOA_MAX] = {0};
	int rc = 0;
	for (int iter = 0; iter < (isfinite(p->source_z_m) ? 4 : 1); iter++) {
		for (int k = 0; k < m; k++) {
			int i = idx[k];
			memcpy(arr[k].pos_m, in[i].mic_m, sizeof arr[k].pos_m);
			arr[k].t_s = r->a_s[i] - corr[k];
			arr[k].sigma_s = r->sigma_s[i];
		}
		rc = dsp_locate(arr, m, &lp, loc);
		if (rc < 0 || !isfinite(p->source_z_m))
			break;
		for (int k = 0; k < m; k++) {
			const double *q = in[idx[k]].mic_m;
			double h2 = (loc->pos_m[0] - q[0]) * (loc->pos_m[0] - q[0]) + (loc->pos_m[1] - q[1]) * (loc->pos_m[1] - q[1]);
			double dz = p->source_z_m - q[2];
			corr[k] = (sqrt(h2 + dz * dz) - sqrt(h2)) / p->c_m_s;
		}
		loc->pos_m[2] = p->source_z_m;
	}
	return rc;
}

int tdoa_locate(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out)
{
	memset(out, 0, sizeof *out);
	out->rejected_node = -1;
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
	double rate_hz = R->rate_hz;
	dsp_gcc_params gp;
	dsp_gcc_params_default(&gp);
	gp.rate_hz = rate_hz;
	gp.f_lo_hz = p->f_lo_hz;
	gp.f_hi_hz = p->f_hi_hz;
	gp.beta = p->beta;
	const char *why;
	dsp_gcc *g = dsp_gcc_new(&gp, &why);
	if (!g) {
		snprintf(out->why, sizeof out->why, "GCC-PHAT: %s", why);
		return -EINVAL;
	}
	/* Where the call sits in each clip, samples from x[0]. */
	double pos_r = ((double)(R->onset_ns - R->t0_ns) - R->t0_frac_ns) * rate_hz * 1e-9;
	double var_d[TDOA_MAX];
	int nv = 0;
	for (int j = 0; j < n; j++) {
		if (j == r) {
			out->ok[j] = 1;
			continue;
		}
		const tdoa_input *J = &in[j];
		double pos_j = ((double)(J->onset_ns - J->t0_ns) - J->t0_frac_ns) * rate_hz * 1e-9;
		double pred = pos_j - pos_r;
		double se = sqrt(J->onset_se_ns * J->onset_se_ns + R->onset_se_ns * R->onset_se_ns) * rate_hz * 1e-9;
		double half = 4 * se + p->min_window;
		double rj = J->rate_eff_hz > 0 ? J->rate_eff_hz : J->rate_hz, rr = R->rate_eff_hz > 0 ? R->rate_eff_hz : rate_hz;
		size_t nj = J->n;
		float *xj = rj != rr ? on_ref_rate(J->x, J->n, rj, rr, &nj) : NULL;
		dsp_gcc_result gr;
		int grc = dsp_gcc_delay_window(g, R->x, R->n, xj ? xj : J->x, nj, (int)floor(pred - half),
					       (int)ceil(pred + half), &gr, &why);
		g_free(xj);
		if (grc < 0)
			continue;
		out->ok[j] = 1;
		out->delay_se[j] = gr.se;
		out->coherence[j] = gr.peak;
		/* a_j = (T_j - T_r) + d_j / R_r, seconds: both clips on the
		 * reference's global-time sample period. */
		out->a_s[j] = ((double)(J->t0_ns - R->t0_ns) + (J->t0_frac_ns - R->t0_frac_ns)) * 1e-9 + gr.delay / rr;
		var_d[nv++] = gr.se * gr.se;
	}
	dsp_gcc_free(g);
	if (nv == 0) {
		snprintf(out->why, sizeof out->why, "no GCC-PHAT delay could be measured");
		return -EDOM;
	}
	double sorted[TDOA_MAX];
	memcpy(sorted, var_d, (size_t)nv * sizeof(double));
	qsort(sorted, (size_t)nv, sizeof(double), cmp_double);
	double var_ref = sorted[nv / 2] / 2; /* samples^2 */
	int idx[TDOA_MAX], m = 0;
	for (int j = 0; j < n; j++) {
		if (!out->ok[j])
			continue;
		double v = j == r ? var_ref : fmax(out->delay_se[j] * out->delay_se[j] - var_ref, out->delay_se[j] * out->delay_se[j] / 2);
		double s2 = v / (rate_hz * rate_hz) + in[j].t0_se_ns * in[j].t0_se_ns * 1e-18 +
			    (p->pos_sd_m / p->c_m_s) * (p->pos_sd_m / p->c_m_s);
		/* A floor of 0.01 sample: interpolation and model error never vanish. */
		double fl = 0.01 / rate_hz;
		out->sigma_s[j] = sqrt(s2 + fl * fl);
		idx[m++] = j;
	}
	out->n_ok = m;
	/* a = 0 is the reference's arrival: its detected (refined) onset. */
	out->ref_t_ns = R->onset_ns;
	out->ref_t_frac_ns = 0;
	int rc = solve(in, out, p, idx, m, &out->loc);
	if (rc < 0) {
		snprintf(out->why, sizeof out->why, "%s", out->loc.why ? out->loc.why : "solver refused");
		return rc;
	}
	if (out->loc.rejected >= 0)
		out->rejected_node = (int)in[idx[out->loc.rejected]].node;
	return 0;
}
