/* test_ring.c — the audio ring: indexing, wrap, gaps, read-only mapping,
 * and overwrite detection under a concurrent writer. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audiod/ring.h"
#include "tests/check_run.h"

/* Frames of 2 x int32: both channels hold the frame index (low 32 bits),
 * so any frame read can be checked against where it claims to be. */
static void fill(int32_t *buf, int64_t first, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		buf[2 * i] = buf[2 * i + 1] = (int32_t)(first + (int64_t)i);
}

static int check_frames(const int32_t *buf, int64_t first, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (buf[2 * i] != (int32_t)(first + (int64_t)i) || buf[2 * i + 1] != buf[2 * i])
			return 0;
	return 1;
}

START_TEST(write_read_wrap)
{
	audio_ring *r;
	int32_t in[2 * 700], out[2 * 700];
	int64_t oldest, next;
	ck_assert_int_eq(audio_ring_create(8, 1000, 48000, 2, 0, 5000, &r), 0);
	audio_ring_span(r, &oldest, &next);
	ck_assert_int_eq(oldest, 5000);
	ck_assert_int_eq(next, 5000);
	for (int64_t f = 5000; f < 5000 + 7 * 700; f += 700) {
		fill(in, f, 700);
		audio_ring_write(r, in, 700);
	}
	audio_ring_span(r, &oldest, &next);
	ck_assert_int_eq(next, 5000 + 4900);
	ck_assert_int_eq(oldest, next - 1000);
	/* A read across the wrap point. */
	ck_assert_int_eq(audio_ring_read(r, next - 1000, 700, out, NULL), 0);
	ck_assert(check_frames(out, next - 1000, 700));
	ck_assert_int_eq(audio_ring_read(r, next - 300, 300, out, NULL), 0);
	ck_assert(check_frames(out, next - 300, 300));
	/* Too old names the oldest frame; not yet written is EAGAIN. */
	ck_assert_int_eq(audio_ring_read(r, next - 1001, 10, out, &oldest), -ERANGE);
	ck_assert_int_eq(oldest, next - 1000);
	ck_assert_int_eq(audio_ring_read(r, next - 5, 10, out, NULL), -EAGAIN);
	audio_ring_free(r);
}
END_TEST

START_TEST(gaps_are_zero_and_listed)
{
	audio_ring *r;
	int32_t in[2 * 100], out[2 * 300];
	ck_assert_int_eq(audio_ring_create(8, 1000, 48000, 2, 0, 0, &r), 0);
	fill(in, 0, 100);
	audio_ring_write(r, in, 100);
	audio_ring_skip(r, 100);
	fill(in, 200, 100);
	audio_ring_write(r, in, 100);
	ck_assert_int_eq(audio_ring_read(r, 0, 300, out, NULL), 0);
	ck_assert(check_frames(out, 0, 100));
	for (int i = 200; i < 400; i++)
		ck_assert_int_eq(out[i], 0);
	ck_assert(check_frames(out + 400, 200, 100));
	ck_assert(audio_ring_has_gap(r, 150, 10));
	ck_assert(audio_ring_has_gap(r, 50, 51));
	ck_assert(!audio_ring_has_gap(r, 0, 100));
	ck_assert(!audio_ring_has_gap(r, 200, 100));
	ck_assert_int_eq(audio_ring_header(r)->gap_count, 1);
	audio_ring_free(r);
}
END_TEST

START_TEST(mapped_reader_sees_writer)
{
	audio_ring *w, *rd;
	int32_t in[2 * 64], out[2 * 64];
	ck_assert_int_eq(audio_ring_create(8, 256, 16000, 2, 0, 0, &w), 0);
	/* Readers get the read-only descriptor: it maps for reading only. */
	int ro = audio_ring_reader_fd(w);
	ck_assert_int_ge(ro, 0);
	size_t bytes = AUDIO_RING_HDR_BYTES + 256 * 8;
	ck_assert_ptr_eq(mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), MAP_FAILED);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_int_eq(audio_ring_map(ro, &rd), 0);
	ck_assert_int_eq(audio_ring_fd(rd), -1);
	ck_assert_int_eq(audio_ring_reader_fd(rd), -1);
	fill(in, 0, 64);
	audio_ring_write(w, in, 64);
	ck_assert_int_eq(audio_ring_read(rd, 10, 54, out, NULL), 0);
	ck_assert(check_frames(out, 10, 54));
	ck_assert_int_eq(audio_ring_header(rd)->rate_hz, 16000);
	audio_ring_free(rd);
	audio_ring_free(w);
}
END_TEST

START_TEST(map_rejects_non_ring)
{
	audio_ring *rd;
	int fd = memfd_create("not-a-ring", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 8192), 0);
	ck_assert_int_eq(audio_ring_map(fd, &rd), -EBADMSG);
	close(fd);
}
END_TEST

/* A writer thread races a reader on a small ring: every read that returns 0
 * must hold exactly the frames it asked for; overwrites must show as
 * -ESTALE (or -ERANGE when already too old), never as wrong data. */
typedef struct {
	audio_ring *r;
	atomic_int stop;
} race_ctx;

static void *writer(void *arg)
{
	race_ctx *c = arg;
	int32_t buf[2 * 37];
	int64_t f = 0;
	while (!atomic_load(&c->stop)) {
		fill(buf, f, 37);
		audio_ring_write(c->r, buf, 37);
		f += 37;
	}
	return NULL;
}

START_TEST(concurrent_overwrite_detected)
{
	race_ctx c = {0};
	pthread_t t;
	int32_t out[2 * 200];
	int ok = 0, stale = 0;
	ck_assert_int_eq(audio_ring_create(8, 256, 48000, 2, 0, 0, &c.r), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, writer, &c), 0);
	for (int i = 0; i < 200000 && (ok < 1000 || stale < 10); i++) {
		int64_t oldest, next;
		audio_ring_span(c.r, &oldest, &next);
		int rc = audio_ring_read(c.r, oldest, 200, out, NULL);
		if (rc == 0) {
			ck_assert_msg(check_frames(out, oldest, 200), "torn read at frame %lld", (long long)oldest);
			ok++;
		} else {
			ck_assert_msg(rc == -ESTALE || rc == -ERANGE || rc == -EAGAIN, "rc %d", rc);
			stale += rc == -ESTALE;
		}
	}
	atomic_store(&c.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_gt(ok, 0);
	audio_ring_free(c.r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, write_read_wrap);
	tcase_add_test(tc, gaps_are_zero_and_listed);
	tcase_add_test(tc, mapped_reader_sees_writer);
	tcase_add_test(tc, map_rejects_non_ring);
	tcase_add_test(tc, concurrent_overwrite_detected);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
