/* overlap_env.c — overlapping calls found by their own band's envelope
 * (see overlap_env.h). */
#include "apps/detect/overlap_env.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/detect/classify.h"
#include "apps/dsp/band.h"
#include "apps/dsp/edge.h"

/* Self-similarity (refine.h det_refiner_self_similarity) at which a shift
 * is the template's repetition period; the shifts tried, s. */
#define PERIOD_SIMILAR 0.5
#define PERIOD_MAX_S 0.060
/* The edge is looked for from the period plus this before the envelope's
 * start (or this alone without a period) to the period plus this after
 * it (the envelope matches about as well a period off either way), s. */
#define EDGE_BEFORE_S 0.003
#define EDGE_NO_PERIOD_S 0.005
#define EDGE_AFTER_S 0.005
/* What lies just before the search window, another call's leakage into
 * this template's band (the edge must rise above it: edge.h other_lo), s. */
#define OTHER_S 0.030

/* How far the call found may outlast the energy event, s (the detector's
 * off threshold and hangover place its end to within tens of ms). */
#define END_SLACK_S 0.020

struct det_overlap_env {
	int n;
	double rate_hz;
	double lo[DET_REFINE_MAX], hi[DET_REFINE_MAX];
	double offset[DET_REFINE_MAX]; /* the template's edge after its start, samples */
	double period[DET_REFINE_MAX]; /* samples, 0: none */
	size_t m[DET_REFINE_MAX];
	char call[DET_REFINE_MAX][64];       /* call type, "" none */
	det_classifier *cls[DET_REFINE_MAX]; /* NULL: not looked for */
};

void det_overlap_env_free(det_overlap_env *oe)
{
	if (!oe)
		return;
	for (int i = 0; i < oe->n; i++)
		det_classifier_free(oe->cls[i]);
	free(oe);
}

/* The first shift past the template's own main lobe at which it resembles
 * itself by PERIOD_SIMILAR again, samples (0: none within PERIOD_MAX_S). */
static double period_of(const det_refiner *r, int t, size_t m, double rate_hz)
{
	long ms = (long)llround(1e-3 * rate_hz);
	int dropped = 0;
	for (long s = ms; s <= (long)llround(PERIOD_MAX_S * rate_hz) && s < (long)m; s += ms) {
		double sim = det_refiner_self_similarity(r, t, (double)s);
		if (sim < PERIOD_SIMILAR)
			dropped = 1;
		else if (dropped)
			return (double)s;
	}
	return 0;
}

void det_template_band(const float *h, size_t m, double rate_hz, double f_lo_hz, double f_hi_hz, double *lo,
		       double *hi)
{
	*lo = f_lo_hz;
	*hi = f_hi_hz;
	double a, b;
	if (dsp_band_of(h, m, rate_hz, 0.95, f_lo_hz, f_hi_hz, &a, &b) == 0) {
		*lo = fmax(f_lo_hz, a * 0.9);
		*hi = fmin(f_hi_hz, b * 1.1);
	}
}

det_overlap_env *det_overlap_env_new(const det_refiner *r, float *const *h, const size_t *m, int n, double rate_hz,
				     double f_lo_hz, double f_hi_hz, const char *const *call, const char **why)
{
	if (!r || n < 1 || n > DET_REFINE_MAX || !(rate_hz > 0)) {
		*why = "overlap_env: 1-8 templates and a rate are needed";
		return NULL;
	}
	det_overlap_env *oe = calloc(1, sizeof *oe);
	if (!oe) {
		*why = "overlap_env: out of memory";
		return NULL;
	}
	oe->n = n;
	oe->rate_hz = rate_hz;
	for (int i = 0; i < n; i++) {
		int usable = 0;
		oe->offset[i] = det_refiner_edge_offset(r, i + 1, NULL, &usable);
		det_template_band(h[i], m[i], rate_hz, f_lo_hz, f_hi_hz, &oe->lo[i], &oe->hi[i]);
		oe->m[i] = m[i];
		if (call && call[i])
			snprintf(oe->call[i], sizeof oe->call[i], "%s", call[i]);
		if (!usable || !(oe->hi[i] > oe->lo[i]))
			continue;
		oe->period[i] = period_of(r, i + 1, m[i], rate_hz);
		oe->cls[i] = det_classifier_new(&h[i], &m[i], 1, rate_hz, oe->lo[i], oe->hi[i], DET_CLASSIFY_SCALE, why);
		if (!oe->cls[i]) {
			det_overlap_env_free(oe);
			return NULL;
		}
	}
	return oe;
}

double det_overlap_env_period(const det_overlap_env *oe, int t)
{
	return t >= 1 && t <= oe->n ? oe->period[t - 1] : 0;
}

/* Whether start lies at least min_sep from every start in a[0..k). */
static int apart(double start, const double *a, int k, double min_sep)
{
	for (int j = 0; j < k; j++)
		if (fabs(start - a[j]) < min_sep)
			return 0;
	return 1;
}

