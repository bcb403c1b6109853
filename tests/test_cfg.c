/* test_cfg.c — the configuration engine: defaults, values parsed one way
 * (base-10 integers, reals whatever the locale, booleans true|false, enums),
 * numbered groups, deprecated key names, and precise errors, all at once. */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "libcfg/cfg.h"
#include "tests/check_run.h"

typedef struct {
	gint64 count;
	double rate_hz;
	int mode;
} chan_settings;

typedef struct {
	gint64 window;
	double k;
	double span_s;
	gboolean lower;
	int shape;
	char *name;
	double pos[3];
	chan_settings chan[3];
} settings;

static const char *const shapes[] = {"hann", "hamming", "blackman", NULL};
static const char *const modes[] = {"off", "on", NULL};

#define F(x) offsetof(settings, x)
#define C(x) offsetof(chan_settings, x)
static const cfg_key fit_keys[] = {
	{"window", CFG_INT, "64", 4, 4096, F(window), "points", NULL, 0, NULL},
	{"k", CFG_DOUBLE, "3.5", 1, 10, F(k), "robust sigmas", NULL, 0, NULL},
	{"span_s", CFG_DOUBLE, "600", 0, 1e6, F(span_s), "seconds kept", NULL, 0, "span"},
	{"lower", CFG_BOOL, "false", 1, 0, F(lower), "envelope", NULL, 0, NULL},
	{"shape", CFG_ENUM, "hann", 1, 0, F(shape), "window shape", shapes, 0, NULL},
	{NULL},
};
static const cfg_key node_keys[] = {
	{"name", CFG_STRING, "x", 1, 0, F(name), "name", NULL, 0, NULL},
	{"pos_m", CFG_VEC3, "0,0", -100, 100, F(pos), "position, m", NULL, 0, NULL},
	{NULL},
};
/* [chan.0] has other defaults than [chan.1] and [chan.2]. */
#define CHAN_KEYS(count_default) \
	{ \
		{"count", CFG_INT, count_default, 0, 100, C(count), "count", NULL, 0, NULL}, \
			{"rate_hz", CFG_DOUBLE, "48000", 1, 1e6, C(rate_hz), "rate, Hz", NULL, 0, "rate"}, \
			{"mode", CFG_ENUM, "off", 1, 0, C(mode), "mode", modes, 0, NULL}, \
			{NULL}, \
	}
static const cfg_key chan0_keys[] = CHAN_KEYS("1");
static const cfg_key chan_keys[] = CHAN_KEYS("0");
static const cfg_group table[] = {
	{.name = "fit", .keys = fit_keys, .store = 1},
	{.name = "node", .keys = node_keys, .store = 1},
	{.name = "chan", .numbered = 1, .keys = chan0_keys, .store = 1, .offset = F(chan), .stride = sizeof(chan_settings), .first = 0, .count = 1},
	{.name = "chan", .numbered = 1, .keys = chan_keys, .store = 1, .offset = F(chan) + sizeof(chan_settings), .stride = sizeof(chan_settings), .first = 1, .count = 2},
	{NULL},
};

static char *write_tmp(const char *text)
{
	char *path = g_build_filename(g_get_tmp_dir(), "chorus-cfg-XXXXXX.conf", NULL);
	int fd = g_mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	return path;
}

/* Load `text` over the defaults into *s: NULL, or the error message (g_free). */
static char *load_err(const char *text, settings *s)
{
	GError *err = NULL;
	char *path = write_tmp(text);
	memset(s, 0, sizeof *s);
	ck_assert(cfg_defaults(table, s, NULL));
	gboolean ok = cfg_load(path, FALSE, table, s, &err);
	g_unlink(path);
	g_free(path);
	if (ok)
		return NULL;
	char *msg = g_strdup(err->message);
	g_error_free(err);
	return msg;
}

/* Load `text`, which must be accepted, into *s. */
static void load_ok(const char *text, settings *s)
{
	char *e = load_err(text, s);
	ck_assert_msg(!e, "%s", e);
}

