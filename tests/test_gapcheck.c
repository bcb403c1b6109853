/* test_gapcheck — the chaos soak's judges (pure): of audio gaps
 * (sim/launch/gapcheck.h: which gaps an overrun audiod reported or its
 * downtime explain, and that silent holes never are) and of growth
 * (sim/launch/growth.h: the first and last 10 minutes' medians of memory,
 * floors of descriptors). */
#include <check.h>

#include "sim/launch/gapcheck.h"
#include "sim/launch/growth.h"
#include "tests/check_run.h"

#define RATE 16000.0

START_TEST(parse_overrun_lines)
{
	int64_t a = 0, b = 0;
	ck_assert(csim_gap_parse_overrun("audiod-Message: 01:59:38.487: audio/0: overrun, frames [352826, 353618) lost", &a, &b));
	ck_assert_int_eq(a, 352826);
	ck_assert_int_eq(b, 353618);
	ck_assert(!csim_gap_parse_overrun("audiod-Message: chorus_sim: frame numbering continues from the previous run at 700015", &a, &b));
	ck_assert(!csim_gap_parse_overrun("audio/0: overrun, frames [10, 5) lost", &a, &b)); /* backwards */
	ck_assert(!csim_gap_parse_overrun("audio/0: overrun, frames [10, x) lost", &a, &b));
}
END_TEST

START_TEST(overrun_explains_overlapping_declared_gap)
{
	const csim_overrun ov[] = {{1, 1000, 2000}, {2, 5000, 6000}};
	csim_gap g = {1, 1500, 2500, 30.0, CSIM_GAP_DECLARED};
	ck_assert_int_eq(csim_gap_judge(&g, RATE, ov, 2, NULL, 0), CSIM_GAP_BY_OVERRUN);
	g.from = 2000; /* touching, not overlapping */
	ck_assert_int_eq(csim_gap_judge(&g, RATE, ov, 2, NULL, 0), CSIM_GAP_UNEXPLAINED);
	csim_gap other = {1, 5000, 6000, 30.0, CSIM_GAP_DECLARED}; /* node 2's overrun */
	ck_assert_int_eq(csim_gap_judge(&other, RATE, ov, 2, NULL, 0), CSIM_GAP_UNEXPLAINED);
}
END_TEST

START_TEST(downtime_explains_a_restart_gap)
{
	/* audiod killed at 10 s, running again at 11 s; 1.5 s of frames lost. */
	const csim_downtime dt[] = {{1, 10.0, 11.0}};
	csim_gap g = {1, 160000, 184000, 11.8, CSIM_GAP_DECLARED};
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_BY_DOWNTIME);
	/* Noticed late (the client's back-off) but within the settling time. */
	g.t_s = 11.0 + CSIM_GAP_SETTLE_S;
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_BY_DOWNTIME);
	/* Long after: another cause. */
	g.t_s = 11.0 + CSIM_GAP_SETTLE_S + 1.5 + 1.0;
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_UNEXPLAINED);
	/* Before the fault. */
	g.t_s = 9.0;
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_UNEXPLAINED);
	/* Another node's downtime explains nothing here. */
	const csim_downtime dt2[] = {{2, 10.0, 11.0}};
	g.t_s = 11.8;
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt2, 1), CSIM_GAP_UNEXPLAINED);
}
END_TEST

START_TEST(silent_holes_are_never_explained)
{
	const csim_overrun ov[] = {{1, 0, 1000000}};
	const csim_downtime dt[] = {{1, 0.0, 100.0}};
	csim_gap g = {1, 1000, 2000, 50.0, CSIM_GAP_SILENT};
	ck_assert_int_eq(csim_gap_judge(&g, RATE, ov, 1, dt, 1), CSIM_GAP_UNEXPLAINED);
	ck_assert_str_eq(csim_gap_verdict_name(CSIM_GAP_UNEXPLAINED), "UNEXPLAINED");
	ck_assert_str_eq(csim_gap_kind_name(CSIM_GAP_SILENT), "silent");
}
END_TEST

START_TEST(backwards_needs_a_restart)
{
	/* A renumbering after a restart: explained by the downtime before it,
	 * however far back the numbers went. */
	const csim_downtime dt[] = {{1, 20.0, 21.0}};
	csim_gap g = {1, 0, 900000000, 32.0, CSIM_GAP_BACKWARDS};
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_BY_DOWNTIME);
	/* The length of a backwards step does not widen the window. */
	g.t_s = 21.0 + CSIM_GAP_SETTLE_S + 1.0;
	ck_assert_int_eq(csim_gap_judge(&g, RATE, NULL, 0, dt, 1), CSIM_GAP_UNEXPLAINED);
	/* Never by an overrun. */
	const csim_overrun ov[] = {{1, 0, 900000000}};
	ck_assert_int_eq(csim_gap_judge(&g, RATE, ov, 1, NULL, 0), CSIM_GAP_UNEXPLAINED);
}
END_TEST

