/* test_simutc.c — the simulated UTC source (libsync/simutc.h): its text form,
 * the statistics and smoothness of its error e(t), determinism, the node's
 * realtime clock through libsync/now.h (CHORUS_SIM_UTC, sync_utc_status) and
 * the scenario keys utc_source, utc_error_us, utc_tau_s. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsync/now.h"
#include "libsync/simutc.h"
#include "sim/rng.h"
#include "sim/scenario.h"
#include "tests/check_run.h"

static int64_t host_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Host realtime - raw, from the tightest of a few sandwiches. */
static int64_t rt_minus_raw(void)
{
	int64_t best = INT64_MAX, d = 0;
	for (int i = 0; i < 20; i++) {
		int64_t a = host_read(CLOCK_MONOTONIC_RAW), r = host_read(CLOCK_REALTIME), b = host_read(CLOCK_MONOTONIC_RAW);
		if (b - a < best) {
			best = b - a;
			d = r - (a + (b - a) / 2);
		}
	}
	return d;
}

START_TEST(parse_format_round_trip)
{
	const sync_simutc cases[] = {
		{SYNC_SIMUTC_NTP, 1e6, 3600, 0, 0},
		{SYNC_SIMUTC_GPS, 1000, 60, 42, 123456789000},
		{SYNC_SIMUTC_NTP, 1234.5678901234567, 0.1, UINT64_MAX, -987654321},
		{SYNC_SIMUTC_GPS, 1e-3, 1e9, 1, INT64_MAX},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char buf[160];
		sync_simutc_format(&cases[i], buf, sizeof buf);
		sync_simutc back;
		const char *why = NULL;
		ck_assert_msg(sync_simutc_parse(buf, &back, &why) == 0, "'%s': %s", buf, why);
		ck_assert_int_eq(back.kind, cases[i].kind);
		ck_assert_msg(back.sigma_ns == cases[i].sigma_ns && back.tau_s == cases[i].tau_s, "'%s'", buf);
		ck_assert_uint_eq(back.seed, cases[i].seed);
		ck_assert_int_eq(back.epoch_ns, cases[i].epoch_ns);
	}
	char buf[160];
	sync_simutc none = {.kind = SYNC_SIMUTC_NONE, .sigma_ns = 5};
	ck_assert_str_eq(sync_simutc_format(&none, buf, sizeof buf), "none");
	sync_simutc u = {.kind = SYNC_SIMUTC_GPS, .sigma_ns = 9};
	ck_assert_int_eq(sync_simutc_parse("none", &u, NULL), 0);
	ck_assert_int_eq(u.kind, SYNC_SIMUTC_NONE);
	ck_assert(u.sigma_ns == 0 && u.tau_s == 0);
	ck_assert_str_eq(sync_simutc_format(&(sync_simutc){SYNC_SIMUTC_GPS, 1000, 60, 42, 123456789000}, buf, sizeof buf),
			 "gps,1000,60,42,123456789000");
	ck_assert(sync_simutc_error_ns(&none, 12.0) == 0 && sync_simutc_rate(&none, 12.0) == 0);
	double s, t;
	sync_simutc_defaults(SYNC_SIMUTC_NTP, &s, &t);
	ck_assert(s == 1e6 && t == 3600);
	sync_simutc_defaults(SYNC_SIMUTC_GPS, &s, &t);
	ck_assert(s == 1e3 && t == 60);
	ck_assert_str_eq(sync_simutc_kind_name(SYNC_SIMUTC_GPS), "gps");
}
END_TEST

