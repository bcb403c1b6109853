/* test_syncd_partition.c — a field split in two and rejoined (issue 16 item
 * 6) across real syncd processes, checked against the simulator's truth:
 *   - while nodes {1, 2} and {3, 4} hear each other not at all, node 3,
 *     the lowest of its half, continues node 1's timescale, and node 4
 *     follows it;
 *   - on rejoin the lowest live node's timescale wins: nodes 1 and 2 never
 *     switch (their global does not jump), nodes 3 and 4 join node 1's and
 *     each says on sync/rbs by how much its global stepped;
 *   - that stated step is the true difference between the two halves'
 *     timescales at the rejoin (both exact lines on simulated clocks)
 *     within 5 of its stated standard errors, and within 5 of the drift
 *     node 3 stated for its continuation; afterwards every node converts
 *     to global within 5 s.e.;
 *   - after the rejoin a time inside the split converts across it (issue
 *     16 item 3: each pair's fit from before the split kept as history,
 *     bridged to the fit after it): node 3's and node 4's cpu to node 1's
 *     and to global, node 1's to node 3's, flagged bridged and within 5
 *     of their stated s.e. of the truth then.
 */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libsync/graph.h"
#include "tests/check_run.h"
#include "tests/syncd_net_util.h"

/* The partition's window, s of world time. */
#define SPLIT_S 12
#define JOIN_S 32

static const char FIELD[] =
	"[world]\nseed = 23\nradio_range_m = 100\npartition = 12-32: 1,2 | 3,4\n"
	"[node.1]\nposition_m = 0,0,0\ncpu_skew_ppm = 12.5\ncpu_offset_ns = 3141592653\nradio_jitter_ns = 1000\n"
	"[node.2]\nposition_m = 10,0,0\ncpu_skew_ppm = -48\ncpu_offset_ns = 27182818284\nradio_jitter_ns = 1000\n"
	"[node.3]\nposition_m = 0,10,0\ncpu_skew_ppm = 77.2\ncpu_offset_ns = 1414213562\nradio_jitter_ns = 1000\n"
	"[node.4]\nposition_m = 10,10,0\ncpu_skew_ppm = -21\ncpu_offset_ns = 1732050807\nradio_jitter_ns = 1000\n";

static int64_t host_raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Node n's conversion to global within 5 s.e. (deadline_s to reach it). */
static void global_ok(csim_truth *t, int n, double deadline_s, const char *when)
{
	double err, sd;
	unsigned hops;
	ck_assert_int_eq(tsn_wait_convert(t, n, n, -1, deadline_s, &err, &sd, &hops), 0);
	ck_assert_msg(fabs(err) <= 5 * sd, "%s: node%d -> global: error %.0f ns, sd %.0f ns", when, n, err, sd);
}

/* The step node n states on sync/rbs after joining node 1's timescale from
 * node 3's, checked against the truth's difference `diff_ns` (node 1's
 * global minus node 3's at the rejoin). */
static void joined_ok(csim *s, int n, double diff_ns)
{
	char *st = tsn_wait_rbs(s, n, "global here stepped", 30);
	const char *j = strstr(st, "joined: node1's timescale (was node3's)");
	ck_assert_msg(j != NULL, "node%d did not join node1's timescale from node3's:\n%s", n, st);
	double step = tsn_number_after(j, "stepped ") * 1e3, se = tsn_number_after(j, "(s.e. ") * 1e3;
	ck_assert_msg(isfinite(step) && isfinite(se) && se > 0, "no step in:\n%s", st);
	fprintf(stderr, "node%d joined node1's timescale: stated step %+.0f ns (s.e. %.0f ns); true difference %+.0f ns\n", n,
		step, se, diff_ns);
	ck_assert_msg(fabs(step - diff_ns) <= 5 * se, "node%d: stated step %+.0f ns, true %+.0f ns: %.1f of its s.e. %.0f ns", n,
		      step, diff_ns, (step - diff_ns) / se, se);
	/* The losing root stated how far its continuation may have drifted
	 * from node 1's timescale (syncd/continuity.h): the true difference
	 * lies within 5 of that. */
	if (n == 3) {
		const char *d = strstr(j, "stated drift of our continuation of node1's then ");
		ck_assert_msg(d != NULL, "node3 states no drift:\n%s", st);
		double drift = tsn_number_after(d, " then ") * 1e3;
		fprintf(stderr, "node3's stated drift at the switch: %.0f ns (the difference is %.1f of it)\n", drift,
			fabs(diff_ns) / drift);
		ck_assert_msg(isfinite(drift) && drift > 0 && fabs(diff_ns) <= 5 * drift,
			      "node3: true difference %+.0f ns, stated drift %.0f ns", diff_ns, drift);
	}
	g_free(st);
}

