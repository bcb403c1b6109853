/* classify.c — a call's template by its band envelope's shape (see classify.h). */
#include "apps/detect/classify.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/edge.h"

#define MAX_TEMPLATES 8

typedef struct {
	double *e; /* mean removed, unit norm */
	size_t len;
	size_t pre; /* the margin before the template's start, blocks */
} scaled;

struct det_classifier {
	int n, n_scales;
	double rate_hz, f_lo_hz, f_hi_hz;
	size_t block; /* samples per envelope block */
	scaled *s;    /* [n * n_scales] */
};

/* x's band envelope (magnitude) averaged over blocks of b samples into a
 * new array of floor(n / b) values (*len). */
static double *block_envelope(const det_classifier *c, const float *x, size_t n, size_t *len)
{
	double *e = malloc(n * sizeof *e);
	size_t nb = n / c->block;
	double *out = nb ? malloc(nb * sizeof *out) : NULL;
	if (!e || !out || dsp_band_envelope(x, n, c->rate_hz, c->f_lo_hz, c->f_hi_hz, e) < 0) {
		free(e);
		free(out);
		return NULL;
	}
	for (size_t j = 0; j < nb; j++) {
		double s = 0;
		for (size_t k = j * c->block; k < (j + 1) * c->block; k++)
			s += sqrt(e[k]);
		out[j] = s / (double)c->block;
	}
	free(e);
	*len = nb;
	return out;
}

/* Stretch env (len blocks) by f into dst->e (linear interpolation), remove
 * its mean and scale it to unit norm.  Returns 0 or -ENOMEM / -EDOM (flat). */
static int stretch(const double *env, size_t len, double f, size_t pre, scaled *dst)
{
	size_t L = (size_t)llround((double)len * f);
	if (L < 2)
		return -EDOM;
	dst->e = malloc(L * sizeof *dst->e);
	if (!dst->e)
		return -ENOMEM;
	double mean = 0;
	for (size_t j = 0; j < L; j++) {
		double u = (double)j / f;
		size_t i = (size_t)floor(u);
		double w = u - (double)i, v = i + 1 < len ? env[i] * (1 - w) + env[i + 1] * w : env[len - 1];
		dst->e[j] = v;
		mean += v;
	}
	mean /= (double)L;
	double ss = 0;
	for (size_t j = 0; j < L; j++) {
		dst->e[j] -= mean;
		ss += dst->e[j] * dst->e[j];
	}
	if (!(ss > 0))
		return -EDOM;
	for (size_t j = 0; j < L; j++)
		dst->e[j] /= sqrt(ss);
	dst->len = L;
	dst->pre = (size_t)llround((double)pre * f);
	return 0;
}

void det_classifier_free(det_classifier *c)
{
	if (!c)
		return;
	for (int i = 0; c->s && i < c->n * c->n_scales; i++)
		free(c->s[i].e);
	free(c->s);
	free(c);
}

