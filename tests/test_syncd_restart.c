/* test_syncd_restart.c — syncd keeps its pairs' pieces of history across
 * its restart (syncd/history_file.h; docs/clocks.md "Across a restart of
 * syncd"), end to end through its devices as its clients see it: the real
 * syncd, fed with chorus-ctl, read with libsync's ticker reader and
 * synctool.
 *
 * A syncd whose cpu -> realtime pair and a fed audio0 -> cpu pair have
 * kept pieces is stopped (SIGTERM) and started again in the same run
 * directory: its ticker then publishes the pieces it published before,
 * bit for bit (q2 included: neither pair's line is old enough to measure
 * it, so each piece goes with the q2 it was saved with), the realtime
 * pair's at once and the audio pair's as soon as it is fed again, and
 * sync/clocks says what was loaded.  A corrupt file, another boot's and
 * another node's are not loaded (sync/clocks says why, the ticker has no
 * piece of theirs) and are replaced at the next stop; `history_file =
 * none` writes nothing; a file that cannot be written is logged with its
 * path and the error, and counted.
 */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsync/ticker_read.h"
#include "syncd/history_store.h"
#include "tests/check_run.h"
#include "tests/run_prog.h"
#include "tests/syncd_run.h"

#define NODE 4
#define NS_PER_FRAME "20833.333333333332"

/* Fast enough that pieces are kept within seconds: the realtime pair
 * sampled at 20 Hz, windows of 8, a piece every second of data. */
static const char CONF[] = "[rbs]\nenable = false\n[realtime]\ninterval_s = 0.05\n[fit]\nwindow = 8\nhistory_every_s = 1\n";

/* Feed node4:audio0 -> node4:cpu frames [f0, f0 + 8 * 4800) as audiod
 * does (an observation every 4800 frames, a card 30 ppm fast, 2-5 us
 * late), then read sync/clocks so that syncd solves it (and keeps a
 * piece when one is due). */
static void feed_batch(int64_t f0)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup(BINDIR "/chorus-ctl"));
	g_ptr_array_add(argv, g_strdup("sync/command"));
	g_ptr_array_add(argv, g_strdup("obs"));
	g_ptr_array_add(argv, g_strdup("node4:audio0"));
	g_ptr_array_add(argv, g_strdup("node4:cpu"));
	for (int i = 0; i < 8; i++) {
		int64_t f = f0 + 4800 * i;
		int64_t cpu = 5000000000000LL + (int64_t)((double)f * 20833.333333333332 * (1 + 30e-6)) + 2000 + (i * 397) % 3000;
		g_ptr_array_add(argv, g_strdup_printf("%" G_GINT64_FORMAT, f));
		g_ptr_array_add(argv, g_strdup_printf("%" G_GINT64_FORMAT, cpu));
	}
	g_ptr_array_add(argv, NULL);
	int st;
	ck_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL, &st,
			       NULL));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "obs refused");
	g_ptr_array_unref(argv);
	g_free(clocks());
}

static void pair_audio(void)
{
	char *o = NULL;
	ck_assert_int_eq(run(&o, "chorus-ctl", "sync/command", "pair", "node4:audio0", "node4:cpu", "lower", NS_PER_FRAME,
			     NULL),
			 0);
	g_free(o);
}

/* Every piece of want is in got, bit for bit, in order. */
static void assert_contains(const GArray *want, const GArray *got, const char *what)
{
	ck_assert_msg(got->len >= want->len, "%s: %u pieces after the restart, %u before", what, got->len, want->len);
	for (guint i = 0; i < want->len; i++)
		ck_assert_msg(memcmp(&g_array_index(want, sync_conv, i), &g_array_index(got, sync_conv, i),
				     sizeof(sync_conv)) == 0,
			      "%s: piece %u of %u differs after the restart", what, i, want->len);
}

