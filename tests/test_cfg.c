/* test_cfg.c — configuration tables: defaults, values, and precise errors. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "libcfg/cfg.h"

typedef struct {
	gint64 window;
	double k;
	gboolean lower;
	char *name;
} settings;

static const cfg_entry table[] = {
	{"fit", "window", CFG_INT, "64", 4, 4096, offsetof(settings, window), "points"},
	{"fit", "k", CFG_DOUBLE, "3.5", 1, 10, offsetof(settings, k), "robust sigmas"},
	{"fit", "lower", CFG_BOOL, "false", 1, 0, offsetof(settings, lower), "envelope"},
	{"node", "name", CFG_STRING, "x", 1, 0, offsetof(settings, name), "name"},
};
#define N (sizeof table / sizeof table[0])

static char *write_tmp(const char *text)
{
	char *path = g_build_filename(g_get_tmp_dir(), "chorus-cfg-XXXXXX.conf", NULL);
	int fd = g_mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

static char *load_err(const char *text, settings *s)
{
	GError *err = NULL;
	char *path = write_tmp(text);
	memset(s, 0, sizeof *s);
	ck_assert(cfg_defaults(table, N, s, NULL));
	gboolean ok = cfg_load(path, FALSE, table, N, s, &err);
	g_unlink(path);
	g_free(path);
	if (ok)
		return NULL;
	char *msg = g_strdup(err->message);
	g_error_free(err);
	return msg;
}

START_TEST(defaults_and_values)
{
	settings s;
	char *e = load_err("# comment\n[fit]\nwindow = 128\nlower=true\n[node]\nname = n7\n", &s);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(s.window, 128);
	ck_assert(s.lower);
	ck_assert_double_eq(s.k, 3.5);
	ck_assert_str_eq(s.name, "n7");
	cfg_clear(table, N, &s);
	ck_assert_ptr_null(s.name);
}
END_TEST

START_TEST(errors_name_line_and_key)
{
	settings s;
	char *e = load_err("[fit]\n\nk = 2\nwindow = abc\n", &s);
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(strstr(e, ":4: [fit] window: expected an integer in 4..4096, got \"abc\""), "%s", e);
	g_free(e);
	cfg_clear(table, N, &s);
	e = load_err("[fit]\nk = 11\n", &s);
	ck_assert_msg(strstr(e, ":2: [fit] k: expected a number in 1..10"), "%s", e);
	g_free(e);
	cfg_clear(table, N, &s);
	e = load_err("[fit]\nwindow = 8\nwindw = 9\n", &s);
	ck_assert_msg(strstr(e, ":3: [fit] windw: unknown key"), "%s", e);
	g_free(e);
	cfg_clear(table, N, &s);
	e = load_err("[fit]\n[nodes]\n", &s);
	ck_assert_msg(strstr(e, ":2: unknown group [nodes]"), "%s", e);
	g_free(e);
	cfg_clear(table, N, &s);
	e = load_err("[fit\n", &s);
	ck_assert_ptr_nonnull(e);
	g_free(e);
	cfg_clear(table, N, &s);
	e = load_err("[fit]\nlower = maybe\n", &s);
	ck_assert_msg(strstr(e, ":2: [fit] lower: expected true or false"), "%s", e);
	g_free(e);
	cfg_clear(table, N, &s);
}
END_TEST

START_TEST(missing_file)
{
	settings s = {0};
	GError *err = NULL;
	ck_assert(cfg_defaults(table, N, &s, NULL));
	ck_assert(cfg_load("/nonexistent/chorus.conf", TRUE, table, N, &s, NULL));
	ck_assert(!cfg_load("/nonexistent/chorus.conf", FALSE, table, N, &s, &err));
	ck_assert(strstr(err->message, "/nonexistent/chorus.conf"));
	g_error_free(err);
	char *d = cfg_describe(table, N);
	ck_assert(strstr(d, "[fit]\n# points (an integer, 4..4096)\n#window = 64\n"));
	g_free(d);
	cfg_clear(table, N, &s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfg");
	TCase *tc = tcase_create("cfg");
	tcase_add_test(tc, defaults_and_values);
	tcase_add_test(tc, errors_name_line_and_key);
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