START_TEST(parse_refuses_malformed)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"ptp,1000,60,1,0", "KIND"},
		{"NTP,1000,60,1,0", "KIND"},
		{"ntp,0,60,1,0", "SIGMA_NS"},
		{"ntp,-5,60,1,0", "SIGMA_NS"},
		{"ntp,nan,60,1,0", "SIGMA_NS"},
		{"ntp,inf,60,1,0", "SIGMA_NS"},
		{"ntp,1000,0,1,0", "TAU_S"},
		{"gps,1000,-1,1,0", "TAU_S"},
		{"gps,1000,1e13,1,0", "TAU_S"},
		{"ntp,1000,60,-1,0", "SEED"},
		{"ntp,1000,60,x,0", "SEED"},
		{"ntp,1000,60,1,1.5", "EPOCH_NS"},
		{"ntp,1000,60,1", "KIND,SIGMA_NS"},
		{"ntp,1000,60,1,0,7", "KIND,SIGMA_NS"},
		{"", "KIND,SIGMA_NS"},
		{"ntp", "KIND,SIGMA_NS"},
		{"none,1", "KIND"},
		{"ntp,,60,1,0", "SIGMA_NS"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		sync_simutc u = {.kind = SYNC_SIMUTC_GPS, .sigma_ns = 7, .tau_s = 8, .seed = 9, .epoch_ns = 10};
		const char *why = NULL;
		ck_assert_msg(sync_simutc_parse(bad[i].text, &u, &why) == -EINVAL, "'%s' accepted", bad[i].text);
		ck_assert_msg(why && strstr(why, bad[i].why), "'%s': reason '%s' does not name %s", bad[i].text,
			      why ? why : "(none)", bad[i].why);
		ck_assert_msg(u.kind == SYNC_SIMUTC_GPS && u.sigma_ns == 7 && u.tau_s == 8 && u.seed == 9 && u.epoch_ns == 10,
			      "'%s' changed *out", bad[i].text);
	}
}
END_TEST

/* The statistics of e over 40,000 correlation times (8 seeds × 5,000 tau),
 * sampled every tau / 5 (3.2 grid steps: every place between grid points).
 * Bounds at 5 standard errors, with the correlation counted:
 *  - s.d.: s² / sigma² ~ chi²(nu) / nu with nu = span / (2 tau) (the
 *    effective samples of a process whose correlation integrates to 2 tau;
 *    conservative for the variance, whose is tau), so s / sigma within
 *    sqrt(1 ± 5 sqrt(2 / nu)); the cubic's variance between grid points is
 *    0.992 of sigma² on average (a 0.4 % lower s.d.), well inside;
 *  - mean: within 5 sigma / sqrt(nu);
 *  - autocorrelation at lag tau: Bartlett's formula for an OU process gives
 *    var(rho^) = (1 - 3 e^-2) tau / span; bound 5 of its s.e. plus 0.005 for
 *    the cubic's own correlation at that lag (0.3707 rather than e^-1);
 *  - at lag 2 tau likewise about e^-2 (var (1 + e^-4 ... ) tau / span < 1.2 tau / span). */