START_TEST(restart_publishes_the_pieces_it_had)
{
	enter("pieces");
	const sync_clock_id a0 = sync_clock_audio(NODE, 0), cpu = sync_clock_cpu(NODE), rt = sync_clock_realtime(NODE);
	GPid pid = start_syncd(CONF);
	pair_audio();
	int64_t f = 0;
	for (int b = 0; b < 10; b++, f += 8 * 4800)
		feed_batch(f);
	/* Both pairs have published pieces (bounded: 20 s). */
	GArray *rt1 = NULL, *a1 = NULL;
	for (int i = 0;; i++) {
		if (rt1)
			g_array_free(rt1, TRUE);
		rt1 = pieces(cpu, rt);
		if (rt1->len >= 3)
			break;
		ck_assert_msg(i < 200, "cpu -> realtime kept %u pieces in 20 s", rt1->len);
		g_usleep(100000);
	}
	a1 = pieces(a0, cpu);
	ck_assert_msg(a1->len >= 3, "audio0 -> cpu: %u pieces", a1->len);
	char *c1 = clocks();
	ck_assert_msg(strstr(c1, "loaded=0 (no file yet)"), "%s", c1);
	g_free(c1);
	stop_syncd(pid);
	char *path = file_path();
	ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "%s was not written", path);

	pid = start_syncd(CONF);
	/* cpu -> realtime is syncd's own: its pieces are back at once. */
	GArray *rt2 = pieces(cpu, rt);
	assert_contains(rt1, rt2, "cpu -> realtime");
	/* audio0 -> cpu: kept for the pair until it is fed again. */
	GArray *a2 = pieces(a0, cpu);
	ck_assert_uint_eq(a2->len, 0);
	g_array_free(a2, TRUE);
	pair_audio();
	for (int b = 0; b < 2; b++, f += 8 * 4800)
		feed_batch(f + 10 * 48000); /* audiod numbered on; 10 s unfed */
	a2 = pieces(a0, cpu);
	assert_contains(a1, a2, "audio0 -> cpu");
	/* sync/clocks says what came back. */
	char *c2 = clocks();
	char *want = g_strdup_printf("history_file %s saved=", path);
	ck_assert_msg(strstr(c2, want) && strstr(c2, "restored)") && !strstr(c2, "loaded=0 "), "%s", c2);
	ck_assert_msg(strstr(c2, "from before syncd restarted"), "%s", c2);
	g_free(want);
	g_free(c2);
	stop_syncd(pid);
	g_array_free(a2, TRUE);
	g_array_free(rt2, TRUE);
	g_array_free(a1, TRUE);
	g_array_free(rt1, TRUE);
	g_free(path);
}
END_TEST

/* The owner line syncd writes outside simulation. */
static char *this_boot(void)
{
	char *boot = NULL;
	ck_assert(g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, NULL));
	g_strstrip(boot);
	char *o = g_strdup_printf("boot=%s", boot);
	g_free(boot);
	return o;
}

/* The realtime of the file's pieces: 2023, never syncd's now. */
#define FILE_Y0 1700000000000000000LL

/* A file of three cpu -> realtime pieces near cpu time 1000 s, written
 * as if by `owner` on node `node`. */
static void write_file(const char *owner, uint32_t node)
{
	history_store *s = history_store_new(owner, node);
	sync_conv p[3];
	for (int i = 0; i < 3; i++)
		p[i] = (sync_conv){.x0 = 1000000000000LL + i * 300000000000LL,
				   .y0 = FILE_Y0,
				   .slope = 1.0,
				   .var_c = 1,
				   .var_s = 1e-24,
				   .rms = 1,
				   .wander = 1e-20,
				   .xmin = 1000000000000LL + i * 300000000000LL - 30000000000LL,
				   .xmax = 1000000000000LL + i * 300000000000LL + 30000000000LL,
				   .updated_ns = 1000000000000LL + i * 300000000000LL + 30000000000LL,
				   .n = 64,
				   .flags = SYNC_CONV_PIECE};
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_cpu(node), sync_clock_realtime(node), SYNC_FIT_MEAN, 1.0,
			  1.0, p, 3);
	char why[200];
	GBytes *b = history_store_pack(s, why, sizeof why);
	ck_assert_msg(b, "%s", why);
	char *path = file_path();
	gsize len;
	const char *d = g_bytes_get_data(b, &len);
	ck_assert(g_file_set_contents(path, d, (gssize)len, NULL));
	g_free(path);
	g_bytes_unref(b);
	history_store_free(s);
}

/* A file that is not loaded: sync/clocks says why, no piece of it on the
 * ticker, and the next stop writes a good one. */
static void assert_not_loaded(const char *reason)
{
	GPid pid = start_syncd(CONF);
	char *c = clocks();
	ck_assert_msg(strstr(c, "loaded=0 (not loaded: ") && strstr(c, reason), "%s", c);
	g_free(c);
	GArray *p = pieces(sync_clock_cpu(NODE), sync_clock_realtime(NODE));
	for (guint i = 0; i < p->len; i++) /* syncd's own only, never the file's */
		ck_assert(g_array_index(p, sync_conv, i).y0 != FILE_Y0);
	g_array_free(p, TRUE);
	stop_syncd(pid);
	char *path = file_path(), *data = NULL, *owner = this_boot(), why[300] = "";
	gsize len;
	ck_assert(g_file_get_contents(path, &data, &len, NULL));
	history_store *s = NULL;
	ck_assert_msg(history_store_unpack(data, len, owner, NODE, &s, why, sizeof why) == 0, "%s", why);
	ck_assert_uint_gt(history_store_n_pieces(s), 0); /* the pair's current fit at least */
	history_store_free(s);
	g_free(owner);
	g_free(data);
	g_free(path);
}

