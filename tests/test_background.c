/* test_background.c — the background noise kinds against their closed forms:
 * RMS level, pink's 1/f band powers, wind's energy below 200 Hz and its gust
 * envelope, independence between microphones, and regeneration in any order
 * (sim/background.h, docs/background.md).
 *
 * Tolerances.  Most statistics are measured on R independent streams (other
 * node ids: independent keys) and compared with the closed form by Student's
 * t on the R values: |mean - truth| < T_CRIT * sd / sqrt(R), T_CRIT the
 * two-sided p = 1e-4 quantile for R - 1 = 15 degrees of freedom (about 20
 * such checks: a correct generator fails one at a new seed with p < 0.002;
 * with R = 16 the sample sd itself is uncertain, which t allows for).  The
 * streams are seeded, so each check is deterministic.  White noise's level
 * has an exact standard error instead, P sqrt(2 / N) for N Gaussian samples.  Correlations use Bartlett's
 * variance of a sample correlation between independent series,
 * var r = sum_tau rho1(tau) rho2(tau) / N, with rho from the closed form.
 */
#include <check.h>
#include <glib.h>
#include <gsl/gsl_fft_real.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/background.h"
#include "tests/check_run.h"

#define R 16
#define T_CRIT 5.239 /* Student t, 15 dof, two-sided p = 1e-4 */
#define Z_CRIT 4.89  /* normal, two-sided p = 1e-6 */
#define SEED 20240611u

static sim_background *make(sim_bg_kind kind, double dbfs, double rate_hz)
{
	const char *why = NULL;
	sim_background *b = sim_background_new(kind, dbfs, SEED, rate_hz, &why);
	ck_assert_msg(b, "sim_background_new: %s", why ? why : "?");
	return b;
}

static double *gen(const sim_background *b, int node, int mic, int64_t start, size_t n)
{
	double *x = g_new(double, n);
	for (size_t i = 0; i < n; i++)
		x[i] = sim_background_sample(b, node, mic, start + (int64_t)i);
	return x;
}

static void mean_sd(const double *v, int n, double *mean, double *sd)
{
	double m = 0, q = 0;
	for (int i = 0; i < n; i++)
		m += v[i];
	m /= n;
	for (int i = 0; i < n; i++)
		q += (v[i] - m) * (v[i] - m);
	*mean = m;
	*sd = sqrt(q / (n - 1));
}

/* Student's t check of R per-stream values against the closed form. */
static void check_t(const char *what, const double *v, double truth)
{
	double m, sd;
	mean_sd(v, R, &m, &sd);
	double se = sd / sqrt(R);
	printf("  %-34s %12.6g  closed form %12.6g  (se %.3g, %+.2f se)\n", what, m, truth, se, (m - truth) / se);
	ck_assert_msg(fabs(m - truth) < T_CRIT * se, "%s: %g vs closed form %g: %.2f standard errors (limit %.3f)",
		      what, m, truth, (m - truth) / se, T_CRIT);
}

/* Welch's two-sided PSD estimate at bins b = 0..nfft/2 (power per
 * cycle/sample): Hann window, hop nfft/2, |X_b|^2 / sum w^2 averaged, whose
 * expectation is the PSD (smoothed by the window's kernel). */
static void welch(const double *x, size_t n, int nfft, double *psd)
{
	double *w = g_new(double, nfft), *seg = g_new(double, nfft), w2 = 0;
	for (int i = 0; i < nfft; i++) {
		w[i] = 0.5 - 0.5 * cos(2 * M_PI * i / nfft);
		w2 += w[i] * w[i];
	}
	for (int b = 0; b <= nfft / 2; b++)
		psd[b] = 0;
	int segs = 0;
	for (size_t s = 0; s + (size_t)nfft <= n; s += (size_t)nfft / 2, segs++) {
		for (int i = 0; i < nfft; i++)
			seg[i] = x[s + (size_t)i] * w[i];
		gsl_fft_real_radix2_transform(seg, 1, (size_t)nfft);
		psd[0] += seg[0] * seg[0];
		psd[nfft / 2] += seg[nfft / 2] * seg[nfft / 2];
		for (int b = 1; b < nfft / 2; b++)
			psd[b] += seg[b] * seg[b] + seg[nfft - b] * seg[nfft - b];
	}
	for (int b = 0; b <= nfft / 2; b++)
		psd[b] /= segs * w2;
	g_free(w);
	g_free(seg);
}

