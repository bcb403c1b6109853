/* cfg.c — the configuration engine's file side: reading an INI file,
 * validating it against a table with line numbers and every error at once,
 * and typed getters (see cfg.h; values: spec.c, struct tables: table.c). */
#include "libcfg/cfg.h"
#include "libcfg/spec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define MAX_ERRORS 30 /* past this, one more line says how many were left out */

struct cfg_file {
	char *name;
	GKeyFile *kf;
	const cfg_group *specs;
	GHashTable *lines;   /* "group" or "group\nkey" (current key name) -> line */
	GHashTable *aliases; /* "group\nkey" -> the deprecated name the file uses for it */
	GPtrArray *groups;   /* group names in file order (owned) */
	GHashTable *keys;    /* group -> GPtrArray of key names as written, in file order */
	GHashTable *lists;   /* name -> NULL-terminated GPtrArray of group names */
	GString *errors;
	int n_errors;
};

/* The quark's name is stringified as written: keep clang-format off it. */
/* clang-format off */
G_DEFINE_QUARK(chorus-cfg-error-quark, cfg_error)
/* clang-format on */

/* --- errors and lines --------------------------------------------------------- */

static char *line_key(const char *group, const char *key)
{
	return key ? g_strconcat(group, "\n", key, NULL) : g_strdup(group);
}

static int lookup_line(const cfg_file *f, const char *group, const char *key)
{
	char *k = line_key(group, key);
	int line = GPOINTER_TO_INT(g_hash_table_lookup(f->lines, k));
	g_free(k);
	return line;
}

/* The name the file uses for [group] key: the key, its deprecated name, or
 * NULL when absent. */
static const char *written_name(const cfg_file *f, const char *group, const char *key)
{
	if (g_key_file_has_key(f->kf, group, key, NULL))
		return key;
	char *ak = line_key(group, key);
	const char *as = g_hash_table_lookup(f->aliases, ak);
	g_free(ak);
	return as;
}

int cfg_file_line(const cfg_file *f, const char *group, const char *key)
{
	int line = key ? lookup_line(f, group, key) : 0;
	return line ? line : lookup_line(f, group, NULL);
}

static void add_error_at(cfg_file *f, int line, const char *group, const char *key, const char *fmt,
			 va_list ap)
{
	f->n_errors++;
	if (f->n_errors > MAX_ERRORS)
		return;
	g_string_append_printf(f->errors, "%s:%d: ", f->name, line);
	if (group)
		g_string_append_printf(f->errors, "[%s] ", group);
	if (key)
		g_string_append_printf(f->errors, "%s: ", key);
	g_string_append_vprintf(f->errors, fmt, ap);
	g_string_append_c(f->errors, '\n');
}

static void G_GNUC_PRINTF(5, 6) error_at(cfg_file *f, int line, const char *group, const char *key,
					 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_error_at(f, line, group, key, fmt, ap);
	va_end(ap);
}

void cfg_file_fail(cfg_file *f, const char *group, const char *key, const char *fmt, ...)
{
	va_list ap;
	/* Name the key as the file writes it (its deprecated name, if so). */
	const char *w = key ? written_name(f, group, key) : NULL;
	va_start(ap, fmt);
	add_error_at(f, cfg_file_line(f, group, key), group, w ? w : key, fmt, ap);
	va_end(ap);
}

gboolean cfg_file_check(cfg_file *f, GError **err)
{
	if (!f->n_errors)
		return TRUE;
	GString *s = g_string_new(f->errors->str);
	if (f->n_errors > MAX_ERRORS)
		g_string_append_printf(s, "%s: %d more errors not shown\n", f->name, f->n_errors - MAX_ERRORS);
	/* Drop the final newline so callers can print the message as a line. */
	g_set_error(err, CFG_ERROR, EINVAL, "%.*s", (int)s->len - 1, s->str);
	g_string_free(s, TRUE);
	return FALSE;
}

/* --- loading ------------------------------------------------------------------ */

/* The value text of `key` as written in the file: unescaped for strings,
 * stripped of blanks; NULL with *why on a GKeyFile escape error. */
static char *file_text(const cfg_file *f, const char *group, const char *key, cfg_type t, char **why)
{
	GError *e = NULL;
	char *s = t == CFG_STRING ? g_key_file_get_string(f->kf, group, key, &e)
				  : g_key_file_get_value(f->kf, group, key, &e);
	if (!s) {
		if (why)
			*why = g_strdup(e->message);
		g_clear_error(&e);
		return NULL;
	}
	return g_strstrip(s);
}

