/* tdoa_onsets.c — the onsets as a check and a stand-in (tdoa_onsets.h). */
#include "apps/collab/tdoa_onsets.h"

#include "apps/collab/tdoa_solve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Onset j relative to the reference's, s. */
static double onset_rel_s(const tdoa_input *in, int j, int ref)
{
	return (double)(in[j].onset_ns - in[ref].onset_ns) * 1e-9;
}

void tdoa_onsets_check_se(const tdoa_input *in, const int *idx, int m, double floor_s, double *s)
{
	double se_min = INFINITY;
	for (int i = 0; i < m; i++)
		se_min = fmin(se_min, in[idx[i]].onset_se_ns * 1e-9);
	for (int i = 0; i < m; i++)
		s[i] = hypot(hypot(in[idx[i]].onset_se_ns * 1e-9, se_min), floor_s);
}

/* The used arrivals idx[0..m-1] against their onsets: d[i], arrival i's
 * offset from the median offset, in s.e. s[i] (seconds both; those of
 * tdoa_onsets_check_se). */
static void offsets(const tdoa_input *in, const tdoa_result *r, const int *idx, int m, double floor_s, double *d,
		    double *s)
{
	double sorted[TDOA_MAX];
	for (int i = 0; i < m; i++) {
		int j = idx[i];
		d[i] = r->a_s[j] - onset_rel_s(in, j, r->ref);
		sorted[i] = d[i];
	}
	qsort(sorted, (size_t)m, sizeof(double), cmp_double);
	double med = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
	for (int i = 0; i < m; i++)
		d[i] -= med;
	tdoa_onsets_check_se(in, idx, m, floor_s, s);
}

int tdoa_onsets_disagree(const tdoa_input *in, const tdoa_result *r, const int *idx, int m, double k, double floor_s,
			 char *why, size_t len)
{
	if (m < 3 || !(k > 0))
		return 0;
	double d[TDOA_MAX], s[TDOA_MAX];
	offsets(in, r, idx, m, floor_s, d, s);
	int bad = 0, len0 = 0;
	if (why && len)
		why[0] = '\0';
	for (int i = 0; i < m; i++) {
		if (!(fabs(d[i]) <= k * s[i])) {
			if (why && len && bad < 2 && (size_t)len0 < len)
				len0 += snprintf(why + len0, len - (size_t)len0, "%snode%u %+.2f ms (%.1f s.e.)", bad ? ", " : "",
						 in[idx[i]].node, d[i] * 1e3, fabs(d[i]) / s[i]);
			bad++;
		}
	}
	return bad;
}

double tdoa_onsets_joint_q(const tdoa_input *in, const tdoa_result *r, const int *idx, int m, double floor_s)
{
	if (m < 4)
		return 1;
	double d[TDOA_MAX], s[TDOA_MAX], chi2 = 0, worst = 0;
	offsets(in, r, idx, m, floor_s, d, s);
	for (int i = 0; i < m; i++) {
		double z2 = d[i] * d[i] / (s[i] * s[i]);
		chi2 += z2;
		worst = fmax(worst, z2);
	}
	/* one onset may have slipped (tdoa_onsets_disagree's allowance): the
	 * rest, less the median's degree of freedom */
	return gsl_cdf_chisq_Q(chi2 - worst, m - 2);
}

int tdoa_solve_onsets(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out, int *idx)
{
	double survey = p->pos_sd_m / p->c_m_s;
	for (int j = 0; j < n; j++) {
		out->ok[j] = 1;
		out->a_s[j] = onset_rel_s(in, j, out->ref);
		double s2 = (in[j].onset_se_ns * in[j].onset_se_ns + in[j].t0_se_ns * in[j].t0_se_ns) * 1e-18;
		out->meas_sigma_s[j] = sqrt(s2);
		out->sigma_s[j] = sqrt(s2 + survey * survey);
		out->delay_se[j] = 0;
		out->coherence[j] = 0;
		idx[j] = j;
	}
	out->n_ok = n;
	return tdoa_solve(in, out, p, idx, n, &out->loc);
}