/* One-sided power in bins with lo <= f < hi (f in cycles/sample). */
static double band(const double *psd, int nfft, double lo, double hi)
{
	double p = 0;
	for (int b = 0; b <= nfft / 2; b++) {
		double f = (double)b / nfft;
		if (f >= lo && f < hi)
			p += (b == 0 || b == nfft / 2 ? 1 : 2) * psd[b] / nfft;
	}
	return p;
}

/* ---- regeneration ---- */

START_TEST(test_any_order)
{
	const int n = 6000;
	for (int kind = SIM_BG_WHITE; kind <= SIM_BG_WIND; kind++) {
		sim_background *a = make(kind, -30, 48000), *b = make(kind, -30, 48000);
		/* Across frame 0 and at a large frame (2^40: 250 days at 48 kHz). */
		int64_t starts[2] = {-3000, (int64_t)1 << 40};
		for (int s = 0; s < 2; s++) {
			double *fwd = gen(a, 3, 1, starts[s], (size_t)n);
			GRand *r = g_rand_new_with_seed(7);
			int *perm = g_new(int, n);
			for (int i = 0; i < n; i++)
				perm[i] = n - 1 - i;
			for (int i = n - 1; i > 0; i--) {
				int j = g_rand_int_range(r, 0, i + 1), t = perm[i];
				perm[i] = perm[j];
				perm[j] = t;
			}
			for (int i = 0; i < n; i++) {
				int k = perm[i];
				double v = sim_background_sample(b, 3, 1, starts[s] + k);
				ck_assert_msg(v == fwd[k], "%s: frame %" G_GINT64_FORMAT ": %.17g in shuffled order, %.17g in order",
					      sim_background_kind_name(kind), starts[s] + k, v, fwd[k]);
			}
			g_free(perm);
			g_rand_free(r);
			g_free(fwd);
		}
		sim_background_free(a);
		sim_background_free(b);
	}
}
END_TEST

START_TEST(test_names_and_errors)
{
	ck_assert_int_eq(sim_background_kind_from_name("pink"), SIM_BG_PINK);
	ck_assert_int_eq(sim_background_kind_from_name("wind"), SIM_BG_WIND);
	ck_assert_int_eq(sim_background_kind_from_name("brown"), -EINVAL);
	ck_assert_str_eq(sim_background_kind_name(SIM_BG_WHITE), "white");
	ck_assert_ptr_null(sim_background_kind_name(9));
	const char *why = NULL;
	ck_assert_ptr_null(sim_background_new(SIM_BG_PINK, 30, 1, 48000, &why));
	ck_assert_ptr_nonnull(why);
	why = NULL;
	ck_assert_ptr_null(sim_background_new(SIM_BG_PINK, -20, 1, 10, &why));
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_null(sim_background_new((sim_bg_kind)7, -20, 1, 48000, &why));
	sim_background *b = make(SIM_BG_NONE, -20, 48000);
	ck_assert(sim_background_sample(b, 1, 0, 12345) == 0);
	sim_background_free(b);
	sim_background_free(NULL);
}
END_TEST

/* ---- level ---- */

/* Mean square of each of R streams against 10^(dbfs/10).  Wind runs at
 * 4 kHz so that R streams hold 16 x 120 s of gusts at a modest cost: its
 * spectrum scales with the rate, its gust time does not. */
