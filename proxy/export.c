/* export.c — which devices chorus-proxy serves (see proxy.h). */
#include <string.h>
#include <sys/stat.h>

#include "proxy/proxy.h"

gboolean proxy_match(gchar **globs, const char *name)
{
	for (gchar **g = globs; g && *g; g++)
		if (**g && g_pattern_match_simple(*g, name))
			return TRUE;
	return FALSE;
}

/* Collect the socket names under dir (relative to the run directory). */
static void walk(const char *dir, const char *rel, int depth, GPtrArray *out)
{
	GDir *d = depth < 8 ? g_dir_open(dir, 0, NULL) : NULL;
	if (!d)
		return;
	const char *e;
	while ((e = g_dir_read_name(d))) {
		char *path = g_build_filename(dir, e, NULL);
		char *r = *rel ? g_strdup_printf("%s/%s", rel, e) : g_strdup(e);
		struct stat st;
		/* a simulation's other nodes live under sim/: not this node's */
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && !(depth == 0 && !strcmp(e, "sim")))
			walk(path, r, depth + 1, out);
		else if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
			g_ptr_array_add(out, g_steal_pointer(&r));
		g_free(r);
		g_free(path);
	}
	g_dir_close(d);
}

static gint cmp_names(gconstpointer a, gconstpointer b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

guint proxy_list(const proxy *p, GString *out)
{
	char dir[DEV_PATH_MAX];
	const char *why;
	if (dev_run_dir(dir, sizeof dir, &why) < 0)
		return 0;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	walk(dir, "", 0, names);
	g_ptr_array_sort(names, cmp_names);
	guint n = 0;
	for (guint i = 0; i < names->len; i++) {
		const char *nm = names->pdata[i];
		if (dev_name_check(nm, NULL) == 0 && proxy_match(p->exported, nm)) {
			g_string_append_printf(out, "DEV %s\n", nm);
			n++;
		}
	}
	g_ptr_array_unref(names);
	return n;
}