/* Load `text`, which must be refused, and check the message holds `want`. */
static void refused(const char *text, const char *want)
{
	settings s;
	char *e = load_err(text, &s);
	ck_assert_msg(e, "accepted:\n%s", text);
	ck_assert_msg(strstr(e, want), "\"%s\" lacks \"%s\"", e, want);
	g_free(e);
	cfg_clear(table, &s);
}

START_TEST(defaults_and_values)
{
	settings s;
	load_ok("# comment\n[fit]\nwindow = 128\nlower=true\nshape = blackman\n[node]\nname = n7\npos_m = 1, -2.5\n", &s);
	ck_assert_int_eq(s.window, 128);
	ck_assert(s.lower);
	ck_assert_double_eq(s.k, 3.5);
	ck_assert_double_eq(s.span_s, 600);
	ck_assert_int_eq(s.shape, 2);
	ck_assert_str_eq(s.name, "n7");
	ck_assert(s.pos[0] == 1 && s.pos[1] == -2.5 && s.pos[2] == 0);
	ck_assert_int_eq(s.chan[0].count, 1); /* the first element's own default */
	ck_assert_int_eq(s.chan[1].count, 0);
	ck_assert_int_eq(s.chan[2].count, 0);
	ck_assert_double_eq(s.chan[2].rate_hz, 48000);
	cfg_clear(table, &s);
	ck_assert_ptr_null(s.name);
	/* A group may come back (GKeyFile merges it); a key may not. */
	load_ok("[fit]\nwindow = 8\n[node]\nname = a\n[fit]\nk = 2\n", &s);
	ck_assert_int_eq(s.window, 8);
	ck_assert_double_eq(s.k, 2);
	cfg_clear(table, &s);
	refused("[fit]\nwindow = 8\n[node]\n[fit]\nwindow = 9\n", ":5: [fit] window: key given twice (first at line 2)");
}
END_TEST

START_TEST(integers_are_decimal)
{
	settings s;
	load_ok("[fit]\nwindow = 010\n", &s); /* not octal 8 */
	ck_assert_int_eq(s.window, 10);
	cfg_clear(table, &s);
	load_ok("[fit]\nwindow = +0100\n", &s);
	ck_assert_int_eq(s.window, 100);
	cfg_clear(table, &s);
	refused("[fit]\nwindow = 0x10\n", ":2: [fit] window: '0x10' is not an integer");
	refused("[fit]\nwindow = 1e2\n", ":2: [fit] window: '1e2' is not an integer");
}
END_TEST

START_TEST(reals_ignore_the_locale)
{
	/* A locale whose decimal separator is ',' must not change how "0.25"
	 * reads (strtod would stop at the '.'). */
	const char *old = setlocale(LC_NUMERIC, NULL);
	char *saved = g_strdup(old ? old : "C");
	ck_assert_msg(setlocale(LC_NUMERIC, "de_DE.UTF-8"), "the de_DE.UTF-8 locale is missing (make deps installs locales-all)");
	ck_assert_str_eq(localeconv()->decimal_point, ",");
	settings s;
	load_ok("[fit]\nk = 2.25\nspan_s = 1e3\n", &s);
	ck_assert_double_eq(s.k, 2.25);
	ck_assert_double_eq(s.span_s, 1000);
	cfg_clear(table, &s);
	load_ok("[fit]\nspan_s = 2.5E-1\n", &s);
	ck_assert_double_eq(s.span_s, 0.25);
	cfg_clear(table, &s);
	refused("[fit]\nk = 2,25\n", ":2: [fit] k: '2,25' is not a number");
	refused("[fit]\nspan_s = inf\n", "is not a number");
	setlocale(LC_NUMERIC, saved);
	g_free(saved);
}
END_TEST

START_TEST(booleans_are_true_or_false)
{
	settings s;
	load_ok("[fit]\nlower = false\n", &s);
	ck_assert(!s.lower);
	cfg_clear(table, &s);
	refused("[fit]\nlower = yes\n", ":2: [fit] lower: 'yes' is not true or false");
	refused("[fit]\nlower = 1\n", ":2: [fit] lower: '1' is not true or false");
	refused("[fit]\nlower = TRUE\n", "is not true or false");
}
END_TEST

