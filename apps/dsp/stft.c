/* stft.c — streaming STFT on FFTW3 single precision (see stft.h). */
#include "apps/dsp/stft.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct dsp_stft {
	dsp_stft_params p;
	float *win;         /* window, size */
	double win_ss;      /* sum of w^2 */
	float *in;          /* FFTW input (windowed frame), size */
	fftwf_complex *out; /* FFTW output, size/2+1 */
	fftwf_plan plan;
	float *buf;         /* pending samples */
	size_t len, cap;    /* samples in buf, allocated */
	int64_t buf_first;  /* absolute index of buf[0] */
	int64_t next_frame; /* absolute index where the next frame starts */
};

void dsp_stft_params_default(dsp_stft_params *p)
{
	*p = (dsp_stft_params){.size = 1024, .hop = 256, .window = DSP_WIN_HANN, .rate_hz = 48000.0, .plan = DSP_PLAN_ESTIMATE, .wisdom = NULL};
}

/* Periodic windows (denominator N): the right choice for spectral analysis
 * with overlap-add-friendly hops; the symmetric variants are for filter design. */
static void make_window(float *w, int n, dsp_window kind)
{
	for (int i = 0; i < n; i++) {
		double x = 2.0 * M_PI * i / n;
		switch (kind) {
		case DSP_WIN_RECT: w[i] = 1.0f; break;
		case DSP_WIN_HANN: w[i] = (float)(0.5 - 0.5 * cos(x)); break;
		case DSP_WIN_HAMMING: w[i] = (float)(0.54 - 0.46 * cos(x)); break;
		case DSP_WIN_BLACKMAN: w[i] = (float)(0.42 - 0.5 * cos(x) + 0.08 * cos(2 * x)); break;
		}
	}
}

int dsp_wisdom_load(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -ENOENT;
	return fftwf_import_wisdom_from_filename(path) ? 0 : -EINVAL;
}

int dsp_wisdom_save(const char *path)
{
	return fftwf_export_wisdom_to_filename(path) ? 0 : -EIO;
}

dsp_stft *dsp_stft_new(const dsp_stft_params *p, int64_t first, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (p->size < 8 || p->size > (1 << 24)) {
		*why = "stft: size must be in [8, 2^24]";
		return NULL;
	}
	if (p->hop < 1 || p->hop > p->size) {
		*why = "stft: hop must be in [1, size]";
		return NULL;
	}
	if ((unsigned)p->window > DSP_WIN_BLACKMAN || (unsigned)p->plan > DSP_PLAN_WISDOM_ONLY) {
		*why = "stft: unknown window or plan mode";
		return NULL;
	}
	if (!(p->rate_hz > 0)) {
		*why = "stft: rate must be > 0";
		return NULL;
	}
	dsp_stft *s = calloc(1, sizeof *s);
	if (!s) {
		*why = "stft: out of memory";
		return NULL;
	}
	s->p = *p;
	s->p.wisdom = NULL; /* the caller's string need not outlive us */
	s->win = fftwf_alloc_real(p->size);
	s->in = fftwf_alloc_real(p->size);
	s->out = fftwf_alloc_complex(p->size / 2 + 1);
	if (!s->win || !s->in || !s->out) {
		*why = "stft: out of memory";
		dsp_stft_free(s);
		return NULL;
	}
	make_window(s->win, p->size, p->window);
	for (int i = 0; i < p->size; i++)
		s->win_ss += (double)s->win[i] * s->win[i];
	if (p->wisdom)
		dsp_wisdom_load(p->wisdom); /* a missing or stale cache only costs planning time */
	unsigned flags = p->plan == DSP_PLAN_ESTIMATE  ? FFTW_ESTIMATE
			 : p->plan == DSP_PLAN_MEASURE ? FFTW_MEASURE
						       : FFTW_MEASURE | FFTW_WISDOM_ONLY;
	/* MEASURE overwrites the arrays while timing; nothing is in them yet. */
	s->plan = fftwf_plan_dft_r2c_1d(p->size, s->in, s->out, flags);
	if (!s->plan) {
		*why = p->plan == DSP_PLAN_WISDOM_ONLY ? "stft: no wisdom for this size" : "stft: FFTW could not plan";
		dsp_stft_free(s);
		return NULL;
	}
	if (p->wisdom && p->plan != DSP_PLAN_ESTIMATE && dsp_wisdom_save(p->wisdom) != 0) {
		*why = "stft: cannot write the wisdom file";
		dsp_stft_free(s);
		return NULL;
	}
	dsp_stft_reset(s, first);
	return s;
}

