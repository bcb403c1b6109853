/* test_synctool.c — syncd (one node) end to end through its devices, driven
 * with synctool and chorus-ctl as a user would: known observations in, the
 * fitted conversion out, with errors for bad input. */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/run_prog.h"

static GPid syncd_pid;

/* Run a program from the build's bin directory; returns its exit status, and its
 * standard output and error in *out and *err (g_free them). */
static int run(char **out, char **err, const char *prog, ...)
{
	va_list ap;
	va_start(ap, prog);
	int rc = tu_run_prog_v(BINDIR, out, err, prog, ap);
	va_end(ap);
	return rc;
}

/* Run and check the exit status, showing the program's stderr if wrong. */
#define RUN_EXPECT(want, ...) \
	do { \
		int rc_ = run(&o, &e, __VA_ARGS__, NULL); \
		ck_assert_msg(rc_ == (want), "exit %d, stderr: %s", rc_, e ? e : ""); \
	} while (0)

static const char *g_conf = SRCDIR "/tests/data/syncd-alone.conf";

static void start_syncd(void)
{
	char *argv[] = {BINDIR "/syncd", "-c", (char *)g_conf, "-n", "4", NULL};
	GError *e = NULL;
	ck_assert(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				&syncd_pid, &e));
	/* Ready when its ticker answers (bounded: 10 s). */
	for (int i = 0; i < 1000; i++) {
		char *o = NULL, *er = NULL;
		int rc = run(&o, &er, "synctool", "ticker", NULL);
		g_free(o);
		g_free(er);
		if (rc == 0)
			return;
		g_usleep(10000);
	}
	ck_abort_msg("syncd did not come up");
}

static void stop_syncd(void)
{
	kill(syncd_pid, SIGTERM);
	int st;
	waitpid(syncd_pid, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "syncd did not exit cleanly");
}

/* Feed node4:audio0 -> node4:cpu with a known line plus seeded Gaussian
 * jitter and check synctool's conversion against truth. */
START_TEST(fit_through_devices)
{
	start_syncd();
	const double ns_per_frame = 1e9 / 48000.0 * (1 + 37e-6); /* a card 37 ppm slow */
	const int64_t cpu0 = 5000000000000LL;
	const double sigma = 300.0; /* ns */
	GRand *r = g_rand_new_with_seed(42);
	char *o = NULL, *e = NULL;
	RUN_EXPECT(0, "chorus-ctl", "sync/command", "pair", "audio0", "cpu", "mean", "20833.3");
	g_free(o);
	g_free(e);
	for (int batch = 0; batch < 8; batch++) {
		GString *cmd = g_string_new("obs node4:audio0 node4:cpu");
		for (int i = 0; i < 10; i++) {
			int64_t f = (batch * 10 + i) * 480;
			/* Box-Muller from GRand: seeded, reproducible. */
			double u1 = g_rand_double(r), u2 = g_rand_double(r);
			double n = sqrt(-2 * log(u1 + 1e-300)) * cos(2 * G_PI * u2);
			g_string_append_printf(cmd, " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, f,
					       cpu0 + (int64_t)llround(f * ns_per_frame + sigma * n));
		}
		gchar **args = g_strsplit(cmd->str, " ", -1);
		GPtrArray *argv = g_ptr_array_new();
		g_ptr_array_add(argv, BINDIR "/chorus-ctl");
		g_ptr_array_add(argv, "sync/command");
		for (gchar **a = args; *a; a++)
			g_ptr_array_add(argv, *a);
		g_ptr_array_add(argv, NULL);
		int st;
		ck_assert(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
				       NULL, &st, NULL));
		ck_assert_int_eq(WEXITSTATUS(st), 0);
		g_ptr_array_free(argv, TRUE);
		g_strfreev(args);
		g_string_free(cmd, TRUE);
	}
	g_rand_free(r);
	/* Convert a frame in the middle: truth is the line without jitter.
	 * The fitted value must lie within 4 of its own standard errors (the
	 * s.e. of the mean line with 80 points is about sigma/sqrt(80)). */
	RUN_EXPECT(0, "synctool", "convert", "audio0", "cpu", "19200");
	double v, se;
	ck_assert_msg(sscanf(o, "%lf ± %lf", &v, &se) == 2, "output: %s", o);
	double truth = cpu0 + 19200 * ns_per_frame;
	ck_assert_msg(se > 0 && se < sigma, "se %g", se);
	ck_assert_msg(fabs(v - truth) < 4 * se, "error %g ns, se %g", v - truth, se);
	g_free(o);
	g_free(e);
	/* The inverse direction, and to global through the cpu clock. */
	RUN_EXPECT(0, "synctool", "convert", "cpu", "audio0", "5000400000000");
	ck_assert_msg(sscanf(o, "%lf ± %lf", &v, &se) == 2, "output: %s", o);
	ck_assert_msg(fabs(v - 400000000.0 / ns_per_frame) < 4 * se + 1e-3, "frame %f se %g", v, se);
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "convert", "audio0", "global", "0");
	ck_assert_msg(strstr(o, "(2 hops"), "%s", o);
	g_free(o);
	g_free(e);
	/* The clocks device names the pair and its feeder. */
	RUN_EXPECT(0, "synctool", "clocks");
	ck_assert_msg(strstr(o, "node4:audio0 -> node4:cpu mode=mean obs=80"), "%s", o);
	g_free(o);
	g_free(e);
	stop_syncd();
}
END_TEST