START_TEST(enums_list_their_choices)
{
	refused("[fit]\nshape = gaussian\n", ":2: [fit] shape: 'gaussian' is not one of: hann, hamming, blackman");
	refused("[fit]\nshape = haming\n", "is not one of: hann, hamming, blackman (did you mean hamming?)");
}
END_TEST

START_TEST(numbered_groups)
{
	settings s;
	load_ok("[chan.2]\ncount = 7\nmode = on\n[chan.0]\nrate_hz = 8000\n", &s);
	ck_assert_int_eq(s.chan[2].count, 7);
	ck_assert_int_eq(s.chan[2].mode, 1);
	ck_assert_double_eq(s.chan[0].rate_hz, 8000);
	ck_assert_int_eq(s.chan[0].count, 1);
	ck_assert_int_eq(s.chan[1].count, 0);
	cfg_clear(table, &s);
	refused("[chan.3]\ncount = 1\n", ":1: [chan.3] unknown group: chan groups are written [chan.N] with N in 0..2");
	refused("[chan]\ncount = 1\n", ":1: [chan] unknown group: chan groups are written [chan.N]");
	refused("[chan.x]\n", "[chan.x] unknown group");
	refused("[fit.1]\n", ":1: [fit.1] unknown group: [fit] takes no number");
	refused("[chan.1]\n[chan.01]\n", ":2: [chan.01] same number as [chan.1] at line 1");
	refused("[chans.1]\n", "unknown group (did you mean [chan.1]?)");
}
END_TEST

START_TEST(every_error_with_its_line)
{
	settings s;
	char *e = load_err("[fit]\n\nk = 2\nwindow = abc\nlower = yes\n[node]\nname = a\n", &s);
	ck_assert_ptr_nonnull(e);
	char **lines = g_strsplit(e, "\n", -1);
	ck_assert_int_eq(g_strv_length(lines), 2);
	ck_assert_msg(g_str_has_suffix(lines[0], ":4: [fit] window: 'abc' is not an integer"), "%s", lines[0]);
	ck_assert_msg(g_str_has_suffix(lines[1], ":5: [fit] lower: 'yes' is not true or false"), "%s", lines[1]);
	g_strfreev(lines);
	g_free(e);
	cfg_clear(table, &s);
	refused("[fit]\nk = 11\n", ":2: [fit] k: 11 is out of range [1, 10]");
	refused("[fit]\nwindow = 3\n", ":2: [fit] window: 3 is out of range [4, 4096]");
	refused("[node]\npos_m = 1,2,300\n", ":2: [node] pos_m: component 300 is out of range");
	refused("[fit]\nwindow = 8\nwindw = 9\n", ":3: [fit] windw: unknown key (did you mean window?)");
	refused("[fit]\nzzz = 9\n", ":2: [fit] zzz: unknown key");
	refused("[fit]\n[nodes]\n", ":2: [nodes] unknown group (did you mean [node]?)");
	refused("[fit]\nwindow = 8\nwindow = 9\n", ":3: [fit] window: key given twice (first at line 2)");
	refused("[fit\n", ":1: malformed group header '[fit'");
	refused("window = 8\n", ":1: window: key before any [group]");
	refused("[fit]\njunk\n", ":2: [fit] 'junk' is not a group header");
}
END_TEST

/* g_warning catcher: the last warning's text. */
static char *last_warning;
static void catch_warning(const gchar *domain, GLogLevelFlags level, const gchar *msg, gpointer user)
{
	g_free(last_warning);
	last_warning = g_strdup(msg);
}