static void unknown_group(cfg_file *f, const char *group)
{
	int gline = lookup_line(f, group, NULL);
	/* Suggest from the group's stem: "[nodes.1]" -> "[node.1]". */
	char *stem = g_strdup(group);
	char *dot = strchr(stem, '.');
	const char *suffix = dot ? group + (dot - stem) : "";
	if (dot)
		*dot = 0;
	GPtrArray *names = g_ptr_array_new();
	const cfg_group *match = NULL, *near = NULL;
	int lo = INT_MAX, hi = -1, any = 0;
	for (const cfg_group *s = f->specs; s->name; s++) {
		g_ptr_array_add(names, (gpointer)s->name);
		if (strcmp(s->name, stem) == 0) {
			match = s;
			if (s->numbered) {
				any |= s->count == 0;
				lo = MIN(lo, s->first);
				hi = MAX(hi, s->first + s->count - 1);
			}
		}
	}
	const char *nn = cfg_closest(stem, (const char *const *)names->pdata, names->len);
	for (const cfg_group *s = f->specs; nn && s->name; s++)
		if (strcmp(s->name, nn) == 0)
			near = s;
	if (match && match->numbered && any)
		error_at(f, gline, group, NULL, "unknown group: %s groups are written [%s.N] with N a non-negative integer",
			 match->name, match->name);
	else if (match && match->numbered)
		error_at(f, gline, group, NULL, "unknown group: %s groups are written [%s.N] with N in %d..%d",
			 match->name, match->name, lo, hi);
	else if (match)
		error_at(f, gline, group, NULL, "unknown group: [%s] takes no number", match->name);
	else if (near)
		error_at(f, gline, group, NULL, "unknown group (did you mean [%s%s]?)", near->name,
			 near->numbered ? (*suffix ? suffix : ".N") : "");
	else
		error_at(f, gline, group, NULL, "unknown group");
	g_ptr_array_free(names, TRUE);
	g_free(stem);
}