START_TEST(test_rms)
{
	const double dbfs = -20, p = pow(10, dbfs / 10);
	const struct {
		sim_bg_kind kind;
		double rate_hz;
		size_t n;
	} cases[] = {
		{SIM_BG_WHITE, 48000, 1 << 16},
		{SIM_BG_PINK, 48000, 1 << 20},
		{SIM_BG_WIND, 4000, 480000},
	};
	for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
		sim_background *b = make(cases[c].kind, dbfs, cases[c].rate_hz);
		double ms[R];
		for (int s = 0; s < R; s++) {
			double *x = gen(b, 10 + s, 0, 0, cases[c].n), q = 0;
			for (size_t i = 0; i < cases[c].n; i++)
				q += x[i] * x[i];
			ms[s] = q / (double)cases[c].n;
			g_free(x);
		}
		double m, sd;
		mean_sd(ms, R, &m, &sd);
		char what[64];
		snprintf(what, sizeof what, "%s mean square (%.3f dBFS)", sim_background_kind_name(cases[c].kind),
			 10 * log10(m));
		if (cases[c].kind == SIM_BG_WHITE) {
			double se = p * sqrt(2.0 / (R * (double)cases[c].n));
			printf("  %-34s %12.6g  closed form %12.6g  (exact se %.3g, %+.2f se)\n", what, m, p, se,
			       (m - p) / se);
			ck_assert_msg(fabs(m - p) < Z_CRIT * se, "%s: %.2f standard errors", what, (m - p) / se);
		} else {
			check_t(what, ms, p);
		}
		sim_background_free(b);
	}
}
END_TEST

/* ---- pink ---- */

/* Voss-McCartney's PSD (two-sided, per cycle/sample) for total power p:
 * row k is white noise held for L = 2^k frames, whose autocorrelation is the
 * triangle max(0, 1 - |tau|/L) (averaged over the block phase), and whose
 * PSD is its transform, the Fejer kernel (1/L) (sin(pi f L) / sin(pi f))^2. */
static double pink_psd(double f, int rows, double p)
{
	double s = 0;
	for (int k = 0; k < rows; k++) {
		double l = ldexp(1.0, k);
		s += f == 0 ? l : pow(sin(M_PI * f * l) / sin(M_PI * f), 2) / l;
	}
	return p * s / rows;
}

START_TEST(test_pink_octaves)
{
	const double rate = 48000, p = 1e-2;
	const int nfft = 16384, n_oct = 9; /* octaves 23.4 Hz .. 12 kHz */
	const size_t n = 1 << 20;
	sim_background *b = make(SIM_BG_PINK, 10 * log10(p), rate);
	int rows = 1 + (int)ceil(log2(rate / 4));
	ck_assert_int_eq(sim_background_pink_rows(b), rows);

	/* The closed form's band powers: the slope of a 1/f spectrum is 0 dB per
	 * octave in band power (-3.01 dB/octave in PSD). */
	double *cf_psd = g_new(double, nfft / 2 + 1), cf[9], cf_db[9];
	for (int i = 0; i <= nfft / 2; i++)
		cf_psd[i] = pink_psd((double)i / nfft, rows, p);
	double lo_db = INFINITY, hi_db = -INFINITY;
	for (int j = 0; j < n_oct; j++) {
		cf[j] = band(cf_psd, nfft, ldexp(1.0, -(j + 3)), ldexp(1.0, -(j + 2)));
		cf_db[j] = 10 * log10(cf[j]);
		lo_db = fmin(lo_db, cf_db[j]);
		hi_db = fmax(hi_db, cf_db[j]);
	}
	printf("  pink: K = %d rows; closed-form octave band powers span %.3f dB over 23 Hz..12 kHz\n", rows,
	       hi_db - lo_db);
	/* A property of the construction, not a statistic: Voss-McCartney's
	 * ripple is about +-0.5 dB, and sin(pi f) < pi f tilts the top octaves. */
	ck_assert_msg(hi_db - lo_db < 1.5, "closed form not pink: %.3f dB spread", hi_db - lo_db);

	double meas[9][R], slope[R];
	double *psd = g_new(double, nfft / 2 + 1);
	for (int s = 0; s < R; s++) {
		double *x = gen(b, 100 + s, 2, 0, n);
		welch(x, n, nfft, psd);
		/* Least-squares slope of band power (dB) on octave number, minus
		 * the bandwidth's 3.01 dB/octave: the PSD's slope. */
		double sx = 0, sy = 0, sxx = 0, sxy = 0;
		for (int j = 0; j < n_oct; j++) {
			meas[j][s] = band(psd, nfft, ldexp(1.0, -(j + 3)), ldexp(1.0, -(j + 2)));
			double xo = -j, yo = 10 * log10(meas[j][s]);
			sx += xo;
			sy += yo;
			sxx += xo * xo;
			sxy += xo * yo;
		}
		slope[s] = (n_oct * sxy - sx * sy) / (n_oct * sxx - sx * sx) - 10 * log10(2);
		g_free(x);
	}
	for (int j = 0; j < n_oct; j++) {
		char what[64];
		snprintf(what, sizeof what, "pink band %.0f..%.0f Hz", rate * ldexp(1.0, -(j + 3)),
			 rate * ldexp(1.0, -(j + 2)));
		check_t(what, meas[j], cf[j]);
	}
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int j = 0; j < n_oct; j++) {
		sx += -j;
		sy += cf_db[j];
		sxx += j * j;
		sxy += -j * cf_db[j];
	}
	double cf_slope = (n_oct * sxy - sx * sy) / (n_oct * sxx - sx * sx) - 10 * log10(2);
	check_t("pink PSD slope (dB/octave)", slope, cf_slope);
	ck_assert_msg(fabs(cf_slope + 10 * log10(2)) < 0.1, "closed-form slope %.3f dB/octave", cf_slope);
	g_free(psd);
	g_free(cf_psd);
	sim_background_free(b);
}
END_TEST

