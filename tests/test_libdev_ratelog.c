/* test_libdev_ratelog.c — the rate-limited logging helper (libdev/ratelog.h):
 * which occurrences it logs, and that a logged line carries the count in
 * the caller's log domain. */
#undef G_LOG_DOMAIN /* the Makefile sets one per directory; this test names its own */
#define G_LOG_DOMAIN "ratelog-test"
#include <check.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/ratelog.h"
#include "tests/check_run.h"

START_TEST(test_due)
{
	/* 1, 10, 100, ... up to 10^19 (the largest power of ten in 64 bits). */
	guint64 logged = 0;
	for (guint64 c = 0; c <= 100000; c++)
		if (ratelog_due(c))
			logged++;
	ck_assert_uint_eq(logged, 6);
	ck_assert(!ratelog_due(0));
	ck_assert(ratelog_due(1));
	ck_assert(!ratelog_due(2));
	ck_assert(!ratelog_due(20));
	ck_assert(ratelog_due(1000));
	ck_assert(!ratelog_due(1001));
	ck_assert(ratelog_due(10000000000000000000ULL));
	ck_assert(!ratelog_due(G_MAXUINT64));
}
END_TEST

static GString *seen;

static GLogWriterOutput writer(GLogLevelFlags level, const GLogField *fields, gsize n, gpointer user)
{
	const char *domain = NULL, *msg = NULL;
	for (gsize i = 0; i < n; i++) {
		if (!strcmp(fields[i].key, "GLIB_DOMAIN"))
			domain = fields[i].value;
		else if (!strcmp(fields[i].key, "MESSAGE"))
			msg = fields[i].value;
	}
	g_string_append_printf(seen, "%s|%s\n", domain ? domain : "-", msg ? msg : "-");
	return G_LOG_WRITER_HANDLED;
}

START_TEST(test_lines)
{
	seen = g_string_new(NULL);
	g_log_set_writer_func(writer, NULL, NULL);
	for (guint64 c = 1; c <= 150; c++)
		ratelog(G_LOG_LEVEL_MESSAGE, c, "send to %s failed", "peer");
	ck_assert_str_eq(seen->str, "ratelog-test|send to peer failed (1 so far)\n"
				    "ratelog-test|send to peer failed (10 so far)\n"
				    "ratelog-test|send to peer failed (100 so far)\n");
	g_string_free(seen, TRUE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ratelog");
	TCase *tc = tcase_create("ratelog");
	tcase_add_test(tc, test_due);
	tcase_add_test(tc, test_lines);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