/* Template i's call near the envelope's start L in x (x[0, noise_hi)
 * holding only noise): its edge, *out.  Returns 0, or -EDOM (no edge
 * there: no call). */
static int timed_at_edge(const det_overlap_env *oe, int i, const float *x, size_t n, size_t noise_hi, int L,
			 det_refine_result *out)
{
	double rate = oe->rate_hz;
	double before = oe->period[i] > 0 ? oe->period[i] + EDGE_BEFORE_S * rate : EDGE_NO_PERIOD_S * rate;
	long s_lo = (long)floor(L - before), s_hi = (long)ceil(L + oe->period[i] + EDGE_AFTER_S * rate);
	long o_lo = s_lo - (long)llround(OTHER_S * rate);
	if (o_lo < (long)noise_hi)
		o_lo = (long)noise_hi;
	if (s_lo < (long)noise_hi || s_hi > (long)n)
		return -EDOM;
	dsp_edge_params ep = {.rate_hz = rate,
			      .f_lo_hz = oe->lo[i],
			      .f_hi_hz = oe->hi[i],
			      .noise_lo = 0,
			      .noise_hi = noise_hi,
			      .search_lo = (size_t)s_lo,
			      .search_hi = (size_t)s_hi,
			      .rise_s = DET_EDGE_RISE_S,
			      .k_sd = DET_EDGE_K_SD,
			      .other_lo = (size_t)o_lo,
			      .other_hi = (size_t)s_lo};
	dsp_edge_result e;
	const char *why;
	if (dsp_edge_find(x, n, &ep, &e, &why) < 0)
		return -EDOM;
	double start = e.t - oe->offset[i];
	if (start < (double)s_lo - oe->offset[i] || start > (double)s_hi)
		return -EDOM;
	*out = (det_refine_result){0};
	out->template_id = i + 1;
	out->length = oe->m[i];
	out->at_edge = 1;
	out->r.tau = start;
	out->r.se_crb = e.se;
	out->r.se = sqrt(e.se * e.se + oe->offset[i] * oe->offset[i]);
	out->r.enr_db = e.snr_db;
	return 0;
}

/* Whether template i is of a kind found: one of the templates found, or
 * of the same call type as one. */
static int kind_found(const det_overlap_env *oe, int i, const det_refine_result *found, int n_found)
{
	for (int j = 0; j < n_found; j++) {
		int t = found[j].template_id - 1;
		if (t == i || (t >= 0 && t < oe->n && oe->call[i][0] && strcmp(oe->call[i], oe->call[t]) == 0))
			return 1;
	}
	return 0;
}

int det_overlap_env_find(const det_overlap_env *oe, const float *x, size_t n, size_t noise_hi, int lag_lo, int lag_hi,
			 size_t end, const det_refine_result *found, int n_found, double min_sep, det_refine_result *out,
			 int max)
{
	double score[DET_REFINE_MAX];
	int lag[DET_REFINE_MAX], order[DET_REFINE_MAX], k = 0;
	/* After the first call found (the event's: detect anchors it at the
	 * sound's leading edge): what is left of it, a varied call the
	 * subtraction removed little of, fits other envelopes near its start. */
	if (n_found > 0 && found[0].r.tau + min_sep > lag_lo)
		lag_lo = (int)ceil(found[0].r.tau + min_sep);
	for (int i = 0; i < oe->n && lag_lo <= lag_hi; i++) {
		double s;
		int l;
		if (!oe->cls[i] || kind_found(oe, i, found, n_found))
			continue;
		int rc = det_classify_lags(oe->cls[i], x, n, lag_lo, lag_hi, &s, &l);
		if (rc < 0)
			return -ENOMEM;
		if (rc == 0 || s < DET_OVERLAP_ENV_MIN || l < 0)
			continue;
		score[i] = s;
		lag[i] = l;
		/* best envelope first */
		int j = k++;
		while (j > 0 && score[order[j - 1]] < s) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	double starts[2 * DET_REFINE_MAX];
	int ns = 0, got = 0;
	for (int j = 0; j < n_found && ns < DET_REFINE_MAX; j++)
		starts[ns++] = found[j].r.tau;
	for (int j = 0; j < k && got < max; j++) {
		int i = order[j];
		det_refine_result c;
		if (timed_at_edge(oe, i, x, n, noise_hi, lag[i], &c) < 0 || c.r.tau < lag_lo || c.r.tau > lag_hi ||
		    !apart(c.r.tau, starts, ns, min_sep))
			continue;
		/* The sound went on as long as this call did: the event ends
		 * after it (less its variation and the detector's slack). */
		if (end > 0 && c.r.tau + (1 - DET_CLASSIFY_SCALE) * (double)oe->m[i] > (double)end + END_SLACK_S * oe->rate_hz)
			continue;
		out[got++] = c;
		starts[ns++] = c.r.tau;
	}
	return got;
}