/* ---- wind ---- */

/* The centred cubic B-spline (written independently of background.c). */
static double b3(double s)
{
	s = fabs(s);
	return s < 1 ? 2.0 / 3 - s * s + s * s * s / 2 : s < 2 ? pow(2 - s, 3) / 6
							       : 0;
}

/* Wind carrier's closed form: layer l is y_l[n] = sum_j v_j h(n - j M) with
 * h[n] = b3(n / M) and v_j independent of variance w_l / c_l, c_l =
 * (1/M) sum_n h[n]^2 (so var y_l = w_l); its PSD averaged over the knot
 * phase is (w_l / c_l) |H(f)|^2 / M. */
static double wind_psd(const sim_background *b, double f)
{
	double s = 0;
	for (int l = 0; l < SIM_BG_WIND_LAYERS; l++) {
		double w;
		int m = sim_background_wind_layer(b, l, &w);
		double re = 0, im = 0, c = 0;
		for (int n = -2 * m; n <= 2 * m; n++) {
			double h = b3((double)n / m);
			re += h * cos(2 * M_PI * f * n);
			im += h * sin(2 * M_PI * f * n);
			c += h * h;
		}
		c /= m;
		s += w / c * (re * re + im * im) / m;
	}
	return s;
}

/* Autocorrelation of the wind carrier at lag tau (frames), closed form. */
static double *wind_rho(const sim_background *b, int *max_lag)
{
	int top = sim_background_wind_layer(b, SIM_BG_WIND_LAYERS - 1, NULL);
	*max_lag = 4 * top;
	double *rho = g_new0(double, *max_lag + 1);
	for (int l = 0; l < SIM_BG_WIND_LAYERS; l++) {
		double w;
		int m = sim_background_wind_layer(b, l, &w), len = 4 * m + 1;
		double *h = g_new(double, len), c0 = 0;
		for (int n = 0; n < len; n++)
			h[n] = b3((double)(n - 2 * m) / m);
		for (int n = 0; n < len; n++)
			c0 += h[n] * h[n];
		for (int tau = 0; tau < len && tau <= *max_lag; tau++) {
			double c = 0;
			for (int n = 0; n + tau < len; n++)
				c += h[n] * h[n + tau];
			rho[tau] += w * c / c0;
		}
		g_free(h);
	}
	return rho;
}

