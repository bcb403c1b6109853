/* test_libdev_heap.c — libdev/heap.h: freed heap in the middle of an arena
 * stays resident until dev_heap_trim() gives it back, in the main arena
 * and in a worker thread's; what is in use is unchanged by a trim; a
 * worker arena's freed top after glibc's thresholds ratcheted stays
 * resident, trim or not, unless dev_heap_policy() fixed them; the status
 * line.  Resident memory is the process's own (RssAnon of
 * /proc/self/status), what the chaos soak measures. */
#include <check.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/heap.h"
#include "libdev/packet.h"
#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

#define BLOCK (64 * 1024) /* below glibc's mmap threshold: from an arena */
#define BLOCKS 256        /* 16 MiB */

/* RssAnon of this process, kB; -1 when unreadable. */
static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Where the pin is kept: a pointer the compiler must assume is read, so
 * the pin's malloc/free pair is not elided. */
static void *volatile pinned;

/* Allocate and touch BLOCKS blocks and a small one after them (which keeps
 * the freed space from being the arena's top, which free() trims itself),
 * free the blocks, and return the small one. */
static void *breathe(void)
{
	void **b = malloc(BLOCKS * sizeof *b);
	for (int i = 0; i < BLOCKS; i++) {
		b[i] = malloc(BLOCK);
		for (size_t k = 0; k < BLOCK; k += 4096) /* volatile: a store before free() is not elided */
			((volatile char *)b[i])[k] = 0x5a;
	}
	void *pin = malloc(BLOCK); /* as large as a block: no earlier hole fits it */
	pinned = pin;
	for (int i = 0; i < BLOCKS; i++)
		free(b[i]);
	free(b);
	return pin;
}

/* What a breath left resident, what a trim gave back, in use before and
 * after the trim (kB), from the thread that calls it. */
typedef struct {
	long held_kb, after_kb, in_use0_kb, in_use1_kb;
	gboolean returned;
} breath;

static gpointer measure(gpointer data)
{
	breath *r = data;
	long before = rss_anon_kb();
	void *pin = breathe();
	dev_heap_usage u;
	dev_heap_usage_get(&u);
	r->in_use0_kb = (long)(u.in_use_bytes / 1024);
	r->held_kb = rss_anon_kb() - before;
	r->returned = dev_heap_trim();
	r->after_kb = rss_anon_kb() - before;
	dev_heap_usage_get(&u);
	r->in_use1_kb = (long)(u.in_use_bytes / 1024);
	free(pin);
	return NULL;
}

/* The 16 MiB freed stay resident (at least 3/4 of them: the first blocks
 * may reuse memory freed before), and a trim returns all but a few pages
 * per block boundary: under 1/8 of them stay.  In use changes by no more
 * than the trim's own bookkeeping (a few kB). */
static void check_breath(const breath *r, const char *where)
{
	long total = (long)BLOCKS * BLOCK / 1024;
	printf("%s: %ld kB freed; %ld kB stayed resident, %ld kB after the trim; in use %ld -> %ld kB\n", where, total,
	       r->held_kb, r->after_kb, r->in_use0_kb, r->in_use1_kb);
	ck_assert_int_ge(r->held_kb, total * 3 / 4);
	ck_assert(r->returned);
	ck_assert_int_lt(r->after_kb, total / 8);
	ck_assert_int_le(labs(r->in_use1_kb - r->in_use0_kb), 16);
}

START_TEST(trim_main_arena)
{
	breath r = {0};
	measure(&r);
	check_breath(&r, "main arena");
}
END_TEST

START_TEST(trim_thread_arena)
{
	/* A worker's arena (collab's solver thread), trimmed from the worker
	 * itself as collab does after a solve (malloc_trim walks every arena). */
	breath r = {0};
	g_thread_join(g_thread_new("heap-worker", measure, &r));
	check_breath(&r, "worker's arena, trimmed by the worker");
}
END_TEST

/* glibc's ratchet (heap.h): a worker frees one block above the mmap
 * threshold (16 MiB, mapped for itself), which lifts the thresholds to 16
 * and 32 MiB; then 12 MiB in 64 kB blocks come from its arena and, freed,
 * join the arena's top.  Resident memory held after the frees and after a
 * trim, kB, and whether the policy was set first. */
#define RATCHET_BIG (16 * 1024 * 1024)
#define RATCHET_BLOCKS 192

typedef struct {
	gboolean policy;
	long held_kb, after_trim_kb;
} ratchet;

static void touch(void *p, size_t n)
{
	for (size_t k = 0; k < n; k += 4096)
		((volatile char *)p)[k] = 0x5a;
}

static gpointer ratchet_worker(gpointer data)
{
	ratchet *r = data;
	if (r->policy)
		ck_assert(dev_heap_policy());
	void *big = malloc(RATCHET_BIG);
	touch(big, RATCHET_BIG);
	free(big);
	long before = rss_anon_kb();
	void **b = malloc(RATCHET_BLOCKS * sizeof *b);
	for (int i = 0; i < RATCHET_BLOCKS; i++) {
		b[i] = malloc(BLOCK);
		touch(b[i], BLOCK);
	}
	for (int i = 0; i < RATCHET_BLOCKS; i++)
		free(b[i]);
	free(b);
	r->held_kb = rss_anon_kb() - before;
	dev_heap_trim();
	r->after_trim_kb = rss_anon_kb() - before;
	return NULL;
}