START_TEST(error_statistics)
{
	const double sigma = 1000, tau = 60, per_seed = 5000 * tau, dt = tau / 5;
	const int nseeds = 8;
	double sum = 0, sum2 = 0, c1 = 0, c2 = 0, v0 = 0;
	size_t n = 0;
	size_t m = (size_t)(per_seed / dt);
	double *x = g_new(double, m);
	for (int s = 0; s < nseeds; s++) {
		sync_simutc u = {SYNC_SIMUTC_GPS, sigma, tau, 1000 + 7 * (uint64_t)s, 0};
		double mean = 0;
		for (size_t i = 0; i < m; i++) {
			x[i] = sync_simutc_error_ns(&u, -1000.0 + 0.0371 * tau + (double)i * dt);
			mean += x[i];
		}
		mean /= (double)m;
		for (size_t i = 0; i < m; i++) {
			sum += x[i];
			sum2 += x[i] * x[i];
			double d = x[i] - mean;
			v0 += d * d;
			if (i + 5 < m)
				c1 += d * (x[i + 5] - mean);
			if (i + 10 < m)
				c2 += d * (x[i + 10] - mean);
		}
		n += m;
	}
	g_free(x);
	double span = nseeds * per_seed, nu = span / (2 * tau);
	double mean = sum / (double)n, sd = sqrt(sum2 / (double)n - mean * mean);
	double r1 = c1 / v0, r2 = c2 / v0;
	double sd_lo = sqrt(1 - 5 * sqrt(2 / nu)), sd_hi = sqrt(1 + 5 * sqrt(2 / nu));
	double r1_tol = 5 * sqrt((1 - 3 * exp(-2)) * tau / span) + 0.005, r2_tol = 5 * sqrt(1.2 * tau / span) + 0.005;
	fprintf(stderr, "simutc stats: mean %.2f ns, sd/sigma %.4f [%.4f, %.4f], rho(tau) %.4f (e^-1 %.4f ± %.4f), "
			"rho(2 tau) %.4f (e^-2 %.4f ± %.4f)\n",
		mean, sd / sigma, sd_lo, sd_hi, r1, exp(-1), r1_tol, r2, exp(-2), r2_tol);
	ck_assert_msg(fabs(mean) < 5 * sigma / sqrt(nu), "mean %g ns", mean);
	ck_assert_msg(sd / sigma > sd_lo && sd / sigma < sd_hi, "sd/sigma %g outside [%g, %g]", sd / sigma, sd_lo, sd_hi);
	ck_assert_msg(fabs(r1 - exp(-1)) < r1_tol, "autocorrelation at tau %g, not e^-1 = %g ± %g", r1, exp(-1), r1_tol);
	ck_assert_msg(fabs(r2 - exp(-2)) < r2_tol, "autocorrelation at 2 tau %g, not e^-2 = %g ± %g", r2, exp(-2), r2_tol);
}
END_TEST

/* e and its rate are continuous across every grid point (the epoch's and
 * those before it included): the rate's jump across a knot, from one-sided
 * differences delta = 1e-4 h either side, stays below 1 % of the typical
 * change of the rate over one grid step (a linear interpolation jumps by
 * about that whole change at every knot).  sync_simutc_rate is the
 * derivative of sync_simutc_error_ns. */
START_TEST(rate_is_continuous)
{
	const double tau = 60, h = tau / 16, delta = 1e-4 * h;
	sync_simutc u = {SYNC_SIMUTC_GPS, 1000, tau, 77, 0};
	double max_jump = 0, max_step = 0, ss = 0, max_rate_err = 0, rms_rate = 0;
	int n = 0;
	for (int k = -1000; k <= 1000; k++) {
		double t = k * h;
		double e0 = sync_simutc_error_ns(&u, t);
		double left = (e0 - sync_simutc_error_ns(&u, t - delta)) / delta;
		double right = (sync_simutc_error_ns(&u, t + delta) - e0) / delta;
		max_jump = fmax(max_jump, fabs(right - left));
		max_step = fmax(max_step, fabs(sync_simutc_error_ns(&u, t + 1e-9) - sync_simutc_error_ns(&u, t - 1e-9)));
		double change = sync_simutc_rate(&u, t + 0.5 * h) - sync_simutc_rate(&u, t - 0.5 * h);
		ss += change * change;
		double tm = t + 0.37 * h, central = (sync_simutc_error_ns(&u, tm + delta) - sync_simutc_error_ns(&u, tm - delta)) / (2 * delta);
		max_rate_err = fmax(max_rate_err, fabs(central - sync_simutc_rate(&u, tm)));
		rms_rate += central * central;
		n++;
	}
	double typical = sqrt(ss / n);
	rms_rate = sqrt(rms_rate / n);
	fprintf(stderr, "simutc rate: max jump at a knot %.3g ns/s, typical change per step %.3g ns/s, rms rate %.3g ns/s, "
			"max |e(t+) - e(t-)| %.3g ns\n",
		max_jump, typical, rms_rate, max_step);
	ck_assert_msg(typical > 0 && max_jump < 0.01 * typical, "rate jumps by %g ns/s at a knot (typical change %g)",
		      max_jump, typical);
	ck_assert_msg(max_step < 1e-3, "e jumps by %g ns", max_step);
	ck_assert_msg(max_rate_err < 1e-4 * rms_rate, "sync_simutc_rate off by %g ns/s (rms rate %g)", max_rate_err,
		      rms_rate);
}
END_TEST

