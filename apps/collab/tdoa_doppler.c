/* tdoa_doppler.c — a moving caller's Doppler between two clips (see
 * tdoa_doppler.h). */
#include "apps/collab/tdoa_doppler.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <glib.h>

#include "apps/dsp/wave.h"
#include "apps/dsp/xcorr.h"

/* Grid steps over [1 - delta, 1 + delta]: the correlation of a sweep with
 * its slid self falls by a fifth at 1 % (the moving row's chirp), so a
 * step of delta / 12 (0.5 % at 10 m/s) keeps three points on the peak. */
#define GRID_HALF 12
#define FINE 4
#define ZOOMS 3

/* The search resamples by linear interpolation between the samples of x
 * upsampled UP times (FFT zero padding): linear interpolation at the
 * clip's own rate attenuates 2.4 kHz at 16 kHz by up to 11 % depending on
 * the fractional position, which a scale sweeps through at fs (1 - 1/rho)
 * — an amplitude pattern that moved the correlation's best scale by 0.0017
 * at 0.985.  Upsampled four times the loss is under 1 %. */
#define UP 4

/* x[n] upsampled UP times into a new array of UP n samples, or NULL. */
static float *upsample(const float *x, size_t n)
{
	size_t N = dsp_good_size(2 * n), M = UP * N;
	float *in = fftwf_alloc_real(N), *out = fftwf_alloc_real(M);
	fftwf_complex *X = fftwf_alloc_complex(M / 2 + 1);
	float *y = g_try_new(float, UP *n);
	fftwf_plan f = NULL, b = NULL;
	if (in && out && X && y) {
		f = fftwf_plan_dft_r2c_1d((int)N, in, X, FFTW_ESTIMATE);
		b = fftwf_plan_dft_c2r_1d((int)M, X, out, FFTW_ESTIMATE);
	}
	if (!f || !b) {
		g_free(y);
		y = NULL;
		goto out;
	}
	memcpy(in, x, n * sizeof *x);
	memset(in + n, 0, (N - n) * sizeof *in);
	fftwf_execute(f);
	/* The Nyquist bin halved (it becomes two), everything above zero. */
	X[N / 2][0] *= 0.5f;
	X[N / 2][1] *= 0.5f;
	memset(X + N / 2 + 1, 0, (M / 2 - N / 2) * sizeof *X);
	fftwf_execute(b);
	for (size_t k = 0; k < UP * n; k++)
		y[k] = out[k] / (float)N;
out:
	if (f)
		fftwf_destroy_plan(f);
	if (b)
		fftwf_destroy_plan(b);
	fftwf_free(in);
	fftwf_free(out);
	fftwf_free(X);
	return y;
}

/* y[k] = x(pivot + (k / rate - pivot) / rho) for k < n, from xu (x
 * upsampled UP times), linear between its samples; 0 beyond x's ends. */
static void resample_linear(const float *xu, size_t n, double rate_hz, double pivot_s, double rho, double quad, float *y)
{
	double p = pivot_s * rate_hz, qs = quad / rate_hz; /* per sample */
	for (size_t k = 0; k < n; k++) {
		double dk = (double)k - p;
		double u = UP * (p + dk / rho + qs * dk * dk);
		double f = floor(u);
		long i = (long)f;
		if (i < 0 || (size_t)i + 1 >= UP * n) {
			y[k] = 0;
			continue;
		}
		double w = u - f;
		y[k] = (float)((1 - w) * xu[i] + w * xu[i + 1]);
	}
}

/* Energy of a spectrum in bins [lo, hi], on r(tau)'s scale (xcorr.h). */
static double band_energy(const fftwf_complex *X, size_t nfft, int lo, int hi)
{
	double e = 0;
	for (int k = lo; k <= hi; k++)
		e += 2.0 * ((double)X[k][0] * X[k][0] + (double)X[k][1] * X[k][1]);
	return e / (double)nfft;
}

/* |analytic correlation| at lag tau from bins [lo, hi] of R. */
static double envelope(const fftwf_complex *R, size_t nfft, double tau, int lo, int hi)
{
	double re, im;
	dsp_spec_analytic(R, nfft, tau, lo, hi, &re, &im);
	return hypot(re, im);
}

