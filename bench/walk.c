/* bench/walk — a least-squares pair's conversions just after its newest
 * observation while the rate random-walks (issue 13 item 3: clocks that
 * wander), by the fit's age: its first window (the wander's bound is
 * stated), its second (the bound fades), the third and after (the running
 * estimate alone).
 *
 * An RBS-like pair as chorus-sim makes one: two observations a second
 * (jittered ±0.05 s), Gaussian receive noise SIGMA per observation, the
 * pair's rate a random walk of diffusion Q (ppb/sqrt(s)) from a random
 * offset of up to 1 ppm; SYNC_FIT_MEAN with syncd's window (64) and wander
 * floor (0.01 ppm); each solve syncd would publish (6 observations or
 * more) probed at a uniform time up to the next observation.  Per row and phase: probes, RMS of error / stated s.e. and
 * the count beyond 5 s.e. (t rule, sync_tail_k).
 *
 * What it shows (docs/clocks.md §5 "A walk the windows cannot resolve"):
 * the wander is measured on two halves of a window, one degree of freedom
 * per window, so in the second window a fast walk (14 ppb/sqrt(s), the
 * difference of two 10 ppb/sqrt(s) clocks: bench/honesty's walk rows) is
 * now and then indistinguishable from a steady clock and its conversions
 * lie beyond 5 s.e.; the bound that would cover them costs every steady
 * clock its precision.  Those rows are printed, not judged.  The bench
 * fails (exit 1) when any row's RMS z exceeds 1.5 in any phase, or a steady
 * or slowly walking pair (<= 1.4 ppb/sqrt(s)) has a probe beyond 5 s.e.
 * Writes $CHORUS_BENCH_OUT/walk.csv.  WALK_PAIRS (400) per row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "bench/csvout.h"
#include "libsync/conv.h"
#include "libsync/fit.h"

#define FOLLOW_S 200.0
#define GRID_S 0.05 /* the truth's grid: the rate steps every GRID_S */
#define OBS_PER_S 2.0
#define WINDOW 64
#define JUDGED_Q 1.5
#define MIN_PUBLISH 6 /* syncd publishes an RBS pair's fit from 6 observations (rbs_core.c) */ /* rows walking at most this (ppb/sqrt(s)) are judged on their tails */

/* Phases by the time of the probe (s): the window holds 32 s of data. */
static const double edges[] = {0, 32, 64, 100, FOLLOW_S};
static const char *const phase_names[] = {"first window", "second", "third", "after 100 s"};
enum { NPH = G_N_ELEMENTS(phase_names) };

typedef struct {
	long n[NPH], beyond[NPH];
	double z2[NPH];
} tally;

/* The pair's offset (ns) on a GRID_S grid over FOLLOW_S + 2 s: a random
 * walk of the rate with diffusion q (fraction^2 per s), from rate r0. */
static double *walk(gsl_rng *g, double q_ppb, double r0, size_t *len)
{
	size_t n = (size_t)((FOLLOW_S + 2.0) / GRID_S) + 2;
	double *ph = g_new(double, n), rate = r0, off = 0.0;
	for (size_t i = 0; i < n; i++) {
		ph[i] = off;
		double step = q_ppb * 1e-9 * sqrt(GRID_S) * gsl_ran_gaussian(g, 1.0);
		off += (rate + 0.5 * step) * GRID_S * 1e9;
		rate += step;
	}
	*len = n;
	return ph;
}

/* The offset at t (s), linear between grid points. */
static double at(const double *ph, double t)
{
	size_t i = (size_t)(t / GRID_S);
	double u = t / GRID_S - (double)i;
	return ph[i] + (ph[i + 1] - ph[i]) * u;
}

static int phase_of(double t)
{
	for (int k = 0; k < NPH; k++)
		if (t < edges[k + 1])
			return k;
	return -1;
}