#define NT 400
typedef struct {
	const sync_simutc *u;
	const double *t;
	double *v;
} eval_job;

/* Evaluate in reverse order in another thread (its own cache), each value
 * just after 100 other seeds at the same time (whatever a cache keeps, some
 * of them land where this seed's values would). */
static gpointer eval_reverse(gpointer p)
{
	eval_job *j = p;
	for (int i = NT - 1; i >= 0; i--) {
		sync_simutc other = *j->u;
		for (int o = 1; o <= 100; o++) {
			other.seed = j->u->seed + (uint64_t)o;
			(void)sync_simutc_error_ns(&other, j->t[i]);
		}
		j->v[i] = sync_simutc_error_ns(j->u, j->t[i]);
	}
	return NULL;
}

START_TEST(deterministic_in_any_order)
{
	sync_simutc u = {SYNC_SIMUTC_NTP, 1e6, 3600, 12345, 0};
	double t[NT], fwd[NT], rev[NT], scrambled[NT];
	for (int i = 0; i < NT; i++)
		t[i] = -5e4 + 1e6 * sim_rng_unit(sim_rng_hash(3, 99, (uint64_t)i, 0, 0));
	for (int i = 0; i < NT; i++)
		fwd[i] = sync_simutc_error_ns(&u, t[i]);
	eval_job j = {&u, t, rev};
	GThread *th = g_thread_new("simutc", eval_reverse, &j);
	g_thread_join(th);
	for (int k = 0; k < NT; k++) {
		int i = (k * 173) % NT; /* 173 is prime to 400 */
		scrambled[i] = sync_simutc_error_ns(&u, t[i]);
	}
	int differ = 0;
	sync_simutc v = u;
	v.seed = 12346;
	for (int i = 0; i < NT; i++) {
		ck_assert_msg(fwd[i] == rev[i] && fwd[i] == scrambled[i], "t = %.6f: %.17g, %.17g, %.17g", t[i], fwd[i], rev[i],
			      scrambled[i]);
		differ += sync_simutc_error_ns(&v, t[i]) != fwd[i];
	}
	ck_assert_int_eq(differ, NT);
	/* sigma scales the same process; the epoch shifts it (host raw form). */
	sync_simutc w = u;
	w.sigma_ns = 2 * u.sigma_ns;
	w.epoch_ns = 1000000000;
	ck_assert(sync_simutc_error_ns(&w, 123.25) == 2 * sync_simutc_error_ns(&u, 123.25));
	ck_assert(sync_simutc_error_at_raw(&w, 1000000000 + 123250000000) == sync_simutc_error_ns(&w, 123.25));
}
END_TEST

/* In a process with a simulated clock and a UTC source: realtime is host
 * realtime + e(t), with no skew; the cpu clock keeps its skew. */