typedef struct {
	double c;   /* normalised envelope of the correlation at its peak */
	double lag; /* its lag, samples */
} corr_at;

/* ref against y in the band, the peak within lags [lo, hi]. */
static int correlate(dsp_xcorr *xc, const float *ref, size_t nr, const float *y, size_t n, double rate_hz, double f_lo,
		     double f_hi, int lo, int hi, corr_at *out)
{
	int e = dsp_xcorr_cross(xc, ref, nr, y, n, 0);
	if (e)
		return e;
	size_t nfft = dsp_xcorr_nfft(xc);
	double df = rate_hz / (double)nfft;
	int k_lo = (int)ceil(f_lo / df), k_hi = (int)floor(f_hi / df), last = (int)nfft / 2;
	k_lo = k_lo < 1 ? 1 : k_lo;
	k_hi = k_hi > last - 1 ? last - 1 : k_hi;
	if (k_hi < k_lo)
		return -EINVAL;
	fftwf_complex *R = dsp_xcorr_spec(xc);
	for (int k = 0; k <= last; k++)
		if (k < k_lo || k > k_hi)
			R[k][0] = R[k][1] = 0;
	double ea = band_energy(dsp_xcorr_spec_a(xc), nfft, k_lo, k_hi),
	       eb = band_energy(dsp_xcorr_spec_b(xc), nfft, k_lo, k_hi);
	if (!(ea > 0 && eb > 0))
		return -EDOM;
	dsp_peak pk;
	if (dsp_xcorr_peak(xc, lo, hi, k_lo, k_hi, &pk) != 0)
		return -EDOM;
	/* The envelope's maximum, within half a carrier cycle of the fringe
	 * found (golden section on |analytic correlation|): the fringe's own
	 * height rises and falls as a scale slides the envelope under the
	 * fringes (a cycle per 0.001 of scale for the moving row's chirp),
	 * the envelope's does not. */
	double P = rate_hz / (0.5 * (f_lo + f_hi)), a0 = pk.tau - P / 2, b0 = pk.tau + P / 2;
	const double gr = 0.5 * (sqrt(5.0) - 1);
	double x1 = b0 - gr * (b0 - a0), x2 = a0 + gr * (b0 - a0), e1 = envelope(R, nfft, x1, k_lo, k_hi),
	       e2 = envelope(R, nfft, x2, k_lo, k_hi);
	for (int it = 0; it < 24; it++) {
		if (e1 > e2) {
			b0 = x2;
			x2 = x1;
			e2 = e1;
			x1 = b0 - gr * (b0 - a0);
			e1 = envelope(R, nfft, x1, k_lo, k_hi);
		} else {
			a0 = x1;
			x1 = x2;
			e1 = e2;
			x2 = a0 + gr * (b0 - a0);
			e2 = envelope(R, nfft, x2, k_lo, k_hi);
		}
	}
	out->lag = 0.5 * (a0 + b0);
	out->c = envelope(R, nfft, out->lag, k_lo, k_hi) / sqrt(ea * eb);
	return 0;
}