START_TEST(errors_are_clear)
{
	start_syncd();
	char *o = NULL, *e = NULL;
	RUN_EXPECT(1, "synctool", "convert", "cpu", "node9:cpu", "1");
	ck_assert_msg(strstr(e, "unknown clock node9:cpu"), "%s", e);
	g_free(o);
	g_free(e);
	RUN_EXPECT(2, "synctool", "convert", "cpux", "global", "1");
	ck_assert_msg(strstr(e, "unknown clock kind"), "%s", e);
	g_free(o);
	g_free(e);
	RUN_EXPECT(1, "synctool", "convert", "cpu", "global", "12abc");
	ck_assert_msg(strstr(e, "is not a time"), "%s", e);
	g_free(o);
	g_free(e);
	/* A result beyond int64 is refused, not saturated; "--" lets
	 * negative values follow. */
	RUN_EXPECT(1, "synctool", "convert", "cpu", "global", "9223372036854775807");
	ck_assert_msg(strstr(e, "beyond the range of global"), "%s", e);
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "convert", "cpu", "cpu", "--", "-5");
	ck_assert_msg(g_str_has_prefix(o, "-5.000 "), "%s", o);
	g_free(o);
	g_free(e);
	/* chorus-ctl takes options only before the device: a -1 after it is
	 * the command's, and a "--" there is not sent. */
	RUN_EXPECT(0, "chorus-ctl", "sync/command", "obs", "node4:audio1", "cpu", "-1", "2");
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "chorus-ctl", "sync/command", "--", "obs", "node4:audio2", "cpu", "-3", "4");
	g_free(o);
	g_free(e);
	/* Bad commands get an error reply and syncd goes on. */
	ck_assert_int_ne(run(&o, &e, "chorus-ctl", "sync/command", "obs", "cpu", "audio0", "1", NULL), 0);
	g_free(o);
	g_free(e);
	ck_assert_int_ne(run(&o, &e, "chorus-ctl", "sync/command", "obs", "cpu", "cpu", "1", "2", NULL), 0);
	g_free(o);
	g_free(e);
	ck_assert_int_ne(run(&o, &e, "chorus-ctl", "sync/command", "frobnicate", NULL), 0);
	g_free(o);
	g_free(e);
	ck_assert_int_ne(run(&o, &e, "chorus-ctl", "sync/command", "obs", "global", "cpu", "1", "2", NULL), 0);
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "now", "global");
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "clocks");
	ck_assert_msg(strstr(o, "4 refused"), "%s", o);
	g_free(o);
	g_free(e);
	stop_syncd();
}
END_TEST

/* What the table cannot judge is refused at its line before syncd starts:
 * a unicast address, an interface, group or key file that does not exist. */