static void run(double q_ppb, double sigma_ns, int pairs, tally *t)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	const int64_t y0 = 5000000000000LL;
	for (int s = 0; s < pairs; s++) {
		gsl_rng_set(g, 11 + (unsigned long)s);
		sync_fit_params p;
		sync_fit_params_default(&p);
		p.mode = SYNC_FIT_MEAN;
		p.window = WINDOW;
		p.wander = 1e-8;
		p.nominal_slope = 1.0;
		const char *why;
		sync_fit *f = sync_fit_new(&p, &why);
		if (!f) {
			fprintf(stderr, "bench/walk: %s\n", why);
			exit(2);
		}
		size_t len;
		double *ph = walk(g, q_ppb, gsl_ran_gaussian(g, 1e-6), &len);
		for (double x_s = 0.3; x_s < FOLLOW_S;) {
			double x = x_s * 1e9;
			int64_t y = y0 + (int64_t)llround(x + at(ph, x_s) + gsl_ran_gaussian(g, sigma_ns));
			if (sync_fit_add(f, (int64_t)x, y, &why) < 0) {
				fprintf(stderr, "bench/walk: %s\n", why);
				exit(2);
			}
			double next = x_s + 1.0 / OBS_PER_S + gsl_ran_flat(g, -0.05, 0.05);
			sync_conv c;
			double pt = x_s + gsl_ran_flat(g, 0.0, next - x_s);
			int k = phase_of(pt);
			x_s = next;
			if (k < 0 || sync_fit_solve(f, &c, &why) < 0 || c.n < MIN_PUBLISH)
				continue;
			sync_tval X = sync_tval_of((int64_t)llround(pt * 1e9));
			sync_tval Y = sync_conv_apply(&c, X);
			double err = (double)(Y.i - y0) + Y.f - ((double)X.i + at(ph, (double)X.i * 1e-9));
			double var = sync_conv_var(&c, X);
			t->n[k]++;
			t->z2[k] += err * err / var;
			t->beyond[k] += fabs(err) > sync_tail_k(sync_conv_dof(&c), 5.0) * sqrt(var);
		}
		g_free(ph);
		sync_fit_free(f);
	}
	gsl_rng_free(g);
}

int main(void)
{
	const char *env = getenv("WALK_PAIRS");
	int pairs = env && *env ? atoi(env) : 400;
	if (pairs < 2) {
		fprintf(stderr, "bench/walk: WALK_PAIRS=%s: an integer of at least 2\n", env);
		return 2;
	}
	char path[4096];
	FILE *csv = bench_csv_open("walk.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "walk_ppb_per_sqrt_s,sigma_ns,phase,from_s,to_s,n,rms_z,beyond_5se\n");
	printf("bench/walk: a least-squares pair (%.0f obs/s, window %d) under a random walk of its rate, "
	       "conversions up to the next observation, %d pairs per row\n",
	       OBS_PER_S, WINDOW, pairs);
	printf("%7s %6s", "walk", "sigma");
	for (int k = 0; k < NPH; k++)
		printf("  %13s (%3.0f-%3.0f s)", phase_names[k], edges[k], edges[k + 1]);
	printf("\n%7s %6s", "ppb/√s", "ns");
	for (int k = 0; k < NPH; k++)
		printf("  %9s %7s %5s", "n", "rms_z", ">5se");
	printf("\n");
	static const struct {
		double q_ppb, sigma_ns;
	} rows[] = {{0, 1300}, {1.4, 420}, {1.4, 1300}, {14.1, 420}, {14.1, 1300}};
	int bad = 0;
	for (size_t r = 0; r < G_N_ELEMENTS(rows); r++) {
		tally t = {0};
		run(rows[r].q_ppb, rows[r].sigma_ns, pairs, &t);
		int judged = rows[r].q_ppb <= JUDGED_Q;
		printf("%7.1f %6.0f", rows[r].q_ppb, rows[r].sigma_ns);
		for (int k = 0; k < NPH; k++) {
			double z = t.n[k] ? sqrt(t.z2[k] / (double)t.n[k]) : NAN;
			printf("  %9ld %7.2f %5ld", t.n[k], z, t.beyond[k]);
			fprintf(csv, "%g,%g,%s,%g,%g,%ld,%.4f,%ld\n", rows[r].q_ppb, rows[r].sigma_ns, phase_names[k],
				edges[k], edges[k + 1], t.n[k], z, t.beyond[k]);
			if (!(z <= 1.5) || (judged && t.beyond[k] > 0))
				bad++;
		}
		printf("%s\n", judged ? "" : "   (tails not judged)");
	}
	int rc = bench_csv_close(csv, path) != 0;
	printf("bench/walk: %s (aim: RMS z <= 1.5 in every phase; none beyond 5 s.e. where the walk is <= %.1f "
	       "ppb/sqrt(s)); CSV %s\n",
	       bad ? "FAILED" : "ok", JUDGED_Q, path);
	return bad || rc ? 1 : 0;
}