int tdoa_doppler_measure(const float *ref, size_t nr, const float *x, size_t n, double t0_s, double rate_hz,
			 double f_lo_hz, double f_hi_hz, double max_lag_s, double pivot_s, double quad, double onset_sd_s,
			 double rho0, double delta, tdoa_doppler *out)
{
	memset(out, 0, sizeof *out);
	out->rho = 1;
	if (!nr || !n || !(rate_hz > 0) || !(f_hi_hz > f_lo_hz) || !(delta > 0) || !(max_lag_s >= 0))
		return -EINVAL;
	dsp_xcorr *xc = dsp_xcorr_new();
	float *y = g_try_new(float, n), *xu = upsample(x, n);
	if (!xc || !y || !xu) {
		dsp_xcorr_free(xc);
		g_free(y);
		g_free(xu);
		return -ENOMEM;
	}
	/* r peaks at tau = (arrival difference - t0) rate (xcorr.h). */
	int lo = (int)floor((-max_lag_s - t0_s) * rate_hz), hi = (int)ceil((max_lag_s - t0_s) * rate_hz);
	double h = delta / GRID_HALF;
	corr_at g[2 * GRID_HALF + 1];
	int best = -1, rc = 0;
	for (int i = 0; i <= 2 * GRID_HALF; i++) {
		double rho = rho0 + (i - GRID_HALF) * h;
		resample_linear(xu, n, rate_hz, pivot_s, rho, quad, y);
		int e = correlate(xc, ref, nr, y, n, rate_hz, f_lo_hz, f_hi_hz, lo, hi, &g[i]);
		if (e == -ENOMEM || e == -EINVAL) {
			rc = e;
			goto out;
		}
		if (e) {
			g[i].c = -INFINITY;
			continue;
		}
		if (best < 0 || g[i].c > g[best].c)
			best = i;
	}
	if (best < 0 || !(g[best].c > 0)) {
		rc = -EDOM;
		goto out;
	}
	out->peak1 = isfinite(g[GRID_HALF].c) ? g[GRID_HALF].c : 0;
	double rho_b = rho0 + (best - GRID_HALF) * h;
	if (best == 0 || best == 2 * GRID_HALF || !isfinite(g[best - 1].c) || !isfinite(g[best + 1].c)) {
		/* The best at the grid's end: the scale is beyond what the team
		 * said its callers do, or no peak; stated as anywhere in it. */
		out->at_edge = 1;
		out->rho = rho_b;
		out->rho_sd = 2 * delta / sqrt(12.0);
		out->peak = g[best].c;
		int a = best == 0 ? 0 : best - 1, b = best == 2 * GRID_HALF ? best : best + 1;
		out->slope_s = b > a && isfinite(g[a].c) && isfinite(g[b].c) ? (g[b].lag - g[a].lag) / ((b - a) * h) / rate_hz : 0;
	} else {
		/* The grid's step is the peak's own width: a parabola through
		 * its best three is biased by the peak's shape (0.0014 at
		 * 0.985, 0.7 ms of the chirp's delay).  A finer grid about the
		 * best, FINE steps a side of h / FINE, then the parabola. */
		double hf = h / FINE;
		corr_at f[2 * FINE + 1];
		int fb = FINE;
		f[FINE] = g[best];
		/* Near the best's lag only: two carrier cycles, and as far as a
		 * coupling of the clip's length per unit scale moves it (a
		 * pulse train's envelope peaks at every pulse interval, and a
		 * neighbouring scale may prefer another). */
		double P = rate_hz / (0.5 * (f_lo_hz + f_hi_hz)), W = 2 * P + 2 * hf * (double)n;
		int flo = (int)floor(g[best].lag - W), fhi = (int)ceil(g[best].lag + W);
		for (int i = 0; i <= 2 * FINE; i++) {
			if (i == FINE)
				continue;
			resample_linear(xu, n, rate_hz, pivot_s, rho_b + (i - FINE) * hf, quad, y);
			if (correlate(xc, ref, nr, y, n, rate_hz, f_lo_hz, f_hi_hz, MAX(lo, flo), MIN(hi, fhi), &f[i]) != 0)
				f[i].c = -INFINITY;
			if (f[i].c > f[fb].c)
				fb = i;
		}
		fb = fb == 0 ? 1 : fb == 2 * FINE ? 2 * FINE - 1
						  : fb;
		out->slope_s = isfinite(f[fb - 1].c) && isfinite(f[fb + 1].c) ? (f[fb + 1].lag - f[fb - 1].lag) / (2 * hf) / rate_hz : 0;
		double ym = f[fb - 1].c, y0 = f[fb].c, yp = f[fb + 1].c, at = rho_b + (fb - FINE) * hf, step = hf;
		/* A peak sharper than the step (a pulse train's: its pulses
		 * slide apart) is not a parabola over three points: zoom in,
		 * a quarter of the step each time, until the three differ by
		 * under 2 % (ZOOMS at most). */
		for (int z = 0; z < ZOOMS && isfinite(ym) && isfinite(yp) && ym - 2 * y0 + yp < -0.02; z++) {
			double d = ym - 2 * y0 + yp, v = fmax(-1, fmin(1, 0.5 * (ym - yp) / d));
			at += v * step;
			step /= 4;
			corr_at c3[3];
			for (int i = 0; i < 3; i++) {
				resample_linear(xu, n, rate_hz, pivot_s, at + (i - 1) * step, quad, y);
				if (correlate(xc, ref, nr, y, n, rate_hz, f_lo_hz, f_hi_hz, MAX(lo, flo), MIN(hi, fhi), &c3[i]) != 0)
					c3[i].c = -INFINITY;
			}
			ym = c3[0].c;
			y0 = c3[1].c;
			yp = c3[2].c;
		}
		double den = ym - 2 * y0 + yp; /* = -2 kappa step^2 < 0 at a maximum */
		double dx = den < 0 && isfinite(ym) && isfinite(yp) ? 0.5 * (ym - yp) / den : 0;
		dx = fmax(-1, fmin(1, dx));
		out->rho = at + dx * step;
		out->peak = y0 - 0.25 * (ym - yp) * dx;
		/* The correlation coefficient's noise over 2 B T independent
		 * samples; the vertex moves by step / (2 den) per unit of
		 * either neighbour (their errors taken as independent: an
		 * upper bound, neighbouring scales share most of their noise);
		 * and a twentieth of the step for the parabola's own misfit. */
		double T = (double)n / rate_hz, B = f_hi_hz - f_lo_hz;
		double c = fmin(fabs(out->peak), 1.0);
		double sc = (1 - c * c) / sqrt(2 * B * T) + 1e-4;
		out->rho_sd = den < 0 ? hypot(M_SQRT2 * sc * step / (2 * fabs(den)), step / 20) : 2 * delta / sqrt(12.0);
		out->rho_sd = fmin(out->rho_sd, 2 * delta / sqrt(12.0));
	}
	double e1 = out->slope_s * out->rho_sd, e2 = (out->rho - 1) * onset_sd_s;
	out->var_s2 = e1 * e1 + e2 * e2;
out:
	dsp_xcorr_free(xc);
	g_free(y);
	g_free(xu);
	return rc;
}

