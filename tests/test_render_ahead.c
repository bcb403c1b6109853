/* test_render_ahead — the simulated card's render-ahead thread
 * (sim/render_ahead.h): whatever the thread has or has not rendered, the
 * reader gets exactly the samples the function gives; what was rendered
 * ahead is taken from the cache; a jump (a restart at a new frame) resets it.
 */
#include <check.h>
#include <glib.h>
#include <stdint.h>

#include "sim/render_ahead.h"
#include "tests/check_run.h"

#define CH 3

/* A value that differs for every (channel, frame), negative frames too. */
static double truth(unsigned ch, int64_t f)
{
	return (double)f * 8.0 + ch + 0.25;
}

static double fn(void *user, unsigned ch, int64_t f)
{
	int *slow = user;
	if (slow && *slow && (f & 31) == 0 && ch == 0)
		g_usleep(1); /* widen the windows where reader and thread overlap */
	return truth(ch, f);
}

static void check_block(const double *out, int64_t first, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		for (unsigned c = 0; c < CH; c++)
			ck_assert_msg(out[i * CH + c] == truth(c, first + (int64_t)i), "frame %lld ch %u: %g",
				      (long long)(first + (int64_t)i), c, out[i * CH + c]);
}

/* Wait (at most 10 s) until the thread has rendered `frames` in all. */
static void wait_rendered(render_ahead *r, uint64_t frames)
{
	render_ahead_stats st;
	for (int i = 0; i < 10000; i++) {
		render_ahead_get_stats(r, &st);
		if (st.rendered >= frames)
			return;
		g_usleep(1000);
	}
	ck_abort_msg("the thread rendered %llu of %llu frames in 10 s", (unsigned long long)st.rendered,
		     (unsigned long long)frames);
}

START_TEST(sequential_reads_come_from_the_cache)
{
	const uint64_t P = 480;
	render_ahead *r = render_ahead_new(CH, 4 * P, 2000000, fn, NULL, "test-dma");
	ck_assert_ptr_nonnull(r);
	double out[480 * CH];
	int64_t f = 1000;
	render_ahead_get(r, f, P, out, 2 * P); /* nothing rendered yet: all by the reader */
	check_block(out, f, P);
	render_ahead_stats st;
	render_ahead_get_stats(r, &st);
	ck_assert_uint_eq(st.misses, P);
	ck_assert_uint_eq(st.hits, 0);
	f += (int64_t)P;
	for (int k = 0; k < 20; k++) {
		wait_rendered(r, (uint64_t)(k + 2) * P);
		render_ahead_get(r, f, P, out, 2 * P);
		check_block(out, f, P);
		f += (int64_t)P;
	}
	render_ahead_get_stats(r, &st);
	ck_assert_uint_eq(st.hits, 20 * P);
	ck_assert_uint_eq(st.misses, P);
	ck_assert_uint_eq(st.resets, 1); /* the first request */
	/* Never more than asked ahead. */
	ck_assert_uint_le(st.rendered, 22 * P);
	render_ahead_free(r);
}
END_TEST

START_TEST(a_jump_resets_and_partial_overlap_splits)
{
	const uint64_t P = 300;
	render_ahead *r = render_ahead_new(CH, 1200, 2000000, fn, NULL, NULL);
	ck_assert_ptr_nonnull(r);
	double out[1200 * CH];
	render_ahead_get(r, -5000, P, out, 2 * P);
	check_block(out, -5000, P);
	wait_rendered(r, 2 * P); /* [-4700, -4100) */
	/* From inside the cache past its end: P hits then the reader's own. */
	render_ahead_get(r, -4700 + 100, 3 * P, out, 2 * P);
	check_block(out, -4600, 3 * P);
	render_ahead_stats st;
	render_ahead_get_stats(r, &st);
	ck_assert_uint_eq(st.hits, 2 * P - 100);
	ck_assert_uint_eq(st.misses, P + (P + 100));
	/* Back before the cache (a restart at an earlier frame). */
	render_ahead_get(r, -9000, 7, out, 2 * P);
	check_block(out, -9000, 7);
	/* Far ahead. */
	render_ahead_get(r, 1LL << 40, P, out, 2 * P);
	check_block(out, 1LL << 40, P);
	render_ahead_get_stats(r, &st);
	ck_assert_uint_eq(st.resets, 4);
	render_ahead_free(r);
}
END_TEST

/* The reader and a slow thread in each other's way: every value still right. */
START_TEST(racing_reader_gets_exact_samples)
{
	int slow = 1;
	render_ahead *r = render_ahead_new(CH, 2048, 1000000, fn, &slow, "test-dma");
	ck_assert_ptr_nonnull(r);
	double out[700 * CH];
	GRand *g = g_rand_new_with_seed(17);
	int64_t f = 123;
	for (int k = 0; k < 400; k++) {
		uint64_t n = (uint64_t)g_rand_int_range(g, 1, 700);
		if (g_rand_int_range(g, 0, 50) == 0)
			f += g_rand_int_range(g, -3000, 3000); /* a restart */
		render_ahead_get(r, f, n, out, (uint64_t)g_rand_int_range(g, 0, 3000));
		check_block(out, f, n);
		f += (int64_t)n;
		if (k % 7 == 0)
			g_usleep((gulong)g_rand_int_range(g, 0, 3000));
	}
	render_ahead_stats st;
	render_ahead_get_stats(r, &st);
	ck_assert_uint_gt(st.hits + st.misses, 0);
	g_rand_free(g);
	render_ahead_free(r);
}
END_TEST

START_TEST(refuses_what_it_cannot_hold)
{
	ck_assert_ptr_null(render_ahead_new(0, 4096, 1000000, fn, NULL, NULL));
	ck_assert_ptr_null(render_ahead_new(2, 10, 1000000, fn, NULL, NULL));
	ck_assert_ptr_null(render_ahead_new(2, 4096, 0, fn, NULL, NULL));
	render_ahead_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("render_ahead");
	TCase *tc = tcase_create("render_ahead");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sequential_reads_come_from_the_cache);
	tcase_add_test(tc, a_jump_resets_and_partial_overlap_splits);
	tcase_add_test(tc, racing_reader_gets_exact_samples);
	tcase_add_test(tc, refuses_what_it_cannot_hold);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
