/* bench/dsp.c — speed and accuracy of the apps' maths (apps/dsp): STFT +
 * detector real-time factor at 48 kHz, GCC-PHAT time per 50 ms pair, solver
 * time per solve, GCC-PHAT delay RMS vs SNR, localisation error of a 6-mic
 * 30 m array at 1 and 10 us timing noise.  Prints a table and writes
 * $CHORUS_BENCH_OUT/dsp.csv (cwd if unset).  Speed is single-thread CPU time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics.h>

#include "bench/csvout.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/gccphat.h"
#include "apps/dsp/locate.h"
#include "apps/dsp/stft.h"
#include "apps/dsp/synth.h"

#define RATE 48000.0

static FILE *csv;

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void row(const char *metric, const char *cond, double v, const char *unit)
{
	printf("%-34s %-28s %12.4g %s\n", metric, cond, v, unit);
	fprintf(csv, "%s,%s,%.6g,%s\n", metric, cond, v, unit);
}

static const dsp_frog FROG = {.carrier_hz = 2600, .pulse_s = 0.003, .interval_s = 0.012, .pulses = 20};

static void bench_detector(gsl_rng *r)
{
	size_t n = (size_t)(30 * RATE);
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)gsl_ran_gaussian_ziggurat(r, 1.0);
	for (double t = 1; t < 29; t += 1.5)
		dsp_frog_render(&FROG, 3.2, t, RATE, x, n); /* about 10 dB in the 2-3.2 kHz band */
	dsp_stft_params sp;
	dsp_stft_params_default(&sp);
	dsp_det_params dp;
	dsp_det_params_default(&dp);
	dp.f_lo_hz = 2000;
	dp.f_hi_hz = 3200;
	int events = 0, reps = 0;
	double t0 = cpu_s(), t1;
	do {
		dsp_stft *s = dsp_stft_new(&sp, 0, NULL);
		dsp_detector *d = dsp_detector_new(&dp, sp.size, sp.hop, NULL);
		for (size_t at = 0; at < n; at += 480) { /* 10 ms periods, as audiod delivers them */
			dsp_stft_push(s, x + at, n - at < 480 ? n - at : 480);
			dsp_frame f;
			dsp_event e;
			while (dsp_stft_next(s, &f))
				events += dsp_detector_feed(d, f.first, dsp_stft_band_power(s, &f, dp.f_lo_hz, dp.f_hi_hz), &e) == 1;
		}
		dsp_stft_free(s);
		dsp_detector_free(d);
		reps++;
		t1 = cpu_s();
	} while (t1 - t0 < 1.0);
	row("stft+detect real-time factor", "48k, 1024/256 hann", reps * 30.0 / (t1 - t0), "s audio / CPU s");
	row("stft+detect events per 30 s", "19 calls", (double)events / reps, "events");
	free(x);
}

static void gcc_pair(gsl_rng *r, int burst, double d, double sn, float *a, float *b, int n)
{
	memset(a, 0, n * sizeof *a);
	memset(b, 0, n * sizeof *b);
	if (burst) {
		for (int i = n / 4; i < n / 4 + 960 && i < n; i++)
			a[i] = (float)gsl_ran_gaussian(r, 1.0);
		dsp_delay_exact(a, n, d, b);
	} else {
		dsp_frog f4 = FROG;
		f4.pulses = 4;
		dsp_frog_render(&f4, 1.0, 0.015, RATE, a, n);
		dsp_frog_render(&f4, 1.0, 0.015 + d / RATE, RATE, b, n);
	}
	for (int i = 0; i < n; i++) {
		a[i] += (float)gsl_ran_gaussian(r, sn);
		b[i] += (float)gsl_ran_gaussian(r, sn);
	}
}