/* n samples a second apart from t = 30 s, RSS from rss(t). */
static csim_usage *samples(size_t n, long (*rss)(double), int fd)
{
	csim_usage *u = g_new(csim_usage, n);
	for (size_t i = 0; i < n; i++)
		u[i] = (csim_usage){30.0 + (double)i, rss(30.0 + (double)i), fd};
	return u;
}

static long flat(double t)
{
	return 10000 + ((long)t % 7) * 100; /* breathes by up to 6 % */
}

static long warms_up(double t)
{
	return t < 300 ? 10000 + (long)(t * 20) : 16000; /* a plateau after 5 minutes */
}

static long leaks(double t)
{
	return 10000 + (long)(t * 1.0); /* 1 kB a second */
}

START_TEST(growth_judged_on_medians_and_floors)
{
	csim_growth g;
	csim_usage *u = samples(1800, flat, 12);
	csim_growth_judge(u, 1800, &g);
	ck_assert(g.judged);
	ck_assert(!g.grew); /* breathing is not growth */
	ck_assert_int_eq(g.rss_first_kb, 10300);
	ck_assert_int_eq(g.rss_last_kb, 10300);
	/* Nor is a burst: a solve of many clips, 2.5 times the footprint for
	 * 2 s of every minute, in the last window only (its ceiling would
	 * have failed it). */
	for (size_t i = 1200; i < 1800; i += 60)
		u[i].rss_kb = u[i + 1].rss_kb = 25000;
	csim_growth_judge(u, 1800, &g);
	ck_assert(!g.grew);
	ck_assert_int_eq(g.rss_last_kb, 10300);
	g_free(u);
	u = samples(1800, warms_up, 12);
	csim_growth_judge(u, 1800, &g);
	ck_assert(!g.grew); /* the plateau is reached inside the first 10 minutes */
	g_free(u);
	u = samples(1800, leaks, 12);
	csim_growth_judge(u, 1800, &g);
	ck_assert(g.grew); /* 1 kB/s over 30 minutes: 10.6 MB to 11.8 MB */
	g_free(u);
	/* Descriptors: one more each minute. */
	u = samples(1800, flat, 12);
	for (size_t i = 0; i < 1800; i++)
		u[i].fd = 12 + (int)(i / 60);
	csim_growth_judge(u, 1800, &g);
	ck_assert(g.grew);
	ck_assert_int_eq(g.fd_first, 12); /* the fewest of t <= 630 s */
	ck_assert_int_eq(g.fd_last, 31);  /* the fewest of t >= 1229 s: i >= 1199 */
	g_free(u);
	/* A connection open for a few seconds now and then (a clip fetched, a
	 * client reconnecting) is not a leak; one never closed is, even one. */
	u = samples(1800, flat, 16);
	for (size_t i = 0; i < 1800; i += 97)
		for (size_t k = i; k < MIN(i + 3, 1800); k++)
			u[k].fd = 17;
	csim_growth_judge(u, 1800, &g);
	ck_assert(!g.grew);
	ck_assert_int_eq(g.fd_first, 16);
	ck_assert_int_eq(g.fd_last, 16);
	for (size_t i = 1000; i < 1800; i++)
		u[i].fd = 17;
	csim_growth_judge(u, 1800, &g);
	ck_assert(g.grew); /* 16 to 17: 6 % */
	g_free(u);
	/* Shorter than 20 minutes: reported, not judged. */
	u = samples(1000, leaks, 12);
	csim_growth_judge(u, 1000, &g);
	ck_assert(!g.judged);
	ck_assert(!g.grew);
	ck_assert_int_eq(g.rss_first_kb, 10030);
	ck_assert_int_eq(g.rss_last_kb, 11029);
	g_free(u);
	csim_growth_judge(NULL, 0, &g);
	ck_assert(!g.judged);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gapcheck");
	TCase *tc = tcase_create("judge");
	tcase_add_test(tc, parse_overrun_lines);
	tcase_add_test(tc, overrun_explains_overlapping_declared_gap);
	tcase_add_test(tc, downtime_explains_a_restart_gap);
	tcase_add_test(tc, silent_holes_are_never_explained);
	tcase_add_test(tc, backwards_needs_a_restart);
	suite_add_tcase(s, tc);
	TCase *tg = tcase_create("growth");
	tcase_add_test(tg, growth_judged_on_medians_and_floors);
	suite_add_tcase(s, tg);
	return tu_check_run(s);
}
