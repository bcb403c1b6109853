/* test_graph_bridge.c — libsync's graph across an outage in a pair's
 * history (issue 16 item 3; libsync/bridge.h, graph.h
 * sync_graph_set_history), the way syncd publishes it (syncd/rbs_history.h):
 * two cpu clocks whose relative rate random-walks (libsync/simwander.h,
 * seeded), observed once a second with Gaussian noise and fitted as syncd
 * fits an RBS pair (libsync's sliding-window fit), then not at all for two
 * minutes (a radio outage: the peer is forgotten, its fit kept as a history
 * piece), then again with a fresh fit.  The piece and the current fit go
 * through the ticker's entries into a graph (the current one published by
 * the other end of the pair, reversed), and times inside the outage are
 * converted: node a -> node b (forward), node b -> node a (the reversed
 * pieces), and node a -> global through node b's exact timescale (a path
 * of two edges).  Over many seeded clocks the errors over the stated
 * standard errors must have an RMS not above 1 beyond its sampling band,
 * not absurdly below it, and none beyond 5; every conversion is flagged
 * bridged.  Without the history the same times are refused (beyond the
 * tolerance) or extrapolated; their figures are printed for comparison. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "libsync/bridge.h"
#include "libsync/fit.h"
#include "libsync/graph.h"
#include "libsync/simwander.h"
#include "libsync/ticker_wire.h"
#include "syncd/history.h"
#include "tests/check_run.h"

#define NS 1000000000LL
#define SEEDS 120
#define PROBES 11 /* inside the outage, evenly spaced */

typedef struct {
	double skew, noise, q_ppb; /* fractional; ns s.d.; ppb per sqrt(s) */
	double t_end_a, t_gap, t_end;
	double temp_ppm, temp_period_s; /* a temperature cycle's amplitude (ppm) and period (0: none) */
	double shift;                   /* where in the cycle the world starts, s (set per seed) */
} world;

/* Node b's cpu at node a's cpu time t_s (a's clock is the reference). */
static double truth_ns(const world *w, const sync_wander *wd, double t_s)
{
	return 5e9 + t_s * 1e9 * (1 + w->skew) + sync_wander_phase_ns(wd, t_s + w->shift);
}

