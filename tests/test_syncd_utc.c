/* test_syncd_utc.c — global steered to UTC (issue 16 item 5) across real
 * syncd processes: a line of three nodes whose root's crystal is 50 ppm
 * fast and whose realtime clock a simulated GPS disciplines (stated error
 * 20 us: a GPS through a busy machine), checked against the simulator's
 * truth (host realtime is true UTC there):
 *   - the root says it steers, and the far node keeps the timescale's
 *     segments it noted from the advertisements;
 *   - every node's cpu -> utc (the far node's through two hops and the
 *     root's realtime fit) within 5 of its stated s.e., and the root's
 *     claim of global - UTC too;
 *   - global - UTC itself within 5 of the source's stated error, where a
 *     free-running global would have gained 50 ppm (2 ms in 40 s);
 *   - audio asked for by UTC (audioget --clock utc on the far node, a
 *     time of 2 s ago as an integer) is the audio of that instant: the
 *     frame audioget resolves is the truth's within 5 of its stated s.e.
 */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/check_run.h"
#include "tests/syncd_net_util.h"

static const char scenario[] = "[world]\nseed = 23\nradio_range_m = 15\n"
			       "[node.1]\nposition_m = 0,0,0\ncpu_skew_ppm = 50\ncpu_offset_ns = 3000000000\n"
			       "radio_jitter_ns = 1000\nutc_source = gps\nutc_error_us = 20\n"
			       "[node.2]\nposition_m = 10,0,0\ncpu_skew_ppm = -40\ncpu_offset_ns = 6000000000\n"
			       "radio_jitter_ns = 1000\n"
			       "[node.3]\nposition_m = 20,0,0\ncpu_skew_ppm = 25\ncpu_offset_ns = 9000000000\n"
			       "radio_jitter_ns = 1000\n";

/* Host realtime (true UTC in the simulation) minus host raw time, from a
 * raw-realtime-raw sandwich, ns. */
static int64_t realtime_minus_raw(void)
{
	struct timespec a, r, b;
	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC_RAW, &b);
	int64_t ra = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec, rb = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
	return (int64_t)r.tv_sec * 1000000000 + r.tv_nsec - (ra + (rb - ra) / 2);
}

/* audioget --clock utc on node n for [utc_ns, utc_ns + 100 ms): the first
 * frame it resolved and that frame's stated s.e. (frames). */
static void audioget_utc(csim *s, int n, int64_t utc_ns, int64_t *first, double *se_frames)
{
	char from[32], to[32], node[16], *out = g_build_filename(csim_run_dir(s), "utc.wav", NULL);
	g_snprintf(from, sizeof from, "%" G_GINT64_FORMAT, utc_ns);
	g_snprintf(to, sizeof to, "%" G_GINT64_FORMAT, utc_ns + 100000000);
	g_snprintf(node, sizeof node, "%d", n);
	char *argv[] = {CSIM_BIN_DIR "/audioget", "--clock", "utc", "--from", from, "--to", to, "-o", out, NULL};
	char **env = g_environ_setenv(g_get_environ(), "CHORUS_NODE", node, TRUE);
	env = g_environ_setenv(env, "CHORUS_RUN", csim_run_dir(s), TRUE);
	char *err_text = NULL;
	int st = 0;
	GError *e = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err_text, &st, &e), "audioget: %s",
		      e ? e->message : "?");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "audioget --clock utc failed:\n%s", err_text);
	*first = (int64_t)tsn_number_after(err_text, "first=");
	*se_frames = tsn_number_after(err_text, "se_frames=");
	ck_assert_msg(strstr(err_text, "clock=utc") && isfinite(*se_frames) && *se_frames > 0, "audioget said:\n%s",
		      err_text);
	fprintf(stderr, "audioget --clock utc on node%d: %s", n, err_text);
	g_free(err_text);
	g_strfreev(env);
	g_free(out);
}