/* Node a's cpu at host time h, converted now with node via's ticker, to
 * node b's cpu (b < 0: global): bridged across the split and within 5
 * s.e. of the truth at h (deadline_s for the fits after the rejoin). */
static void past_ok(csim_truth *t, int via, int a, int b, int64_t h, double deadline_s)
{
	char why[200] = "";
	csim_meas m;
	int64_t end = g_get_monotonic_time() + (int64_t)(deadline_s * 1e6);
	int rc;
	while (((rc = csim_truth_convert_at(t, via, a, b, h, &m, why, sizeof why)) < 0 || !(m.flags & SYNC_GRAPH_BRIDGED)) &&
	       g_get_monotonic_time() < end)
		g_usleep(200000);
	ck_assert_msg(rc == 0, "node%d: node%d -> %d inside the split: %s", via, a, b, why);
	ck_assert_msg(m.flags & SYNC_GRAPH_BRIDGED, "node%d: node%d -> %d inside the split not bridged (flags %u)", via, a, b,
		      m.flags);
	fprintf(stderr, "node%d: node%d -> %s%d inside the split: error %+.0f ns, s.e. %.0f ns\n", via, a, b < 0 ? "global of node" : "node",
		b < 0 ? 1 : b, m.err_ns, m.sd_ns);
	ck_assert_msg(fabs(m.err_ns) <= 5 * m.sd_ns, "node%d: node%d -> %d inside the split: error %.0f ns, s.e. %.0f ns", via, a,
		      b, m.err_ns, m.sd_ns);
}

START_TEST(test_partition_rejoin)
{
	csim *s = tsn_start("partition", FIELD, NULL, FALSE);
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	int64_t epoch = csim_epoch_ns(s);
	for (int n = 2; n <= 4; n++)
		global_ok(t, n, 20, "before the partition");
	ck_assert_msg(host_raw_ns() < epoch + SPLIT_S * 1000000000LL, "the field took longer than %d s to converge",
		      SPLIT_S);
	/* Split: node 3 takes its half's root by continuing node 1's timescale. */
	char *st = tsn_wait_rbs(s, 3, "continued: node1's timescale", SPLIT_S + 20);
	g_free(st);
	ck_assert_msg(host_raw_ns() < epoch + JOIN_S * 1000000000LL, "node 3 took the root too late");
	/* The two halves' timescales as the truth has them: both exact lines
	 * (their roots' definitions on simulated clocks that do not wander),
	 * read while both roots define global; their difference at the rejoin. */
	int64_t hj = epoch + JOIN_S * 1000000000LL, g1, g3;
	double f1, f3;
	char why[200];
	ck_assert_msg(csim_truth_global_at(t, 1, hj, &g1, &f1, why, sizeof why) == 0, "%s", why);
	ck_assert_msg(csim_truth_global_at(t, 3, hj, &g3, &f3, why, sizeof why) == 0, "%s", why);
	double diff = (double)(g1 - g3) + (f1 - f3);
	/* Rejoin: node 1's timescale wins; the other half joins it. */
	joined_ok(s, 3, diff);
	joined_ok(s, 4, diff);
	/* The winning half never switched: node 1 was the root throughout,
	 * node 2 followed it from its start, before the split. */
	st = tsn_rbs_status(s, 1);
	ck_assert_msg(strstr(st, "root: node1 switches=0") != NULL, "node1's global switched:\n%s", st);
	g_free(st);
	st = tsn_rbs_status(s, 2);
	double ago = tsn_number_after(st, "last_switch="), since_split = (double)(host_raw_ns() - epoch) * 1e-9 - SPLIT_S;
	ck_assert_msg(strstr(st, "root: node1 switches=1 ") != NULL && ago > since_split,
		      "node2 switched after its start (%.1f s ago, the split was %.1f s ago):\n%s", ago, since_split, st);
	g_free(st);
	for (int n = 2; n <= 4; n++)
		global_ok(t, n, 20, "after the rejoin");
	/* A time in the middle of the split, converted across it. */
	int64_t hm = epoch + (SPLIT_S + JOIN_S) / 2 * 1000000000LL;
	past_ok(t, 3, 3, 1, hm, 20);
	past_ok(t, 3, 3, -1, hm, 5);
	past_ok(t, 4, 4, 1, hm, 5);
	past_ok(t, 4, 4, -1, hm, 5);
	past_ok(t, 1, 1, 3, hm, 5);
	csim_truth_free(t);
	csim_stop(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncd_partition");
	TCase *tc = tcase_create("partition");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_partition_rejoin);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