static double gauss(GRand *r)
{
	double u = g_rand_double_range(r, 1e-300, 1), v = g_rand_double(r);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

typedef struct {
	double sum_z2, max_z;
	int n, beyond5, refused, unflagged;
} tally;

static void score(tally *t, double err, double var, int bridged)
{
	double z = err / sqrt(var);
	t->sum_z2 += z * z;
	t->max_z = fmax(t->max_z, fabs(z));
	t->beyond5 += fabs(z) > 5;
	t->unflagged += !bridged;
	t->n++;
}

/* A fit as syncd's RBS pairs have (rbs_core.c). */
static sync_fit *pair_fit(void)
{
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	fp.window = 64;
	fp.max_span = 300 * NS;
	fp.nominal_slope = 1.0;
	const char *why;
	sync_fit *f = sync_fit_new(&fp, &why);
	ck_assert_msg(f, "%s", why);
	return f;
}

/* One seeded pair: fits before and after the outage, the graph from
 * ticker entries (with_history: the piece too), probes scored in the three
 * directions (t[0] a->b, t[1] b->a, t[2] a->global). */
static void run_one(const world *w, uint64_t seed, int with_history, tally *t)
{
	sync_wander wd = {.rw_ppb = w->q_ppb, .seed = seed};
	GRand *r = g_rand_new_with_seed((guint32)(seed * 2654435761u));
	sync_fit *before = pair_fit(), *after = pair_fit();
	for (double ts = 1; ts <= w->t_end; ts += 1) {
		if (ts > w->t_end_a && ts < w->t_end_a + w->t_gap)
			continue; /* the outage */
		int64_t x = (int64_t)(ts * NS), y = (int64_t)llround(truth_ns(w, &wd, ts) + w->noise * gauss(r));
		ck_assert_int_eq(sync_fit_add(ts <= w->t_end_a ? before : after, x, y, NULL), 0);
	}
	sync_conv pc, cc, rc;
	const char *why;
	ck_assert_msg(sync_fit_solve(before, &pc, &why) == 0, "%s", why);
	ck_assert_msg(sync_fit_solve(after, &cc, &why) == 0, "%s", why);
	pc.updated_ns = pc.xmax;
	cc.updated_ns = cc.xmax;
	/* As syncd keeps a piece (rbs_history.c). */
	pc.flags |= SYNC_CONV_PIECE;
	pc.wander = sync_fit_wander_bound(before);
	ck_assert_int_eq(sync_conv_reverse(&cc, &rc), 0);
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2);
	/* Node b's global: exact, 10 s behind its cpu. */
	sync_ticker_entry e[3] = {
		{a, b, pc},
		{b, a, rc},
		{b, sync_clock_global(), sync_conv_fixed(0, -10 * NS, 1.0)},
	};
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	gp.max_age_ns = 0;
	sync_graph *g = sync_graph_new(&gp);
	size_t skipped;
	char buf[300];
	int loaded = sync_ticker_entries_to_graph(with_history ? e : e + 1, with_history ? 3 : 2, g, &skipped, buf, sizeof buf);
	ck_assert_msg(skipped == 0, "%s", buf);
	ck_assert_int_eq(loaded, with_history ? 3 : 2);
	int64_t now = (int64_t)(w->t_end * NS);
	for (int k = 1; k <= PROBES; k++) {
		double ts = w->t_end_a + w->t_gap * k / (PROBES + 1.0);
		int64_t xa = (int64_t)(ts * NS);
		double yb = truth_ns(w, &wd, ts);
		sync_graph_result res;
		if (sync_graph_convert(g, a, b, sync_tval_of(xa), now, &res, buf, sizeof buf) < 0)
			t[0].refused++;
		else
			score(&t[0], (double)res.value.i + res.value.f - yb, res.var, res.flags & SYNC_GRAPH_BRIDGED);
		/* b -> a: from b's true time (an integer ns and its fraction). */
		sync_tval xb = {(int64_t)floor(yb), yb - floor(yb)};
		if (sync_graph_convert(g, b, a, xb, now, &res, buf, sizeof buf) < 0)
			t[1].refused++;
		else
			score(&t[1], (double)(res.value.i - xa) + res.value.f, res.var, res.flags & SYNC_GRAPH_BRIDGED);
		if (sync_graph_convert(g, a, sync_clock_global(), sync_tval_of(xa), now, &res, buf, sizeof buf) < 0)
			t[2].refused++;
		else
			score(&t[2], (double)res.value.i + res.value.f - (yb - 10 * NS), res.var, res.flags & SYNC_GRAPH_BRIDGED);
	}
	sync_graph_free(g);
	sync_fit_free(before);
	sync_fit_free(after);
	g_rand_free(r);
}

static const char *const dir_name[3] = {"a->b", "b->a", "a->global"};

static void run_all(const world *w, int with_history, tally t[3], const char *label)
{
	for (int d = 0; d < 3; d++)
		t[d] = (tally){0};
	for (uint64_t s = 1; s <= SEEDS; s++)
		run_one(w, 5000 + s, with_history, t);
	for (int d = 0; d < 3; d++)
		fprintf(stderr, "%s %s: %d probes, rms z %.3f, max |z| %.2f, %d beyond 5, %d refused\n", label, dir_name[d], t[d].n,
			t[d].n ? sqrt(t[d].sum_z2 / t[d].n) : NAN, t[d].max_z, t[d].beyond5, t[d].refused);
}

/* The RMS of n independent standard normal z lies within 1 +- 4/sqrt(2n)
 * (4 of its standard errors); the probes of one clock are correlated, so
 * n counts clocks, not probes. */
static void assert_honest(const world *w, double floor, const char *label)
{
	tally t[3];
	run_all(w, 1, t, label);
	double d = 4.0 / sqrt(2.0 * SEEDS);
	for (int k = 0; k < 3; k++) {
		ck_assert_msg(t[k].refused == 0, "%s %s: %d refused", label, dir_name[k], t[k].refused);
		ck_assert_msg(t[k].unflagged == 0, "%s %s: %d not flagged bridged", label, dir_name[k], t[k].unflagged);
		ck_assert_int_eq(t[k].beyond5, 0);
		double rms = sqrt(t[k].sum_z2 / t[k].n);
		ck_assert_msg(rms < 1 + d && rms > floor, "%s %s: rms z %.3f outside %.2f .. 1 + %.3f", label, dir_name[k], rms,
			      floor, d);
	}
	tally n[3];
	run_all(w, 0, n, "without history");
}

/* A cpu crystal in still air: 2 ppb/sqrt(s) of rate random walk, 300 ns of
 * noise (radio receive jitter), two minutes of outage. */
