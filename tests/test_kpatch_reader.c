/* test_kpatch_reader — the kpatch reader against a side channel: a FIFO in
 * $CHORUS_RUN that the test writes records into, exactly as the simulator's
 * ALSA plugin does.  Checks validation, resynchronization, partial records,
 * seq-gap and overflow accounting, and that no record hides behind poll;
 * and where a PCM's side channel is by default (kpatch/sidechan_path.h).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpatch/reader.h"
#include "kpatch/sidechan_path.h"
#include "tests/check_run.h"

#define REC ((size_t)sizeof(struct chorus_kpatch_record))

struct chan {
	char path[512];
	struct kpatch_reader *r;
	int wfd;
};

/* Makes a FIFO side channel with a reader on it and a writer fd. */
static void chan_open(struct chan *c, const char *name)
{
	const char *run = getenv("CHORUS_RUN");

	snprintf(c->path, sizeof(c->path), "%s/%s.%d", run ? run : "/tmp", name,
		 (int)getpid());
	unlink(c->path);
	ck_assert_int_eq(mkfifo(c->path, 0600), 0);
	ck_assert_int_eq(kpatch_reader_open_path(c->path, &c->r), 0);
	c->wfd = open(c->path, O_WRONLY | O_NONBLOCK);
	ck_assert_int_ge(c->wfd, 0);
}

static void chan_close(struct chan *c)
{
	close(c->wfd);
	kpatch_reader_free(c->r);
	unlink(c->path);
}

static void put(struct chan *c, const void *buf, size_t len)
{
	ck_assert_int_eq(write(c->wfd, buf, len), (ssize_t)len);
}

static struct chorus_kpatch_record mk(uint64_t seq, uint32_t dropped)
{
	struct chorus_kpatch_record r;

	kpatch_record_init(&r);
	r.seq = seq;
	r.time_ns = 1000000000LL + (int64_t)seq * 10000000LL;
	r.hw_ptr = (seq + 1) * 480;
	r.dropped = dropped;
	r.card = 3;
	r.flags = CHORUS_KPATCH_F_SIM | CHORUS_KPATCH_F_CAPTURE;
	r.period_frames = 480;
	return r;
}

/* Reads everything waiting; returns how many valid records. */
static int read_all(struct chan *c, struct chorus_kpatch_record *out, int max)
{
	int n = 0, got;

	while ((got = kpatch_reader_read(c->r, out + n, max - n)) > 0)
		n += got;
	ck_assert_int_ge(got, 0);
	return n;
}

START_TEST(test_roundtrip)
{
	struct chan c;
	struct chorus_kpatch_record in[10], out[16];
	struct kpatch_reader_stats st;
	int i;

	chan_open(&c, "rt");
	ck_assert_int_eq(kpatch_reader_read(c.r, out, 16), 0); /* nothing yet */
	for (i = 0; i < 10; i++)
		in[i] = mk(i, 0);
	put(&c, in, sizeof(in));
	ck_assert_int_eq(read_all(&c, out, 16), 10);
	ck_assert_mem_eq(in, out, sizeof(in));
	kpatch_reader_get_stats(c.r, &st);
	ck_assert_uint_eq(st.seq.records, 10);
	ck_assert_uint_eq(st.seq.seq_gaps + st.seq.overflows + st.malformed, 0);
	ck_assert_ptr_null(kpatch_reader_last_problem(c.r));
	chan_close(&c);
}
END_TEST