static void validate_group(cfg_file *f, const char *group)
{
	const cfg_group *g = cfg_group_spec(f->specs, group);
	if (!g) {
		unknown_group(f, group);
		return;
	}
	GPtrArray *keys = g_hash_table_lookup(f->keys, group);
	for (guint i = 0; keys && i < keys->len; i++) {
		const char *key = keys->pdata[i];
		const cfg_key *k = cfg_key_spec_any(g, key);
		if (!k) {
			/* Suggest the current name, also for a misspelt deprecated one. */
			GPtrArray *names = g_ptr_array_new();
			for (const cfg_key *s = g->keys; s->name; s++) {
				g_ptr_array_add(names, (gpointer)s->name);
				if (s->alias)
					g_ptr_array_add(names, (gpointer)s->alias);
			}
			const char *near = cfg_closest(key, (const char *const *)names->pdata, names->len);
			if (near)
				near = cfg_key_spec_any(g, near)->name;
			error_at(f, lookup_line(f, group, key), group, key, "unknown key%s%s%s",
				 near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
			g_ptr_array_free(names, TRUE);
			continue;
		}
		int line = lookup_line(f, group, k->name);
		char *why = NULL;
		char *text = file_text(f, group, key, k->type, &why);
		if (text)
			why = cfg_check_value(k, text);
		if (why)
			error_at(f, line, group, key, "%s", why);
		g_free(why);
		g_free(text);
	}
	for (const cfg_key *k = g->keys; k->name; k++)
		if ((k->flags & CFG_REQUIRED) && !cfg_file_has(f, group, k->name))
			error_at(f, lookup_line(f, group, NULL), group, k->name, "required key is missing");
	/* Two names for one element of a stored array ([device.1], [device.01]). */
	if (g->store && g->numbered) {
		int64_t n = cfg_group_number(group);
		for (guint i = 0; i < f->groups->len && f->groups->pdata[i] != group; i++) {
			const char *o = f->groups->pdata[i];
			if (cfg_group_spec(f->specs, o) == g && cfg_group_number(o) == n) {
				error_at(f, lookup_line(f, group, NULL), group, NULL,
					 "same number as [%s] at line %d (leading zeros do not make a new number)", o,
					 lookup_line(f, o, NULL));
				break;
			}
		}
	}
}

/* Scan the text for syntax and build the line index (keys under their
 * current names, deprecated names resolved with a warning); 0 or -EINVAL. */
static int scan(cfg_file *f, const char *text)
{
	char **lines = g_strsplit(text, "\n", -1);
	char *group = NULL;
	int bad = 0;
	for (int i = 0; lines[i]; i++) {
		int ln = i + 1;
		char *l = g_strstrip(lines[i]); /* also drops a trailing '\r' */
		if (!*l || *l == '#')
			continue;
		if (*l == '[') {
			size_t len = strlen(l);
			if (l[len - 1] != ']' || len < 3 || strpbrk(l + 1, "[]") != l + len - 1) {
				error_at(f, ln, NULL, NULL, "malformed group header '%s'", l);
				bad = 1;
				continue;
			}
			g_free(group);
			group = g_strndup(l + 1, len - 2);
			int prev = lookup_line(f, group, NULL);
			const cfg_group *spec = cfg_group_spec(f->specs, group);
			if (prev && spec && !spec->unique)
				continue; /* a second section of the group: its keys merge */
			if (prev) {
				error_at(f, ln, group, NULL, "group defined twice (first at line %d)", prev);
				bad = 1;
				continue;
			}
			g_hash_table_insert(f->lines, g_strdup(group), GINT_TO_POINTER(ln));
			g_ptr_array_add(f->groups, g_strdup(group));
			g_hash_table_insert(f->keys, g_strdup(group), g_ptr_array_new_with_free_func(g_free));
			continue;
		}
		char *eq = strchr(l, '=');
		if (!eq) {
			error_at(f, ln, group, NULL, "'%s' is not a group header, a key = value line or a # comment", l);
			bad = 1;
			continue;
		}
		*eq = 0;
		char *key = g_strstrip(l);
		if (!*key || strpbrk(key, "[] \t")) {
			error_at(f, ln, group, NULL, "malformed key '%s'", key);
			bad = 1;
			continue;
		}
		if (!group) {
			error_at(f, ln, NULL, key, "key before any [group]");
			bad = 1;
			continue;
		}
		const cfg_group *g = cfg_group_spec(f->specs, group);
		const cfg_key *k = g ? cfg_key_spec_any(g, key) : NULL;
		const char *name = k ? k->name : key;
		int prev = lookup_line(f, group, name);
		if (prev) {
			char *ak = line_key(group, name);
			const char *as = g_hash_table_lookup(f->aliases, ak);
			g_free(ak);
			error_at(f, ln, group, key, "key given twice (first at line %d%s%s)", prev,
				 as || strcmp(name, key) ? " as " : "", as ? as : strcmp(name, key) ? name
												    : "");
			bad = 1;
			continue;
		}
		if (k && strcmp(name, key)) {
			g_warning("%s:%d: [%s] %s is deprecated: it is now called %s", f->name, ln, group, key, name);
			g_hash_table_insert(f->aliases, line_key(group, name), g_strdup(key));
		}
		g_hash_table_insert(f->lines, line_key(group, name), GINT_TO_POINTER(ln));
		g_ptr_array_add(g_hash_table_lookup(f->keys, group), g_strdup(key));
	}
	g_free(group);
	g_strfreev(lines);
	return bad ? -EINVAL : 0;
}

cfg_file *cfg_file_load_data(const char *name, const char *text, const cfg_group *groups, GError **err)
{
	cfg_file *f = g_new0(cfg_file, 1);
	f->name = g_strdup(name);
	f->specs = groups;
	f->kf = g_key_file_new();
	f->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	f->aliases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	f->groups = g_ptr_array_new_with_free_func(g_free);
	f->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	f->lists = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	f->errors = g_string_new(NULL);

	if (scan(f, text) == 0) {
		GError *e = NULL;
		if (!g_key_file_load_from_data(f->kf, text, (gsize)-1, G_KEY_FILE_NONE, &e)) {
			error_at(f, 0, NULL, NULL, "%s", e->message);
			g_error_free(e);
		} else {
			for (guint i = 0; i < f->groups->len; i++)
				validate_group(f, f->groups->pdata[i]);
		}
	}
	if (!cfg_file_check(f, err)) {
		cfg_file_free(f);
		return NULL;
	}
	return f;
}

cfg_file *cfg_file_load(const char *path, const cfg_group *groups, GError **err)
{
	char *text = NULL;
	GError *e = NULL;
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		g_set_error(err, CFG_ERROR, g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT) ? ENOENT : EIO,
			    "%s: cannot read: %s", path, e->message);
		g_error_free(e);
		return NULL;
	}
	cfg_file *f = cfg_file_load_data(path, text, groups, err);
	g_free(text);
	return f;
}

void cfg_file_free(cfg_file *f)
{
	if (!f)
		return;
	g_free(f->name);
	g_key_file_free(f->kf);
	g_hash_table_destroy(f->lines);
	g_hash_table_destroy(f->aliases);
	g_ptr_array_free(f->groups, TRUE);
	g_hash_table_destroy(f->keys);
	g_hash_table_destroy(f->lists);
	g_string_free(f->errors, TRUE);
	g_free(f);
}

const char *cfg_file_name(const cfg_file *f)
{
	return f->name;
}