START_TEST(bridge_is_honest)
{
	world w = {.skew = 30e-6, .noise = 300, .q_ppb = 2, .t_end_a = 300, .t_gap = 120, .t_end = 460};
	assert_honest(&w, 0.4, "wander 2 ppb/sqrt(s)");
}
END_TEST

/* No wander: the bridge is the line both fits agree on. */
START_TEST(quiet_clock)
{
	world w = {.skew = -12e-6, .noise = 300, .q_ppb = 0, .t_end_a = 300, .t_gap = 120, .t_end = 460};
	assert_honest(&w, 0.15, "no wander");
}
END_TEST

/* A node that joins the field late (issue 16: cut off from its very
 * start): its pair's first piece is a fit of its first minute of
 * observations, and times up to two minutes before them are converted
 * with a past reach (sync_graph_convert_past) — the first piece carried
 * back with the walk its q2 allows (bridge.h sync_bridge_beyond).  Over
 * the seeded clocks the errors over the stated s.e. must have an RMS not
 * above 1 beyond its sampling band, not absurdly below, none beyond 5,
 * each flagged extrapolated; the reversed direction likewise. */
static void run_past(const world *w0, uint64_t seed, tally t[2])
{
	world wv = *w0, *w = &wv;
	sync_wander wd = {.rw_ppb = w->q_ppb, .seed = seed};
	if (w->temp_period_s > 0) {
		/* A cycle of 1 degree at temp_ppm per degree, met anywhere. */
		wd.temp_amp_c = 1;
		wd.temp_period_s = w->temp_period_s;
		wd.tempco_ppm_per_c = w->temp_ppm;
		wv.shift = fmod(seed * 0.618034 * w->temp_period_s, w->temp_period_s);
	}
	GRand *r = g_rand_new_with_seed((guint32)(seed * 2654435761u));
	/* The pair observed once a second from t_gap on, fitted, noted and
	 * kept as syncd's RBS core does every tick (rbs_core.c: its
	 * history's defaults, a piece every 300 s of data and the first at
	 * once). */
	sync_fit *f = pair_fit();
	syncd_history_params hp = {.max_pieces = 32, .max_age_ns = 3600 * NS, .every_ns = 300 * NS, .unit_ns = 1.0};
	syncd_history *h = syncd_history_new(&hp);
	sync_conv cc;
	const char *why;
	for (double ts = w->t_gap; ts <= w->t_end; ts += 1) {
		int64_t x = (int64_t)(ts * NS), y = (int64_t)llround(truth_ns(w, &wd, ts) + w->noise * gauss(r));
		ck_assert_int_eq(sync_fit_add(f, x, y, NULL), 0);
		if (sync_fit_solve(f, &cc, &why) < 0)
			continue;
		cc.updated_ns = x;
		sync_tval end = sync_tval_of(cc.xmax);
		syncd_history_note(h, cc.xmax, sync_conv_apply(&cc, end).i, sqrt(sync_conv_var(&cc, end)), x);
		syncd_history_keep(h, &cc, syncd_history_min_n(f, 64), sync_fit_wander_bound(f));
	}
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2);
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	sync_ticker_entry cur = {a, b, cc};
	g_array_append_val(e, cur);
	ck_assert_uint_ge(syncd_history_entries(h, a, b, cc.xmin, e), 1);
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	gp.max_age_ns = 0;
	sync_graph *g = sync_graph_new(&gp);
	size_t skipped;
	char buf[300];
	ck_assert_int_eq(sync_ticker_entries_to_graph((sync_ticker_entry *)e->data, e->len, g, &skipped, buf, sizeof buf),
			 (int)e->len);
	int64_t now = (int64_t)(w->t_end * NS);
	for (int k = 1; k <= PROBES; k++) {
		double ts = w->t_gap * (1.0 - k / (PROBES + 1.0));
		int64_t xa = (int64_t)(ts * NS);
		double yb = truth_ns(w, &wd, ts);
		sync_graph_result res;
		/* Beyond the tolerance, refused without a reach. */
		if (w->t_gap - ts > 61)
			ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(xa), now, &res, buf, sizeof buf), -ERANGE);
		int rc = sync_graph_convert_past(g, a, b, sync_tval_of(xa), now, 3600 * NS, &res, buf, sizeof buf);
		ck_assert_msg(rc == 0, "%s", buf);
		ck_assert_uint_eq(res.flags & SYNC_GRAPH_EXTRAPOLATED, SYNC_GRAPH_EXTRAPOLATED);
		score(&t[0], (double)res.value.i + res.value.f - yb, res.var, 1);
		sync_tval xb = {(int64_t)floor(yb), yb - floor(yb)};
		rc = sync_graph_convert_past(g, b, a, xb, now, 3600 * NS, &res, buf, sizeof buf);
		ck_assert_msg(rc == 0, "%s", buf);
		score(&t[1], (double)(res.value.i - xa) + res.value.f, res.var, 1);
	}
	g_array_free(e, TRUE);
	sync_graph_free(g);
	syncd_history_free(h);
	sync_fit_free(f);
	g_rand_free(r);
}