static void check_disciplined(const char *kind, double sigma)
{
	int64_t epoch = host_read(CLOCK_MONOTONIC_RAW) - 500000000000;
	sync_simutc u = {strcmp(kind, "gps") ? SYNC_SIMUTC_NTP : SYNC_SIMUTC_GPS, sigma, 3600, 7, epoch};
	char buf[160];
	setenv("CHORUS_SIM_CLOCK", "12.5,1000", 1);
	setenv("CHORUS_SIM_UTC", sync_simutc_format(&u, buf, sizeof buf), 1);
	const char *why = NULL;
	ck_assert_msg(sync_now_init(&why) == 0, "%s", why);
	ck_assert(sync_now_simulated());
	int64_t d = rt_minus_raw();
	int checked = 0;
	for (int i = 0; i < 200; i++) {
		int64_t r0 = host_read(CLOCK_REALTIME), v = sync_now(SYNC_KIND_REALTIME), r1 = host_read(CLOCK_REALTIME);
		if (r1 - r0 > 200000)
			continue; /* preempted: too wide a window */
		double e = sync_simutc_error_ns(&u, (double)(r0 - d - epoch) * 1e-9);
		ck_assert_msg((double)(v - r1) - 1000 <= e && e <= (double)(v - r0) + 1000,
			      "realtime - host %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT " ns, e(t) %.1f ns", v - r1, v - r0,
			      e);
		/* Kernel receive timestamps take the same path. */
		double e2 = (double)(sync_host_to_node(SYNC_KIND_REALTIME, r0) - r0);
		ck_assert_msg(fabs(e2 - e) < 1000, "host_to_node %.1f, e(t) %.1f", e2, e);
		checked++;
	}
	ck_assert_int_gt(checked, 50);
	/* The error is a σ-sized, non-zero number, not the skew's (12.5 ppm of uptime). */
	int64_t raw = host_read(CLOCK_MONOTONIC_RAW), cpu = sync_now(SYNC_KIND_CPU), raw1 = host_read(CLOCK_MONOTONIC_RAW);
	double skewed = 1000 + (double)raw * 12.5e-6;
	ck_assert_msg((double)(cpu - raw1) - 1000 <= skewed && skewed <= (double)(cpu - raw) + 1000, "cpu clock lost its skew");
	sync_utc st;
	ck_assert_int_eq(sync_utc_status(&st), 0);
	ck_assert_int_eq(st.synced, 1);
	ck_assert(st.est_error_ns == sigma && st.max_error_ns == 4 * sigma);
	ck_assert_str_eq(st.source, strcmp(kind, "gps") ? "simulated ntp" : "simulated gps");
	ck_assert_ptr_null(st.why);
}

START_TEST(sim_ntp_realtime_is_disciplined)
{
	check_disciplined("ntp", 1e6);
}
END_TEST

START_TEST(sim_gps_realtime_is_disciplined)
{
	check_disciplined("gps", 2000);
}
END_TEST

/* No UTC source (unset, or "none"): today's undisciplined realtime clock. */
START_TEST(sim_without_utc_skews)
{
	setenv("CHORUS_SIM_CLOCK", "12.5,1000", 1);
	if (_i == 0)
		unsetenv("CHORUS_SIM_UTC");
	else
		setenv("CHORUS_SIM_UTC", "none", 1);
	const char *why = NULL;
	ck_assert_msg(sync_now_init(&why) == 0, "%s", why);
	int64_t d = rt_minus_raw(), r = host_read(CLOCK_REALTIME);
	double off = (double)(sync_host_to_node(SYNC_KIND_REALTIME, r) - r), want = (double)(r - d) * 12.5e-6;
	ck_assert_msg(fabs(off - want) < 1000, "realtime offset %.1f ns, skew alone gives %.1f", off, want);
	sync_utc st;
	ck_assert_int_eq(sync_utc_status(&st), 0);
	ck_assert_int_eq(st.synced, 0);
	ck_assert_str_eq(st.source, "simulated none");
	ck_assert_str_eq(st.why, "the scenario gives this node no UTC source");
}
END_TEST

/* Only CHORUS_SIM_UTC: the host's raw clock as cpu, realtime disciplined. */
START_TEST(sim_utc_alone)
{
	unsetenv("CHORUS_SIM_CLOCK");
	setenv("CHORUS_SIM_UTC", "gps,5000,60,3,0", 1);
	const char *why = NULL;
	ck_assert_msg(sync_now_init(&why) == 0, "%s", why);
	ck_assert(sync_now_simulated());
	int64_t a = host_read(CLOCK_MONOTONIC_RAW), c = sync_now(SYNC_KIND_CPU), b = host_read(CLOCK_MONOTONIC_RAW);
	ck_assert(a <= c && c <= b);
	sync_utc st;
	ck_assert_int_eq(sync_utc_status(&st), 0);
	ck_assert(st.synced && st.est_error_ns == 5000);
}
END_TEST