START_TEST(test_seq_gap_and_overflow)
{
	struct chan c;
	struct chorus_kpatch_record in[6], out[8];
	struct kpatch_reader_stats st;

	chan_open(&c, "gap");
	/* 0,1,2 then 5,6 (a gap of 2, producer silent about it: lost in
	 * transit), then 10 with dropped 3 (an overflow of 3), then 11. */
	in[0] = mk(0, 0);
	in[1] = mk(1, 0);
	in[2] = mk(2, 0);
	in[3] = mk(5, 0);
	in[4] = mk(6, 0);
	in[5] = mk(10, 3);
	put(&c, in, sizeof(in));
	ck_assert_int_eq(read_all(&c, out, 8), 6);
	kpatch_reader_get_stats(c.r, &st);
	ck_assert_uint_eq(st.seq.seq_gaps, 2);
	ck_assert_uint_eq(st.seq.seq_lost, 2 + 3);
	ck_assert_uint_eq(st.seq.overflows, 3);
	ck_assert_uint_eq(st.seq.seq_resets, 0);

	/* A restarted producer: seq back to 0, its drop count from 0 again. */
	in[0] = mk(0, 0);
	in[1] = mk(1, 1);
	put(&c, in, 2 * REC);
	ck_assert_int_eq(read_all(&c, out, 8), 2);
	kpatch_reader_get_stats(c.r, &st);
	ck_assert_uint_eq(st.seq.seq_resets, 1);
	ck_assert_uint_eq(st.seq.overflows, 3 + 1);
	ck_assert_uint_eq(st.seq.seq_gaps, 2);

	/* A jump of 2^32 or more (2^33 here: its times still fit) is a producer counting from elsewhere, not
	 * records lost (fuzz_kpatch: seq_lost wrapped around on one). */
	in[0] = mk((uint64_t)1 << 33, 0);
	in[1] = mk(((uint64_t)1 << 33) + 1, 0);
	put(&c, in, 2 * REC);
	ck_assert_int_eq(read_all(&c, out, 8), 2);
	kpatch_reader_get_stats(c.r, &st);
	ck_assert_uint_eq(st.seq.seq_resets, 2);
	ck_assert_uint_eq(st.seq.seq_lost, 2 + 3);
	chan_close(&c);
}
END_TEST

START_TEST(test_malformed_rejected)
{
	struct chan c;
	struct chorus_kpatch_record r, out[8];
	struct kpatch_reader_stats st;
	const char garbage[13] = "not a record";
	const char *why;

	chan_open(&c, "bad");
	r = mk(0, 0);
	put(&c, &r, REC);
	r = mk(1, 0);
	r.magic ^= 0x01000000; /* bad magic */
	put(&c, &r, REC);
	r = mk(1, 0);
	r.version = CHORUS_KPATCH_VERSION + 1;
	put(&c, &r, REC);
	r = mk(1, 0);
	r.version = 0;
	put(&c, &r, REC);
	r = mk(1, 0);
	r.size = 64;
	put(&c, &r, REC);
	r = mk(1, 0);
	r.version = 1; /* version 1: the field was reserved */
	r.update_ns = 7;
	put(&c, &r, REC);
	r = mk(1, 0);
	r.version = 1; /* ... and had no update time */
	r.flags |= CHORUS_KPATCH_F_UPDATE_TIME;
	put(&c, &r, REC);
	r = mk(1, 0);
	r.update_ns = 7; /* version 2 without the flag */
	put(&c, &r, REC);
	put(&c, garbage, sizeof(garbage)); /* breaks the framing */
	r = mk(1, 0);
	put(&c, &r, REC);
	ck_assert_int_eq(read_all(&c, out, 8), 2);
	ck_assert_uint_eq(out[0].seq, 0);
	ck_assert_uint_eq(out[1].seq, 1);
	kpatch_reader_get_stats(c.r, &st);
	/* bad magic, two versions, size, three update/reserved; garbage: 8 rejections. */
	ck_assert_uint_eq(st.malformed, 8);
	ck_assert_uint_eq(st.skipped_bytes, REC + sizeof(garbage));
	ck_assert_uint_eq(st.seq.seq_gaps, 0);
	why = kpatch_reader_last_problem(c.r);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, c.path));
	ck_assert_ptr_nonnull(strstr(why, "bad magic"));
	chan_close(&c);
}
END_TEST

/* Version 1 records (a module built before the update time) are read as
 * before; version 2 carries the time after the hw_ptr update.  The layout
 * is the same in both: the field offsets are the wire format. */