START_TEST(config_refused_at_its_line)
{
	static const char *const cases[][2] = {
		{"[rbs]\ninsecure = true\naddress = 8.8.8.8\n", ":3: [rbs] address: 8.8.8.8 is neither a broadcast nor a multicast address"},
		{"[rbs]\ninterface = nosuchif0\n", ":2: [rbs] interface: no network interface \"nosuchif0\""},
		{"[syncd]\ngroup = no-such-group-here\n", ":2: [syncd] group: no group \"no-such-group-here\""},
		{"[rbs]\nkey_file = /nonexistent/field.key\n", ":2: [rbs] key_file: Failed to open file"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *path = g_build_filename(g_get_tmp_dir(), "chorus-syncd-XXXXXX.conf", NULL);
		int fd = g_mkstemp(path);
		ck_assert_int_ge(fd, 0);
		ck_assert(write(fd, cases[i][0], strlen(cases[i][0])) == (ssize_t)strlen(cases[i][0]));
		close(fd);
		char *o = NULL, *e = NULL;
		int rc = run(&o, &e, "syncd", "-c", path, "-n", "4", NULL);
		ck_assert_msg(rc != 0 && strstr(e, path) && strstr(e, cases[i][1]), "case %zu: exit %d, stderr: %s", i, rc, e);
		g_free(o);
		g_free(e);
		unlink(path);
		g_free(path);
	}
}
END_TEST

START_TEST(realtime_and_global)
{
	start_syncd();
	char *o = NULL, *e = NULL;
	/* global is UTC as of the root's choice: within a second of the host's. */
	RUN_EXPECT(0, "synctool", "now", "global");
	double g = g_ascii_strtod(o, NULL);
	double utc = (double)g_get_real_time() * 1e3;
	ck_assert_msg(fabs(g - utc) < 1e9, "global %f utc %f", g, utc);
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "now", "realtime");
	double rt = g_ascii_strtod(o, NULL);
	ck_assert_msg(fabs(rt - utc) < 1e9, "realtime %f utc %f", rt, utc);
	g_free(o);
	g_free(e);
	stop_syncd();
}
END_TEST

/* A ticker in parts of one conversion each (tests/data/syncd-parts.conf):
 * synctool reads them all, lists every one and converts through them. */
START_TEST(ticker_in_parts)
{
	g_conf = SRCDIR "/tests/data/syncd-parts.conf";
	start_syncd();
	char *o = NULL, *e = NULL;
	RUN_EXPECT(0, "chorus-ctl", "sync/command", "pair", "audio0", "cpu", "mean", "20833.3");
	g_free(o);
	g_free(e);
	for (int i = 1; i <= 6; i++) {
		char f[32], c[32];
		g_snprintf(f, sizeof f, "%d", i * 48000);
		g_snprintf(c, sizeof c, "%lld", 5000000000000LL + i * 1000000000LL);
		RUN_EXPECT(0, "chorus-ctl", "sync/command", "obs", "audio0", "cpu", f, c);
		g_free(o);
		g_free(e);
	}
	RUN_EXPECT(0, "synctool", "ticker");
	const char *n = strstr(o, "conversions=");
	ck_assert_msg(n != NULL, "%s", o);
	int count = atoi(n + 12), lines = 0;
	for (const char *p = o; *p; p++)
		lines += *p == '\n';
	ck_assert_int_ge(count, 3); /* audio0 -> cpu, cpu -> realtime, cpu -> global */
	ck_assert_msg(lines == count + 1, "%d lines for %d conversions:\n%s", lines, count, o);
	ck_assert_msg(strstr(o, "node4:audio0 -> node4:cpu") && strstr(o, "node4:cpu -> global"), "%s", o);
	g_free(o);
	g_free(e);
	/* An exact line through the fit: 2.5 s of frames is 2.5e9 ns on. */
	RUN_EXPECT(0, "synctool", "convert", "audio0", "cpu", "120000");
	ck_assert_msg(g_str_has_prefix(o, "5002500000000.000 "), "%s", o);
	g_free(o);
	g_free(e);
	RUN_EXPECT(0, "synctool", "now", "global");
	g_free(o);
	g_free(e);
	stop_syncd();
	g_conf = SRCDIR "/tests/data/syncd-alone.conf";
}
END_TEST

int main(void)
{
	Suite *s = suite_create("synctool");
	TCase *tc = tcase_create("synctool");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fit_through_devices);
	tcase_add_test(tc, errors_are_clear);
	tcase_add_test(tc, config_refused_at_its_line);
	tcase_add_test(tc, realtime_and_global);
	tcase_add_test(tc, ticker_in_parts);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
