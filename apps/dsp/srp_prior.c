/* srp_prior.c — the onsets' gate's arithmetic (see srp_prior.h). */
#include "apps/dsp/srp_prior.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median of e[0..n). */
static double median(const double *e, int n)
{
	double sorted[DSP_SRP_MAX];
	memcpy(sorted, e, (size_t)n * sizeof *e);
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_dbl);
	return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

/* How far clip k's nearest candidate emission (e[k] plus its
 * alternatives) lies from `at`, signed (candidate minus at). */
static double nearest(const dsp_srp_params *p, const double *e, int k, double at)
{
	double best = e[k] - at;
	for (int a = 0; a < p->prior_n_alt[k] && a < DSP_SRP_ALT; a++) {
		double d = e[k] + p->prior_alt_s[k][a] - at;
		if (fabs(d) < fabs(best))
			best = d;
	}
	return best;
}

/* Clips none of whose candidates lies within prior_k s.d. of the emission
 * `at`. */
static int count_bad(const dsp_srp_params *p, int n, const double *e, double at)
{
	int bad = 0;
	for (int k = 0; k < n; k++)
		bad += fabs(nearest(p, e, k, at)) > p->prior_k * p->prior_sd_s[k];
	return bad;
}

/* The emission the clips' estimates e[] agree on (dsp_srp_gate_chi2):
 * their median; with alternatives, of the median and every candidate the
 * one the fewest clips disagree with (*bad: how many). */
static double agreed(const dsp_srp_params *p, int n, const double *e, int *bad)
{
	double at = median(e, n);
	*bad = count_bad(p, n, e, at);
	int alts = 0;
	for (int k = 0; k < n; k++)
		alts += p->prior_n_alt[k];
	for (int k = 0; k < n && *bad && alts; k++)
		for (int a = -1; a < p->prior_n_alt[k] && a < DSP_SRP_ALT && *bad; a++) {
			double c = e[k] + (a < 0 ? 0 : p->prior_alt_s[k][a]);
			int b = count_bad(p, n, e, c);
			if (b < *bad) {
				*bad = b;
				at = c;
			}
		}
	return at;
}

int dsp_srp_prior_misfits(const dsp_srp_params *p, int n, const double *e, double slack)
{
	double med = median(e, n);
	int bad = 0;
	for (int k = 0; k < n; k++)
		bad += fabs(e[k] - med) > p->prior_k * p->prior_sd_s[k] + slack;
	return bad;
}

double dsp_srp_prior_chi2(const dsp_srp_params *pp, int n, const double *est, int drop, int *dof)
{
	double e[DSP_SRP_MAX], w[DSP_SRP_MAX];
	int in[DSP_SRP_MAX], m = n;
	/* Each clip's candidate nearest the emission most agree on. */
	int bad;
	double at = agreed(pp, n, est, &bad);
	for (int k = 0; k < n; k++) {
		e[k] = at + nearest(pp, est, k, at);
		w[k] = 1 / (pp->prior_sd_s[k] * pp->prior_sd_s[k]);
		in[k] = 1;
	}
	double chi2 = NAN;
	for (int round = 0;; round++) {
		/* the weighted mean emission of the clips kept, and each one's
		 * standardized residual from it */
		double sw = 0, swe = 0;
		for (int k = 0; k < n; k++)
			if (in[k]) {
				sw += w[k];
				swe += w[k] * e[k];
			}
		double mean = swe / sw, worst = -1;
		int wk = -1;
		chi2 = 0;
		for (int k = 0; k < n; k++) {
			if (!in[k])
				continue;
			double z2 = (e[k] - mean) * (e[k] - mean) * w[k];
			chi2 += z2;
			if (z2 > worst) {
				worst = z2;
				wk = k;
			}
		}
		if (round >= drop || m <= 2)
			break;
		in[wk] = 0;
		m--;
	}
	*dof = m - 1;
	return chi2;
}