START_TEST(test_versions_and_update_time)
{
	struct chan c;
	struct chorus_kpatch_record r[3], out[4];

	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, magic), 0);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, version), 4);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, size), 6);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, seq), 8);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, time_ns), 16);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, hw_ptr), 24);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, dropped), 32);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, card), 36);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, device), 38);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, subdevice), 39);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, flags), 40);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, period_frames), 42);
	ck_assert_uint_eq(offsetof(struct chorus_kpatch_record, update_ns), 44);
	ck_assert_uint_eq(CHORUS_KPATCH_VERSION, 2);

	chan_open(&c, "versions");
	r[0] = mk(0, 0);
	r[0].version = 1;
	r[1] = mk(1, 0);
	r[1].flags |= CHORUS_KPATCH_F_UPDATE_TIME;
	r[1].update_ns = 123456;
	r[2] = mk(2, 0);
	r[2].flags |= CHORUS_KPATCH_F_UPDATE_TIME;
	r[2].update_ns = CHORUS_KPATCH_UPDATE_NS_MAX; /* saturated */
	put(&c, r, sizeof r);
	ck_assert_int_eq(read_all(&c, out, 4), 3);
	ck_assert_ptr_null(kpatch_record_problem(&out[0]));
	ck_assert_int_eq(kpatch_record_has_update(&out[0]), 0);
	ck_assert_int_eq(kpatch_record_update_time(&out[0]), out[0].time_ns);
	ck_assert_int_eq(kpatch_record_has_update(&out[1]), 1);
	ck_assert_int_eq(kpatch_record_update_time(&out[1]), out[1].time_ns + 123456);
	ck_assert_int_eq(kpatch_record_update_time(&out[2]), out[2].time_ns + (int64_t)0xffffffffLL);
	/* A fresh record is version 2 without an update time: the
	 * simulator's (its interrupt time is the frame's). */
	kpatch_record_init(&r[0]);
	ck_assert_uint_eq(r[0].version, 2);
	ck_assert_int_eq(kpatch_record_has_update(&r[0]), 0);
	ck_assert_ptr_null(kpatch_record_problem(&r[0]));
	chan_close(&c);
}
END_TEST

START_TEST(test_partial_record_waits)
{
	struct chan c;
	struct chorus_kpatch_record r = mk(0, 0), out[2];
	const unsigned char *p = (const unsigned char *)&r;

	chan_open(&c, "part");
	put(&c, p, 3); /* not even a whole magic */
	ck_assert_int_eq(kpatch_reader_read(c.r, out, 2), 0);
	put(&c, p + 3, 20);
	ck_assert_int_eq(kpatch_reader_read(c.r, out, 2), 0);
	put(&c, p + 23, REC - 23);
	ck_assert_int_eq(kpatch_reader_read(c.r, out, 2), 1);
	ck_assert_mem_eq(&r, out, REC);
	chan_close(&c);
}
END_TEST

/* Records not asked for stay in the FIFO, so poll still says so. */
START_TEST(test_poll_stays_truthful)
{
	struct chan c;
	struct chorus_kpatch_record in[10], out[10];
	struct pollfd pfd;
	int i;

	chan_open(&c, "poll");
	for (i = 0; i < 10; i++)
		in[i] = mk(i, 0);
	put(&c, in, sizeof(in));
	ck_assert_int_eq(kpatch_reader_read(c.r, out, 3), 3);
	pfd.fd = kpatch_reader_fd(c.r);
	pfd.events = POLLIN;
	ck_assert_int_eq(poll(&pfd, 1, 0), 1);
	ck_assert_int_eq(read_all(&c, out + 3, 7), 7);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	chan_close(&c);
}
END_TEST

/* splitmix64: the test's seeded generator. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A long random stream with known truth: drops, bad records and garbage
 * bursts at random places, written in random chunks and read with random
 * batch sizes.  Every count must come out exact. */