START_TEST(malformed_env_refused)
{
	setenv("CHORUS_SIM_CLOCK", "12.5,1000", 1);
	setenv("CHORUS_SIM_UTC", "ntp,0,60,1,0", 1);
	const char *why = NULL;
	ck_assert_int_eq(sync_now_init(&why), -EINVAL);
	ck_assert_msg(why && strstr(why, "CHORUS_SIM_UTC") && strstr(why, "SIGMA_NS"), "%s", why);
	sync_utc st;
	ck_assert_int_eq(sync_utc_status(&st), -EINVAL);
	ck_assert_int_eq(st.synced, 0);
	ck_assert_str_eq(st.source, "none");
	ck_assert_ptr_nonnull(st.why);
}
END_TEST

START_TEST(field_reads_adjtimex)
{
	unsetenv("CHORUS_SIM_CLOCK");
	unsetenv("CHORUS_SIM_UTC");
	sync_utc st;
	int rc = sync_utc_status(&st);
	fprintf(stderr, "simutc field: rc %d synced %d est %.0f ns max %.0f ns source %s why %s\n", rc, st.synced,
		st.est_error_ns, st.max_error_ns, st.source, st.why ? st.why : "-");
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(st.source, "adjtimex");
	ck_assert(!sync_now_simulated());
	if (st.synced)
		ck_assert(st.est_error_ns > 0 && st.max_error_ns >= st.est_error_ns && !st.why);
	else
		ck_assert_ptr_nonnull(st.why);
}
END_TEST

/* --- the scenario keys ------------------------------------------------------ */

static sim_scenario *load_ok(const char *text)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("utc.ini", text, NULL, &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	return sc;
}

static char *load_error(const char *text)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("bad.ini", text, NULL, &err);
	ck_assert_msg(!sc, "expected an error for:\n%s", text);
	char *msg = g_strdup(err->message);
	g_error_free(err);
	return msg;
}

START_TEST(scenario_defaults_and_values)
{
	sim_scenario *sc = load_ok("[world]\nseed = 5\n"
				   "[node.1]\nposition_m = 0,0\n"
				   "[node.2]\nposition_m = 1,0\nutc_source = ntp\n"
				   "[node.3]\nposition_m = 2,0\nutc_source = gps\n"
				   "[node.4]\nposition_m = 3,0\nutc_source = ntp\nutc_error_us = 250\nutc_tau_s = 900\n"
				   "[node.5]\nposition_m = 4,0\nutc_source = none\n");
	const sim_node_cfg *n1 = sim_scenario_find_node(sc, 1), *n2 = sim_scenario_find_node(sc, 2),
			   *n3 = sim_scenario_find_node(sc, 3), *n4 = sim_scenario_find_node(sc, 4),
			   *n5 = sim_scenario_find_node(sc, 5);
	ck_assert_int_eq(n1->utc.kind, SYNC_SIMUTC_NONE); /* the default: today's undisciplined clock */
	ck_assert(n1->utc.sigma_ns == 0 && n1->utc.tau_s == 0);
	ck_assert_int_eq(n5->utc.kind, SYNC_SIMUTC_NONE);
	ck_assert_int_eq(n2->utc.kind, SYNC_SIMUTC_NTP);
	ck_assert(n2->utc.sigma_ns == 1e6 && n2->utc.tau_s == 3600);
	ck_assert_int_eq(n3->utc.kind, SYNC_SIMUTC_GPS);
	ck_assert(n3->utc.sigma_ns == 1e3 && n3->utc.tau_s == 60);
	ck_assert_int_eq(n4->utc.kind, SYNC_SIMUTC_NTP);
	ck_assert(n4->utc.sigma_ns == 250e3 && n4->utc.tau_s == 900);
	/* Seeds: from the world's seed and the node, apart from the walks'. */
	ck_assert_uint_eq(n2->utc.seed, sim_rng_hash(5, SIM_RNG_WANDER, 2, 2, 0));
	ck_assert(n2->utc.seed != n3->utc.seed && n2->utc.seed != n2->cpu.wander.seed &&
		  n2->utc.seed != n2->audio_wander.seed);
	ck_assert_int_eq(n2->utc.epoch_ns, 0);
	char *fx = sim_scenario_effects(sc);
	ck_assert_msg(strstr(fx, ", realtime disciplined to UTC on 3 node(s) (ntp, gps)"), "%s", fx);
	g_free(fx);
	sim_scenario_free(sc);

	sc = load_ok("[node.1]\nposition_m = 0,0\nutc_source = gps\n");
	fx = sim_scenario_effects(sc);
	ck_assert_msg(strstr(fx, "on 1 node(s) (gps)"), "%s", fx);
	g_free(fx);
	sim_scenario_free(sc);
	sc = load_ok("[node.1]\nposition_m = 0,0\n");
	fx = sim_scenario_effects(sc);
	ck_assert_msg(!strstr(fx, "UTC"), "%s", fx);
	g_free(fx);
	sim_scenario_free(sc);
}
END_TEST

