/* test_syncd_scope.c — scoped advertisements ([rbs] advert_hops = 1,
 * issue 17) across real syncd processes on a line of seven nodes, each
 * hearing only its neighbours, checked against the simulator's truth:
 *   - every node reaches global through the path the others re-advertise
 *     (the far end's is seven conversions long), within 5 of the standard
 *     errors libsync states;
 *   - a node does not learn the far end's clocks (what the scope saves);
 *   - when the root dies the next one takes over and the far end follows
 *     it, through the news of the root that every node passes on.
 */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/check_run.h"
#include "tests/syncd_net_util.h"

#define N 7

static char *line(void)
{
	GString *sc = g_string_new("[world]\nseed = 17\nradio_range_m = 15\n");
	const double skew[N] = {40, -75, 20, 90, -30, 65, -85};
	for (int i = 0; i < N; i++)
		g_string_append_printf(sc,
				       "[node.%d]\nposition_m = %d,0,0\ncpu_skew_ppm = %g\ncpu_offset_ns = %d000000000\n"
				       "radio_jitter_ns = 1000\n",
				       i + 1, 10 * i, skew[i], 3 * (i + 1));
	return g_string_free(sc, FALSE);
}

/* Node `n`'s conversion to global, within 5 s.e.; returns its hops. */
static unsigned global_ok(csim_truth *t, int n, double deadline_s)
{
	double err, sd;
	unsigned hops;
	ck_assert_int_eq(tsn_wait_convert(t, n, n, -1, deadline_s, &err, &sd, &hops), 0);
	ck_assert_msg(fabs(err) <= 5 * sd, "node%d -> global: error %.0f ns, sd %.0f ns, %u hops", n, err, sd, hops);
	return hops;
}

START_TEST(test_scoped_line)
{
	char *sc = line();
	csim *s = tsn_start("scope", sc, "[rbs]\nadvert_hops = 1\n", FALSE);
	g_free(sc);
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	/* The far end: its path to global crosses the whole line. */
	ck_assert_uint_ge(global_ok(t, N, 40), N - 1);
	char *st = tsn_wait_rbs(s, N, "path to global 7 conversions", 20);
	g_free(st);
	for (int n = 2; n < N; n++)
		global_ok(t, n, 10);
	/* Neighbours convert directly; the root does not know the far end's
	 * clock at all (its neighbour re-advertises its own fits and its
	 * path, nothing from further away). */
	double err, sd;
	unsigned hops;
	char why[200];
	ck_assert_int_eq(tsn_wait_convert(t, 1, 1, 2, 10, &err, &sd, &hops), 0);
	ck_assert_msg(fabs(err) <= 5 * sd, "node1 -> node2: error %.0f ns, sd %.0f ns", err, sd);
	ck_assert_int_ne(tsn_convert(t, 1, 1, N, &err, &sd, &hops, why, sizeof why), 0);
	/* A middle node leaves out what came from beyond its scope. */
	st = tsn_rbs_status(s, 4);
	ck_assert_uint_gt(tsn_counter(st, "scoped_out"), 0);
	g_free(st);
	/* Everything measured in a while (all pairs each ticker can convert,
	 * and every node's global): within 5 s.e. */
	for (int i = 0; i < 15; i++) {
		csim_truth_sample(t, TRUE);
		g_usleep(200000);
	}
	ck_assert_uint_gt(csim_truth_all(t)->len, 0);
	ck_assert_uint_eq(csim_truth_outliers(t, 5.0), 0);

	/* The root dies: node 2 continues its timescale, and the far end
	 * hears of the new root and reaches its global. */
	ck_assert_int_eq(csim_node_stop(s, 1), 0);
	csim_truth_set_down(t, 1, TRUE);
	st = tsn_wait_rbs(s, 2, "continued: node1's timescale", 40);
	g_free(st);
	st = tsn_wait_rbs(s, N, "root: node2 switches", 40);
	g_free(st);
	ck_assert_uint_ge(global_ok(t, N, 40), N - 2);
	csim_truth_free(t);
	csim_stop(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncd_scope");
	TCase *tc = tcase_create("scope");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_scoped_line);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