static void run_ratchet(ratchet *r)
{
	g_thread_join(g_thread_new("heap-ratchet", ratchet_worker, r));
	printf("ratchet (%s): %ld kB freed at a worker arena's top; %ld kB stayed resident, %ld kB after a trim\n",
	       r->policy ? "dev_heap_policy" : "glibc's dynamic thresholds", (long)RATCHET_BLOCKS * BLOCK / 1024,
	       r->held_kb, r->after_trim_kb);
}

START_TEST(ratchet_holds_a_worker_top)
{
	/* The control: without the policy the freed top stays, and a trim
	 * (which does not reach a worker arena's top) does not return it.
	 * If this fails, this glibc no longer ratchets or trims differently,
	 * and heap.h's account of it is out of date. */
	ratchet r = {FALSE, 0, 0};
	run_ratchet(&r);
	long total = (long)RATCHET_BLOCKS * BLOCK / 1024;
	ck_assert_int_ge(r.held_kb, total * 3 / 4);
	ck_assert_int_ge(r.after_trim_kb, total * 3 / 4);
}
END_TEST

START_TEST(policy_returns_a_worker_top)
{
	/* With the policy the top goes back as the blocks are freed. */
	ratchet r = {TRUE, 0, 0};
	run_ratchet(&r);
	long total = (long)RATCHET_BLOCKS * BLOCK / 1024;
	ck_assert_int_lt(r.held_kb, total / 8);
	ck_assert_int_lt(r.after_trim_kb, total / 8);
}
END_TEST

START_TEST(status_line)
{
	dev_heap_trim();
	GString *s = g_string_new(NULL);
	dev_heap_usage_append(s);
	guint64 in_use, free_kb, trims, returned;
	ck_assert_int_eq(sscanf(s->str, "heap: %" G_GUINT64_FORMAT " kB in use, %" G_GUINT64_FORMAT " kB free in malloc's arenas (%" G_GUINT64_FORMAT " trims, %" G_GUINT64_FORMAT " returned memory)\n", &in_use, &free_kb, &trims, &returned), 4);
	ck_assert_msg(strstr(s->str, dev_heap_slices_malloc() ? " slices=malloc\n" : " slices=glib\n"), "%s", s->str);
	ck_assert(in_use > 0);
	ck_assert_uint_ge(trims, 1);
	g_string_free(s, TRUE);
}
END_TEST

/* A subscriber's receive buffer (128 kB, kept for the client's life) after
 * one large message — a backlog after a stall, as fft reads from audiod:
 * the pages that message touched go back once it is handled.  Before,
 * every client kept them resident for good (+104 kB here), although the
 * buffer was in use to malloc all along: the soak's fft growth. */
static void count_packet(void *user, const char *msg, size_t len, uint32_t dropped) { (*(int *)user)++; }

START_TEST(receive_buffer_tail_given_back)
{
	dev_options o;
	dev_options_init(&o);
	dev_packet *d = dev_packet_new("t/heap", &o, NULL, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(d);
	int got = 0;
	dev_packet_sub *sub = dev_packet_sub_new("t/heap", NULL, 0, NULL, count_packet, NULL, &got, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	char small[200] = "steady";
	for (int i = 0; i < 10; i++)
		dev_packet_send(d, small, sizeof small);
	SPIN_UNTIL(got == 10);
	dev_heap_trim();
	long before = rss_anon_kb();
	size_t n = 120 * 1024;
	char *big = g_malloc(n);
	memset(big, 'b', n);
	ck_assert_int_eq(dev_packet_send(d, big, n), 1);
	g_free(big);
	SPIN_UNTIL(got == 11);
	dev_packet_send(d, small, sizeof small);
	SPIN_UNTIL(got == 12);
	tu_drain(2);
	dev_heap_trim();
	long grown = rss_anon_kb() - before;
	if (getenv("CHORUS_TEST_VERBOSE"))
		printf("after one 120 kB message: resident %+ld kB\n", grown);
	/* The message itself was 120 kB in the server's queue and in the
	 * client's buffer; what may stay is the buffer's kept 16 kB and noise. */
	ck_assert_msg(grown < 48, "resident grew %ld kB after one 120 kB message", grown);
	dev_packet_sub_free(sub);
	dev_packet_free(d);
}
END_TEST

int main(void)
{
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's allocator is not glibc's: malloc_trim has nothing to trim. */
	fprintf(stderr, "SKIP: under AddressSanitizer malloc is ASan's, not glibc's\n");
	return 77;
#endif
	Suite *s = suite_create("heap");
	TCase *tc = tcase_create("heap");
	tcase_add_test(tc, trim_main_arena);
	tcase_add_test(tc, trim_thread_arena);
	tcase_add_test(tc, ratchet_holds_a_worker_top);
	tcase_add_test(tc, policy_returns_a_worker_top);
	tcase_add_test(tc, status_line);
	tcase_add_test(tc, receive_buffer_tail_given_back);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
