/* syncd_run.h — tests: one real syncd of the build (node 4, RBS off) in a
 * run directory of the test's own, and its devices read as clients do
 * (libsync's ticker reader, synctool).  For test programs that define
 * BINDIR (the build's bin directory) and use Check. */
#ifndef CHORUS_TESTS_SYNCD_RUN_H
#define CHORUS_TESTS_SYNCD_RUN_H

#include <check.h>
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libsync/ticker_read.h"
#include "tests/run_prog.h"

#define MAX_ENTRIES 4096

static char g_run[600];

/* A fresh run directory for this case, for syncd and the readers. */
static G_GNUC_UNUSED void enter(const char *name)
{
	const char *base = g_getenv("CHORUS_RUN");
	g_snprintf(g_run, sizeof g_run, "%s/syncd-%s-%d", base && *base ? base : g_get_tmp_dir(), name, (int)getpid());
	ck_assert_int_eq(g_mkdir_with_parents(g_run, 0755), 0);
	g_setenv("CHORUS_RUN", g_run, TRUE);
	g_unsetenv("CHORUS_NODE");
	g_unsetenv("STATE_DIRECTORY"); /* the file goes to the run directory */
	g_unsetenv("CHORUS_SIM_CLOCK");
	g_unsetenv("CHORUS_SIM_UTC");
}

static G_GNUC_UNUSED char *file_path(void)
{
	return g_build_filename(g_run, "syncd.history", NULL);
}

/* Run a program of the build; its exit status, stdout in *out (g_free). */
static G_GNUC_UNUSED int run(char **out, const char *prog, ...)
{
	va_list ap;
	va_start(ap, prog);
	char *err = NULL;
	int rc = tu_run_prog_v(BINDIR, out, &err, prog, ap);
	va_end(ap);
	if (rc)
		fprintf(stderr, "%s: %s", prog, err ? err : "");
	g_free(err);
	return rc;
}

/* The whole ticker (entries into e[MAX_ENTRIES]); asserts it was read. */
static G_GNUC_UNUSED size_t ticker(sync_ticker_entry *e)
{
	sync_ticker_head h;
	char why[300] = "";
	int n = sync_ticker_read(5000, &h, e, MAX_ENTRIES, why, sizeof why);
	ck_assert_msg(n >= 0, "ticker: %s", why);
	ck_assert_uint_eq(h.count, (size_t)n);
	return (size_t)n;
}

/* The ticker's pieces of pair from -> to (new array of sync_conv). */
static G_GNUC_UNUSED GArray *pieces(sync_clock_id from, sync_clock_id to)
{
	sync_ticker_entry *e = g_new(sync_ticker_entry, MAX_ENTRIES);
	size_t n = ticker(e);
	GArray *out = g_array_new(FALSE, FALSE, sizeof(sync_conv));
	for (size_t i = 0; i < n; i++)
		if ((e[i].conv.flags & SYNC_CONV_PIECE) && sync_clock_equal(e[i].from, from) && sync_clock_equal(e[i].to, to))
			g_array_append_val(out, e[i].conv);
	g_free(e);
	return out;
}

/* sync/clocks as synctool shows it (g_free). */
static G_GNUC_UNUSED char *clocks(void)
{
	char *o = NULL;
	ck_assert_int_eq(run(&o, "synctool", "clocks", NULL), 0);
	return o;
}

static G_GNUC_UNUSED GPid start_syncd(const char *conf_text)
{
	char *conf = g_build_filename(g_run, "syncd.conf", NULL);
	ck_assert(g_file_set_contents(conf, conf_text, -1, NULL));
	char *log = g_build_filename(g_run, "syncd.log", NULL);
	char *argv[] = {BINDIR "/syncd", "-c", conf, "-n", "4", NULL};
	GPid pid;
	GError *e = NULL;
	/* Its log (appended) stays in the run directory. */
	char *sh = g_strdup_printf("exec \"$@\" >> '%s' 2>&1", log);
	char *shv[] = {"/bin/sh", "-c", sh, "sh", argv[0], argv[1], argv[2], argv[3], argv[4], NULL};
	ck_assert_msg(g_spawn_async(NULL, shv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, &e), "spawn syncd: %s",
		      e ? e->message : "?");
	g_free(sh);
	/* Ready when its ticker answers (bounded: 10 s). */
	for (int i = 0;; i++) {
		sync_ticker_head h;
		char why[300];
		if (sync_ticker_read(1000, &h, NULL, 0, why, sizeof why) >= 0)
			break;
		ck_assert_msg(i < 1000, "syncd did not come up (%s; see %s)", why, log);
		g_usleep(10000);
	}
	g_free(log);
	g_free(conf);
	return pid;
}

static G_GNUC_UNUSED void stop_syncd(GPid pid)
{
	kill(pid, SIGTERM);
	int st;
	ck_assert(waitpid(pid, &st, 0) == pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "syncd did not exit cleanly (status 0x%x)", st);
}

/* syncd's log in the run directory, whole (g_free). */
static G_GNUC_UNUSED char *syncd_log(void)
{
	char *log = g_build_filename(g_run, "syncd.log", NULL), *text = NULL;
	ck_assert_msg(g_file_get_contents(log, &text, NULL, NULL), "no log %s", log);
	g_free(log);
	return text;
}

#endif
