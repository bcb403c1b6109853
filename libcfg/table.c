/* table.c — settings structs from tables: defaults, files, command-line
 * overrides, freeing, and the table as a commented INI file (see cfg.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libcfg/cfg.h"
#include "libcfg/spec.h"

/* Set one field from text, or FALSE with *err "WHERE[group] key: why". */
static gboolean set_one(const cfg_group *g, const cfg_key *k, const char *group, void *target, const char *text,
			const char *where, GError **err)
{
	char *why = cfg_check_value(k, text);
	if (why) {
		g_set_error(err, CFG_ERROR, EINVAL, "%s[%s] %s: %s", where, group, k->name, why);
		g_free(why);
		return FALSE;
	}
	cfg_store_value(k, cfg_field_of(g, k, group, target), text);
	return TRUE;
}

gboolean cfg_defaults(const cfg_group *groups, void *target, GError **err)
{
	for (const cfg_group *g = groups; g->name; g++) {
		if (!g->store)
			continue;
		int n = g->numbered ? g->count : 1;
		for (int j = 0; j < n; j++) {
			char *group = g->numbered ? g_strdup_printf("%s.%d", g->name, g->first + j) : g_strdup(g->name);
			gboolean ok = TRUE;
			for (const cfg_key *k = g->keys; ok && k->name; k++)
				if (k->def)
					ok = set_one(g, k, group, target, k->def, "default ", err);
			g_free(group);
			if (!ok)
				return FALSE;
		}
	}
	return TRUE;
}

gboolean cfg_load(const char *path, gboolean missing_ok, const cfg_group *groups, void *target, GError **err)
{
	return cfg_load_checked(path, missing_ok, groups, target, NULL, err);
}

gboolean cfg_load_checked(const char *path, gboolean missing_ok, const cfg_group *groups, void *target,
			  void (*check)(cfg_file *f, const void *target), GError **err)
{
	GError *e = NULL;
	cfg_file *f = cfg_file_load(path, groups, &e);
	if (!f) {
		if (missing_ok && g_error_matches(e, CFG_ERROR, ENOENT)) {
			g_error_free(e);
			return TRUE;
		}
		g_propagate_error(err, e);
		return FALSE;
	}
	cfg_file_store(f, target);
	if (check)
		check(f, target);
	gboolean ok = cfg_file_check(f, err);
	cfg_file_free(f);
	return ok;
}

gboolean cfg_set(const cfg_group *groups, void *target, const char *group, const char *key, const char *text,
		 const char *where, GError **err)
{
	const cfg_group *g = cfg_group_spec(groups, group);
	const cfg_key *k = g && g->store ? cfg_key_spec_any(g, key) : NULL;
	if (!k) {
		g_set_error(err, CFG_ERROR, EINVAL, "%s[%s] %s: unknown %s", where, group, key, g ? "key" : "group");
		return FALSE;
	}
	char *t = g_strstrip(g_strdup(text));
	gboolean ok = set_one(g, k, group, target, t, where, err);
	g_free(t);
	return ok;
}

void cfg_clear(const cfg_group *groups, void *target)
{
	for (const cfg_group *g = groups; g->name; g++) {
		if (!g->store)
			continue;
		int n = g->numbered ? g->count : 1;
		for (int j = 0; j < n; j++)
			for (const cfg_key *k = g->keys; k->name; k++)
				if (k->type == CFG_STRING) {
					char **field = (char **)((char *)target + g->offset + (size_t)j * g->stride + k->offset);
					g_free(*field);
					*field = NULL;
				}
	}
}

static void describe_group(GString *s, const cfg_group *g, const char *group)
{
	g_string_append_printf(s, "%s[%s]\n", s->len ? "\n" : "", group);
	for (const cfg_key *k = g->keys; k->name; k++) {
		g_string_append_printf(s, "# %s (%s", k->help ? k->help : "", cfg_type_name(k->type));
		if (k->type == CFG_ENUM) {
			char *all = g_strjoinv(", ", (char **)k->choices);
			g_string_append_printf(s, " %s", all);
			g_free(all);
		}
		if (k->type == CFG_INT && k->min <= k->max)
			g_string_append_printf(s, ", %.0f..%.0f", k->min, k->max); /* 4294967294, not 4.29497e+09 */
		else if (k->type == CFG_DOUBLE && k->min <= k->max)
			g_string_append_printf(s, ", %g..%g", k->min, k->max);
		if (k->alias)
			g_string_append_printf(s, "; formerly %s", k->alias);
		g_string_append_printf(s, ")\n#%s = %s\n", k->name, k->def ? k->def : "");
	}
}

char *cfg_describe(const cfg_group *groups)
{
	GString *s = g_string_new(NULL);
	for (const cfg_group *g = groups; g->name; g++) {
		if (!g->store)
			continue;
		for (int j = 0; j < (g->numbered ? g->count : 1); j++) {
			char *group = g->numbered ? g_strdup_printf("%s.%d", g->name, g->first + j) : g_strdup(g->name);
			describe_group(s, g, group);
			g_free(group);
		}
	}
	return g_string_free(s, FALSE);
}

int cfg_options(const char *prog, const char *summary, const GOptionEntry *entries, const cfg_group *table,
		char *(*describe)(void), gboolean no_args, int *argc, char ***argv)
{
	gboolean print_config = FALSE;
	GOptionEntry own[] = {
		{"print-config", 0, 0, G_OPTION_ARG_NONE, &print_config, "print every configuration key with its default and exit", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new(summary);
	g_option_context_add_main_entries(oc, entries, NULL);
	g_option_context_add_main_entries(oc, own, NULL);
	gboolean ok = g_option_context_parse(oc, argc, argv, &err);
	g_option_context_free(oc);
	if (!ok || (no_args && *argc > 1)) {
		fprintf(stderr, "%s: %s\n", prog, err ? err->message : "unexpected arguments (see --help)");
		g_clear_error(&err);
		return 2;
	}
	if (!print_config)
		return -1;
	char *text = describe ? describe() : cfg_describe(table);
	int rc = fputs(text, stdout) < 0 || fflush(stdout) != 0 ? 1 : 0;
	if (rc)
		fprintf(stderr, "%s: standard output: %s\n", prog, g_strerror(errno));
	g_free(text);
	return rc;
}
