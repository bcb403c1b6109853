/* test_syncd_delay.c — a delay attack on one link (issue 15), across real
 * syncd processes on the simulated radio: from 8 s on, node 2 receives
 * node 5's packets 50 us late (genuine packets passed on late, which no
 * MAC can refuse).  Then
 *   - node 2 reports, for each of its pairs, that node 5's beacons
 *     disagree with the other senders' by about the delay, and that the
 *     link from node 5 into it is the delayed one;
 *   - node 1 reports the same of its pair with node 2 (from node 2's
 *     reports), the link into node 2; its other pairs agree;
 *   - the fits refuse the delayed observations as outliers (50 us against
 *     1 us of jitter), so every node still converts to global within 5
 *     of its stated standard errors.
 */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/check_run.h"
#include "tests/syncd_net_util.h"

static const char FIELD[] =
	"[world]\nseed = 31\nradio_range_m = 100\n"
	"[node.1]\nposition_m = 0,0,0\ncpu_skew_ppm = 12.5\nradio_jitter_ns = 1000\n"
	"[node.2]\nposition_m = 10,0,0\ncpu_skew_ppm = -48\nradio_jitter_ns = 1000\n"
	"radio_delay_from = 5\nradio_delay_us = 50\nradio_delay_after_s = 8\n"
	"[node.3]\nposition_m = 0,10,0\ncpu_skew_ppm = 77.2\nradio_jitter_ns = 1000\n"
	"[node.4]\nposition_m = 10,10,0\ncpu_skew_ppm = -21\nradio_jitter_ns = 1000\n"
	"[node.5]\nposition_m = 5,5,0\ncpu_skew_ppm = 3\nradio_jitter_ns = 1000\n";

/* The "paths:" line under node `peer` in a sync/rbs text (NULL: none). */
static char *paths_of(const char *st, int peer)
{
	char key[32];
	g_snprintf(key, sizeof key, "  node%d heard=", peer);
	const char *p = strstr(st, key);
	if (!p || !(p = strchr(p, '\n')) || strncmp(p + 1, "    paths: ", 11) != 0)
		return NULL;
	const char *e = strchr(p + 1, '\n');
	return g_strndup(p + 1, e ? (gsize)(e - p - 1) : strlen(p + 1));
}

/* Node n's pair with `peer` flags node 5's link into `into` ("node2" or
 * "us"), with an offset within [25, 60] us: the exponential mean reaches
 * the delay over a few of its memories (RBS_PATHS_MEMORY observations) and
 * the fit absorbs none of it (it refuses the delayed observations). */
static void flagged(const char *st, int n, int peer, const char *into)
{
	char *l = paths_of(st, peer);
	ck_assert_msg(l != NULL, "node%d: no paths line for node%d:\n%s", n, peer, st);
	fprintf(stderr, "node%d, pair with node%d: %s\n", n, peer, l);
	char want[64];
	g_snprintf(want, sizeof want, "link from node5 into %s delayed", into);
	ck_assert_msg(strstr(l, "DISAGREE: beacons of node5") && strstr(l, want), "node%d, pair with node%d: %s", n, peer, l);
	double off = fabs(tsn_number_after(l, "give "));
	ck_assert_msg(off >= 25 && off <= 60, "node%d, pair with node%d: offset %.3f us", n, peer, off);
	g_free(l);
}

START_TEST(test_delayed_link)
{
	csim *s = tsn_start("delay", FIELD, NULL, FALSE);
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	char *st = tsn_wait_rbs(s, 2, "DISAGREE: beacons of node5", 60);
	g_free(st);
	/* Let every pair of node 2 see it (each needs its own observations). */
	g_usleep(8 * G_USEC_PER_SEC);
	st = tsn_rbs_status(s, 2);
	for (int p = 1; p <= 4; p += (p == 1 ? 2 : 1))
		flagged(st, 2, p, "us");
	g_free(st);
	st = tsn_rbs_status(s, 1);
	flagged(st, 1, 2, "node2");
	for (int p = 3; p <= 4; p++) {
		char *l = paths_of(st, p);
		ck_assert_msg(l && strstr(l, "agree"), "node1, pair with node%d: %s", p, l ? l : "(none)");
		g_free(l);
	}
	g_free(st);
	for (int n = 1; n <= 5; n++) {
		double err, sd;
		unsigned hops;
		ck_assert_int_eq(tsn_wait_convert(t, n, n, -1, 10, &err, &sd, &hops), 0);
		ck_assert_msg(fabs(err) <= 5 * sd, "node%d -> global: error %.0f ns, sd %.0f ns", n, err, sd);
	}
	csim_truth_free(t);
	csim_stop(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncd_delay");
	TCase *tc = tcase_create("net");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_delayed_link);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