static void bench_gcc(gsl_rng *r)
{
	enum { N = 2400 }; /* 50 ms */
	static float a[4800], b[4800];
	dsp_gcc_params p;
	dsp_gcc_params_default(&p);
	p.max_lag = 200;
	dsp_gcc *g = dsp_gcc_new(&p, NULL);
	gcc_pair(r, 1, 10.3, 0.3, a, b, N);
	dsp_gcc_result res;
	int reps = 0;
	double t0 = cpu_s(), t1;
	do {
		dsp_gcc_delay(g, a, N, b, N, &res, NULL);
		reps++;
		t1 = cpu_s();
	} while (t1 - t0 < 0.5);
	row("gcc-phat time per pair", "2 x 50 ms clips", (t1 - t0) / reps * 1e6, "us");
	dsp_gcc_free(g);
	/* accuracy: 200 trials per case, 100 ms clips */
	static const double snrs[] = {0, 10, 20};
	for (int kind = 0; kind < 2; kind++) {
		dsp_gcc_params_default(&p);
		p.max_lag = 100;
		if (kind == 1) {
			p.f_lo_hz = 2000;
			p.f_hi_hz = 3200;
		}
		g = dsp_gcc_new(&p, NULL);
		for (int si = 0; si < 3; si++) {
			/* burst: unit variance; frog: pulse power 3/16 */
			double ps = kind == 0 ? 1.0 : 3.0 / 16.0, sn = sqrt(ps / pow(10, snrs[si] / 10));
			double s2 = 0, se2 = 0;
			int slips = 0;
			for (int t = 0; t < 200; t++) {
				double d = gsl_rng_uniform(r) * 80 - 40;
				gcc_pair(r, kind == 0, d, sn, a, b, 4800);
				dsp_gcc_delay(g, a, 4800, b, 4800, &res, NULL);
				double e = res.delay - d;
				s2 += e * e;
				se2 += res.se * res.se;
				slips += fabs(e) > 3;
			}
			char cond[64], m[64];
			snprintf(cond, sizeof cond, "%s, %g dB", kind == 0 ? "noise burst" : "frog 2-3.2k PHAT", snrs[si]);
			snprintf(m, sizeof m, "gcc-phat delay rms");
			row(m, cond, sqrt(s2 / 200), "samples");
			row("gcc-phat predicted se (rms)", cond, sqrt(se2 / 200), "samples");
			row("gcc-phat gross errors (>3 smp)", cond, slips / 200.0, "fraction");
		}
		dsp_gcc_free(g);
	}
}

static void bench_locate(gsl_rng *r)
{
	static const double M[6][3] = {{0, 0, 0}, {30, 0, 0}, {30, 30, 0}, {0, 30, 0}, {15, -2, 0}, {14, 31, 0}};
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	p.dim = 2;
	dsp_arrival a[6];
	dsp_loc_result res;
	static const double sig[] = {1e-6, 10e-6};
	enum { T = 1000 };
	double err[T];
	for (int si = 0; si < 2; si++) {
		double tcpu = 0;
		int fails = 0;
		for (int t = 0; t < T; t++) {
			double src[2] = {30 * gsl_rng_uniform(r), 30 * gsl_rng_uniform(r)};
			for (int i = 0; i < 6; i++) {
				memcpy(a[i].pos_m, M[i], sizeof a[i].pos_m);
				a[i].sigma_s = sig[si];
				a[i].t_s = hypot(src[0] - M[i][0], src[1] - M[i][1]) / p.c_m_s + gsl_ran_gaussian(r, sig[si]);
			}
			double t0 = cpu_s();
			dsp_locate(a, 6, &p, &res);
			tcpu += cpu_s() - t0;
			fails += res.status != DSP_LOC_OK;
			err[t] = hypot(res.pos_m[0] - src[0], res.pos_m[1] - src[1]);
		}
		gsl_sort(err, 1, T);
		char cond[64];
		snprintf(cond, sizeof cond, "6 mics 30 m, sigma %g us", sig[si] * 1e6);
		row("locate error median", cond, gsl_stats_median_from_sorted_data(err, 1, T) * 100, "cm");
		row("locate error p90", cond, gsl_stats_quantile_from_sorted_data(err, 1, T, 0.9) * 100, "cm");
		row("locate status not OK", cond, (double)fails / T, "fraction");
		row("locate time per solve", cond, tcpu / T * 1e6, "us");
	}
}

int main(void)
{
	char path[4096];
	csv = bench_csv_open("dsp.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "metric,condition,value,unit\n");
	printf("%-34s %-28s %12s %s\n", "metric", "condition", "value", "unit");
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 2024);
	bench_detector(r);
	bench_gcc(r);
	bench_locate(r);
	gsl_rng_free(r);
	if (bench_csv_close(csv, path) != 0)
		return 1;
	printf("csv: %s\n", path);
	return 0;
}
