/* test_rbs_replay.c — replay windows (libdev/replay.h) and boot numbers
 * (libdev/bootid.h): every packet sent once is taken once, in any order
 * within the window; every second copy, every copy from before the window
 * and every packet of an earlier boot is refused; the table's bound holds. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "syncd/allow.h"
#include "libdev/bootid.h"
#include "libdev/replay.h"
#include "tests/check_run.h"

START_TEST(each_packet_once)
{
	dev_replay *w = dev_replay_new(8);
	/* Sequence numbers that wrap, arriving shuffled within 16 of each
	 * other; each is replayed at once and again later. */
	enum { N = 2000 };
	uint32_t base = 0xffffff00u;
	uint32_t order[N];
	for (uint32_t i = 0; i < N; i++)
		order[i] = i;
	GRand *r = g_rand_new_with_seed(5);
	for (uint32_t i = 0; i + 16 <= N; i += 16)
		for (int k = 15; k > 0; k--) {
			int j = g_rand_int_range(r, 0, k + 1);
			uint32_t t = order[i + k];
			order[i + k] = order[i + j];
			order[i + j] = t;
		}
	int ok = 0, seen = 0;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t seq = base + order[i];
		ok += dev_replay_check(w, 7, 1, 100, seq) == REPLAY_OK;
		seen += dev_replay_check(w, 7, 1, 100, seq) == REPLAY_SEEN;
		if (i >= 40) /* one sent 40 packets ago: still in the window, seen */
			seen += dev_replay_check(w, 7, 1, 100, base + order[i - 40]) == REPLAY_SEEN;
	}
	ck_assert_int_eq(ok, N);
	ck_assert_int_eq(seen, N + N - 40);
	/* Beyond the window: old.  Another type has its own window. */
	ck_assert_int_eq(dev_replay_check(w, 7, 1, 100, base + 5), REPLAY_OLD);
	ck_assert_int_eq(dev_replay_check(w, 7, 2, 100, base + 5), REPLAY_OK);
	/* A restart (larger boot) starts afresh; the old boot is then stale. */
	ck_assert_int_eq(dev_replay_check(w, 7, 1, 101, base + 5), REPLAY_OK);
	ck_assert_int_eq(dev_replay_check(w, 7, 1, 100, base + N + 10), REPLAY_STALE_BOOT);
	ck_assert_int_eq(dev_replay_check(w, 7, 2, 100, base + 6), REPLAY_STALE_BOOT);
	g_rand_free(r);
	dev_replay_free(w);
}
END_TEST

START_TEST(bounded)
{
	dev_replay *w = dev_replay_new(3);
	for (uint32_t s = 1; s <= 3; s++)
		ck_assert_int_eq(dev_replay_check(w, s, 1, 1, 0), REPLAY_OK);
	ck_assert_int_eq(dev_replay_check(w, 4, 1, 1, 0), REPLAY_FULL);
	ck_assert_int_eq(dev_replay_check(w, 2, 1, 1, 1), REPLAY_OK); /* known ones still pass */
	ck_assert_uint_eq(dev_replay_senders(w), 3);
	ck_assert_str_eq(dev_replay_name(REPLAY_STALE_BOOT), "stale_boot");
	dev_replay_free(w);
}
END_TEST

START_TEST(boot_numbers_increase)
{
	/* Pure rule: the clock, unless the saved number is not below it. */
	ck_assert(dev_bootid_pick(1000, 0, 0) == 1000);
	ck_assert(dev_bootid_pick(1000, 1, 10) == 1000);
	ck_assert(dev_bootid_pick(1000, 1, 5000) == 5001); /* clock set back */
	/* Through the file: three starts in a row increase even within one ns
	 * tick, and the file holds the last. */
	char *dir = g_dir_make_tmp("chorus-boot.XXXXXX", NULL);
	ck_assert_ptr_nonnull(dir);
	char *path = g_build_filename(dir, "syncd.boot", NULL), why[256];
	uint64_t a = dev_bootid_next(path, why, sizeof why);
	ck_assert_str_eq(why, "");
	uint64_t b = dev_bootid_next(path, why, sizeof why), c = dev_bootid_next(path, why, sizeof why);
	ck_assert(a < b && b < c);
	/* A saved number far in the future (the clock went back) wins. */
	ck_assert(g_file_set_contents(path, "9000000000000000000\n", -1, NULL));
	ck_assert(dev_bootid_next(path, why, sizeof why) == 9000000000000000001ULL);
	/* Garbage: the clock alone, and it says so. */
	ck_assert(g_file_set_contents(path, "banana", -1, NULL));
	uint64_t d = dev_bootid_next(path, why, sizeof why);
	ck_assert_msg(g_strstr_len(why, -1, "not a number") != NULL, "%s", why);
	ck_assert(d > c);
	g_unlink(path);
	g_rmdir(dir);
	g_free(path);
	g_free(dir);
}
END_TEST

START_TEST(peers_list)
{
	syncd_allow *a = NULL;
	char why[160];
	ck_assert_int_eq(syncd_allow_parse("", &a, why, sizeof why), 0);
	ck_assert_ptr_null(a); /* empty: any */
	ck_assert(syncd_allow_has(NULL, 12345));
	ck_assert_int_eq(syncd_allow_parse("1-8, 12 4294967294", &a, why, sizeof why), 0);
	ck_assert(syncd_allow_has(a, 1) && syncd_allow_has(a, 8) && syncd_allow_has(a, 12) &&
		  syncd_allow_has(a, 4294967294u));
	ck_assert(!syncd_allow_has(a, 0) && !syncd_allow_has(a, 9) && !syncd_allow_has(a, 13));
	char *f = syncd_allow_format(a);
	ck_assert_str_eq(f, "1-8,12,4294967294");
	g_free(f);
	syncd_allow_free(a);
	const char *bad[] = {"x", "1-", "8-1", "4294967295", "-3", "1.5", "0x10"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		ck_assert_msg(syncd_allow_parse(bad[i], &a, why, sizeof why) == -EINVAL, "\"%s\" accepted", bad[i]);
		ck_assert_ptr_null(a);
		ck_assert_msg(strstr(why, bad[i]) != NULL, "%s", why);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rbs_replay");
	TCase *tc = tcase_create("replay");
	tcase_add_test(tc, each_packet_once);
	tcase_add_test(tc, bounded);
	tcase_add_test(tc, boot_numbers_increase);
	tcase_add_test(tc, peers_list);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
