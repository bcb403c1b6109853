/* test_syncd_command.c — syncd's command language (syncd_command) on a
 * daemon state built in the test, with the caller's `now`: every command
 * accepted and refused, with its errno and reply text, what an accepted
 * one does to the pairs and the root, the served/refused counters; and
 * syncd's devices, whose socket files must all go when they are closed.
 *
 * sync/command does not check its caller's credentials itself: who may
 * write is the socket's mode and group (syncd_devices_open, [syncd] group),
 * and the credentials only name the feeder's pid (`register`). */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdev/path.h"
#include "libsync/now.h"
#include "syncd/commands.h"
#include "syncd/devices.h"
#include "tests/check_run.h"

#define S_NS 1000000000LL

typedef struct {
	syncd s;
	GString *reply;
} fixture;

static fixture *fx;

/* A daemon state of node 1 with preferred root `root` (-1: itself) and RBS
 * on or off; no devices. */
static void make(gint64 root, gboolean rbs)
{
	fx = g_new0(fixture, 1);
	syncd *s = &fx->s;
	s->cfg.node = 1;
	s->cfg.root = root;
	s->cfg.rtcpu_tries = 3;
	s->cfg.rbs = rbs;
	s->cfg.ticker_interval_s = 0.2;
	syncd_pairs_cfg pc = {.window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 600 * S_NS, .expire_ns = 120 * S_NS};
	s->pairs = syncd_pairs_new(&pc);
	s->last_notify_ns = INT64_MIN;
	s->root = syncd_root_new(1, root, 3, 0, syncd_devices_notify(s));
	fx->reply = g_string_new(NULL);
}

static void setup(void)
{
	make(-1, FALSE);
}

static void teardown(void)
{
	syncd_root_free(fx->s.root);
	syncd_pairs_free(fx->s.pairs);
	g_string_free(fx->reply, TRUE);
	g_free(fx);
}

/* Run `line` at `now_ns` as pid 1234; the reply is in fx->reply->str. */
static int run(const char *line, int64_t now_ns)
{
	dev_creds who = {1234, 1000, 1000};
	g_string_truncate(fx->reply, 0);
	return syncd_command(&fx->s, &who, line, now_ns, fx->reply);
}

#define REPLY_IS(s) ck_assert_str_eq(fx->reply->str, (s))
#define REPLY_HAS(s) ck_assert_msg(strstr(fx->reply->str, (s)), "reply \"%s\" lacks \"%s\"", fx->reply->str, (s))

START_TEST(test_help_and_unknown)
{
	ck_assert_int_eq(run("help", 0), 0);
	REPLY_HAS("sync/command");
	REPLY_HAS("  obs A B X Y [X Y ...]");
	ck_assert_int_eq(run("", 0), -EINVAL);
	REPLY_IS("empty command; try help");
	ck_assert_int_eq(run(" \t\r\n", 0), -EINVAL);
	REPLY_IS("empty command; try help");
	ck_assert_int_eq(run("frob 1 2", 0), -EINVAL);
	REPLY_IS("unknown command \"frob\"; try help");
	ck_assert_uint_eq(fx->s.commands, 4);
	ck_assert_uint_eq(fx->s.bad_commands, 3);
}
END_TEST

START_TEST(test_register)
{
	ck_assert_int_eq(run("register audio0 audiod", 5), 0);
	REPLY_IS("audio0 registered");
	ck_assert_int_eq(run("register   audio0\taudiod", 6), 0); /* repeated blanks are one */
	REPLY_IS("audio0 re-registered");
	ck_assert_int_eq(run("register", 0), -EINVAL);
	REPLY_IS("usage: register CLOCK [FEEDER]");
	ck_assert_int_eq(run("register a b c", 0), -EINVAL);
	REPLY_IS("usage: register CLOCK [FEEDER]");
	ck_assert_int_eq(run("register wobble", 0), -EINVAL);
	REPLY_HAS("bad clock \"wobble\": ");
	/* Issue 15: global is never fed; node 4294967295 is the wire's none. */
	ck_assert_int_eq(run("register global", 0), -EINVAL);
	REPLY_HAS("global is derived from the root's cpu clock, never fed");
	ck_assert_int_eq(run("register node4294967295:cpu", 0), -EINVAL);
	REPLY_HAS("node 4294967295 is the wire's");
	/* The feeder's pid comes from the caller's credentials; a bare kind is
	 * this node's clock. */
	GString *d = g_string_new(NULL);
	syncd_pairs_describe_clocks(fx->s.pairs, 6, d);
	ck_assert_msg(strstr(d->str, "node1:audio0") && strstr(d->str, "feeder=audiod pid=1234"), "%s", d->str);
	g_string_free(d, TRUE);
	/* No credentials (an in-process caller): pid 0. */
	g_string_truncate(fx->reply, 0);
	ck_assert_int_eq(syncd_command(&fx->s, NULL, "register node2:cpu", 7, fx->reply), 0);
	REPLY_IS("node2:cpu registered");
	ck_assert_uint_eq(fx->s.bad_commands, 5);
}
END_TEST

