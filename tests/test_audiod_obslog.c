/* test_audiod_obslog.c — `audiod --obs-log`: the log holds exactly the
 * observations audiod fitted (refitted with audiod's own timehist
 * parameters they give the slope and count its status states), and a log
 * that cannot be written is an error at start-up that names the file.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "audiod/device_timehist.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"
#include "timehist/timehist.h"

#define NODE 2
#define RATE 48000

/* The double after "key=" in text; fails the test when absent. */
static double field_d(const char *text, const char *key)
{
	char k[64];
	g_snprintf(k, sizeof k, "%s=", key);
	const char *p = strstr(text, k);
	ck_assert_msg(p, "no %s in the status:\n%s", k, text);
	return g_ascii_strtod(p + strlen(k), NULL);
}

START_TEST(obs_log_is_what_was_fitted)
{
	ah_node h;
	char path[600];
	g_snprintf(path, sizeof path, "%s/obslog-%d.txt", g_get_tmp_dir(), (int)getpid());
	ah_opts o = {.obs_log = path};
	ah_start(&h, NODE, "obslog", &o);
	ah_wait_frames(2 * RATE);
	/* The status's obs_log count and fit come from the same moment: the fit
	 * through the first `lines` observations of the log. */
	char *st = ah_status();
	const char *ol = strstr(st, "obs_log path=");
	ck_assert_msg(ol && !strstr(ol, "error="), "no obs_log line, or an error:\n%s", st);
	const char *fit = strstr(st, "\nfit ");
	ck_assert_msg(fit, "no fit line:\n%s", st);
	int64_t lines = ah_field(ol, "lines");
	double nspf = field_d(fit, "ns_per_frame");
	int64_t n = ah_field(fit, "n"), seg = ah_field(fit, "segment");
	ck_assert_msg(lines >= 20 && seg == 0, "lines %lld, segment %lld", (long long)lines, (long long)seg);
	g_free(st);
	ah_stop(&h); /* audiod must exit 0: the log closed cleanly */

	timehist_params tp;
	audiod_timehist_params(&tp, RATE, 0); /* audiod/device.c's (no history limit: only the live fit matters) */
	const char *why = NULL;
	timehist *th = timehist_new(&tp, &why);
	ck_assert_msg(th, "%s", why);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f, "%s: %s", path, g_strerror(errno));
	char line[256], err[200];
	int64_t read = 0, prev_frame = -1;
	while (read < lines && fgets(line, sizeof line, f)) {
		if (line[0] == '#')
			continue;
		int k;
		unsigned s;
		long long fr, cpu, raw;
		ck_assert_msg(sscanf(line, "%d %u %lld %lld %lld", &k, &s, &fr, &cpu, &raw) == 5, "bad line %s", line);
		ck_assert_msg(k == 0 && s == 0 && fr > prev_frame && cpu <= raw, "line %lld: %s", (long long)read, line);
		prev_frame = fr;
		ck_assert_msg(timehist_add(th, fr, cpu, err, sizeof err) >= 0, "%s", err);
		read++;
	}
	fclose(f);
	g_remove(path);
	ck_assert_int_eq(read, lines);
	sync_conv c;
	ck_assert(timehist_current(th, &c) == 0);
	/* The same inputs through the same code: equal to the status's 9
	 * decimals, the same count. */
	ck_assert_msg(fabs(c.slope - nspf) < 2e-9 && (int64_t)c.n == n, "refit %.9f ns/frame n=%u, status %.9f n=%lld",
		      c.slope, c.n, nspf, (long long)n);
	timehist_free(th);
}
END_TEST

/* audiod --obs-log FILE [--pcm null]: its exit status and stderr. */
static int run_audiod(const char *log, char **err_text)
{
	char *dir = g_dir_make_tmp("chorus-obslog-XXXXXX", NULL);
	ck_assert(dir);
	char **env = g_environ_setenv(g_get_environ(), "CHORUS_RUN", dir, TRUE);
	env = g_environ_setenv(env, "CHORUS_NODE", "1", TRUE);
	env = g_environ_unsetenv(env, "CHORUS_SIM_CLOCK");
	char *argv[] = {AH_BIN_DIR "/audiod", "--pcm", "null", "-c", "/dev/null", "--obs-log", (char *)log, NULL};
	int status;
	GError *e = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, err_text, &status, &e),
		      "audiod: %s", e ? e->message : "");
	g_strfreev(env);
	g_rmdir(dir);
	g_free(dir);
	return status;
}

START_TEST(obs_log_unwritable)
{
	static const struct {
		const char *path, *why;
	} cases[] = {
		{"/nonexistent-chorus-dir/obs.txt", "No such file or directory"},
		{"/dev/full", "No space left on device"}, /* the header's write fails */
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *err_text = NULL;
		int status = run_audiod(cases[i].path, &err_text);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2 && strstr(err_text, cases[i].path) &&
				      strstr(err_text, cases[i].why),
			      "audiod --obs-log %s: status 0x%x: %s", cases[i].path, status, err_text);
		g_free(err_text);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audiod_obslog");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, obs_log_is_what_was_fitted);
	tcase_add_test(tc, obs_log_unwritable);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