START_TEST(test_random_stream)
{
	enum { N = 2000 };
	static unsigned char stream[N * 2 * sizeof(struct chorus_kpatch_record)];
	static struct chorus_kpatch_record sent[N], got[N + 16];
	const uint32_t magic = CHORUS_KPATCH_MAGIC;
	uint64_t s = 0x5eed0000ull + (uint64_t)_i, seq = 0, gaps = 0, lost = 0;
	uint64_t bad = 0, skipped = 0;
	uint32_t dropped = 0;
	size_t len = 0, off = 0;
	int i, n = 0, nsent = 0;
	struct chan c;
	struct kpatch_reader_stats st;

	for (i = 0; i < N; i++) {
		struct chorus_kpatch_record r;
		unsigned k;

		if (rnd(&s) % 50 == 0) { /* producer overflow of k records */
			k = 1 + rnd(&s) % 5;
			seq += k;
			dropped += k;
			gaps++;
			lost += k;
		}
		if (rnd(&s) % 40 == 0) { /* a well-framed record we must reject */
			r = mk(seq, dropped);
			r.version = 9;
			memcpy(stream + len, &r, REC);
			len += REC;
			bad++;
		}
		if (rnd(&s) % 40 == 0) { /* a garbage burst without a magic */
			size_t g = 1 + rnd(&s) % 70, j;

			for (j = 0; j < g; j++)
				stream[len + j] = (unsigned char)rnd(&s);
			for (j = 0; j + 4 <= g; j++)
				if (memcmp(stream + len + j, &magic, 4) == 0)
					stream[len + j] ^= 0xff;
			len += g;
			skipped += g;
			bad++;
		}
		r = mk(seq++, dropped);
		sent[nsent++] = r;
		memcpy(stream + len, &r, REC);
		len += REC;
	}

	chan_open(&c, "rand");
	while (off < len || n < nsent) {
		size_t chunk = 1 + rnd(&s) % 300;
		int max = 1 + (int)(rnd(&s) % 16), k;

		if (chunk > len - off)
			chunk = len - off;
		if (chunk)
			put(&c, stream + off, chunk);
		off += chunk;
		k = kpatch_reader_read(c.r, got + n, max);
		ck_assert_int_ge(k, 0);
		n += k;
		if (off == len && k == 0)
			break;
	}
	ck_assert_int_eq(n, nsent);
	ck_assert_mem_eq(sent, got, (size_t)nsent * REC);
	kpatch_reader_get_stats(c.r, &st);
	ck_assert_uint_eq(st.seq.seq_gaps, gaps);
	ck_assert_uint_eq(st.seq.seq_lost, lost);
	ck_assert_uint_eq(st.seq.overflows, dropped);
	ck_assert_uint_eq(st.malformed, bad);
	ck_assert_uint_eq(st.skipped_bytes, skipped);
	ck_assert_uint_eq(st.bytes, len);
	chan_close(&c);
}
END_TEST

START_TEST(test_regular_file_eof)
{
	const char *run = getenv("CHORUS_RUN");
	char path[512];
	struct chorus_kpatch_record in[4], out[8];
	struct kpatch_reader *r;
	struct kpatch_reader_stats st;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/records.%d", run ? run : "/tmp", (int)getpid());
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 4; i++)
		in[i] = mk(i, 0);
	ck_assert_uint_eq(fwrite(in, REC, 4, f), 4);
	fclose(f);
	ck_assert_int_eq(kpatch_reader_open_path(path, &r), 0);
	ck_assert_int_eq(kpatch_reader_read(r, out, 8), 4);
	ck_assert_int_eq(kpatch_reader_read(r, out, 8), 0);
	kpatch_reader_get_stats(r, &st);
	ck_assert_int_eq(st.eof, 1);
	ck_assert_int_eq(kpatch_reader_kernel_stats(r, &(struct chorus_kpatch_stats){0}), -ENOTTY);
	kpatch_reader_free(r);
	unlink(path);
}
END_TEST