START_TEST(test_wind_spectrum)
{
	const double rate = 48000;
	const int nfft = 8192;
	const size_t n = 5 * 48000;
	sim_background *b = make(SIM_BG_WIND, -20, rate);
	double wsum = 0;
	for (int l = 0; l < SIM_BG_WIND_LAYERS; l++) {
		double w;
		ck_assert_int_eq(sim_background_wind_layer(b, l, &w), (int)round(rate / (SIM_BG_WIND_TOP_HZ / (1 << l))));
		wsum += w;
	}
	ck_assert_double_eq_tol(wsum, 1, 1e-12);

	/* Closed form: the fraction of the carrier's power in bins below 200 Hz
	 * (the gust envelope is sub-hertz: it smears the spectrum by less than
	 * a bin and cancels from the ratio). */
	double cf_low = 0;
	for (int k = 0; (double)k / nfft * rate < 200; k++)
		cf_low += (k == 0 ? 1 : 2) * wind_psd(b, (double)k / nfft) / nfft;
	printf("  wind: closed-form fraction below 200 Hz %.5f; PSD at 100/200/300/500 Hz: %.1f %.1f %.1f %.1f dB\n",
	       cf_low, 10 * log10(wind_psd(b, 100 / rate)), 10 * log10(wind_psd(b, 200 / rate)),
	       10 * log10(wind_psd(b, 300 / rate)), 10 * log10(wind_psd(b, 500 / rate)));
	ck_assert_msg(cf_low > 0.99, "closed form: only %.4f of the energy below 200 Hz", cf_low);

	double frac[R], *psd = g_new(double, nfft / 2 + 1);
	for (int s = 0; s < R; s++) {
		double *x = gen(b, 200 + s, 0, 0, n);
		welch(x, n, nfft, psd);
		frac[s] = band(psd, nfft, 0, 200 / rate) / band(psd, nfft, 0, 1);
		g_free(x);
	}
	check_t("wind fraction below 200 Hz", frac, cf_low);
	g_free(psd);
	sim_background_free(b);
}
END_TEST

/* The gust envelope e = exp(s z - s^2): z = (ln e + s^2) / s is a unit
 * Gaussian at every frame, so per node over 600 s, mean z -> 0, mean z^2 ->
 * 1, mean e^2 -> 1 (t over R nodes).  Peak-to-mean: e^2 >= 3 needs z >=
 * (ln 3 + 2 s^2) / (2 s) = 1.60; 600 s hold about 600 * 151/315 = 290
 * independent knot-widths of z, so P(no such peak) < 0.945^290 < 1e-7. */
START_TEST(test_gusts)
{
	const double rate = 48000, s = SIM_BG_GUST_LOG_SD;
	const int64_t step = 480, n = (int64_t)(600 * rate) / step;
	sim_background *b = make(SIM_BG_WIND, -20, rate);
	double mz[R], mz2[R], me2[R], worst = INFINITY;
	for (int k = 0; k < R; k++) {
		double a = 0, a2 = 0, e2 = 0, peak = 0;
		for (int64_t i = 0; i < n; i++) {
			double e = sim_background_gust(b, 300 + k, i * step);
			double z = (log(e) + s * s) / s;
			a += z;
			a2 += z * z;
			e2 += e * e;
			peak = fmax(peak, e * e);
		}
		mz[k] = a / n;
		mz2[k] = a2 / n;
		me2[k] = e2 / n;
		worst = fmin(worst, peak / me2[k]);
	}
	check_t("gust z mean", mz, 0);
	check_t("gust z mean square", mz2, 1);
	check_t("gust power e^2 mean", me2, 1);
	printf("  gust: smallest peak-to-mean power over 600 s among %d nodes: %.2f (ln e^2 s.d. %.2f)\n", R, worst,
	       2 * s);
	ck_assert_msg(worst >= 3, "gust peak-to-mean power only %.2f", worst);
	/* The other kinds carry no envelope. */
	sim_background *w = make(SIM_BG_PINK, -20, rate);
	ck_assert(sim_background_gust(w, 1, 999) == 1.0);
	sim_background_free(w);
	sim_background_free(b);
}
END_TEST

/* ---- independence between microphones ---- */

static double corr(const double *x, const double *y, size_t n)
{
	double xy = 0, xx = 0, yy = 0;
	for (size_t i = 0; i < n; i++) {
		xy += x[i] * y[i];
		xx += x[i] * x[i];
		yy += y[i] * y[i];
	}
	return xy / sqrt(xx * yy);
}

/* Sample correlation of mic pairs of one node and of two nodes, each within
 * Z_CRIT Bartlett standard deviations sqrt(sum_tau rho(tau)^2 / N).  For
 * wind the node's mics share the gust envelope, which scales the variance by
 * E[e^4] / E[e^2]^2 = exp(4 s^2) (the envelope is constant over the
 * carrier's correlation time). */