START_TEST(test_obs_feeds_the_pair)
{
	/* y = 2 x + 5 exactly, fed through the command in two batches: the
	 * pair's conversion is that line to within the quantization of y. */
	ck_assert_int_eq(run("obs cpu node1:realtime 1000000000 2000000005", 10), 0);
	REPLY_IS("1 observation added");
	GString *line = g_string_new("obs cpu realtime");
	for (int i = 2; i <= 9; i++)
		g_string_append_printf(line, " %lld %lld", i * S_NS, 2 * i * S_NS + 5);
	ck_assert_int_eq(run(line->str, 11), 0);
	REPLY_IS("8 observations added");
	g_string_free(line, TRUE);
	sync_conv c;
	ck_assert_int_eq(syncd_pairs_conv(fx->s.pairs, sync_clock_cpu(1), sync_clock_realtime(1), &c), 0);
	ck_assert_uint_eq(c.n, 9);
	ck_assert_int_eq(c.updated_ns, 11);
	ck_assert_double_eq_tol(c.slope, 2.0, 1e-12);
	double y = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(20 * S_NS)), 40 * S_NS + 5);
	ck_assert_msg(fabs(y) < 1.0, "error at 20 s: %.3f ns", y);

	/* Refusals, each with its reason and errno. */
	ck_assert_int_eq(run("obs cpu realtime 1", 0), -EINVAL);
	REPLY_IS("usage: obs A B X Y [X Y ...]");
	ck_assert_int_eq(run("obs cpu realtime 1 2 3", 0), -EINVAL);
	REPLY_IS("usage: obs A B X Y [X Y ...]");
	ck_assert_int_eq(run("obs cpu realtime 30000000000 6e10", 0), -EINVAL);
	REPLY_IS("observation 1: \"30000000000 6e10\" is not two integers");
	ck_assert_int_eq(run("obs cpu realtime 30000000000 99999999999999999999", 0), -EINVAL);
	REPLY_HAS("is not two integers");
	ck_assert_int_eq(run("obs cpu nowhere 1 2", 0), -EINVAL);
	REPLY_HAS("bad clock \"nowhere\"");
	ck_assert_int_eq(run("obs cpu global 1 2", 0), -EINVAL);
	REPLY_IS("observation 1 refused: global is defined by the root node, not fed with observations (0 taken before it)");
	/* The second observation goes back in time: the first stays taken. */
	ck_assert_int_eq(run("obs cpu realtime 30000000000 60000000005 5 15", 12), -EINVAL);
	REPLY_IS("observation 2 refused: observation out of order (x went backwards) (1 taken before it)");
	ck_assert_int_eq(syncd_pairs_conv(fx->s.pairs, sync_clock_cpu(1), sync_clock_realtime(1), &c), 0);
	ck_assert_uint_eq(c.n, 10);
	ck_assert_int_eq(c.updated_ns, 12);
}
END_TEST