static void assert_past_honest(const world *w, double floor, const char *label)
{
	tally t[2];
	memset(t, 0, sizeof t);
	for (uint64_t s = 1; s <= SEEDS; s++)
		run_past(w, 7000 + s, t);
	double d = 4.0 / sqrt(2.0 * SEEDS);
	for (int k = 0; k < 2; k++) {
		double rms = sqrt(t[k].sum_z2 / t[k].n);
		fprintf(stderr, "%s %s: %d probes, rms z %.3f, max |z| %.2f, %d beyond 5\n", label, dir_name[k], t[k].n, rms,
			t[k].max_z, t[k].beyond5);
		ck_assert_int_eq(t[k].beyond5, 0);
		ck_assert_msg(rms < 1 + d && rms > floor, "%s %s: rms z %.3f outside %.2f .. 1 + %.3f", label, dir_name[k], rms,
			      floor, d);
	}
}

START_TEST(past_before_history)
{
	/* Conservative (RMS z about 0.2): the first piece is a fit of 32 s,
	 * whose own wander bound (a mean plus a standard error of one or two
	 * estimates) syncd publishes when the line's measure is smaller, and
	 * which cannot tell a walk from a ramp, so it is carried back as a
	 * ramp would be. */
	world w = {.skew = 30e-6, .noise = 300, .q_ppb = 2, .t_gap = 120, .t_end = 460};
	assert_past_honest(&w, 0.12, "past, wander 2 ppb/sqrt(s)");
}
END_TEST

/* The same for a crystal following a temperature cycle (2.5 ppm over 20
 * minutes, met at any phase, chorus-sim's callsstart120temp.ini): a ramp
 * of the rate, which the walk's q2 understates beyond twice its span. */
START_TEST(past_before_history_temperature)
{
	world w = {.skew = -45e-6, .noise = 1000, .t_gap = 120, .t_end = 460, .temp_ppm = 2.5, .temp_period_s = 1200};
	assert_past_honest(&w, 0.3, "past, temperature cycle");
}
END_TEST

/* The graph refuses history it cannot use: no current conversion, pieces
 * overlapping the current data, an entry that is no piece; and a time in
 * the break after a piece flagged SYNC_CONV_BREAK. */
START_TEST(history_refused)
{
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g = sync_graph_new(&gp);
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2);
	sync_conv cur = {.slope = 1, .var_c = 1, .var_s = 1e-20, .xmin = 100 * NS, .xmax = 200 * NS, .x0 = 150 * NS, .y0 = 150 * NS, .n = 50, .updated_ns = 200 * NS};
	sync_conv p = cur;
	p.x0 = p.y0 = 50 * NS;
	p.xmin = 0;
	p.xmax = 90 * NS;
	p.flags = SYNC_CONV_PIECE;
	char why[200];
	ck_assert_int_eq(sync_graph_set_history(g, a, b, &p, 1, why, sizeof why), -ENOENT);
	ck_assert_int_eq(sync_graph_set(g, a, b, &cur, why, sizeof why), 0);
	sync_conv bad = p;
	bad.xmax = 120 * NS;
	ck_assert_int_eq(sync_graph_set_history(g, a, b, &bad, 1, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "current fit"), "%s", why);
	bad = p;
	bad.flags = 0;
	ck_assert_int_eq(sync_graph_set_history(g, a, b, &bad, 1, why, sizeof why), -EINVAL);
	ck_assert_int_eq(sync_graph_set_history(g, a, b, &p, 1, why, sizeof why), 0);
	/* Replacing the conversion drops its history: 95 s is then beyond
	 * the current data by less than the tolerance, extrapolated. */
	sync_graph_result r;
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(95 * NS), 200 * NS, &r, why, sizeof why), 0);
	ck_assert_uint_eq(r.flags, SYNC_GRAPH_BRIDGED);
	ck_assert_int_eq(sync_graph_set(g, a, b, &cur, why, sizeof why), 0);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(95 * NS), 200 * NS, &r, why, sizeof why), 0);
	ck_assert_uint_eq(r.flags, SYNC_GRAPH_EXTRAPOLATED);
	/* A piece before a break (a pair reset, SYNC_CONV_BREAK): its data
	 * still convert, the gap after it is refused both ways, never
	 * bridged, and a time before all history keeps the tolerance. */
	p.flags = SYNC_CONV_PIECE | SYNC_CONV_BREAK;
	p.xmin = 10 * NS;
	ck_assert_int_eq(sync_graph_set_history(g, a, b, &p, 1, why, sizeof why), 0);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(50 * NS), 200 * NS, &r, why, sizeof why), 0);
	ck_assert_uint_eq(r.flags, 0);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(95 * NS), 200 * NS, &r, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "break"), "%s", why);
	ck_assert_int_eq(sync_graph_convert(g, b, a, sync_tval_of(95 * NS), 200 * NS, &r, why, sizeof why), -ERANGE);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(5 * NS), 200 * NS, &r, why, sizeof why), 0);
	ck_assert_uint_eq(r.flags, SYNC_GRAPH_EXTRAPOLATED);
	sync_graph_free(g);
}
END_TEST

