/* tmpdir.c — scratch directories for tests (see tmpdir.h). */
#include "tests/tmpdir.h"

#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>

char *tu_tmpdir(const char *tmpl)
{
	GError *err = NULL;
	char *d = g_dir_make_tmp(tmpl, &err);
	ck_assert_msg(d, "%s", err ? err->message : "");
	return d;
}

void tu_rm_rf(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *n;
	while (d && (n = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, n, NULL);
		g_unlink(p);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(dir);
}
