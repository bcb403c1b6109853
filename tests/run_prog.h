/* run_prog.h — tests: run a program of the build and collect its output. */
#ifndef CHORUS_TESTS_RUN_PROG_H
#define CHORUS_TESTS_RUN_PROG_H

#include <check.h>
#include <glib.h>
#include <stdarg.h>
#include <sys/wait.h>

/* Run bindir/prog with the arguments in ap (up to a NULL), waiting for it;
 * its standard output in *out and error in *err (either may be NULL; g_free
 * them).  Fails the test when it cannot be started.  Returns its exit
 * status, 128 when it did not exit. */
static inline int tu_run_prog_v(const char *bindir, char **out, char **err, const char *prog, va_list ap)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_strdup_printf("%s/%s", bindir, prog));
	for (const char *a; (a = va_arg(ap, const char *));)
		g_ptr_array_add(argv, g_strdup(a));
	g_ptr_array_add(argv, NULL);
	int status = -1;
	GError *e = NULL;
	gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, 0, NULL, NULL, out, err, &status, &e);
	ck_assert_msg(ok, "spawn %s: %s", prog, e ? e->message : "?");
	g_ptr_array_unref(argv);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#endif