START_TEST(deprecated_names_still_work)
{
	settings s;
	guint h = g_log_set_handler("chorus-cfg", /* libcfg's G_LOG_DOMAIN */ G_LOG_LEVEL_WARNING, catch_warning, NULL);
	char *path = write_tmp("[fit]\n\nspan = 5\n[chan.1]\nrate = 100\n");
	memset(&s, 0, sizeof s);
	ck_assert(cfg_defaults(table, &s, NULL));
	GError *err = NULL;
	ck_assert_msg(cfg_load(path, FALSE, table, &s, &err), "%s", err ? err->message : "");
	ck_assert_double_eq(s.span_s, 5);
	ck_assert_double_eq(s.chan[1].rate_hz, 100);
	ck_assert_ptr_nonnull(last_warning);
	char *want = g_strdup_printf("%s:5: [chan.1] rate is deprecated: it is now called rate_hz", path);
	ck_assert_msg(strcmp(last_warning, want) == 0, "%s", last_warning);
	g_free(want);
	cfg_clear(table, &s);
	g_unlink(path);
	g_free(path);

	/* Through the handle: found by the new name, errors say the written one. */
	cfg_file *f = cfg_file_load_data("old.conf", "[fit]\nspan = 7\n", table, &err);
	ck_assert_msg(f, "%s", err ? err->message : "");
	ck_assert(cfg_file_has(f, "fit", "span_s"));
	ck_assert_int_eq(cfg_file_line(f, "fit", "span_s"), 2);
	ck_assert_double_eq(cfg_file_double(f, "fit", "span_s"), 7);
	cfg_file_fail(f, "fit", "span_s", "too short");
	ck_assert(!cfg_file_check(f, &err));
	ck_assert_str_eq(err->message, "old.conf:2: [fit] span: too short");
	g_clear_error(&err);
	cfg_file_free(f);

	refused("[fit]\nspan = 1\nspan_s = 2\n", ":3: [fit] span_s: key given twice (first at line 2 as span)");
	refused("[fit]\nspn = 1\n", ":2: [fit] spn: unknown key (did you mean span_s?)");
	refused("[fit]\nspan = x\n", ":2: [fit] span: 'x' is not a number");
	g_log_remove_handler("chorus-cfg", h);
	g_free(last_warning);
	last_warning = NULL;
}
END_TEST

START_TEST(overrides_and_missing_file)
{
	settings s = {0};
	GError *err = NULL;
	ck_assert(cfg_defaults(table, &s, NULL));
	ck_assert(cfg_set(table, &s, "fit", "window", " 012 ", "command line: ", NULL));
	ck_assert_int_eq(s.window, 12);
	ck_assert(cfg_set(table, &s, "chan.2", "rate", "10", "command line: ", NULL)); /* deprecated name too */
	ck_assert_double_eq(s.chan[2].rate_hz, 10);
	ck_assert(!cfg_set(table, &s, "fit", "lower", "yes", "environment X: ", &err));
	ck_assert_str_eq(err->message, "environment X: [fit] lower: 'yes' is not true or false");
	g_clear_error(&err);
	ck_assert(!cfg_set(table, &s, "fit", "nope", "1", "", &err));
	ck_assert_str_eq(err->message, "[fit] nope: unknown key");
	g_clear_error(&err);
	ck_assert(cfg_load("/nonexistent/chorus.conf", TRUE, table, &s, NULL));
	ck_assert(!cfg_load("/nonexistent/chorus.conf", FALSE, table, &s, &err));
	ck_assert(g_str_has_prefix(err->message, "/nonexistent/chorus.conf: cannot read"));
	g_error_free(err);
	char *d = cfg_describe(table);
	ck_assert_msg(strstr(d, "[fit]\n# points (an integer, 4..4096)\n#window = 64\n"), "%s", d);
	ck_assert_msg(strstr(d, "# seconds kept (a number, 0..1e+06; formerly span)\n#span_s = 600\n"), "%s", d);
	ck_assert_msg(strstr(d, "# window shape (one of hann, hamming, blackman)\n#shape = hann\n"), "%s", d);
	ck_assert_msg(strstr(d, "[chan.0]\n# count (an integer, 0..100)\n#count = 1\n"), "%s", d);
	ck_assert_msg(strstr(d, "[chan.2]\n# count (an integer, 0..100)\n#count = 0\n"), "%s", d);
	cfg_clear(table, &s);
	/* The description with its keys uncommented is a valid file of the defaults. */
	GRegex *re = g_regex_new("^#([a-z_0-9]+ = )", G_REGEX_MULTILINE, 0, NULL);
	char *file = g_regex_replace(re, d, -1, 0, "\\1", 0, NULL);
	g_regex_unref(re);
	load_ok(file, &s);
	ck_assert_int_eq(s.window, 64);
	ck_assert_int_eq(s.chan[0].count, 1);
	ck_assert_str_eq(s.name, "x");
	g_free(file);
	g_free(d);
	cfg_clear(table, &s);
}
END_TEST