START_TEST(test_open_errors)
{
	struct kpatch_reader *r = NULL;
	char buf[64];
	struct chan c;

	ck_assert_int_eq(kpatch_reader_open_path("/nonexistent/chorus/kpatch", &r), -ENOENT);
	ck_assert_int_eq(kpatch_reader_path_for_pcm(0, 0, 0, 2, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(kpatch_reader_path_for_pcm(-1, 0, 0, 1, buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(kpatch_reader_path_for_pcm(0, 0, 0, 1, buf, 4), -ENAMETOOLONG);
	unsetenv("CHORUS_KPATCH_DEV");
	ck_assert_int_eq(kpatch_reader_path_for_pcm(0, 0, 0, 1, buf, sizeof(buf)),
			 (int)strlen(CHORUS_KPATCH_DEV_PATH));
	ck_assert_str_eq(buf, CHORUS_KPATCH_DEV_PATH);

	/* Something that is not the module at the device path: SELECT fails
	 * with ENOTTY rather than reading nonsense. */
	chan_open(&c, "notmodule");
	setenv("CHORUS_KPATCH_DEV", c.path, 1);
	ck_assert_int_eq(kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r),
			 -ENOTTY);
	unsetenv("CHORUS_KPATCH_DEV");
	chan_close(&c);
}
END_TEST

/* The side channel's default path follows the environment as every chorus
 * device path does: $CHORUS_RUN, else /run/chorus for root or
 * $XDG_RUNTIME_DIR/chorus; $CHORUS_NODE adds sim/node<N>/. */
START_TEST(test_sidechan_default_path)
{
	char buf[256];
	const char *was = getenv("CHORUS_RUN");
	char *run = was ? strdup(was) : NULL;

	setenv("CHORUS_RUN", "/r", 1);
	unsetenv("CHORUS_NODE");
	ck_assert_int_eq(kpatch_sidechan_path("chorus_sim:NODE=2", buf, sizeof(buf)),
			 (int)strlen("/r/kpatch/sim-chorus_sim_NODE_2"));
	ck_assert_str_eq(buf, "/r/kpatch/sim-chorus_sim_NODE_2");
	ck_assert_int_eq(kpatch_sidechan_path("", buf, sizeof(buf)), -EINVAL);
	setenv("CHORUS_NODE", "3", 1);
	ck_assert_int_gt(kpatch_sidechan_path("hw:1,0", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/r/sim/node3/kpatch/sim-hw_1_0");
	setenv("CHORUS_NODE", "-1", 1);
	ck_assert_int_eq(kpatch_sidechan_path("hw:1,0", buf, sizeof(buf)), -EINVAL);
	unsetenv("CHORUS_NODE");
	unsetenv("CHORUS_RUN");
	if (geteuid() == 0) {
		ck_assert_int_gt(kpatch_sidechan_path("x", buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, "/run/chorus/kpatch/sim-x");
	} else {
		setenv("XDG_RUNTIME_DIR", "/x", 1);
		ck_assert_int_gt(kpatch_sidechan_path("x", buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, "/x/chorus/kpatch/sim-x");
		unsetenv("XDG_RUNTIME_DIR");
		ck_assert_int_eq(kpatch_sidechan_path("x", buf, sizeof(buf)), -ENOENT);
	}
	if (run)
		setenv("CHORUS_RUN", run, 1);
	free(run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kpatch_reader");
	TCase *tc = tcase_create("side channel");
	int failed;

	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_seq_gap_and_overflow);
	tcase_add_test(tc, test_malformed_rejected);
	tcase_add_test(tc, test_versions_and_update_time);
	tcase_add_test(tc, test_partial_record_waits);
	tcase_add_test(tc, test_poll_stays_truthful);
	tcase_add_loop_test(tc, test_random_stream, 0, 4);
	tcase_add_test(tc, test_regular_file_eof);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_sidechan_default_path);
	suite_add_tcase(s, tc);
	failed = tu_check_run(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
