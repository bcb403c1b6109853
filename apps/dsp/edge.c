/* edge.c — a call's start from its band envelope's leading edge (see edge.h). */
#include "apps/dsp/edge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <fftw3.h>

int dsp_band_envelope(const float *x, size_t n, double rate_hz, double f_lo_hz, double f_hi_hz, double *e)
{
	fftwf_complex *X = fftwf_alloc_complex(n);
	fftwf_plan fwd = X ? fftwf_plan_dft_1d((int)n, X, X, FFTW_FORWARD, FFTW_ESTIMATE) : NULL;
	fftwf_plan bwd = X ? fftwf_plan_dft_1d((int)n, X, X, FFTW_BACKWARD, FFTW_ESTIMATE) : NULL;
	if (!fwd || !bwd) {
		if (fwd)
			fftwf_destroy_plan(fwd);
		if (bwd)
			fftwf_destroy_plan(bwd);
		fftwf_free(X);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		X[i][0] = x[i];
		X[i][1] = 0;
	}
	fftwf_execute(fwd);
	/* the band's positive frequencies, doubled; nothing else */
	for (size_t k = 0; k < n; k++) {
		double f = (double)k * rate_hz / (double)n;
		int in = k > 0 && k < (n + 1) / 2 && f >= f_lo_hz && f <= f_hi_hz;
		X[k][0] = in ? 2 * X[k][0] : 0;
		X[k][1] = in ? 2 * X[k][1] : 0;
	}
	fftwf_execute(bwd);
	double s = 1.0 / (double)n;
	for (size_t i = 0; i < n; i++)
		e[i] = ((double)X[i][0] * X[i][0] + (double)X[i][1] * X[i][1]) * s * s;
	fftwf_destroy_plan(fwd);
	fftwf_destroy_plan(bwd);
	fftwf_free(X);
	return 0;
}

/* Where e crosses level walking back from index `from` (e[from] >= level):
 * the fractional index between the last sample below and the next; -1 if
 * e never drops below it down to index `stop`. */
static double crossing_back(const double *e, size_t from, size_t stop, double level)
{
	for (size_t i = from; i > stop; i--)
		if (e[i - 1] < level) {
			double d = e[i] - e[i - 1];
			return (double)(i - 1) + (d > 0 ? (level - e[i - 1]) / d : 0.5);
		}
	return -1;
}

