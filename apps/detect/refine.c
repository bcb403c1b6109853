/* refine.c — best-of-templates onset refinement (see refine.h). */
#include "apps/detect/refine.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "apps/dsp/synth.h"
#include "apps/dsp/wave.h"

struct det_refiner {
	int n;
	double bias[DET_REFINE_MAX]; /* onset bias under the stated variation, samples */
	dsp_onset *o[DET_REFINE_MAX];
	size_t m[DET_REFINE_MAX];
	float *h[DET_REFINE_MAX]; /* the templates, for subtraction */
};

det_refiner *det_refiner_new(float *const *h, const size_t *m, int n, const char **why)
{
	if (n < 1 || n > DET_REFINE_MAX) {
		*why = "between 1 and DET_REFINE_MAX templates are needed";
		return NULL;
	}
	det_refiner *r = calloc(1, sizeof *r);
	if (!r) {
		*why = "out of memory";
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		r->o[i] = dsp_onset_new(h[i], m[i], why);
		if (!r->o[i]) {
			det_refiner_free(r);
			return NULL;
		}
		r->m[i] = m[i];
		r->h[i] = malloc(m[i] * sizeof(float));
		if (!r->h[i]) {
			*why = "out of memory";
			r->n = i + 1;
			det_refiner_free(r);
			return NULL;
		}
		memcpy(r->h[i], h[i], m[i] * sizeof(float));
		r->n = i + 1;
	}
	return r;
}

void det_refiner_free(det_refiner *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		dsp_onset_free(r->o[i]);
		free(r->h[i]);
	}
	free(r);
}

/* The onset of template t found in itself stretched about its start by
 * `stretch` (y(k) = h(k / stretch)), less where it starts: samples. */
static int stretch_bias(det_refiner *r, int t, double stretch, double *bias)
{
	size_t m = r->m[t], pad = m / 2 + 64, my = (size_t)ceil((double)m * stretch) + 1, n = my + 2 * pad;
	float *x = calloc(n, sizeof *x);
	if (!x)
		return -ENOMEM;
	dsp_wave *w = dsp_wave_from_samples(r->h[t], m, 1.0, 1.0);
	for (size_t k = 0; k < my; k++)
		x[pad + k] = (float)dsp_wave_eval(w, (double)k / stretch);
	dsp_wave_free(w);
	dsp_onset_result res;
	const char *why;
	int rc = dsp_onset_refine(r->o[t], x, n, 0, (int)(n - m), &res, &why);
	free(x);
	if (rc < 0)
		return rc;
	*bias = res.tau - (double)pad;
	return 0;
}

int det_refiner_set_variation(det_refiner *r, double variation)
{
	if (!(variation >= 0 && variation <= 0.5))
		return -EINVAL;
	/* The RMS over calls spread evenly across +-variation (16 stretches,
	 * the template itself not among them). */
	enum { STEPS = 8 };
	for (int t = 0; t < r->n; t++) {
		double s2 = 0;
		for (int k = -STEPS; k <= STEPS && variation > 0; k++) {
			double b = 0;
			if (k == 0)
				continue;
			int rc = stretch_bias(r, t, 1 + variation * k / STEPS, &b);
			if (rc == -ENOMEM)
				return rc;
			/* no match at all: the call could be anywhere in the template */
			b = rc < 0 ? (double)r->m[t] / 2 : b;
			s2 += b * b;
		}
		r->bias[t] = sqrt(s2 / (2 * STEPS));
	}
	return 0;
}

double det_refiner_variation_bias(const det_refiner *r, int t)
{
	return t >= 1 && t <= r->n ? r->bias[t - 1] : 0;
}

/* The stated variation's bias joins the onset's error. */
static void add_bias(const det_refiner *r, int t, dsp_onset_result *res)
{
	res->se = hypot(res->se, r->bias[t]);
}

size_t det_refiner_max_len(const det_refiner *r)
{
	size_t m = 0;
	for (int i = 0; i < r->n; i++)
		if (r->m[i] > m)
			m = r->m[i];
	return m;
}

int det_refine(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, double min_enr_db,
	       det_refine_result *out, const char **why)
{
	int best = -1;
	det_refine_result cur;
	*why = "no template fits in the clip";
	for (int i = 0; i < r->n; i++) {
		if (r->m[i] > n)
			continue;
		if (dsp_onset_refine(r->o[i], x, n, lag_lo, lag_hi, &cur.r, why) < 0)
			continue;
		add_bias(r, i, &cur.r);
		if (best < 0 || cur.r.enr_db > out->r.enr_db) {
			cur.template_id = i + 1;
			cur.length = r->m[i];
			*out = cur;
			best = i;
		}
	}
	if (best < 0)
		return -EDOM;
	if (out->r.enr_db < min_enr_db) {
		*why = "best template match below the ENR threshold";
		return -EDOM;
	}
	return 0;
}