START_TEST(test_mics_uncorrelated)
{
	for (int kind = SIM_BG_WHITE; kind <= SIM_BG_WIND; kind++) {
		double rate = kind == SIM_BG_WIND ? 4000 : 48000;
		size_t n = kind == SIM_BG_WHITE ? 1 << 18 : 1 << 20;
		sim_background *b = make(kind, -20, rate);
		double sum_rho2 = 1; /* white */
		if (kind == SIM_BG_PINK) {
			int rows = sim_background_pink_rows(b);
			long max_lag = 1L << (rows - 1);
			sum_rho2 = 0;
			for (long tau = -max_lag; tau <= max_lag; tau++) {
				double rho = 0;
				for (int k = 0; k < rows; k++)
					rho += fmax(0, 1 - fabs((double)tau) / ldexp(1.0, k)) / rows;
				sum_rho2 += rho * rho;
			}
		} else if (kind == SIM_BG_WIND) {
			int max_lag;
			double *rho = wind_rho(b, &max_lag);
			sum_rho2 = rho[0] * rho[0];
			for (int tau = 1; tau <= max_lag; tau++)
				sum_rho2 += 2 * rho[tau] * rho[tau];
			g_free(rho);
		}
		double sd_cross = sqrt(sum_rho2 / (double)n);
		double sd_same = kind == SIM_BG_WIND ? sd_cross * exp(2 * SIM_BG_GUST_LOG_SD * SIM_BG_GUST_LOG_SD) : sd_cross;
		double *m0 = gen(b, 5, 0, 1000, n), *m1 = gen(b, 5, 1, 1000, n), *m7 = gen(b, 5, 7, 1000, n);
		double *o0 = gen(b, 6, 0, 1000, n);
		double r01 = corr(m0, m1, n), r07 = corr(m0, m7, n), r17 = corr(m1, m7, n), rx = corr(m0, o0, n);
		printf("  %s: r(mic0,mic1) %+.4f r(mic0,mic7) %+.4f r(mic1,mic7) %+.4f (bound %.4f); "
		       "r(node5,node6) %+.4f (bound %.4f)\n",
		       sim_background_kind_name(kind), r01, r07, r17, Z_CRIT * sd_same, rx, Z_CRIT * sd_cross);
		ck_assert_msg(fabs(r01) < Z_CRIT * sd_same && fabs(r07) < Z_CRIT * sd_same &&
				      fabs(r17) < Z_CRIT * sd_same,
			      "%s: mics of one node correlated", sim_background_kind_name(kind));
		ck_assert_msg(fabs(rx) < Z_CRIT * sd_cross, "%s: nodes correlated", sim_background_kind_name(kind));
		g_free(m0);
		g_free(m1);
		g_free(m7);
		g_free(o0);
		sim_background_free(b);
	}
}
END_TEST

/* ---- cost (printed, never asserted: docs/STYLE.md §11) ---- */

START_TEST(test_cost)
{
	for (int kind = SIM_BG_WHITE; kind <= SIM_BG_WIND; kind++) {
		sim_background *b = make(kind, -20, 48000);
		const int n = 200000;
		volatile double sink = 0;
		gint64 t0 = g_get_monotonic_time();
		for (int i = 0; i < n; i++)
			sink += sim_background_sample(b, 1, i & 7, i >> 3);
		gint64 t1 = g_get_monotonic_time();
		double ns = (double)(t1 - t0) * 1e3 / n;
		printf("  %s: %.1f ns/sample, %.1f %% of a core for 48 kHz x 8 mics\n", sim_background_kind_name(kind),
		       ns, ns * 48000 * 8 / 1e7);
		(void)sink;
		sim_background_free(b);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("background");
	TCase *tc = tcase_create("background");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_names_and_errors);
	tcase_add_test(tc, test_any_order);
	tcase_add_test(tc, test_rms);
	tcase_add_test(tc, test_pink_octaves);
	tcase_add_test(tc, test_wind_spectrum);
	tcase_add_test(tc, test_gusts);
	tcase_add_test(tc, test_mics_uncorrelated);
	tcase_add_test(tc, test_cost);
	suite_add_tcase(s, tc);
	int failed = tu_check_run_nofork(s);
	return failed ? 1 : 0;
}