START_TEST(many_errors_are_capped)
{
	GString *t = g_string_new("[fit]\n");
	for (int i = 0; i < 40; i++)
		g_string_append_printf(t, "bad%d = 1\n", i);
	GError *err = NULL;
	ck_assert_ptr_null(cfg_file_load_data("many.conf", t->str, table, &err));
	char **lines = g_strsplit(err->message, "\n", -1);
	ck_assert_int_eq(g_strv_length(lines), 31);
	ck_assert_str_eq(lines[30], "many.conf: 10 more errors not shown");
	g_strfreev(lines);
	g_error_free(err);
	g_string_free(t, TRUE);
}
END_TEST

/* A semantic check, as a daemon's: a name must not be "bad". */
static void name_check(cfg_file *f, const void *target)
{
	const settings *st = target;
	if (cfg_file_has(f, "node", "name") && !strcmp(st->name, "bad"))
		cfg_file_fail(f, "node", "name", "\"%s\" is not allowed here", st->name);
}

/* Semantic errors come at their lines with the table's; a long bad value
 * is named by its start and length, not echoed whole; integer ranges are
 * written as integers. */
START_TEST(checked_values_and_long_lines)
{
	settings s;
	memset(&s, 0, sizeof s);
	ck_assert(cfg_defaults(table, &s, NULL));
	char *path = write_tmp("[fit]\nwindow = 8\n[node]\n\nname = bad\n");
	GError *err = NULL;
	ck_assert(!cfg_load_checked(path, FALSE, table, &s, name_check, &err));
	ck_assert_msg(g_str_has_suffix(err->message, ":5: [node] name: \"bad\" is not allowed here"), "%s", err->message);
	g_clear_error(&err);
	cfg_clear(table, &s);
	g_unlink(path);
	g_free(path);
	GString *t = g_string_new("[fit]\nwindow = ");
	for (int i = 0; i < 1000000; i++)
		g_string_append_c(t, 'x');
	g_string_append_c(t, '\n');
	ck_assert_ptr_null(cfg_file_load_data("long.conf", t->str, table, &err));
	ck_assert_msg(strlen(err->message) < 200, "%zu bytes of error", strlen(err->message));
	ck_assert_msg(strstr(err->message, "long.conf:2: [fit] window: 'xxxx") && strstr(err->message, "(1000000 bytes)' is not an integer"),
		      "%.300s", err->message);
	g_clear_error(&err);
	g_string_free(t, TRUE);
	static const cfg_key big_keys[] = {
		{"id", CFG_INT, "0", 0, 4294967294.0, 0, "an id", NULL, 0, NULL},
		{NULL},
	};
	static const cfg_group big[] = {{.name = "g", .keys = big_keys, .store = 1}, {NULL}};
	char *d = cfg_describe(big);
	ck_assert_msg(strstr(d, "0..4294967294)"), "%s", d);
	g_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cfg");
	TCase *tc = tcase_create("cfg");
	tcase_add_test(tc, defaults_and_values);
	tcase_add_test(tc, integers_are_decimal);
	tcase_add_test(tc, reals_ignore_the_locale);
	tcase_add_test(tc, booleans_are_true_or_false);
	tcase_add_test(tc, enums_list_their_choices);
	tcase_add_test(tc, numbered_groups);
	tcase_add_test(tc, every_error_with_its_line);
	tcase_add_test(tc, deprecated_names_still_work);
	tcase_add_test(tc, overrides_and_missing_file);
	tcase_add_test(tc, many_errors_are_capped);
	tcase_add_test(tc, checked_values_and_long_lines);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
