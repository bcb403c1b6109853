/* test_audiod_follow.c — ring followers (audio/<k>/follow, audiod/follow.h
 * and audiod/follower.h) against the real audiod on the simulated card:
 * the frames are the world's bit for bit and in order; a follower that
 * does not read loses frames, counted, while capture goes on untouched;
 * followers beyond the most are refused with the reason; a follower that
 * leaves is removed; audiod going away is -EPIPE, and what was mapped
 * stays readable.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "audiod/follower.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"

#define NODE 2
#define RATE 48000

static ring_follower *open_follower(int64_t from)
{
	GError *e = NULL;
	ring_follower *f = NULL;
	int rc = ring_follow_open("audio/0/follow", from, &f, &e);
	ck_assert_msg(rc == 0, "ring_follow_open: %s", e ? e->message : "?");
	return f;
}

/* Followers now, from audio/0/status. */
static int64_t followers_now(void)
{
	char *st = ah_status();
	const char *p = strstr(st, "\nfollowers now=");
	ck_assert_msg(p, "no followers line:\n%s", st);
	int64_t n = ah_field(p, "now");
	g_free(st);
	return n;
}

/* Read `want` frames through wait/read; check they continue from *next and
 * match the world.  Returns the frames lost on the way. */
static uint64_t follow_frames(const ah_node *h, ring_follower *f, int64_t *next, int64_t want)
{
	enum { MAXF = 2048 };
	int16_t buf[MAXF * 8];
	uint64_t lost_all = 0;
	int64_t got = 0;
	ck_assert_uint_le(h->channels, 8);
	while (got < want) {
		int rc = ring_follow_wait(f, 5000);
		ck_assert_msg(rc == 1, "ring_follow_wait: %d", rc);
		long n;
		int64_t first;
		uint64_t lost;
		while ((n = ring_follow_read(f, buf, MAXF, &first, &lost)) > 0) {
			lost_all += lost;
			ck_assert_msg(*next == INT64_MIN || first == *next + (int64_t)lost, "frames from %lld, expected %lld + %llu lost",
				      (long long)first, (long long)*next, (unsigned long long)lost);
			long bad = ah_mismatch(h, buf, (size_t)n, h->channels, NULL, h->f0 + first);
			ck_assert_msg(bad < 0, "frame %lld differs from the world", (long long)(first + bad));
			*next = first + n;
			got += n;
		}
		ck_assert_int_eq(n, 0);
	}
	return lost_all;
}

START_TEST(a_follower_gets_the_worlds_frames_in_order)
{
	ah_node h;
	ah_start(&h, NODE, "follow", NULL);
	ah_find_f0(&h);
	ring_follower *f = open_follower(RING_FOLLOW_FROM_NEXT);
	int64_t next = INT64_MIN;
	ck_assert_uint_eq(follow_frames(&h, f, &next, RATE), 0);
	ck_assert_int_eq(followers_now(), 1);
	/* The gap table says nothing was lost by audiod either. */
	ck_assert(!audio_ring_has_gap(ring_follow_ring(f), next - RATE, RATE));
	ring_follow_free(f);
	/* Its hangup removes it. */
	int64_t now = 1;
	for (int i = 0; i < 200 && (now = followers_now()) != 0; i++)
		g_usleep(10000);
	ck_assert_int_eq(now, 0);
	char *st = ah_status();
	ck_assert_int_eq(ah_field(strstr(st, "\nfollowers "), "served"), 1);
	ck_assert_int_eq(ah_field(strstr(st, "\nfollowers "), "failed"), 0);
	g_free(st);
	ah_stop(&h);
}
END_TEST

/* A ring of one second: a follower that sleeps three loses what was
 * overwritten, counted exactly by the cursor, and capture never noticed. */
START_TEST(a_slow_follower_loses_frames_and_capture_goes_on)
{
	ah_node h;
	ah_opts o = {.audiod_conf = "[device.0]\nperiods = 64\nring_seconds = 1\n"};
	ah_start(&h, NODE, "follow-slow", &o);
	ah_find_f0(&h);
	ring_follower *f = open_follower(RING_FOLLOW_FROM_NEXT);
	int64_t start = ring_follow_cursor(f);
	g_usleep(3 * G_USEC_PER_SEC);
	enum { MAXF = 2048 };
	int16_t *buf = g_new(int16_t, MAXF * h.channels);
	int64_t first, oldest, end;
	uint64_t lost;
	long n = ring_follow_read(f, buf, MAXF, &first, &lost);
	ck_assert_int_gt(n, 0);
	audio_ring_span(ring_follow_ring(f), &oldest, &end);
	/* What it skipped is exactly from where it stood to where it restarted. */
	ck_assert_int_eq((int64_t)lost, first - start);
	ck_assert_int_ge((int64_t)lost, 3 * RATE / 2); /* 3 s slept, 1 s kept */
	ck_assert_msg(ah_mismatch(&h, buf, (size_t)n, h.channels, NULL, h.f0 + first) < 0, "frames after the loss differ");
	/* Catching up continues without a further loss. */
	int64_t next = first + n;
	follow_frames(&h, f, &next, RATE / 2);
	/* An index from before the ring: starts at the oldest, the rest lost. */
	ring_follower *g = open_follower(0);
	n = ring_follow_read(g, buf, MAXF, &first, &lost);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq((int64_t)lost, first);
	ck_assert_int_ge(first, RATE);
	char *st = ah_status();
	ck_assert_int_eq(ah_field(strstr(st, "\nxruns "), "count"), 0);
	g_free(st);
	g_free(buf);
	ring_follow_free(g);
	ring_follow_free(f);
	ah_stop(&h);
}
END_TEST

