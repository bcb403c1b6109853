/* refine.c — best-of-templates onset refinement (see refine.h). */
#include "apps/detect/refine.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/synth.h"

struct det_refiner {
	int n;
	dsp_onset *o[DET_REFINE_MAX];
	size_t m[DET_REFINE_MAX];
	float *h[DET_REFINE_MAX];   /* the templates, for subtraction */
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
		if (r->m[i] <= n && dsp_onset_refine(r->o[i], x, n, lag_lo, lag_hi, &all[i].r, &why) == 0)
			all[i].template_id = i + 1;
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
	free(y);
	return 0;
}
