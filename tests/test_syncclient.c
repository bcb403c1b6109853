/* test_syncclient.c — libsync's client against a real syncd: conversions
 * from the ticker, and crashproof behaviour when syncd dies and comes back. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsync/client.h"
#include "libsync/now.h"
#include "tests/check_run.h"

/* The loop test's configurations: the whole ticker in one part, and one
 * conversion per part (the client then reads sync/ticker-part too). */
static const char *const confs[] = {SRCDIR "/tests/data/syncd-alone.conf", SRCDIR "/tests/data/syncd-parts.conf"};
static const char *g_conf;

static GPid start_syncd(void)
{
	char *argv[] = {BINDIR "/syncd", "-c", (char *)g_conf, "-n", "7", NULL};
	GPid pid;
	ck_assert(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				&pid, NULL));
	return pid;
}

static void stop_syncd(GPid pid)
{
	int st;
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
}

typedef struct {
	int updates, downs, ups;
} counts;

static void on_change(void *user, gboolean connected)
{
	counts *c = user;
	c->updates++;
	if (!connected)
		c->downs++;
}

/* Iterate the default context until cond() or a 10 s safety limit. */
#define SPIN_UNTIL(cond) \
	do { \
		gint64 end_ = g_get_monotonic_time() + 10 * G_USEC_PER_SEC; \
		while (!(cond) && g_get_monotonic_time() < end_) \
			g_main_context_iteration(NULL, FALSE), g_usleep(1000); \
		ck_assert_msg((cond), "timed out waiting for " #cond); \
	} while (0)

START_TEST(converts_and_survives_restart)
{
	counts c = {0};
	GError *err = NULL;
	char why[256];
	sync_graph_result r;
	g_conf = confs[_i];
	/* The client may start before syncd: it keeps trying. */
	sync_client *cl = sync_client_new(NULL, NULL, on_change, &c, &err);
	ck_assert_ptr_nonnull(cl);
	ck_assert_int_eq(sync_client_convert(cl, sync_clock_cpu(7), sync_clock_global(), sync_tval_of(1), &r, why,
					     sizeof why),
			 -EAGAIN);
	GPid pid = start_syncd();
	SPIN_UNTIL(sync_client_ready(cl));
	uint32_t node, root;
	sync_client_info(cl, &node, &root);
	ck_assert_int_eq(node, 7);
	ck_assert_int_eq(root, 7);
	/* cpu -> global is the root's cpu plus a UTC offset: global - now_utc
	 * must be small (the offset was sampled when syncd started). */
	int64_t now = sync_now(SYNC_KIND_CPU);
	ck_assert_int_eq(sync_client_convert(cl, sync_clock_cpu(7), sync_clock_global(), sync_tval_of(now), &r, why,
					     sizeof why),
			 0);
	double utc = (double)g_get_real_time() * 1e3;
	ck_assert_msg(fabs((double)r.value.i - utc) < 1e8, "global %lld vs utc %.0f", (long long)r.value.i, utc);
	ck_assert_int_eq(r.hops, 1);
	/* Unknown clocks fail with a reason. */
	ck_assert_int_eq(sync_client_convert(cl, sync_clock_cpu(8), sync_clock_global(), sync_tval_of(now), &r, why,
					     sizeof why),
			 -ENOENT);
	ck_assert_msg(strstr(why, "node8:cpu"), "%s", why);

	/* syncd dies: the client says so and keeps converting with what it had. */
	stop_syncd(pid);
	SPIN_UNTIL(c.downs >= 1 && !sync_client_connected(cl));
	ck_assert_int_eq(sync_client_convert(cl, sync_clock_cpu(7), sync_clock_global(), sync_tval_of(now), &r, why,
					     sizeof why),
			 0);
	/* It comes back: the client re-subscribes by itself and gets the new
	 * ticker (a new root offset sampled at the new start). */
	int before = c.updates;
	pid = start_syncd();
	SPIN_UNTIL(sync_client_connected(cl) && c.updates > before + 1);
	ck_assert_int_eq(sync_client_convert(cl, sync_clock_cpu(7), sync_clock_realtime(7), sync_tval_of(now), &r,
					     why, sizeof why),
			 0);
	ck_assert_msg(fabs((double)r.value.i - utc) < 1e8, "realtime %lld vs utc %.0f", (long long)r.value.i, utc);
	stop_syncd(pid);
	sync_client_free(cl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("syncclient");
	TCase *tc = tcase_create("syncclient");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, converts_and_survives_restart, 0, 2);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