float *tdoa_doppler_undo(const float *x, size_t n, double rate_hz, double pivot_s, double rho, double quad)
{
	dsp_wave *w = dsp_wave_from_samples(x, n, rate_hz, rate_hz);
	float *y = g_new(float, n ? n : 1);
	for (size_t k = 0; k < n; k++) {
		double dt = (double)k / rate_hz - pivot_s;
		y[k] = (float)dsp_wave_eval(w, pivot_s + dt / rho + quad * dt * dt);
	}
	dsp_wave_free(w);
	return y;
}

void tdoa_doppler_compensate(const tdoa_input *in, int n, int r, double rr, const tdoa_params *p, const double *quad,
			     const tdoa_result *prev, dsp_srp_clip *sc, float **own, tdoa_input *din, dsp_srp_params *sp,
			     tdoa_result *out)
{
	const tdoa_input *R = &in[r];
	out->doppler = 1 + (quad != NULL);
	double delta = 2 * p->source_speed_m_s / p->c_m_s;
	for (int j = 0; j < n; j++) {
		if (j == r)
			continue;
		const tdoa_input *J = &in[j];
		double d = sqrt(pow(J->mic_m[0] - R->mic_m[0], 2) + pow(J->mic_m[1] - R->mic_m[1], 2) +
				pow(J->mic_m[2] - R->mic_m[2], 2));
		double c_slow = p->c_m_s - 4 * p->c_sd_m_s - hypot(p->wind_m_s[0], p->wind_m_s[1]);
		double max_lag = (d + 8 * p->pos_sd_m) / fmax(c_slow, 100) + 0.005;
		double pivot = ((double)(J->onset_ns - J->t0_ns) - J->t0_frac_ns) * 1e-9;
		double osd = J->onset_se_ns * 1e-9, qj = quad ? quad[j] : 0;
		/* Again with the Doppler rate: near the scale found without it
		 * (the rate moves it by the curvature over the clip, well under
		 * 0.003), lest the search wander along the sweep's ridge. */
		double rho0 = quad ? prev->rho[j] : 1, dl = quad ? TDOA_DOPPLER_AGAIN : delta;
		tdoa_doppler dp;
		if (tdoa_doppler_measure(sc[r].x, sc[r].n, sc[j].x, sc[j].n, sc[j].t0_s, rr, p->f_lo_hz, p->f_hi_hz, max_lag,
					 pivot, qj, osd, rho0, dl, &dp) != 0)
			continue;
		float *y = tdoa_doppler_undo(sc[j].x, sc[j].n, rr, pivot, dp.rho, qj);
		g_free(own[j]);
		own[j] = y;
		sc[j].x = y;
		out->rho[j] = dp.rho;
		out->rho_sd[j] = dp.rho_sd;
		out->doppler_var_s2[j] = dp.var_s2;
		/* detect matched its template to the slid call: its onset
		 * moved by about as much as this pair's delay did. */
		double shift = dp.slope_s * (dp.rho - 1) * 1e9;
		din[j].onset_se_ns = hypot(J->onset_se_ns, shift);
		din[j].onset_crb_se_ns = hypot(J->onset_crb_se_ns > 0 ? J->onset_crb_se_ns : J->onset_se_ns, shift);
		double ls = din[j].onset_crb_se_ns;
		sp->prior_sd_s[j] = sqrt(ls * ls * 1e-18 + p->onset_floor_s * p->onset_floor_s);
	}
}