int det_refine_all(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, det_refine_result *all)
{
	const char *why;
	for (int i = 0; i < r->n; i++) {
		all[i].template_id = 0;
		all[i].length = r->m[i];
		all[i].explained = 0;
		if (r->m[i] <= n && dsp_onset_refine(r->o[i], x, n, lag_lo, lag_hi, &all[i].r, &why) == 0) {
			all[i].template_id = i + 1;
			add_bias(r, i, &all[i].r);
			all[i].explained = all[i].r.explained; /* the onset's own misfit accounting */
		}
	}
	return r->n;
}

int det_refine_subtract(det_refiner *r, float *x, size_t n, const det_refine_result *res)
{
	int t = res->template_id - 1;
	if (t < 0 || t >= r->n)
		return -EINVAL;
	/* The template with margins, delayed by the fractional part of tau
	 * (circular phase shift: the margins keep it from wrapping). */
	size_t m = r->m[t], pad = 16, len = m + 2 * pad;
	float *y = calloc(len, sizeof(float));
	if (!y)
		return -ENOMEM;
	memcpy(y + pad, r->h[t], m * sizeof(float));
	double base = floor(res->r.tau);
	if (dsp_delay_exact(y, len, res->r.tau - base, y) < 0) {
		free(y);
		return -ENOMEM;
	}
	for (size_t i = 0; i < len; i++) {
		int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
		if (k >= 0 && k < (int64_t)n)
			x[k] -= (float)(res->r.amp * y[i]);
	}
	/* What is left of the call is mostly first order: a slightly wrong
	 * amplitude and shift, and the sound card's rate error (tens of ppm
	 * stretch the call by a fraction of a sample over its length, which at
	 * 60 dB ENR leaves a residual a template could match at 40 dB).  Fit the
	 * residual on y, y' and j*y' (amplitude, shift, stretch) by least
	 * squares and subtract that too. */
	double G[3][3] = {{0}}, v[3] = {0};
	for (size_t i = 1; i + 1 < len; i++) {
		int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
		if (k < 0 || k >= (int64_t)n)
			continue;
		double d = 0.5 * ((double)y[i + 1] - y[i - 1]), b[3] = {y[i], d, d * ((double)i - pad)};
		for (int a = 0; a < 3; a++) {
			v[a] += b[a] * x[k];
			for (int c = 0; c < 3; c++)
				G[a][c] += b[a] * b[c];
		}
	}
	/* 3x3 solve by Cramer's rule (well conditioned: the bases are nearly
	 * orthogonal for an oscillating call) */
	double det = G[0][0] * (G[1][1] * G[2][2] - G[1][2] * G[2][1]) - G[0][1] * (G[1][0] * G[2][2] - G[1][2] * G[2][0]) +
		     G[0][2] * (G[1][0] * G[2][1] - G[1][1] * G[2][0]);
	if (fabs(det) > 0) {
		double cf[3];
		for (int c = 0; c < 3; c++) {
			double M[3][3];
			memcpy(M, G, sizeof M);
			for (int a = 0; a < 3; a++)
				M[a][c] = v[a];
			cf[c] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
				 M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
				det;
		}
		for (size_t i = 1; i + 1 < len; i++) {
			int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
			if (k < 0 || k >= (int64_t)n)
				continue;
			double d = 0.5 * ((double)y[i + 1] - y[i - 1]);
			x[k] -= (float)(cf[0] * y[i] + cf[1] * d + cf[2] * d * ((double)i - pad));
		}
	}
	free(y);
	return 0;
}

int det_refine_overlaps(det_refiner *r, float *x, size_t n, int lag_lo, int lag_hi, const det_refine_result *primary,
			double min_enr_db, double min_explained, double min_sep, det_refine_result *out, int max)
{
	det_refine_result cur = *primary, all[DET_REFINE_MAX];
	int found = 0;
	while (found < max && det_refine_subtract(r, x, n, &cur) == 0) {
		int nt = det_refine_all(r, x, n, lag_lo, lag_hi, all), best = -1;
		for (int i = 0; i < nt; i++) {
			if (!all[i].template_id || all[i].r.enr_db < min_enr_db || all[i].explained < min_explained)
				continue;
			/* The same template again only half a call or more away: a
			 * periodic call's side peaks (one pulse interval off) feed on
			 * what is left of the call subtracted. */
			double sep = fmax(min_sep, 0.5 * (double)all[i].length);
			int near = fabs(all[i].r.tau - primary->r.tau) < sep && all[i].template_id == primary->template_id;
			for (int k = 0; k < found; k++)
				near |= fabs(all[i].r.tau - out[k].r.tau) < sep && all[i].template_id == out[k].template_id;
			if (!near && (best < 0 || all[i].r.enr_db > all[best].r.enr_db))
				best = i;
		}
		if (best < 0)
			break;
		cur = out[found++] = all[best];
	}
	return found;
}
