/* bench/aging — a fit's conversions carried beyond its data under a ramp of
 * the rate (a temperature change), as the graph carries them up to its
 * tolerance (60 s) when a neighbour falls silent (issue 13 item 3).
 *
 * An RBS-like pair: one observation a second (jittered ±0.1 s), receive
 * noise SIGMA_NS, the rate ramping at RAMP ppb/s (alternating sign over
 * the clocks), least-squares fit (SYNC_FIT_MEAN) with syncd's wander floor
 * (0.01 ppm) and window W; followed for 300 s, and from 100 s on, every 10
 * s, its conversion probed D = 1, 10, 30, 60 s after its newest
 * observation.  Per window and D: the probes, the RMS of error / stated
 * s.e. and the count beyond 5 s.e. (t rule, sync_tail_k).  Windows: 64
 * (syncd's default, `[fit] window`, `[rbs] window`), 32 and 16.  A ramp
 * that the default window's halves measure shortens the window (to about
 * 28 observations) while the wander is measured over the whole of it, so
 * its extrapolation stays honest; a window configured short measures the
 * wander over halves of 8-16 points and states far too little beyond the
 * data (docs/clocks.md §5, "Aged beyond half its span").  The bench fails
 * (exit 1) when the default window's probes lie beyond 5 s.e. or its RMS z
 * exceeds 1.5 at any D; the short windows are printed, not judged.
 * Writes $CHORUS_BENCH_OUT/aging.csv.  AGING_CLOCKS (200) per row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "bench/csvout.h"
#include "libsync/conv.h"
#include "libsync/fit.h"

#define SIGMA_NS 1300.0
#define FOLLOW_S 300
#define FIRST_PROBE_S 100
#define DEFAULT_WINDOW 64

static const double Ds[] = {1, 10, 30, 60};
enum { ND = G_N_ELEMENTS(Ds) };

typedef struct {
	long n[ND], beyond[ND];
	double z2[ND];
	double span_s;
	long spans;
} tally;

/* The pair's true y at x (ns): a rate ramp of ydot (fraction per s)
 * about t = 0, its sign by `sign`. */
static double truth(double x_ns, double ydot, int sign, double off)
{
	double t = x_ns * 1e-9;
	return x_ns + sign * 0.5 * ydot * t * t * 1e9 + off;
}

static void run(int window, double ramp_ppb, int clocks, tally *t)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	double ydot = ramp_ppb * 1e-9;
	const int64_t y0 = 5000000000000LL;
	for (int s = 0; s < clocks; s++) {
		gsl_rng_set(g, 7 + (unsigned long)s);
		sync_fit_params p;
		sync_fit_params_default(&p);
		p.mode = SYNC_FIT_MEAN;
		p.window = (size_t)window;
		p.wander = 1e-8;
		p.nominal_slope = 1.0;
		const char *why;
		sync_fit *f = sync_fit_new(&p, &why);
		if (!f) {
			fprintf(stderr, "bench/aging: %s\n", why);
			exit(2);
		}
		int sign = s % 2 ? 1 : -1;
		double off = gsl_ran_flat(g, 0, 1000);
		for (int sec = 0; sec < FOLLOW_S; sec++) {
			double x = sec * 1e9 + gsl_ran_flat(g, -1e8, 1e8);
			int64_t y = y0 + (int64_t)llround(truth(x, ydot, sign, off) + gsl_ran_gaussian(g, SIGMA_NS));
			sync_fit_add(f, (int64_t)x, y, &why);
			sync_conv c;
			if (sec < FIRST_PROBE_S || sec % 10 || sync_fit_solve(f, &c, &why) < 0)
				continue;
			t->span_s += (double)(c.xmax - c.xmin) * 1e-9;
			t->spans++;
			for (int k = 0; k < ND; k++) {
				double px = (double)c.xmax + Ds[k] * 1e9;
				sync_tval X = sync_tval_of((int64_t)px);
				sync_tval Y = sync_conv_apply(&c, X);
				double err = (double)(Y.i - y0) + Y.f - truth((double)X.i, ydot, sign, off);
				double var = sync_conv_var(&c, X);
				t->n[k]++;
				t->z2[k] += err * err / var;
				t->beyond[k] += fabs(err) > sync_tail_k(sync_conv_dof(&c), 5.0) * sqrt(var);
			}
		}
		sync_fit_free(f);
	}
	gsl_rng_free(g);
}

int main(void)
{
	const char *env = getenv("AGING_CLOCKS");
	int clocks = env && *env ? atoi(env) : 200;
	if (clocks < 2) {
		fprintf(stderr, "bench/aging: AGING_CLOCKS=%s: an integer of at least 2\n", env);
		return 2;
	}
	char path[4096];
	FILE *csv = bench_csv_open("aging.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "window,ramp_ppb_per_s,used_span_s,d_s,n,rms_z,beyond_5se\n");
	printf("bench/aging: a least-squares pair (1 obs/s, %.1f us noise) carried D s beyond its data under a ramp, "
	       "%d clocks per row\n",
	       SIGMA_NS * 1e-3, clocks);
	printf("%6s %9s %8s", "window", "ramp", "span_s");
	for (int k = 0; k < ND; k++)
		printf("   D=%2.0f s: rms_z >5se", Ds[k]);
	printf("\n");
	static const int windows[] = {DEFAULT_WINDOW, 32, 16};
	static const double ramps[] = {13, 200};
	int bad = 0;
	for (size_t w = 0; w < G_N_ELEMENTS(windows); w++)
		for (size_t r = 0; r < G_N_ELEMENTS(ramps); r++) {
			tally t = {0};
			run(windows[w], ramps[r], clocks, &t);
			printf("%6d %5.0f ppb %8.1f", windows[w], ramps[r], t.span_s / t.spans);
			for (int k = 0; k < ND; k++) {
				double z = sqrt(t.z2[k] / t.n[k]);
				printf("   %14.2f %4ld", z, t.beyond[k]);
				fprintf(csv, "%d,%g,%.2f,%g,%ld,%.4f,%ld\n", windows[w], ramps[r], t.span_s / t.spans, Ds[k],
					t.n[k], z, t.beyond[k]);
				if (windows[w] == DEFAULT_WINDOW && (t.beyond[k] > 0 || z > 1.5))
					bad++;
			}
			printf("%s\n", windows[w] == DEFAULT_WINDOW ? "" : "   (not judged)");
		}
	int rc = bench_csv_close(csv, path) != 0;
	printf("bench/aging: %s (aim for the default window of %d: RMS z <= 1.5 and none beyond 5 s.e. at every D); CSV "
	       "%s\n",
	       bad ? "FAILED" : "ok", DEFAULT_WINDOW, path);
	return bad || rc ? 1 : 0;
}