START_TEST(test_pair_and_reset)
{
	ck_assert_int_eq(run("pair cpu audio0 lower 4.8e-5", 0), 0);
	REPLY_IS("pair cpu audio0 fitted by lower");
	ck_assert_int_eq(run("pair audio1 cpu upper", 0), 0);
	REPLY_IS("pair audio1 cpu fitted by upper");
	ck_assert_int_eq(run("pair cpu audio0 mean", 0), 0);
	REPLY_IS("pair cpu audio0 fitted by mean");
	ck_assert_int_eq(run("pair cpu audio0 sideways", 0), -EINVAL);
	REPLY_IS("bad fit mode \"sideways\" (mean, lower or upper)");
	ck_assert_int_eq(run("pair cpu audio0 mean fast", 0), -EINVAL);
	REPLY_IS("bad nominal slope \"fast\"");
	ck_assert_int_eq(run("pair cpu audio0 mean -1", 0), -EINVAL);
	REPLY_IS("nominal slope must be a finite number >= 0");
	ck_assert_int_eq(run("pair cpu cpu mean", 0), -EINVAL);
	REPLY_IS("a pair needs two different clocks");
	ck_assert_int_eq(run("pair cpu audio0", 0), -EINVAL);
	REPLY_IS("usage: pair A B mean|lower|upper [NOMINAL [SYSTEMATIC]]");
	ck_assert_int_eq(run("pair cpu audio0 mean 1 2 3", 0), -EINVAL);
	REPLY_IS("usage: pair A B mean|lower|upper [NOMINAL [SYSTEMATIC]]");
	ck_assert_int_eq(run("pair cpu audio0 mean 1 -2", 0), -EINVAL);
	REPLY_IS("bad systematic standard deviation \"-2\" (a number >= 0 in B's units)");
	/* A systematic term (a calibrated latency floor's s.e.) is in the
	 * offset variance of every conversion published, not in the fit. */
	ck_assert_int_eq(run("pair audio1 cpu lower 20833.333333333332 1500", 0), 0);
	REPLY_IS("pair audio1 cpu fitted by lower, systematic s.d. 1500");
	for (int i = 0; i < 8; i++) {
		char line[96];
		g_snprintf(line, sizeof line, "obs audio1 cpu %d %lld", i * 4800, i * S_NS / 10 + (i % 3) * 1000);
		ck_assert_int_eq(run(line, i), 0);
	}
	sync_conv sc;
	ck_assert_int_eq(syncd_pairs_conv(fx->s.pairs, sync_clock_audio(1, 1), sync_clock_cpu(1), &sc), 0);
	/* the fit's own part stays below the 2 us spread of the points */
	ck_assert_msg(sc.var_c >= 1500.0 * 1500.0 && sc.var_c < 1500.0 * 1500.0 + 2000.0 * 2000.0, "var_c %g", sc.var_c);

	for (int i = 0; i < 3; i++) {
		char line[96];
		g_snprintf(line, sizeof line, "obs cpu audio0 %lld %d", i * S_NS, i * 48000);
		ck_assert_int_eq(run(line, i), 0);
	}
	sync_conv c;
	ck_assert_int_eq(syncd_pairs_conv(fx->s.pairs, sync_clock_cpu(1), sync_clock_audio(1, 0), &c), 0);
	ck_assert_int_eq(run("reset audio0 cpu", 3), 0);
	REPLY_IS("pair audio0 cpu reset");
	ck_assert_int_eq(syncd_pairs_conv(fx->s.pairs, sync_clock_cpu(1), sync_clock_audio(1, 0), &c), -EAGAIN);
	ck_assert_int_eq(run("reset cpu node7:cpu", 0), -ENOENT);
	REPLY_IS("no pair cpu node7:cpu");
	ck_assert_int_eq(run("reset audio0 cpu from=96000", 3), 0);
	REPLY_IS("pair audio0 cpu reset");
	static const char *const bad_from[] = {"from=", "from=x", "from=-1", "from=12x", "to=5", "from=99999999999999999999"};
	for (size_t k = 0; k < G_N_ELEMENTS(bad_from); k++) {
		char line[96];
		g_snprintf(line, sizeof line, "reset audio0 cpu %s", bad_from[k]);
		ck_assert_msg(run(line, 3) == -EINVAL, "%s accepted", line);
		REPLY_HAS("usage: reset A B [from=X]");
	}
	ck_assert_int_eq(run("reset cpu", 0), -EINVAL);
	REPLY_HAS("usage: reset A B");
	ck_assert_int_eq(run("reset cpu bogus", 0), -EINVAL);
	REPLY_HAS("bad clock \"bogus\"");
}
END_TEST

START_TEST(test_root_local)
{
	/* Node 1 took the root at start: global is defined here. */
	ck_assert_uint_eq(syncd_root_node(fx->s.root), 1);
	ck_assert(syncd_root_have_global(fx->s.root));
	ck_assert_int_eq(run("root", 0), 0);
	REPLY_IS("root node1");
	/* A remote root needs RBS. */
	ck_assert_int_eq(run("root 2", 0), -EOPNOTSUPP);
	REPLY_IS("node2 is not this node (node1) and RBS is off: a remote root needs network synchronization");
	ck_assert_int_eq(syncd_root_preferred(fx->s.root), -1);
	for (const char *const *bad = (const char *const[]){"root -1", "root x", "root 1 2", "root 4294967295", NULL};
	     *bad; bad++) {
		ck_assert_int_eq(run(*bad, 0), -EINVAL);
		REPLY_IS("usage: root [NODE]");
	}
	/* Taking the root again redefines global from a fresh sample. */
	sync_ticker_entry before, after;
	ck_assert(syncd_root_definition(fx->s.root, &before));
	g_usleep(2000);
	ck_assert_int_eq(run("root 1", 0), 0);
	REPLY_IS("root node1 from now");
	ck_assert(syncd_root_definition(fx->s.root, &after));
	ck_assert_int_gt(after.conv.x0, before.conv.x0);
	ck_assert_int_eq(after.conv.updated_ns, after.conv.x0);
	ck_assert(sync_clock_equal(after.from, sync_clock_cpu(1)));
	ck_assert(sync_clock_equal(after.to, sync_clock_global()));
	ck_assert_int_eq(syncd_root_preferred(fx->s.root), 1);
	ck_assert_uint_eq(syncd_root_switches(fx->s.root), 0); /* a command is not a switch by the rule */
	ck_assert_uint_eq(fx->s.commands, 7);
	ck_assert_uint_eq(fx->s.bad_commands, 5);
}
END_TEST