START_TEST(corrupt_file_starts_empty)
{
	enter("corrupt");
	char *path = file_path();
	ck_assert(g_file_set_contents(path, "chorus-syncd-history, but not really\n", -1, NULL));
	assert_not_loaded("not a syncd history file");
	/* Truncated: the first half of a good file. */
	char *data;
	gsize len;
	ck_assert(g_file_get_contents(path, &data, &len, NULL));
	ck_assert(g_file_set_contents(path, data, (gssize)len / 2, NULL));
	g_free(data);
	assert_not_loaded("truncated");
	g_free(path);
}
END_TEST

START_TEST(other_boot_or_node_discarded)
{
	enter("boot");
	write_file("boot=00000000-1111-4222-8333-444444444444", NODE);
	assert_not_loaded("written in another boot");
	char *owner = this_boot();
	write_file(owner, NODE + 1);
	assert_not_loaded("written by node5, this is node4");
	/* The same file of this node and boot is loaded: its pieces, too old
	 * for this cpu clock's [fit] history_s or not, are judged by age. */
	write_file(owner, NODE);
	GPid pid = start_syncd(CONF);
	char *c = clocks();
	ck_assert_msg(strstr(c, "(3 pieces of 1 pairs read"), "%s", c);
	g_free(c);
	stop_syncd(pid);
	g_free(owner);
}
END_TEST

START_TEST(none_keeps_nothing)
{
	enter("none");
	char *conf = g_strdup_printf("%s[syncd]\nhistory_file = none\n", CONF);
	GPid pid = start_syncd(conf);
	char *c = clocks();
	ck_assert_msg(strstr(c, "history_file none (pieces of history not kept across restarts: [syncd] history_file = none)"),
		      "%s", c);
	g_free(c);
	stop_syncd(pid);
	char *path = file_path();
	ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
	g_free(path);
	g_free(conf);
}
END_TEST

/* A file that cannot be written: the failure is logged with the file and
 * the system's error, and counted; syncd goes on and stops cleanly. */
START_TEST(write_failure_logged)
{
	enter("fail");
	char *conf = g_strdup_printf("%s[syncd]\nhistory_file = /proc/chorus-test-syncd.history\n", CONF);
	GPid pid = start_syncd(conf);
	char *c = clocks();
	ck_assert_msg(strstr(c, "history_file /proc/chorus-test-syncd.history saved=0 failed="), "%s", c);
	g_free(c);
	/* Pieces to save (the realtime pair's), then the stop's save. */
	for (int i = 0;; i++) {
		GArray *p = pieces(sync_clock_cpu(NODE), sync_clock_realtime(NODE));
		guint n = p->len;
		g_array_free(p, TRUE);
		if (n)
			break;
		ck_assert_msg(i < 200, "no piece in 20 s");
		g_usleep(100000);
	}
	stop_syncd(pid);
	char *text = syncd_log();
	ck_assert_msg(strstr(text, "cannot save the pieces of history (") && strstr(text, " failures so far): ") &&
			      strstr(text, "/proc/chorus-test-syncd.history"),
		      "%s", text);
	g_free(text);
	g_free(conf);
}
END_TEST

/* The writes made so far ("saved=N" on sync/clocks). */
static long saved_count(void)
{
	char *c = clocks();
	const char *at = strstr(c, " saved=");
	long n = at ? strtol(at + 7, NULL, 10) : -1;
	g_free(c);
	ck_assert_msg(n >= 0, "no saved= on sync/clocks");
	return n;
}

/* [syncd] history_write_s: with pieces changing every second (the
 * realtime pair's, history_every_s = 1) the file is written again and
 * again, never twice within the interval: over E seconds at most
 * E / interval + 1 writes (the first tick writes at once). */
START_TEST(writes_at_most_every_history_write_s)
{
	enter("interval");
	char *conf = g_strdup_printf("%s[syncd]\nhistory_write_s = 2\n", CONF);
	GPid pid = start_syncd(conf);
	gint64 t0 = g_get_monotonic_time();
	long n = 0;
	for (int i = 0; (n = saved_count()) < 3; i++) {
		ck_assert_msg(i < 300, "%ld writes in 30 s at history_write_s = 2", n);
		g_usleep(100000);
	}
	double elapsed_s = (double)(g_get_monotonic_time() - t0) * 1e-6;
	ck_assert_msg(n <= (long)(elapsed_s / 2.0) + 1, "%ld writes in %.1f s at history_write_s = 2", n, elapsed_s);
	stop_syncd(pid);
	g_free(conf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncd_restart");
	TCase *tc = tcase_create("restart");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, restart_publishes_the_pieces_it_had);
	tcase_add_test(tc, corrupt_file_starts_empty);
	tcase_add_test(tc, other_boot_or_node_discarded);
	tcase_add_test(tc, none_keeps_nothing);
	tcase_add_test(tc, write_failure_logged);
	tcase_add_test(tc, writes_at_most_every_history_write_s);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