START_TEST(test_global_steered_to_utc)
{
	csim *s = tsn_start("utc", scenario, NULL, TRUE);
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	const char *awhy = NULL;
	ck_assert_msg(csim_truth_set_audio(t, csim_epoch_ns(s), 16000, CSIM_BIN_DIR, &awhy) == 0, "%s", awhy);
	char *st = tsn_wait_rbs(s, 1, "timescale: steered to UTC", 40);
	g_free(st);
	/* Let the young loop settle (it decides every 2-4 s now). */
	g_usleep(30 * G_USEC_PER_SEC);
	st = tsn_wait_rbs(s, 3, "segments kept here", 20);
	const char *p = strstr(st, "timescale: node1's (");
	ck_assert_msg(p != NULL, "%s", st);
	unsigned kept = (unsigned)strtoul(p + strlen("timescale: node1's ("), NULL, 10);
	ck_assert_msg(kept >= 3, "node3 kept %u segments: %s", kept, st);
	g_free(st);
	for (int i = 0; i < 20; i++) {
		csim_truth_sample(t, TRUE);
		g_usleep(250000);
	}
	const GArray *all = csim_truth_all(t);
	unsigned utc_far = 0, n_utc = 0;
	for (guint i = 0; i < all->len; i++) {
		const csim_meas *m = &g_array_index(all, csim_meas, i);
		if (m->kind != CSIM_UTC)
			continue;
		n_utc++;
		utc_far += m->from == 3 && m->hops >= 2;
		ck_assert_msg(!csim_meas_beyond(m, 5.0), "node%d -> utc: error %.0f ns, s.e. %.0f ns, %u hops", m->from,
			      m->err_ns, m->sd_ns, m->hops);
	}
	ck_assert_uint_gt(n_utc, 20);
	ck_assert_uint_gt(utc_far, 5);
	ck_assert_uint_eq(csim_truth_outliers(t, 5.0), 0);
	const GArray *gu = csim_truth_gutc(t);
	ck_assert_uint_gt(gu->len, 10);
	for (guint i = 0; i < gu->len; i++) {
		const csim_gutc *d = &g_array_index(gu, csim_gutc, i);
		ck_assert_msg(fabs(d->diff_ns) <= 5 * 20000.0, "global - UTC %.0f ns at %.1f s (5 x 20 us stated)", d->diff_ns,
			      d->t_s);
		ck_assert_msg(d->sd_ns > 0 && fabs(d->claimed_ns - d->diff_ns) <= 5 * d->sd_ns,
			      "the root's claim %.0f ns of global - UTC %.0f ns, s.e. %.0f ns", d->claimed_ns, d->diff_ns,
			      d->sd_ns);
	}
	/* Audio by UTC on the far node (its path to utc crosses two hops). */
	int64_t off = realtime_minus_raw(), utc = (int64_t)g_get_real_time() * 1000 - 2000000000, first, truth;
	double se;
	audioget_utc(s, 3, utc, &first, &se);
	char why[200];
	ck_assert_msg(csim_truth_frame_at(t, 3, (double)(utc - off - csim_epoch_ns(s)) * 1e-9, &truth, why, sizeof why) == 0,
		      "%s", why);
	fprintf(stderr, "truth: frame %" G_GINT64_FORMAT " (audioget %+" G_GINT64_FORMAT " frames, stated s.e. %.3f)\n", truth,
		first - truth, se);
	/* Both are the first whole frame at or after the instant: one frame
	 * of rounding besides the conversion's error. */
	ck_assert_msg(llabs(first - truth) <= 5 * se + 1, "audioget --clock utc resolved frame %" G_GINT64_FORMAT ", the truth is %" G_GINT64_FORMAT " (stated s.e. %.3f frames)", first, truth, se);
	csim_truth_free(t);
	csim_stop(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncd_utc");
	TCase *tc = tcase_create("utc");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_global_steered_to_utc);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