START_TEST(test_root_remote)
{
	/* Node 1 configured to follow node 5, RBS on: global is unknown until
	 * node 5's definition arrives; `root N` only sets the preference. */
	teardown();
	make(5, TRUE);
	ck_assert_uint_eq(syncd_root_node(fx->s.root), 5);
	ck_assert(!syncd_root_have_global(fx->s.root));
	sync_ticker_entry e;
	ck_assert(!syncd_root_definition(fx->s.root, &e));
	ck_assert_int_eq(run("root", 0), 0);
	REPLY_IS("root node5 (global not known yet)");
	ck_assert_int_eq(run("root 3", 0), 0);
	REPLY_IS("preferred root node3 (used while it is alive; now root node5)");
	ck_assert_int_eq(syncd_root_preferred(fx->s.root), 3);
	ck_assert_uint_eq(syncd_root_node(fx->s.root), 5);
	/* The rule then follows node 3, whose definition has reached us. */
	syncd_root_follow(fx->s.root, 3, TRUE, 7 * S_NS);
	ck_assert_uint_eq(syncd_root_node(fx->s.root), 3);
	ck_assert(syncd_root_have_global(fx->s.root));
	ck_assert_uint_eq(syncd_root_switches(fx->s.root), 1);
	ck_assert_int_eq(run("root", 0), 0);
	REPLY_IS("root node3");
	GString *d = g_string_new(NULL);
	syncd_root_describe(fx->s.root, 9 * S_NS, d);
	ck_assert_str_eq(d->str, "root: node3 switches=1 last_switch=2.000s ago rule=configured root while alive, else "
				 "lowest live node\n");
	g_string_free(d, TRUE);
	/* Then the rule picks this node: it takes the root itself. */
	syncd_root_follow(fx->s.root, 1, FALSE, 8 * S_NS);
	ck_assert_uint_eq(syncd_root_node(fx->s.root), 1);
	ck_assert(syncd_root_have_global(fx->s.root));
	ck_assert(syncd_root_definition(fx->s.root, &e));
	ck_assert_uint_eq(syncd_root_switches(fx->s.root), 2);
}
END_TEST

static gboolean exists(const char *name)
{
	char path[DEV_PATH_MAX];
	const char *why = NULL;
	ck_assert_int_eq(dev_path(name, path, sizeof path, &why), 0);
	return g_file_test(path, G_FILE_TEST_EXISTS);
}

START_TEST(test_devices_close_removes_sockets)
{
	/* Every device's socket file exists while open and is gone after
	 * syncd_devices_close — sync/rbs included. */
	char *run_dir = g_dir_make_tmp("chorus-syncd-cmd-XXXXXX", NULL);
	ck_assert_ptr_nonnull(run_dir);
	g_setenv("CHORUS_RUN", run_dir, TRUE);
	g_unsetenv("CHORUS_NODE");
	GMainContext *ctx = g_main_context_new();
	GError *err = NULL;
	ck_assert_msg(syncd_devices_open(&fx->s, ctx, &err), "%s", err ? err->message : "?");
	const char *names[] = {"sync/ticker", "sync/clocks", "sync/rbs", "sync/command"};
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		ck_assert_msg(exists(names[i]), "%s missing while open", names[i]);
	syncd_devices_flush(&fx->s, 0);
	syncd_devices_close(&fx->s);
	for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
		ck_assert_msg(!exists(names[i]), "%s left behind after close", names[i]);
	ck_assert_ptr_null(fx->s.rbs_status);
	syncd_devices_close(&fx->s); /* twice is fine */
	g_main_context_unref(ctx);
	char *sync_dir = g_build_filename(run_dir, "sync", NULL);
	g_rmdir(sync_dir);
	g_free(sync_dir);
	ck_assert_int_eq(g_rmdir(run_dir), 0); /* nothing else was left */
	g_free(run_dir);
}
END_TEST

int main(void)
{
	const char *why = NULL;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "test_syncd_command: %s\n", why);
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("syncd_command");
	TCase *tc = tcase_create("command");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_help_and_unknown);
	tcase_add_test(tc, test_register);
	tcase_add_test(tc, test_obs_feeds_the_pair);
	tcase_add_test(tc, test_pair_and_reset);
	tcase_add_test(tc, test_root_local);
	tcase_add_test(tc, test_root_remote);
	suite_add_tcase(s, tc);
	TCase *td = tcase_create("devices");
	tcase_add_checked_fixture(td, setup, teardown);
	tcase_add_test(td, test_devices_close_removes_sockets);
	suite_add_tcase(s, td);
	return tu_check_run(s);
}