void dsp_stft_free(dsp_stft *s)
{
	if (!s)
		return;
	if (s->plan)
		fftwf_destroy_plan(s->plan);
	fftwf_free(s->win);
	fftwf_free(s->in);
	fftwf_free(s->out);
	free(s->buf);
	free(s);
}

void dsp_stft_reset(dsp_stft *s, int64_t first)
{
	s->len = 0;
	s->buf_first = first;
	s->next_frame = first;
}

int64_t dsp_stft_next_index(const dsp_stft *s)
{
	return s->buf_first + (int64_t)s->len;
}

const float *dsp_stft_window(const dsp_stft *s)
{
	return s->win;
}

/* Room for `need` samples in buf (powers of two from two frames). */
static int grow(dsp_stft *s, size_t need)
{
	if (need <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 2 * (size_t)s->p.size;
	while (cap < need)
		cap *= 2;
	float *b = realloc(s->buf, cap * sizeof *b);
	if (!b)
		return -ENOMEM;
	s->buf = b;
	s->cap = cap;
	return 0;
}

int dsp_stft_reserve(dsp_stft *s, size_t n)
{
	/* Between pushes the buffer keeps less than one frame. */
	return grow(s, (size_t)s->p.size + n);
}

int dsp_stft_push(dsp_stft *s, const float *x, size_t n)
{
	/* Samples before the next frame's start are never needed again. */
	size_t drop = (size_t)(s->next_frame - s->buf_first);
	if (drop > s->len)
		drop = s->len;
	if (drop) {
		memmove(s->buf, s->buf + drop, (s->len - drop) * sizeof *s->buf);
		s->len -= drop;
		s->buf_first += (int64_t)drop;
	}
	if (grow(s, s->len + n) < 0)
		return -ENOMEM;
	memcpy(s->buf + s->len, x, n * sizeof *x);
	s->len += n;
	return 0;
}

int dsp_stft_next(dsp_stft *s, dsp_frame *f)
{
	int64_t off = s->next_frame - s->buf_first;
	if (off < 0 || off + s->p.size > (int64_t)s->len)
		return 0;
	const float *x = s->buf + off;
	for (int i = 0; i < s->p.size; i++)
		s->in[i] = x[i] * s->win[i];
	fftwf_execute(s->plan);
	f->first = s->next_frame;
	f->size = s->p.size;
	f->nbins = s->p.size / 2 + 1;
	f->X = s->out;
	s->next_frame += s->p.hop;
	return 1;
}

double dsp_stft_bin_power(const dsp_stft *s, const dsp_frame *f, int k_lo, int k_hi)
{
	int last = f->nbins - 1;
	if (k_lo < 0)
		k_lo = 0;
	if (k_hi > last)
		k_hi = last;
	double e = 0;
	for (int k = k_lo; k <= k_hi; k++) {
		double m2 = (double)f->X[k][0] * f->X[k][0] + (double)f->X[k][1] * f->X[k][1];
		/* DC and (even N) Nyquist have no mirror image in the one-sided spectrum. */
		int single = k == 0 || (k == last && f->size % 2 == 0);
		e += single ? m2 : 2 * m2;
	}
	return e / ((double)f->size * s->win_ss);
}

double dsp_stft_band_power(const dsp_stft *s, const dsp_frame *f, double f_lo_hz, double f_hi_hz)
{
	double df = s->p.rate_hz / f->size;
	int k_lo = (int)ceil(f_lo_hz / df - 1e-9);
	int k_hi = (int)floor(f_hi_hz / df + 1e-9);
	if (k_hi < k_lo)
		return 0;
	return dsp_stft_bin_power(s, f, k_lo, k_hi);
}
