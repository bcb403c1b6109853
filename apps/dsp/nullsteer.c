/* nullsteer.c — one located sound taken out of a set of clips (see
 * nullsteer.h). */
#include "apps/dsp/nullsteer.h"

#include <complex.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

static int fail(const char **why, const char *msg, int rc)
{
	if (why)
		*why = msg;
	return rc;
}

/* e^{-i w t}: a delay t at angular frequency w. */
static double complex steer(double w, double t)
{
	return cexp(-I * w * t);
}

int dsp_null_steer(dsp_null_clip *c, int n, double rate_hz, double f_lo_hz, double f_hi_hz, double *removed,
		   const char **why)
{
	if (removed)
		*removed = 0;
	if (n < 2)
		return fail(why, "null steering: two clips or more", -EINVAL);
	if (!(rate_hz > 0) || !(f_hi_hz > f_lo_hz))
		return fail(why, "null steering: rate and band", -EINVAL);
	size_t longest = 0;
	for (int j = 0; j < n; j++) {
		if (!c[j].x || c[j].n == 0)
			return fail(why, "null steering: an empty clip", -EINVAL);
		if (!(c[j].gain > 0) || !isfinite(c[j].tau_s) || !isfinite(c[j].t0_s))
			return fail(why, "null steering: a gain not > 0 or a time not finite", -EINVAL);
		if (c[j].n > longest)
			longest = c[j].n;
	}
	size_t L = 1;
	while (L < 2 * longest)
		L *= 2;
	size_t nb = L / 2 + 1;
	long k_lo = (long)ceil(f_lo_hz * (double)L / rate_hz), k_hi = (long)floor(f_hi_hz * (double)L / rate_hz);
	if (k_lo < 0)
		k_lo = 0;
	if (k_hi > (long)nb - 1)
		k_hi = (long)nb - 1;
	if (k_hi < k_lo)
		return fail(why, "null steering: no frequency bin in the band", -EINVAL);
	/* one spectrum per clip, each from fftwf_alloc (the alignment the
	 * plans, made on the first, require of the others) */
	float *t = fftwf_alloc_real(L);
	fftwf_complex **X = calloc((size_t)n, sizeof *X);
	double complex *g = malloc((size_t)n * sizeof *g);
	int ok = t && X && g, rc = 0;
	for (int j = 0; ok && j < n; j++)
		ok = (X[j] = fftwf_alloc_complex(nb)) != NULL;
	fftwf_plan fwd = ok ? fftwf_plan_dft_r2c_1d((int)L, t, X[0], FFTW_ESTIMATE) : NULL;
	fftwf_plan bwd = ok ? fftwf_plan_dft_c2r_1d((int)L, X[0], t, FFTW_ESTIMATE) : NULL;
	if (!fwd || !bwd) {
		if (fwd)
			fftwf_destroy_plan(fwd);
		if (bwd)
			fftwf_destroy_plan(bwd);
		for (int j = 0; X && j < n; j++)
			fftwf_free(X[j]);
		free(X);
		free(g);
		fftwf_free(t);
		return fail(why, "null steering: out of memory", -ENOMEM);
	}
	for (int j = 0; j < n; j++) {
		memset(t, 0, L * sizeof *t);
		memcpy(t, c[j].x, c[j].n * sizeof *t);
		fftwf_execute_dft_r2c(fwd, t, X[j]);
	}
	/* De-rotate by the sound's arrivals: Y_j(f) = X_j(f) e^{+i w (tau_j - t0_j)}
	 * is then g_j S(f) for the sound, the same S in every clip.  g (one
	 * complex gain per clip, the same at every frequency: a gain, and a
	 * phase that takes in what the arrivals are off by) and S (one value
	 * per bin) by alternating least squares from the given gains: the best
	 * rank-1 fit of Y over the band. */
	long nk = k_hi - k_lo + 1;
	double complex *S = malloc((size_t)nk * sizeof *S);
	if (!S) {
		rc = fail(why, "null steering: out of memory", -ENOMEM);
		goto out;
	}
	for (int j = 0; j < n; j++)
		g[j] = c[j].gain;
	for (int it = 0; it < 8; it++) {
		double gg = 0;
		for (int j = 0; j < n; j++)
			gg += creal(g[j] * conj(g[j]));
		for (long k = k_lo; k <= k_hi; k++) {
			double w = 2 * M_PI * (double)k * rate_hz / (double)L;
			double complex s = 0;
			for (int j = 0; j < n; j++)
				s += conj(g[j]) * X[j][k] * conj(steer(w, c[j].tau_s - c[j].t0_s));
			S[k - k_lo] = s / gg;
		}
		double ss = 0;
		for (long k = 0; k < nk; k++)
			ss += creal(S[k] * conj(S[k]));
		if (!(ss > 0))
			break;
		for (int j = 0; j < n; j++) {
			double complex gj = 0;
			for (long k = k_lo; k <= k_hi; k++) {
				double w = 2 * M_PI * (double)k * rate_hz / (double)L;
				gj += conj(S[k - k_lo]) * X[j][k] * conj(steer(w, c[j].tau_s - c[j].t0_s));
			}
			g[j] = gj / ss;
		}
	}
	double before = 0, after = 0;
	for (long k = k_lo; k <= k_hi; k++) {
		double w = 2 * M_PI * (double)k * rate_hz / (double)L;
		for (int j = 0; j < n; j++) {
			double complex xj = X[j][k];
			before += creal(xj * conj(xj));
			xj -= g[j] * S[k - k_lo] * steer(w, c[j].tau_s - c[j].t0_s);
			X[j][k] = (float complex)xj;
			after += creal(xj * conj(xj));
		}
	}
	free(S);
	for (int j = 0; j < n; j++) {
		fftwf_execute_dft_c2r(bwd, X[j], t);
		for (size_t i = 0; i < c[j].n; i++)
			c[j].x[i] = t[i] / (float)L;
	}
	if (removed && before > 0)
		*removed = 1 - after / before;
out:
	for (int j = 0; j < n; j++)
		fftwf_free(X[j]);
	fftwf_destroy_plan(fwd);
	fftwf_destroy_plan(bwd);
	fftwf_free(t);
	free(X);
	free(g);
	return rc;
}