const char *const *cfg_file_groups(const cfg_file *f, const char *name)
{
	GPtrArray *list = g_hash_table_lookup(f->lists, name);
	if (list)
		return (const char *const *)list->pdata;
	list = g_ptr_array_new();
	size_t len = strlen(name);
	for (guint i = 0; i < f->groups->len; i++) {
		const char *g = f->groups->pdata[i];
		if (strcmp(g, name) == 0 || (strncmp(g, name, len) == 0 && g[len] == '.' && cfg_group_number(g) >= 0))
			g_ptr_array_add(list, (gpointer)g);
	}
	g_ptr_array_add(list, NULL);
	g_hash_table_insert(f->lists, g_strdup(name), list);
	return (const char *const *)list->pdata;
}

gboolean cfg_file_has(const cfg_file *f, const char *group, const char *key)
{
	return written_name(f, group, key) != NULL;
}

/* The value text of a key (file, else default) and its spec; NULL text when
 * neither exists or the key is not in the table with type `t`. */
static char *value_of(const cfg_file *f, const char *group, const char *key, cfg_type t, const cfg_key **spec)
{
	const cfg_group *g = cfg_group_spec(f->specs, group);
	const cfg_key *k = g ? cfg_key_spec(g, key) : NULL;
	if (!k || k->type != t) {
		g_critical("cfg: [%s] %s is not a table key of the requested type", group, key);
		return NULL;
	}
	*spec = k;
	const char *w = written_name(f, group, key);
	return w ? file_text(f, group, w, t, NULL) : g_strdup(k->def);
}

gint64 cfg_file_int(const cfg_file *f, const char *group, const char *key)
{
	const cfg_key *k;
	char *s = value_of(f, group, key, CFG_INT, &k);
	gint64 v = 0;
	if (s)
		cfg_parse_int(s, &v);
	g_free(s);
	return v;
}

double cfg_file_double(const cfg_file *f, const char *group, const char *key)
{
	const cfg_key *k;
	char *s = value_of(f, group, key, CFG_DOUBLE, &k);
	double v = 0;
	if (s)
		cfg_parse_double(s, &v);
	g_free(s);
	return v;
}

gboolean cfg_file_bool(const cfg_file *f, const char *group, const char *key)
{
	const cfg_key *k;
	char *s = value_of(f, group, key, CFG_BOOL, &k);
	gboolean v = s && strcmp(g_strstrip(s), "true") == 0;
	g_free(s);
	return v;
}

char *cfg_file_string(const cfg_file *f, const char *group, const char *key)
{
	const cfg_key *k;
	return value_of(f, group, key, CFG_STRING, &k);
}

int cfg_file_enum(const cfg_file *f, const char *group, const char *key)
{
	const cfg_key *k;
	char *s = value_of(f, group, key, CFG_ENUM, &k);
	int v = s ? cfg_enum_index(k, g_strstrip(s)) : -1;
	g_free(s);
	return v < 0 ? 0 : v;
}

void cfg_file_vec3(const cfg_file *f, const char *group, const char *key, double out[3])
{
	const cfg_key *k;
	char *s = value_of(f, group, key, CFG_VEC3, &k);
	out[0] = out[1] = out[2] = 0;
	if (s && cfg_parse_vec3(s, out) < 0)
		out[0] = out[1] = out[2] = 0;
	g_free(s);
}

static double *get_list(const cfg_file *f, const char *group, const char *key, cfg_type t, size_t *n)
{
	const cfg_key *k;
	char *s = value_of(f, group, key, t, &k);
	double *v = NULL;
	*n = 0;
	if (s && cfg_parse_list(s, t == CFG_VEC3_LIST, &v, n) < 0)
		v = NULL;
	g_free(s);
	return v;
}

double *cfg_file_vec3_list(const cfg_file *f, const char *group, const char *key, size_t *n)
{
	return get_list(f, group, key, CFG_VEC3_LIST, n);
}

double *cfg_file_double_list(const cfg_file *f, const char *group, const char *key, size_t *n)
{
	return get_list(f, group, key, CFG_DOUBLE_LIST, n);
}

void cfg_file_store(const cfg_file *f, void *target)
{
	for (guint i = 0; i < f->groups->len; i++) {
		const char *group = f->groups->pdata[i];
		const cfg_group *g = cfg_group_spec(f->specs, group);
		if (!g || !g->store)
			continue;
		for (const cfg_key *k = g->keys; k->name; k++) {
			const char *w = written_name(f, group, k->name);
			char *text = w ? file_text(f, group, w, k->type, NULL) : NULL;
			if (text)
				cfg_store_value(k, cfg_field_of(g, k, group, target), text);
			g_free(text);
		}
	}
}