int dsp_edge_find(const float *x, size_t n, const dsp_edge_params *p, dsp_edge_result *out, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	double bw = p->f_hi_hz - p->f_lo_hz;
	if (!x || n < 64 || !(p->rate_hz > 0) || !(bw > 0) || !(p->f_lo_hz >= 0) || !(p->rise_s > 0) || !(p->k_sd > 0) ||
	    p->noise_hi > n || p->search_hi > n || p->search_lo >= p->search_hi) {
		*why = "edge: bad parameters (band, rise, threshold, or windows outside the clip)";
		return -EINVAL;
	}
	size_t h = (size_t)ceil(fmax(0.5e-3 * p->rate_hz, 2 * p->rate_hz / bw)); /* half the smoothing window */
	size_t w = 2 * h + 1;
	if (p->noise_hi < p->noise_lo + 32 + w) {
		*why = "edge: under 32 samples of noise before the call";
		return -EINVAL;
	}
	double *e = malloc(n * sizeof *e), *m = malloc(n * sizeof *m);
	if (!e || !m || dsp_band_envelope(x, n, p->rate_hz, p->f_lo_hz, p->f_hi_hz, e) < 0) {
		free(e);
		free(m);
		*why = "edge: out of memory";
		return -ENOMEM;
	}
	/* centred moving average (a running sum; the ends use what there is) */
	double run = 0;
	for (size_t i = 0; i < n + h; i++) {
		if (i < n)
			run += e[i];
		if (i >= w)
			run -= e[i - w];
		if (i >= h) {
			size_t c = i - h, lo = c >= h ? c - h : 0, hi = c + h < n ? c + h : n - 1;
			m[c] = run / (double)(hi - lo + 1);
		}
	}
	/* the noise, away from the stretch's ends */
	double mu = 0, ss = 0;
	size_t a = p->noise_lo + h, b = p->noise_hi - h, cnt = b - a;
	for (size_t i = a; i < b; i++)
		mu += m[i];
	mu /= (double)cnt;
	for (size_t i = a; i < b; i++)
		ss += (m[i] - mu) * (m[i] - mu);
	double sd = sqrt(ss / (double)(cnt - 1));
	double thr = mu + p->k_sd * sd;
	size_t stop = p->noise_hi > h ? p->noise_hi - h : 0;
	if (p->other_hi > p->other_lo + 2 * h + 1 && p->other_hi <= n) {
		/* another sound before the search window: rise above it */
		double mo = 0, so = 0, mx = 0;
		size_t oa = p->other_lo + h, ob = p->other_hi - h;
		for (size_t i = oa; i < ob; i++) {
			mo += m[i];
			mx = fmax(mx, m[i]);
		}
		mo /= (double)(ob - oa);
		for (size_t i = oa; i < ob; i++)
			so += (m[i] - mo) * (m[i] - mo);
		so = sqrt(so / (double)(ob - oa > 1 ? ob - oa - 1 : 1));
		thr = fmax(thr, mo + 2 * (mx - mo));
		if (mo > mu)
			mu = mo;
		sd = fmax(sd, so);
		stop = p->other_lo + h;
	}
	int rc = -EDOM;
	*why = "edge: nothing above the noise in the search window";
	size_t i0 = p->search_lo;
	while (i0 < p->search_hi && !(m[i0] > thr))
		i0++;
	if (i0 < p->search_hi) {
		size_t end = i0 + (size_t)ceil(p->rise_s * p->rate_hz), ip = i0;
		if (end > n)
			end = n;
		for (size_t i = i0; i < end; i++)
			if (m[i] > m[ip])
				ip = i;
		/* The first hump: the first sample from the threshold on that
		 * no sample of the next smoothing window exceeds.  Echoes come
		 * only later: where the first hump is already a sound of its own
		 * (an eighth of the largest or more) and a louder one follows,
		 * the edge is the first's (bench/field's room row: a frog's
		 * direct sound at a far node 6 dB under the echoes arriving 9 ms
		 * after it, whose half height was taken for the start). */
		size_t i1 = i0;
		for (; i1 < ip; i1++) {
			size_t k = i1 + 1, kend = i1 + w < n ? i1 + w : n - 1;
			while (k <= kend && m[k] <= m[i1])
				k++;
			if (k > kend)
				break;
		}
		if (i1 < ip && m[i1] - mu >= 0.125 * (m[ip] - mu))
			ip = i1;
		double A = m[ip] - mu;
		/* Half height: the first sample from the threshold on at or
		 * above it, the crossing just before; 20 %: walking back from
		 * there.  (Not 80 %: a pulse train's first pulse may fall short
		 * of its louder neighbour's 80 % in noise.) */
		size_t j = i0;
		while (j < ip && m[j] < mu + 0.5 * A)
			j++;
		double t50 = crossing_back(m, j, stop, mu + 0.5 * A), t20 = crossing_back(m, j, stop, mu + 0.2 * A);
		if (t20 < 0 || t50 < 0 || !(t50 > t20)) {
			*why = "edge: no clean rise from the noise before the sound";
		} else {
			/* The edge the filter and the smoothing alone make (a step
			 * of the sound's power) spans about w + rate / bw samples
			 * between its 0 and 100 % and is centred on the start; what
			 * the rise takes beyond that is the sound's own taper,
			 * which starts at the start: the 50 % point lies half of
			 * it late. */
			double r_f = (double)w + p->rate_hz / bw, ramp = (t50 - t20) / 0.3, taper = fmax(0, ramp - r_f);
			double slope = 0.3 * A / (t50 - t20);
			double sd_half = sd * sqrt(1 + 2 * 0.5 * A / fmax(mu, 1e-300));
			double jitter = sd_half / slope;
			out->t = t50 - 0.5 * taper;
			out->se = sqrt(jitter * jitter + 1.0 / 12 + 0.01 * taper * taper);
			out->rise = t50 - t20;
			out->snr_db = 10 * log10(fmax(A, 1e-300) / fmax(mu, 1e-300));
			out->smooth = w;
			rc = 0;
		}
	}
	free(e);
	free(m);
	return rc;
}