int tdoa_doppler_rate(const tdoa_input *in, int n, const tdoa_result *o, const tdoa_params *p, double *quad)
{
	const double *P = o->loc.pos_m;
	if (!isfinite(P[0]) || !isfinite(P[1]) || !isfinite(P[2]))
		return -EDOM;
	double u[TDOA_MAX][3], dist[TDOA_MAX];
	for (int j = 0; j < n; j++) {
		double e[3] = {in[j].mic_m[0] - P[0], in[j].mic_m[1] - P[1], in[j].mic_m[2] - P[2]};
		dist[j] = fmax(sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]), 0.1);
		for (int a = 0; a < 3; a++)
			u[j][a] = e[a] / dist[j];
	}
	int r = o->ref, m = 0;
	double N[3][3] = {{0}}, b[3] = {0};
	for (int j = 0; j < n; j++) {
		if (j == r || !(o->rho_sd[j] > 0))
			continue;
		double a[3] = {u[j][0] - u[r][0], u[j][1] - u[r][1], u[j][2] - u[r][2]};
		double y = p->c_m_s * (o->rho[j] - 1), w = 1 / (o->rho_sd[j] * o->rho_sd[j] + 1e-12);
		for (int k = 0; k < 3; k++) {
			b[k] += w * a[k] * y;
			for (int l = 0; l < 3; l++)
				N[k][l] += w * a[k] * a[l];
		}
		m++;
	}
	if (m < 2)
		return -EDOM;
	double lam = 1e-3 * (N[0][0] + N[1][1] + N[2][2]) / 3;
	for (int k = 0; k < 3; k++)
		N[k][k] += lam;
	/* 3x3 by Cramer's rule */
	double det = N[0][0] * (N[1][1] * N[2][2] - N[1][2] * N[2][1]) - N[0][1] * (N[1][0] * N[2][2] - N[1][2] * N[2][0]) +
		     N[0][2] * (N[1][0] * N[2][1] - N[1][1] * N[2][0]);
	if (!(fabs(det) > 0))
		return -EDOM;
	double v[3];
	for (int c = 0; c < 3; c++) {
		double M[3][3];
		memcpy(M, N, sizeof M);
		for (int k = 0; k < 3; k++)
			M[k][c] = b[k];
		v[c] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
			M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
		       det;
	}
	double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2], q[TDOA_MAX];
	for (int j = 0; j < n; j++) {
		double vr = v[0] * u[j][0] + v[1] * u[j][1] + v[2] * u[j][2];
		q[j] = (v2 - vr * vr) / (2 * dist[j] * p->c_m_s);
	}
	for (int j = 0; j < n; j++)
		quad[j] = j == r ? 0 : q[j] - q[r];
	return 0;
}
