/* test_timehist_bridge.c — timehist across an outage (issue 16 item 3):
 * a clock whose rate random-walks (libsync/simwander.h, seeded), observed
 * once a second with Gaussian noise, then not at all for two minutes (a
 * radio outage), then again.  With `gap` set, a time inside the outage is
 * bridged between the fits before and after it, and the bridge's stated
 * uncertainty must hold: over many seeded clocks the errors divided by the
 * stated standard errors have an RMS not above 1 (beyond its sampling
 * band) and none lies beyond 5.  While the fits cannot resolve the wander
 * the bridge assumes what they cannot exclude (libsync's
 * sync_fit_wander_bound), so it is pessimistic, within a bound the test
 * also holds it to.  The same clocks without bridging (the nearer fit,
 * aged by its fixed wander bound) are measured too, for the comparison. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

#include "libsync/simwander.h"
#include "timehist/timehist.h"
#include "tests/check_run.h"

#define NS 1000000000LL
#define SEEDS 120
#define PROBES 11 /* inside the outage, evenly spaced */

typedef struct {
	double skew;    /* fractional */
	double noise;   /* observation noise s.d., ns */
	double q_ppb;   /* rate random walk, ppb per sqrt(s) */
	double t_end_a; /* s: last observation before the outage */
	double t_gap;   /* s: outage length */
	double t_end;   /* s: last observation */
} world;

static double truth_ns(const world *w, const sync_wander *wd, double t_s)
{
	return t_s * 1e9 * (1 + w->skew) + sync_wander_phase_ns(wd, t_s);
}