det_classifier *det_classifier_new(float *const *h, const size_t *m, int n, double rate_hz, double f_lo_hz,
				   double f_hi_hz, double scale, const char **why)
{
	if (n < 1 || n > MAX_TEMPLATES || !(rate_hz > 0) || !(f_lo_hz >= 0) || !(f_hi_hz > f_lo_hz) ||
	    !(scale >= 0 && scale <= 0.5)) {
		*why = "classify: 1-8 templates, a rate, a band and a scale in 0..0.5 are needed";
		return NULL;
	}
	det_classifier *c = calloc(1, sizeof *c);
	int half = (int)llround(fmax(scale, DET_CLASSIFY_SCALE) / DET_CLASSIFY_STEP);
	if (c) {
		c->n = n;
		c->n_scales = 2 * half + 1;
		c->rate_hz = rate_hz;
		c->f_lo_hz = f_lo_hz;
		c->f_hi_hz = f_hi_hz;
		c->block = (size_t)fmax(1.0, round(DET_CLASSIFY_BLOCK_S * rate_hz));
		c->s = calloc((size_t)(n * c->n_scales), sizeof *c->s);
	}
	if (!c || !c->s) {
		det_classifier_free(c);
		*why = "classify: out of memory";
		return NULL;
	}
	size_t pad = c->block * (size_t)ceil(DET_CLASSIFY_MARGIN_S * rate_hz / (double)c->block);
	for (int i = 0; i < n; i++) {
		size_t len = m[i] + 2 * pad, nb;
		float *x = calloc(len, sizeof *x);
		if (!x) {
			det_classifier_free(c);
			*why = "classify: out of memory";
			return NULL;
		}
		memcpy(x + pad, h[i], m[i] * sizeof *x);
		double *env = block_envelope(c, x, len, &nb);
		free(x);
		for (int k = 0; env && k < c->n_scales; k++) {
			int rc = stretch(env, nb, 1 + DET_CLASSIFY_STEP * (k - half), pad / c->block, &c->s[i * c->n_scales + k]);
			if (rc < 0) {
				free(env);
				det_classifier_free(c);
				*why = rc == -ENOMEM ? "classify: out of memory" : "classify: a template's envelope is flat";
				return NULL;
			}
		}
		free(env);
		if (!env) {
			det_classifier_free(c);
			*why = "classify: out of memory";
			return NULL;
		}
	}
	return c;
}

int det_classify(const det_classifier *c, const float *x, size_t n, int lag_lo, int lag_hi, double *score)
{
	return det_classify_lags(c, x, n, lag_lo, lag_hi, score, NULL);
}

int det_classify_lags(const det_classifier *c, const float *x, size_t n, int lag_lo, int lag_hi, double *score,
		      int *lag)
{
	size_t nb;
	double *e = block_envelope(c, x, n, &nb);
	if (!e)
		return n / c->block ? -ENOMEM : 0;
	/* prefix sums of the clip's envelope and its square: each window's
	 * mean and spread in O(1) */
	double *p1 = malloc((nb + 1) * sizeof *p1), *p2 = malloc((nb + 1) * sizeof *p2);
	if (!p1 || !p2) {
		free(e);
		free(p1);
		free(p2);
		return -ENOMEM;
	}
	p1[0] = p2[0] = 0;
	for (size_t j = 0; j < nb; j++) {
		p1[j + 1] = p1[j] + e[j];
		p2[j + 1] = p2[j] + e[j] * e[j];
	}
	int best = 0;
	for (int i = 0; i < c->n; i++) {
		score[i] = -2;
		if (lag)
			lag[i] = -1;
		for (int k = 0; k < c->n_scales; k++) {
			const scaled *t = &c->s[i * c->n_scales + k];
			/* the template starts at lag: its envelope, margin first,
			 * at block lag / block - pre */
			long b_lo = (long)floor((double)lag_lo / (double)c->block) - (long)t->pre,
			     b_hi = (long)ceil((double)lag_hi / (double)c->block) - (long)t->pre;
			if (b_lo < 0)
				b_lo = 0;
			if (b_hi > (long)nb - (long)t->len)
				b_hi = (long)nb - (long)t->len;
			for (long b = b_lo; b <= b_hi; b++) {
				double s1 = p1[b + (long)t->len] - p1[b], s2 = p2[b + (long)t->len] - p2[b];
				double var = s2 - s1 * s1 / (double)t->len;
				if (!(var > 0))
					continue;
				double dot = 0;
				for (size_t j = 0; j < t->len; j++)
					dot += e[(size_t)b + j] * t->e[j];
				double r = dot / sqrt(var);
				if (r > score[i]) {
					score[i] = r;
					if (lag)
						lag[i] = (int)((b + (long)t->pre) * (long)c->block);
				}
			}
		}
		if (score[i] > -2 && (!best || score[i] > score[best - 1]))
			best = i + 1;
	}
	free(e);
	free(p1);
	free(p2);
	return best;
}