START_TEST(scenario_bad_values_named)
{
	static const struct {
		const char *keys, *want;
	} bad[] = {
		{"utc_source = ptp\n", "bad.ini:3: [node.1] utc_source:"},
		{"utc_source = ntp\nutc_error_us = 0\n", "bad.ini:4: [node.1] utc_error_us: 0: must be > 0"},
		{"utc_source = gps\nutc_tau_s = 0\n", "bad.ini:4: [node.1] utc_tau_s: 0: must be > 0"},
		{"utc_source = gps\nutc_tau_s = -5\n", "bad.ini:4: [node.1] utc_tau_s:"},
		{"utc_source = gps\nutc_error_us = lots\n", "bad.ini:4: [node.1] utc_error_us:"},
		{"utc_error_us = 5\n", "bad.ini:3: [node.1] utc_error_us: only used with utc_source = ntp or gps"},
		{"utc_source = none\nutc_tau_s = 5\n", "bad.ini:4: [node.1] utc_tau_s: only used with utc_source"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *text = g_strdup_printf("[node.1]\nposition_m = 0,0\n%s", bad[i].keys);
		char *msg = load_error(text);
		ck_assert_msg(strstr(msg, bad[i].want), "for\n%s\nwanted '%s' in:\n%s", text, bad[i].want, msg);
		g_free(msg);
		g_free(text);
	}
}
END_TEST

static TCase *scenario_tcase(void)
{
	TCase *tc = tcase_create("scenario");
	tcase_add_test(tc, scenario_defaults_and_values);
	tcase_add_test(tc, scenario_bad_values_named);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("simutc");
	TCase *tc = tcase_create("process");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, parse_format_round_trip);
	tcase_add_test(tc, parse_refuses_malformed);
	tcase_add_test(tc, error_statistics);
	tcase_add_test(tc, rate_is_continuous);
	tcase_add_test(tc, deterministic_in_any_order);
	suite_add_tcase(s, tc);
	/* now.c's state is the process's: each of these runs in its own fork. */
	TCase *env = tcase_create("now");
	tcase_add_test(env, sim_ntp_realtime_is_disciplined);
	tcase_add_test(env, sim_gps_realtime_is_disciplined);
	tcase_add_loop_test(env, sim_without_utc_skews, 0, 2);
	tcase_add_test(env, sim_utc_alone);
	tcase_add_test(env, malformed_env_refused);
	tcase_add_test(env, field_reads_adjtimex);
	suite_add_tcase(s, env);
	suite_add_tcase(s, scenario_tcase());
	return tu_check_run(s);
}
