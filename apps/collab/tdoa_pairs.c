/* tdoa_pairs.c — a node's two microphones' arrival difference (tdoa_pairs.h). */
#include "apps/collab/tdoa_pairs.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "apps/dsp/gccphat.h"

/* The survey term of a pair's variance at source s: how far moving both
 * microphones by pos_sd per axis moves their difference, s^2. */
static double survey_var(const double *a, const double *b, const double *s, double pos_sd, double c)
{
	double ra = 0, rb = 0, d2 = 0;
	for (int j = 0; j < 3; j++) {
		ra += (a[j] - s[j]) * (a[j] - s[j]);
		rb += (b[j] - s[j]) * (b[j] - s[j]);
	}
	ra = sqrt(ra);
	rb = sqrt(rb);
	if (!(ra > 0) || !(rb > 0))
		return 0;
	for (int j = 0; j < 3; j++) {
		double du = (a[j] - s[j]) / ra - (b[j] - s[j]) / rb;
		d2 += du * du;
	}
	return pos_sd * pos_sd * d2 / (c * c);
}

/* The heading term: the offset o = a - b turned by dphi about the vertical
 * moves a by dphi (z x o), and the difference by -u_a.(z x o) dphi / c
 * (u_a from the source towards a), s^2 for a heading s.d. sd_rad. */
static double heading_var(const double *a, const double *b, const double *s, double sd_rad, double c)
{
	double ra = 0, zxo[3] = {-(a[1] - b[1]), a[0] - b[0], 0}, dot = 0;
	for (int j = 0; j < 3; j++)
		ra += (a[j] - s[j]) * (a[j] - s[j]);
	ra = sqrt(ra);
	if (!(ra > 0) || !(sd_rad > 0))
		return 0;
	for (int j = 0; j < 3; j++)
		dot += (a[j] - s[j]) / ra * zxo[j];
	return dot * dot * sd_rad * sd_rad / (c * c);
}

int tdoa_measure_pairs(const tdoa_input *in, int n, const tdoa_params *p, const double src_m[3], tdoa_result *out)
{
	out->n_pairs = 0;
	double c_slow = p->c_m_s - 4 * p->c_sd_m_s;
	if (!(c_slow > 0))
		c_slow = p->c_m_s;
	for (int i = 0; i < n && out->n_pairs < DSP_LOC_MAX_PAIRS; i++) {
		const tdoa_input *t = &in[i];
		if (!t->x2 || !(t->rate_hz > 0))
			continue;
		double b = 0;
		for (int j = 0; j < 3; j++)
			b += (t->mic2_m[j] - t->mic_m[j]) * (t->mic2_m[j] - t->mic_m[j]);
		b = sqrt(b);
		if (!(b > 0))
			continue;
		/* The node's own call: from its onset less the margin to its end
		 * plus the margin, in its clip's samples. */
		double t0 = (double)t->t0_ns + t->t0_frac_ns;
		long lo = lround(((double)t->onset_ns - t0) * 1e-9 * t->rate_hz - TDOA_PAIR_PRE_S * t->rate_hz);
		long hi = lround(((double)t->onset_ns - t0) * 1e-9 * t->rate_hz + (fmax(t->dur_s, 0) + TDOA_PAIR_PRE_S) * t->rate_hz);
		if (lo < 0)
			lo = 0;
		if (hi > (long)t->n)
			hi = (long)t->n;
		/* the lags the spacing allows, and a few more: an alias a carrier
		 * cycle beyond them is a peak too (`second`) */
		int phys = (int)ceil(b / c_slow * t->rate_hz) + 1, max_lag = phys + 4;
		if (hi - lo < 8 * max_lag + 64)
			continue;
		dsp_gcc_params gp;
		dsp_gcc_params_default(&gp);
		gp.rate_hz = t->rate_hz;
		gp.f_lo_hz = p->f_lo_hz;
		gp.f_hi_hz = p->f_hi_hz;
		gp.beta = p->beta;
		gp.weighting = p->weighting;
		gp.max_lag = max_lag;
		const char *why;
		dsp_gcc *g = dsp_gcc_new(&gp, &why);
		if (!g)
			return -ENOMEM;
		dsp_gcc_result r;
		int rc = dsp_gcc_delay_window(g, t->x + lo, (size_t)(hi - lo), t->x2 + lo, (size_t)(hi - lo), -max_lag, max_lag,
					      &r, &why);
		dsp_gcc_free(g);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0 || !isfinite(r.delay) || !(r.se > 0) || !isfinite(r.se) || fabs(r.delay) > phys ||
		    !(r.second < TDOA_PAIR_SECOND))
			continue;
		dsp_pair *q = &out->pairs[out->n_pairs];
		memcpy(q->a_m, t->mic2_m, sizeof q->a_m);
		memcpy(q->b_m, t->mic_m, sizeof q->b_m);
		q->dt_s = r.delay / t->rate_hz;
		double var = pow(r.se / t->rate_hz, 2) + survey_var(q->a_m, q->b_m, src_m, p->pos_sd_m, p->c_m_s) +
			     heading_var(q->a_m, q->b_m, src_m, t->mic2_heading_sd_rad, p->c_m_s);
		q->sigma_s = sqrt(var);
		out->pair_in[out->n_pairs] = i;
		out->n_pairs++;
	}
	return out->n_pairs;
}

int tdoa_pairs_of(const tdoa_result *out, const int *idx, int m, dsp_pair *pr, int *which)
{
	int np = 0;
	for (int k = 0; k < out->n_pairs && np < DSP_LOC_MAX_PAIRS; k++)
		for (int j = 0; j < m; j++)
			if (idx[j] == out->pair_in[k]) {
				pr[np] = out->pairs[k];
				if (which)
					which[np] = k;
				np++;
				break;
			}
	return np;
}