START_TEST(followers_beyond_the_most_are_refused)
{
	ah_node h;
	ah_start(&h, NODE, "follow-many", NULL);
	enum { MOST = 64 };
	ring_follower *fs[MOST];
	for (int i = 0; i < MOST; i++)
		fs[i] = open_follower(RING_FOLLOW_FROM_NEXT);
	GError *e = NULL;
	ring_follower *extra = NULL;
	int rc = ring_follow_open("audio/0/follow", RING_FOLLOW_FROM_NEXT, &extra, &e);
	ck_assert_int_eq(rc, -EBUSY);
	ck_assert_msg(e && strstr(e->message, "64 followers (the most)"), "%s", e ? e->message : "no error");
	g_error_free(e);
	/* All of them are woken. */
	for (int i = 0; i < MOST; i++)
		ck_assert_int_eq(ring_follow_wait(fs[i], 5000), 1);
	char *st = ah_status();
	const char *line = strstr(st, "\nfollowers ");
	ck_assert_int_eq(ah_field(line, "now"), MOST);
	ck_assert_int_eq(ah_field(line, "refused"), 1);
	g_free(st);
	/* One leaves: one more is taken. */
	ring_follow_free(fs[0]);
	for (int i = 0; i < 200 && followers_now() == MOST; i++)
		g_usleep(10000);
	fs[0] = open_follower(RING_FOLLOW_FROM_NEXT);
	for (int i = 0; i < MOST; i++)
		ring_follow_free(fs[i]);
	ah_stop(&h);
}
END_TEST

START_TEST(audiod_going_away_is_epipe_and_the_mapping_stays)
{
	ah_node h;
	ah_start(&h, NODE, "follow-restart", NULL);
	ah_find_f0(&h);
	ring_follower *f = open_follower(RING_FOLLOW_FROM_NEXT);
	int64_t next = INT64_MIN;
	follow_frames(&h, f, &next, RATE / 4);
	ah_restart_audiod(&h);
	int rc;
	int64_t t0 = ah_host_now();
	enum { MAXF = 2048 };
	int16_t *buf = g_new(int16_t, MAXF * h.channels);
	int64_t first;
	uint64_t lost;
	/* Whatever the old audiod committed last is still read, then EPIPE. */
	while ((rc = ring_follow_wait(f, 5000)) == 1)
		while (ring_follow_read(f, buf, MAXF, &first, &lost) > 0)
			ck_assert_msg(ah_host_now() - t0 < 20 * (int64_t)1000000000, "never told audiod went away");
	ck_assert_int_eq(rc, -EPIPE);
	/* The old ring's frames are still mapped and intact. */
	ck_assert_int_eq(audio_ring_read(ring_follow_ring(f), next - MAXF, MAXF, buf, NULL), 0);
	ck_assert_msg(ah_mismatch(&h, buf, MAXF, h.channels, NULL, h.f0 + next - MAXF) < 0, "old frames changed");
	ring_follow_free(f);
	g_free(buf);
	ah_wait_frames(RATE / 10);
	ring_follower *g = NULL;
	GError *e = NULL;
	for (int i = 0; i < 500 && ring_follow_open("audio/0/follow", RING_FOLLOW_FROM_NEXT, &g, &e) < 0; i++) {
		g_clear_error(&e);
		g_usleep(10000);
	}
	ck_assert_msg(g, "the restarted audiod takes no follower");
	ck_assert_int_eq(ring_follow_wait(g, 5000), 1);
	ring_follow_free(g);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audiod_follow");
	TCase *tc = tcase_create("follow");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_follower_gets_the_worlds_frames_in_order);
	tcase_add_test(tc, a_slow_follower_loses_frames_and_capture_goes_on);
	tcase_add_test(tc, followers_beyond_the_most_are_refused);
	tcase_add_test(tc, audiod_going_away_is_epipe_and_the_mapping_stays);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
