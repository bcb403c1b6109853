/* test_syncd_rtstep.c — syncd notices the realtime clock being set
 * (syncd/rtstep.h), end to end: the real syncd, its ticker and sync/clocks
 * read as clients do.
 *
 * Setting CLOCK_REALTIME to its own reading is a set like any other for
 * the kernel (a step back of the microseconds between the read and the
 * set), so it tests the watch without moving the machine's clock: syncd
 * logs it, counts it on sync/clocks (`realtime steps=1`) and its
 * cpu -> realtime pair starts afresh, the fit until then a piece of
 * history before a break (SYNC_CONV_BREAK).  Without the watch nothing
 * marked the step (a sample whose realtime goes backwards is refused, but
 * 50 ms later the clock is ahead again), and a forward step of seconds
 * stood as outliers against the old line until the window turned over.
 * Needs CAP_SYS_TIME; without it the test cannot run: SKIP (77).
 */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsync/clockid.h"
#include "tests/check_run.h"
#include "tests/syncd_run.h"

#define NODE 4

static const char CONF[] = "[rbs]\nenable = false\n[realtime]\ninterval_s = 0.05\n[fit]\nwindow = 8\nhistory_every_s = 1\n";

/* Whether this process may set the realtime clock (CAP_SYS_TIME, bit 25
 * of the effective capabilities). */
static gboolean may_set_time(void)
{
	char *st = NULL;
	if (!g_file_get_contents("/proc/self/status", &st, NULL, NULL))
		return FALSE;
	const char *c = strstr(st, "CapEff:");
	guint64 caps = c ? g_ascii_strtoull(c + 7, NULL, 16) : 0;
	g_free(st);
	return (caps >> 25) & 1;
}

/* The break pieces of cpu -> realtime on the ticker. */
static guint breaks(void)
{
	GArray *p = pieces(sync_clock_cpu(NODE), sync_clock_realtime(NODE));
	guint n = 0;
	for (guint i = 0; i < p->len; i++)
		n += (g_array_index(p, sync_conv, i).flags & SYNC_CONV_BREAK) != 0;
	g_array_free(p, TRUE);
	return n;
}

START_TEST(a_set_of_realtime_breaks_the_pair)
{
	enter("rtstep");
	GPid pid = start_syncd(CONF);
	char *c = clocks();
	ck_assert_msg(strstr(c, "realtime steps=0 "), "%s", c);
	g_free(c);
	g_usleep(600000); /* a fit of 8 samples and a piece */
	ck_assert_uint_eq(breaks(), 0);
	struct timespec now;
	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &now), 0);
	ck_assert_msg(clock_settime(CLOCK_REALTIME, &now) == 0, "clock_settime: %s", g_strerror(errno));
	for (int i = 0;; i++) {
		c = clocks();
		gboolean seen = strstr(c, "realtime steps=1 ") != NULL;
		g_free(c);
		if (seen)
			break;
		ck_assert_msg(i < 100, "syncd did not notice the set in 10 s");
		g_usleep(100000);
	}
	ck_assert_uint_eq(breaks(), 1);
	/* realtime converts again afresh: the pair's current fit is back. */
	for (int i = 0;; i++) {
		sync_ticker_entry *e = g_new(sync_ticker_entry, MAX_ENTRIES);
		size_t n = ticker(e);
		gboolean fit = FALSE;
		for (size_t k = 0; k < n; k++)
			fit |= !(e[k].conv.flags & SYNC_CONV_PIECE) && sync_clock_equal(e[k].from, sync_clock_cpu(NODE)) &&
			       sync_clock_equal(e[k].to, sync_clock_realtime(NODE));
		g_free(e);
		if (fit)
			break;
		ck_assert_msg(i < 100, "no cpu -> realtime fit 10 s after the set");
		g_usleep(100000);
	}
	stop_syncd(pid);
	char *text = syncd_log();
	ck_assert_msg(strstr(text, "realtime clock: set (a step; 1 so far)"), "%s", text);
	g_free(text);
}
END_TEST

int main(void)
{
	if (!may_set_time()) {
		printf("SKIP: test_syncd_rtstep needs CAP_SYS_TIME to set the realtime clock\n");
		return 77;
	}
	Suite *s = suite_create("syncd_rtstep");
	TCase *tc = tcase_create("rtstep");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_set_of_realtime_breaks_the_pair);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
