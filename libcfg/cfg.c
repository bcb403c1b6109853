/* cfg.c — table-driven GKeyFile configuration (see cfg.h). */
#include "libcfg/cfg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(chorus-cfg-error-quark, cfg_error)

/* Line (1-based) of `key` in `group` of the INI text, or of the group header
 * when key is NULL; 0 if not found.  GKeyFile does not keep line numbers. */
static int find_line(const char *text, const char *group, const char *key)
{
	int line = 0, in_group = 0;
	const char *p = text;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		line++;
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		if (len && *p == '[') {
			const char *close = memchr(p, ']', len);
			in_group = close && (size_t)(close - p - 1) == strlen(group) &&
				   strncmp(p + 1, group, strlen(group)) == 0;
			if (in_group && !key)
				return line;
		} else if (in_group && key && len && *p != '#' && *p != ';') {
			size_t kl = strlen(key);
			if (len >= kl && strncmp(p, key, kl) == 0) {
				const char *q = p + kl;
				while (q < p + len && (*q == ' ' || *q == '\t'))
					q++;
				if (q < p + len && *q == '=')
					return line;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return 0;
}

static const char *type_name(cfg_type t)
{
	switch (t) {
	case CFG_INT: return "an integer";
	case CFG_DOUBLE: return "a number";
	case CFG_BOOL: return "true or false";
	default: return "a string";
	}
}

gboolean cfg_set(const cfg_entry *e, void *target, const char *text, const char *where, GError **err)
{
	char *field = (char *)target + e->offset;
	char *end;
	char range[96] = "";
	if (e->min <= e->max)
		g_snprintf(range, sizeof range, " in %g..%g", e->min, e->max);
	switch (e->type) {
	case CFG_INT: {
		errno = 0;
		long long v = strtoll(text, &end, 0);
		if (end == text || *end || errno || (e->min <= e->max && (v < e->min || v > e->max)))
			goto bad;
		*(gint64 *)field = v;
		return TRUE;
	}
	case CFG_DOUBLE: {
		errno = 0;
		double v = strtod(text, &end);
		if (end == text || *end || errno || !isfinite(v) ||
		    (e->min <= e->max && (v < e->min || v > e->max)))
			goto bad;
		*(double *)field = v;
		return TRUE;
	}
	case CFG_BOOL:
		if (!g_ascii_strcasecmp(text, "true") || !strcmp(text, "1") || !g_ascii_strcasecmp(text, "yes"))
			*(gboolean *)field = TRUE;
		else if (!g_ascii_strcasecmp(text, "false") || !strcmp(text, "0") || !g_ascii_strcasecmp(text, "no"))
			*(gboolean *)field = FALSE;
		else
			goto bad;
		return TRUE;
	case CFG_STRING:
		g_free(*(char **)field);
		*(char **)field = g_strdup(text);
		return TRUE;
	}
bad:
	g_set_error(err, CFG_ERROR, EINVAL, "%s[%s] %s: expected %s%s, got \"%s\"", where, e->group, e->key,
		    type_name(e->type), e->type == CFG_INT || e->type == CFG_DOUBLE ? range : "", text);
	return FALSE;
}

gboolean cfg_defaults(const cfg_entry *table, size_t n, void *target, GError **err)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].def && !cfg_set(&table[i], target, table[i].def, "default ", err))
			return FALSE;
	return TRUE;
}

static const cfg_entry *lookup(const cfg_entry *table, size_t n, const char *group, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(table[i].group, group) && (!key || !strcmp(table[i].key, key)))
			return &table[i];
	return NULL;
}

gboolean cfg_load(const char *path, gboolean missing_ok, const cfg_entry *table, size_t n,
		  void *target, GError **err)
{
	char *text = NULL;
	GError *e = NULL;
	gboolean ok = FALSE;
	GKeyFile *kf = g_key_file_new();
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		if (missing_ok && g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
			g_error_free(e);
			g_key_file_free(kf);
			return TRUE;
		}
		g_set_error(err, CFG_ERROR, ENOENT, "%s: cannot read configuration: %s", path, e->message);
		g_error_free(e);
		goto out;
	}
	if (!g_key_file_load_from_data(kf, text, (gsize)-1, G_KEY_FILE_NONE, &e)) {
		g_set_error(err, CFG_ERROR, EINVAL, "%s: %s", path, e->message);
		g_error_free(e);
		goto out;
	}
	gchar **groups = g_key_file_get_groups(kf, NULL);
	for (gchar **g = groups; *g; g++) {
		if (!lookup(table, n, *g, NULL)) {
			g_set_error(err, CFG_ERROR, EINVAL, "%s:%d: unknown group [%s]", path,
				    find_line(text, *g, NULL), *g);
			g_strfreev(groups);
			goto out;
		}
		gchar **keys = g_key_file_get_keys(kf, *g, NULL, NULL);
		for (gchar **k = keys; *k; k++) {
			const cfg_entry *ent = lookup(table, n, *g, *k);
			int line = find_line(text, *g, *k);
			char *where = g_strdup_printf("%s:%d: ", path, line);
			if (!ent) {
				g_set_error(err, CFG_ERROR, EINVAL, "%s[%s] %s: unknown key", where, *g, *k);
			} else {
				char *v = g_key_file_get_string(kf, *g, *k, NULL);
				gboolean good = cfg_set(ent, target, v ? g_strstrip(v) : "", where, err);
				g_free(v);
				if (good) {
					g_free(where);
					continue;
				}
			}
			g_free(where);
			g_strfreev(keys);
			g_strfreev(groups);
			goto out;
		}
		g_strfreev(keys);
	}
	g_strfreev(groups);
	ok = TRUE;
out:
	g_free(text);
	g_key_file_free(kf);
	return ok;
}

void cfg_clear(const cfg_entry *table, size_t n, void *target)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].type == CFG_STRING) {
			char **f = (char **)((char *)target + table[i].offset);
			g_free(*f);
			*f = NULL;
		}
}

char *cfg_describe(const cfg_entry *table, size_t n)
{
	GString *s = g_string_new(NULL);
	const char *group = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!group || strcmp(group, table[i].group)) {
			group = table[i].group;
			g_string_append_printf(s, "%s[%s]\n", s->len ? "\n" : "", group);
		}
		g_string_append_printf(s, "# %s (%s", table[i].help ? table[i].help : "", type_name(table[i].type));
		if ((table[i].type == CFG_INT || table[i].type == CFG_DOUBLE) && table[i].min <= table[i].max)
			g_string_append_printf(s, ", %g..%g", table[i].min, table[i].max);
		g_string_append_printf(s, ")\n#%s = %s\n", table[i].key, table[i].def ? table[i].def : "");
	}
	return g_string_free(s, FALSE);
}