static double gauss(GRand *r)
{
	double u = g_rand_double_range(r, 1e-300, 1), v = g_rand_double(r);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

typedef struct {
	double sum_z2, max_z;
	int n, beyond5, refused;
} tally;

/* One seeded clock through timehist (gap: bridging on or off); every probe
 * in the outage scored as error / stated s.e. */
static void run_one(const world *w, uint64_t seed, int64_t gap, double q2_floor, tally *t)
{
	sync_wander wd = {.rw_ppb = w->q_ppb, .seed = seed};
	GRand *r = g_rand_new_with_seed((guint32)(seed * 2654435761u));
	timehist_params p;
	timehist_params_default(&p);
	p.gap = gap;
	p.bridge_q2 = q2_floor;
	const char *why;
	timehist *h = timehist_new(&p, &why);
	ck_assert_msg(h, "%s", why);
	char buf[200];
	for (double ts = 1; ts <= w->t_end; ts += 1) {
		if (ts > w->t_end_a && ts < w->t_end_a + w->t_gap)
			continue; /* the outage */
		int64_t x = (int64_t)(ts * NS);
		int64_t y = (int64_t)llround(truth_ns(w, &wd, ts) + w->noise * gauss(r));
		ck_assert_int_ge(timehist_add(h, x, y, buf, sizeof buf), 0);
	}
	for (int k = 1; k <= PROBES; k++) {
		double ts = w->t_end_a + w->t_gap * k / (PROBES + 1.0);
		sync_tval x = sync_tval_of((int64_t)(ts * NS)), y;
		double var;
		if (timehist_convert(h, x, &y, &var, buf, sizeof buf) < 0) {
			t->refused++;
			continue;
		}
		double err = (double)y.i + y.f - truth_ns(w, &wd, ts);
		double z = err / sqrt(var);
		t->sum_z2 += z * z;
		t->max_z = fmax(t->max_z, fabs(z));
		t->beyond5 += fabs(z) > 5;
		t->n++;
	}
	if (gap)
		ck_assert_uint_eq(timehist_gaps(h), 1);
	timehist_free(h);
	g_rand_free(r);
}

static void run_all(const world *w, int64_t gap, double q2_floor, tally *t, const char *label)
{
	*t = (tally){0};
	for (uint64_t s = 1; s <= SEEDS; s++)
		run_one(w, 1000 + s, gap, q2_floor, t);
	fprintf(stderr, "%s: %d probes, rms z %.3f, max |z| %.2f, %d beyond 5, %d refused\n", label, t->n,
		sqrt(t->sum_z2 / t->n), t->max_z, t->beyond5, t->refused);
}

/* The RMS of n independent standard normal z lies within [1 - d, 1 + d]
 * with d = 4 / sqrt(2 n) (4 standard errors of the RMS); the probes of one
 * clock are correlated, so n counts clocks, not probes. */
static double rms_band(void)
{
	return 4.0 / sqrt(2.0 * SEEDS);
}

/* The clocks of w bridged (every probe converted, none beyond 5 s.e., RMS
 * z not above 1 beyond its band nor below `floor`: not absurdly
 * pessimistic), and the nearer fit's figures for comparison. */
static void assert_bridge_honest(const world *w, double floor, const char *label)
{
	tally b, n;
	char nl[80];
	run_all(w, 5 * NS, 0, &b, label);
	ck_assert_int_eq(b.refused, 0);
	ck_assert_int_eq(b.beyond5, 0);
	double rms = sqrt(b.sum_z2 / b.n), d = rms_band();
	ck_assert_msg(rms < 1 + d && rms > floor, "%s: rms z %.3f outside %.2f .. 1 + %.3f", label, rms, floor, d);
	g_snprintf(nl, sizeof nl, "nearer fit (no bridge), %s", label);
	run_all(w, 0, 0, &n, nl);
}

/* Rate random walk of 2 ppb/sqrt(s) (a cpu crystal in still air), 300 ns
 * of noise, two minutes without observations: the bridge's errors stay
 * within its stated uncertainty. */
START_TEST(bridge_is_honest)
{
	world w = {.skew = 30e-6, .noise = 300, .q_ppb = 2, .t_end_a = 300, .t_gap = 120, .t_end = 700};
	assert_bridge_honest(&w, 0.4, "bridged (measured wander)");
}
END_TEST

/* A quiet clock (no wander): the bridge is the straight line the two fits
 * agree on; its uncertainty is theirs plus the wander they cannot exclude
 * (honest, and pessimistic by about four here). */
START_TEST(quiet_clock_bridge)
{
	world w = {.skew = -12e-6, .noise = 300, .q_ppb = 0, .t_end_a = 300, .t_gap = 120, .t_end = 700};
	assert_bridge_honest(&w, 0.15, "bridged, no wander");
}
END_TEST

/* The pure bridge: between two identical exact lines it is that line; at a
 * fit's centre it is the fit's value with its variance; in the middle the
 * wander's term is q^2 T^3 / 192 and each fit contributes a quarter of its
 * variance and (T/8)^2 of its rate's. */
START_TEST(bridge_formula)
{
	const int64_t L = 100 * NS;
	sync_conv a = {.x0 = 0, .y0 = 1000, .slope = 1.00001, .xbar = 50.0 * NS, .var_c = 4, .var_s = 1e-20, .xmin = 0, .xmax = L};
	sync_conv b = a;
	b.xbar = 250.0 * NS; /* centre 250 s: T = 200 s */
	b.xmin = 200 * NS;
	b.xmax = 300 * NS;
	double var;
	sync_tval y = timehist_bridge(&a, &b, 0, sync_tval_of(150 * NS), &var);
	sync_tval want = sync_conv_apply(&a, sync_tval_of(150 * NS));
	ck_assert_double_eq_tol((double)(y.i - want.i) + y.f - want.f, 0, 1e-3);
	double q2 = 1e-27, T = 200.0 * NS, rv = 1e-20 + q2 * (double)L / 12;
	timehist_bridge(&a, &b, q2, sync_tval_of(150 * NS), &var);
	double expect = 2 * 0.25 * 4 + 2 * (T / 8) * (T / 8) * rv + q2 * T * T * T / 192;
	ck_assert_double_eq_tol(var, expect, 1e-9 * expect);
	/* At a's centre: a's value and its variance there. */
	y = timehist_bridge(&a, &b, q2, sync_tval_of(50 * NS), &var);
	want = sync_conv_apply(&a, sync_tval_of(50 * NS));
	ck_assert(y.i == want.i && fabs(y.f - want.f) < 1e-6);
	ck_assert_double_eq_tol(var, 4, 1e-9);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timehist_bridge");
	TCase *tc = tcase_create("bridge");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, bridge_formula);
	tcase_add_test(tc, bridge_is_honest);
	tcase_add_test(tc, quiet_clock_bridge);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