/* A step across a gap (a peer that rebooted: its cpu clock restarted; or
 * realtime set while syncd was down, its pieces restored from the history
 * file): the pieces before and the fit after are two lines that no walk
 * joins, and a bridge between them would state microseconds for an error
 * of the step's size.  Fits of 1 ns^2 at their centres, a walk of
 * 1 ppb/sqrt(s): carried 50 s to the middle of the gap the two sides may
 * differ by ~0.35 us (1 s.e.); 0.1 us is bridged, 1 ms and a restarted
 * clock (1000 s back) are refused both ways, saying so; the pieces' own
 * data still convert. */
START_TEST(step_refused)
{
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2);
	const double steps[] = {0, 100, 1e6, -1e12};
	for (int i = 0; i < 4; i++) {
		sync_graph *g = sync_graph_new(&gp);
		sync_conv cur = {.slope = 1, .var_c = 1, .var_s = 1e-20, .xmin = 100 * NS, .xmax = 200 * NS, .x0 = 150 * NS, .y0 = 150 * NS + (int64_t)steps[i], .n = 50, .updated_ns = 200 * NS};
		sync_conv p = cur;
		p.x0 = p.y0 = 50 * NS;
		p.xmin = 0;
		p.xmax = 90 * NS;
		p.flags = SYNC_CONV_PIECE;
		p.wander = 1e-27; /* q2, (ns/ns)^2 per ns: 1 ppb/sqrt(s) */
		char why[300];
		ck_assert_int_eq(sync_graph_set(g, a, b, &cur, why, sizeof why), 0);
		ck_assert_int_eq(sync_graph_set_history(g, a, b, &p, 1, why, sizeof why), 0);
		sync_graph_result r;
		int rc = sync_graph_convert(g, a, b, sync_tval_of(95 * NS), 200 * NS, &r, why, sizeof why);
		/* b's time in the gap both ways (a restarted b: its times before
		 * the restart lie after those of now, no gap on its side) */
		int rc2 = fabs(steps[i]) > 1e9 ? rc
					       : sync_graph_convert(g, b, a, sync_tval_of(95 * NS + (int64_t)(steps[i] / 2)),
								    200 * NS, &r, why, sizeof why);
		if (fabs(steps[i]) < 1e3) {
			ck_assert_msg(rc == 0 && rc2 == 0, "step %g ns: %s", steps[i], why);
			ck_assert_uint_eq(r.flags, SYNC_GRAPH_BRIDGED);
		} else {
			ck_assert_msg(rc == -ERANGE && rc2 == -ERANGE, "step %g ns bridged", steps[i]);
			ck_assert_msg(strstr(why, "stepped or restarted"), "%s", why);
		}
		ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(50 * NS), 200 * NS, &r, why, sizeof why), 0);
		sync_graph_free(g);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graph_bridge");
	TCase *tc = tcase_create("bridge");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, history_refused);
	tcase_add_test(tc, step_refused);
	tcase_add_test(tc, bridge_is_honest);
	tcase_add_test(tc, quiet_clock);
	tcase_add_test(tc, past_before_history);
	tcase_add_test(tc, past_before_history_temperature);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
