/* inicheck.c — table-validated INI files with line numbers (see inicheck.h). */
#include "sim/inicheck.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define MAX_ERRORS 30 /* past this, one more line says how many were left out */

struct sim_ini {
	char *name;
	GKeyFile *kf;
	const sim_group_spec *specs;
	GHashTable *lines;      /* "group" or "group\nkey" -> line */
	GPtrArray *groups;      /* group names in file order (owned) */
	GHashTable *keys;       /* group -> GPtrArray of key names in file order */
	GHashTable *lists;      /* spec name -> NULL-terminated GPtrArray of group names */
	GString *errors;
	int n_errors;
};

G_DEFINE_QUARK(sim-ini-error-quark, sim_ini_error)

static char *line_key(const char *group, const char *key)
{
	return key ? g_strconcat(group, "\n", key, NULL) : g_strdup(group);
}

static int lookup_line(const sim_ini *ini, const char *group, const char *key)
{
	char *k = line_key(group, key);
	int line = GPOINTER_TO_INT(g_hash_table_lookup(ini->lines, k));
	g_free(k);
	return line;
}

int sim_ini_line(const sim_ini *ini, const char *group, const char *key)
{
	int line = key ? lookup_line(ini, group, key) : 0;
	return line ? line : lookup_line(ini, group, NULL);
}

static void add_error_at(sim_ini *ini, int line, const char *group, const char *key,
			 const char *fmt, va_list ap)
{
	ini->n_errors++;
	if (ini->n_errors > MAX_ERRORS)
		return;
	g_string_append_printf(ini->errors, "%s:%d: ", ini->name, line);
	if (group)
		g_string_append_printf(ini->errors, "[%s] ", group);
	if (key)
		g_string_append_printf(ini->errors, "%s: ", key);
	g_string_append_vprintf(ini->errors, fmt, ap);
	g_string_append_c(ini->errors, '\n');
}

static void G_GNUC_PRINTF(5, 6) error_at(sim_ini *ini, int line, const char *group,
					  const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_error_at(ini, line, group, key, fmt, ap);
	va_end(ap);
}

void sim_ini_fail(sim_ini *ini, const char *group, const char *key, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_error_at(ini, sim_ini_line(ini, group, key), group, key, fmt, ap);
	va_end(ap);
}

int sim_ini_check(sim_ini *ini, GError **err)
{
	if (!ini->n_errors)
		return 0;
	if (ini->n_errors > MAX_ERRORS)
		g_string_append_printf(ini->errors, "%s: %d more errors not shown\n", ini->name,
				       ini->n_errors - MAX_ERRORS);
	/* Drop the final newline so callers can print the message as a line. */
	g_set_error(err, SIM_INI_ERROR, 1, "%.*s", (int)ini->errors->len - 1, ini->errors->str);
	return -EINVAL;
}

/* --- value parsing (shared by validation and the getters) ------------------ */

static int parse_double(const char *s, double *out)
{
	char *end;
	while (g_ascii_isspace(*s))
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	double v = g_ascii_strtod(s, &end);
	while (g_ascii_isspace(*end))
		end++;
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_int(const char *s, int64_t *out)
{
	char *end;
	while (g_ascii_isspace(*s))
		s++;
	errno = 0;
	gint64 v = g_ascii_strtoll(s, &end, 10);
	while (g_ascii_isspace(*end))
		end++;
	if (end == s || *end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Split on `seps`, dropping one empty trailing token (GKeyFile lists end in ';'). */
static char **split(const char *s, const char *seps, guint *n)
{
	char **tok = g_strsplit_set(s, seps, -1);
	guint len = g_strv_length(tok);
	if (len > 0 && !*g_strstrip(tok[len - 1])) {
		g_free(tok[len - 1]);
		tok[--len] = NULL;
	}
	*n = len;
	return tok;
}

static int parse_vec3(const char *s, double out[3])
{
	guint n;
	char **tok = split(s, ",", &n);
	int rc = (n == 2 || n == 3) ? 0 : -EINVAL;
	out[2] = 0;
	for (guint i = 0; rc == 0 && i < n; i++)
		rc = parse_double(tok[i], &out[i]);
	g_strfreev(tok);
	return rc;
}

/* Parse a list of reals (vec = 0) or vectors (vec = 1) into a new array. */
static int parse_list(const char *s, int vec, double **out, size_t *count)
{
	guint n;
	char **tok = split(s, vec ? ";" : ",;", &n);
	size_t w = vec ? 3 : 1;
	double *v = g_new0(double, n * w + 1);
	int rc = 0;
	for (guint i = 0; rc == 0 && i < n; i++)
		rc = vec ? parse_vec3(tok[i], v + 3 * i) : parse_double(tok[i], v + i);
	g_strfreev(tok);
	if (rc == 0 && n == 0)
		rc = -EINVAL;
	if (rc < 0) {
		g_free(v);
		return rc;
	}
	*out = v;
	*count = n;
	return 0;
}

static int in_range(const sim_key_spec *k, double v)
{
	return k->min > k->max || (v >= k->min && v <= k->max);
}

static int enum_index(const sim_key_spec *k, const char *s)
{
	for (int i = 0; k->choices && k->choices[i]; i++)
		if (strcmp(k->choices[i], s) == 0)
			return i;
	return -1;
}

/* --- table lookup ---------------------------------------------------------- */

int64_t sim_ini_group_number(const char *group)
{
	const char *dot = strrchr(group, '.');
	int64_t n = 0;
	if (!dot || !dot[1] || strlen(dot + 1) > 9)
		return -1;
	for (const char *p = dot + 1; *p; p++) {
		if (!g_ascii_isdigit(*p))
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n;
}

static const sim_group_spec *group_spec(const sim_group_spec *specs, const char *group)
{
	for (const sim_group_spec *g = specs; g->name; g++) {
		size_t len = strlen(g->name);
		if (!g->numbered && strcmp(group, g->name) == 0)
			return g;
		if (g->numbered && strncmp(group, g->name, len) == 0 && group[len] == '.' &&
		    sim_ini_group_number(group) >= 0 && !strchr(group + len + 1, '.'))
			return g;
	}
	return NULL;
}

static const sim_key_spec *key_spec(const sim_group_spec *g, const char *key)
{
	for (const sim_key_spec *k = g->keys; k->name; k++)
		if (strcmp(k->name, key) == 0)
			return k;
	return NULL;
}

/* Levenshtein distance, for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = g_new(size_t, lb + 1);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = MIN(row[j] + 1, row[j - 1] + 1);
			row[j] = MIN(best, diag + (a[i - 1] != b[j - 1]));
			diag = up;
		}
	}
	size_t d = row[lb];
	g_free(row);
	return d;
}

/* The closest of `names` to `s` when close enough to be a typo, else NULL. */
static const char *closest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(s, names[i]);
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best && best_d <= MAX(2, strlen(s) / 3) ? best : NULL;
}

/* --- loading --------------------------------------------------------------- */

static void validate_value(sim_ini *ini, const char *group, const char *key,
			   const sim_key_spec *k, int line)
{
	char *raw = g_key_file_get_value(ini->kf, group, key, NULL);
	double d, v3[3];
	int64_t i;
	double *list;
	size_t n;
	const char *s = raw ? raw : "";

	switch (k->type) {
	case SIM_KEY_INT:
		if (parse_int(s, &i) < 0)
			error_at(ini, line, group, key, "'%s' is not an integer", s);
		else if (!in_range(k, (double)i))
			error_at(ini, line, group, key, "%s is out of range [%.17g, %.17g]", s, k->min, k->max);
		break;
	case SIM_KEY_DOUBLE:
		if (parse_double(s, &d) < 0)
			error_at(ini, line, group, key, "'%s' is not a number", s);
		else if (!in_range(k, d))
			error_at(ini, line, group, key, "%s is out of range [%g, %g]", s, k->min, k->max);
		break;
	case SIM_KEY_STRING: {
		GError *e = NULL;
		char *str = g_key_file_get_string(ini->kf, group, key, &e);
		if (!str)
			error_at(ini, line, group, key, "%s", e->message);
		else if (!*str)
			error_at(ini, line, group, key, "must not be empty");
		g_clear_error(&e);
		g_free(str);
		break;
	}
	case SIM_KEY_ENUM:
		if (enum_index(k, g_strstrip(raw ? raw : (char *)"")) < 0) {
			char *all = g_strjoinv(", ", (char **)k->choices);
			const char *near = closest(s, k->choices, g_strv_length((char **)k->choices));
			error_at(ini, line, group, key, "'%s' is not one of: %s%s%s%s", s, all,
				 near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
			g_free(all);
		}
		break;
	case SIM_KEY_BOOL:
		if (strcmp(g_strstrip(raw ? raw : (char *)""), "true") && strcmp(s, "false"))
			error_at(ini, line, group, key, "'%s' is not true or false", s);
		break;
	case SIM_KEY_VEC3:
		if (parse_vec3(s, v3) < 0)
			error_at(ini, line, group, key, "'%s' is not a position x,y[,z]", s);
		else
			for (int j = 0; j < 3; j++)
				if (!in_range(k, v3[j])) {
					error_at(ini, line, group, key, "component %g is out of range [%g, %g]",
						 v3[j], k->min, k->max);
					break;
				}
		break;
	case SIM_KEY_VEC3_LIST:
	case SIM_KEY_DOUBLE_LIST: {
		int vec = k->type == SIM_KEY_VEC3_LIST;
		if (parse_list(s, vec, &list, &n) < 0) {
			error_at(ini, line, group, key, vec ? "'%s' is not a list of positions x,y[,z] separated by ';'"
							    : "'%s' is not a list of numbers", s);
			break;
		}
		for (size_t j = 0; j < n * (vec ? 3 : 1); j++)
			if (!in_range(k, list[j])) {
				error_at(ini, line, group, key, "value %g is out of range [%g, %g]", list[j],
					 k->min, k->max);
				break;
			}
		g_free(list);
		break;
	}
	}
	g_free(raw);
}

static void validate_group(sim_ini *ini, const char *group)
{
	const sim_group_spec *g = group_spec(ini->specs, group);
	int gline = lookup_line(ini, group, NULL);
	if (!g) {
		/* Suggest from the group's stem: "[nodes.1]" -> "[node.1]". */
		char *stem = g_strdup(group);
		char *dot = strchr(stem, '.');
		const char *suffix = dot ? group + (dot - stem) : "";
		if (dot)
			*dot = 0;
		GPtrArray *names = g_ptr_array_new();
		const sim_group_spec *match = NULL, *near = NULL;
		for (const sim_group_spec *s = ini->specs; s->name; s++) {
			g_ptr_array_add(names, (gpointer)s->name);
			if (strcmp(s->name, stem) == 0)
				match = s;
		}
		const char *nn = closest(stem, (const char *const *)names->pdata, names->len);
		for (const sim_group_spec *s = ini->specs; nn && s->name; s++)
			if (strcmp(s->name, nn) == 0)
				near = s;
		if (match && match->numbered)
			error_at(ini, gline, group, NULL,
				 "unknown group: %s groups are written [%s.N] with N a non-negative integer",
				 match->name, match->name);
		else if (match)
			error_at(ini, gline, group, NULL, "unknown group: [%s] takes no number", match->name);
		else if (near)
			error_at(ini, gline, group, NULL, "unknown group (did you mean [%s%s]?)", near->name,
				 near->numbered ? (*suffix ? suffix : ".N") : "");
		else
			error_at(ini, gline, group, NULL, "unknown group");
		g_ptr_array_free(names, TRUE);
		g_free(stem);
		return;
	}
	GPtrArray *keys = g_hash_table_lookup(ini->keys, group);
	for (guint i = 0; keys && i < keys->len; i++) {
		const char *key = keys->pdata[i];
		const sim_key_spec *k = key_spec(g, key);
		int line = lookup_line(ini, group, key);
		if (!k) {
			GPtrArray *names = g_ptr_array_new();
			for (const sim_key_spec *s = g->keys; s->name; s++)
				g_ptr_array_add(names, (gpointer)s->name);
			const char *near = closest(key, (const char *const *)names->pdata, names->len);
			error_at(ini, line, group, key, "unknown key%s%s%s", near ? " (did you mean " : "",
				 near ? near : "", near ? "?)" : "");
			g_ptr_array_free(names, TRUE);
			continue;
		}
		validate_value(ini, group, key, k, line);
	}
	for (const sim_key_spec *k = g->keys; k->name; k++)
		if (k->required && !g_key_file_has_key(ini->kf, group, k->name, NULL))
			error_at(ini, gline, group, k->name, "required key is missing");
}

/* Scan the text for syntax and build the line index; 0 or -EINVAL. */
static int scan(sim_ini *ini, const char *text)
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
				error_at(ini, ln, NULL, NULL, "malformed group header '%s'", l);
				bad = 1;
				continue;
			}
			g_free(group);
			group = g_strndup(l + 1, len - 2);
			int prev = lookup_line(ini, group, NULL);
			if (prev) {
				error_at(ini, ln, group, NULL, "group defined twice (first at line %d)", prev);
				bad = 1;
				continue;
			}
			g_hash_table_insert(ini->lines, g_strdup(group), GINT_TO_POINTER(ln));
			g_ptr_array_add(ini->groups, g_strdup(group));
			g_hash_table_insert(ini->keys, g_strdup(group), g_ptr_array_new_with_free_func(g_free));
			continue;
		}
		char *eq = strchr(l, '=');
		if (!eq) {
			error_at(ini, ln, group, NULL, "'%s' is not a group header, a key = value line or a # comment", l);
			bad = 1;
			continue;
		}
		*eq = 0;
		char *key = g_strstrip(l);
		if (!*key || strpbrk(key, "[] \t")) {
			error_at(ini, ln, group, NULL, "malformed key '%s'", key);
			bad = 1;
			continue;
		}
		if (!group) {
			error_at(ini, ln, NULL, key, "key before any [group]");
			bad = 1;
			continue;
		}
		int prev = lookup_line(ini, group, key);
		if (prev) {
			error_at(ini, ln, group, key, "key given twice (first at line %d)", prev);
			bad = 1;
			continue;
		}
		g_hash_table_insert(ini->lines, line_key(group, key), GINT_TO_POINTER(ln));
		g_ptr_array_add(g_hash_table_lookup(ini->keys, group), g_strdup(key));
	}
	g_free(group);
	g_strfreev(lines);
	return bad ? -EINVAL : 0;
}

sim_ini *sim_ini_load_data(const char *name, const char *text, const sim_group_spec *groups,
			   GError **err)
{
	sim_ini *ini = g_new0(sim_ini, 1);
	ini->name = g_strdup(name);
	ini->specs = groups;
	ini->kf = g_key_file_new();
	ini->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	ini->groups = g_ptr_array_new_with_free_func(g_free);
	ini->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					  (GDestroyNotify)g_ptr_array_unref);
	ini->lists = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
					   (GDestroyNotify)g_ptr_array_unref);
	ini->errors = g_string_new(NULL);

	if (scan(ini, text) == 0) {
		GError *e = NULL;
		if (!g_key_file_load_from_data(ini->kf, text, (gsize)-1, G_KEY_FILE_NONE, &e)) {
			error_at(ini, 0, NULL, NULL, "%s", e->message);
			g_error_free(e);
		} else {
			for (guint i = 0; i < ini->groups->len; i++)
				validate_group(ini, ini->groups->pdata[i]);
		}
	}
	if (sim_ini_check(ini, err) < 0) {
		sim_ini_free(ini);
		return NULL;
	}
	return ini;
}

sim_ini *sim_ini_load_file(const char *path, const sim_group_spec *groups, GError **err)
{
	char *text = NULL;
	GError *e = NULL;
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		g_set_error(err, SIM_INI_ERROR, 2, "%s: cannot read: %s", path, e->message);
		g_error_free(e);
		return NULL;
	}
	sim_ini *ini = sim_ini_load_data(path, text, groups, err);
	g_free(text);
	return ini;
}

void sim_ini_free(sim_ini *ini)
{
	if (!ini)
		return;
	g_free(ini->name);
	g_key_file_free(ini->kf);
	g_hash_table_destroy(ini->lines);
	g_ptr_array_free(ini->groups, TRUE);
	g_hash_table_destroy(ini->keys);
	g_hash_table_destroy(ini->lists);
	g_string_free(ini->errors, TRUE);
	g_free(ini);
}

const char *sim_ini_name(const sim_ini *ini)
{
	return ini->name;
}

const char *const *sim_ini_groups(const sim_ini *ini, const char *name)
{
	GPtrArray *list = g_hash_table_lookup(ini->lists, name);
	if (list)
		return (const char *const *)list->pdata;
	list = g_ptr_array_new();
	size_t len = strlen(name);
	for (guint i = 0; i < ini->groups->len; i++) {
		const char *g = ini->groups->pdata[i];
		if (strcmp(g, name) == 0 ||
		    (strncmp(g, name, len) == 0 && g[len] == '.' && sim_ini_group_number(g) >= 0))
			g_ptr_array_add(list, (gpointer)g);
	}
	g_ptr_array_add(list, NULL);
	g_hash_table_insert(ini->lists, g_strdup(name), list);
	return (const char *const *)list->pdata;
}

int sim_ini_has(const sim_ini *ini, const char *group, const char *key)
{
	return g_key_file_has_key(ini->kf, group, key, NULL);
}

/* The value text of a key (file, else default) and its spec; NULL text when
 * neither exists or the key is not in the table with type `t`. */
static char *value_of(const sim_ini *ini, const char *group, const char *key, sim_key_type t,
		      const sim_key_spec **spec)
{
	const sim_group_spec *g = group_spec(ini->specs, group);
	const sim_key_spec *k = g ? key_spec(g, key) : NULL;
	if (!k || k->type != t) {
		g_critical("inicheck: [%s] %s is not a table key of the requested type", group, key);
		return NULL;
	}
	*spec = k;
	if (g_key_file_has_key(ini->kf, group, key, NULL))
		return t == SIM_KEY_STRING ? g_key_file_get_string(ini->kf, group, key, NULL)
					   : g_key_file_get_value(ini->kf, group, key, NULL);
	return g_strdup(k->def);
}

int64_t sim_ini_int(const sim_ini *ini, const char *group, const char *key)
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, SIM_KEY_INT, &k);
	int64_t v = 0;
	if (s)
		parse_int(s, &v);
	g_free(s);
	return v;
}

double sim_ini_double(const sim_ini *ini, const char *group, const char *key)
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, SIM_KEY_DOUBLE, &k);
	double v = 0;
	if (s)
		parse_double(s, &v);
	g_free(s);
	return v;
}

int sim_ini_bool(const sim_ini *ini, const char *group, const char *key)
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, SIM_KEY_BOOL, &k);
	int v = s && strcmp(g_strstrip(s), "true") == 0;
	g_free(s);
	return v;
}

char *sim_ini_string(const sim_ini *ini, const char *group, const char *key)
{
	const sim_key_spec *k;
	return value_of(ini, group, key, SIM_KEY_STRING, &k);
}

int sim_ini_enum(const sim_ini *ini, const char *group, const char *key)
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, SIM_KEY_ENUM, &k);
	int v = s ? enum_index(k, g_strstrip(s)) : -1;
	g_free(s);
	return v < 0 ? 0 : v;
}

void sim_ini_vec3(const sim_ini *ini, const char *group, const char *key, double out[3])
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, SIM_KEY_VEC3, &k);
	out[0] = out[1] = out[2] = 0;
	if (s && parse_vec3(s, out) < 0)
		out[0] = out[1] = out[2] = 0;
	g_free(s);
}

static double *get_list(const sim_ini *ini, const char *group, const char *key, sim_key_type t,
			size_t *n)
{
	const sim_key_spec *k;
	char *s = value_of(ini, group, key, t, &k);
	double *v = NULL;
	*n = 0;
	if (s && parse_list(s, t == SIM_KEY_VEC3_LIST, &v, n) < 0)
		v = NULL;
	g_free(s);
	return v;
}

double *sim_ini_vec3_list(const sim_ini *ini, const char *group, const char *key, size_t *n)
{
	return get_list(ini, group, key, SIM_KEY_VEC3_LIST, n);
}

double *sim_ini_double_list(const sim_ini *ini, const char *group, const char *key, size_t *n)
{
	return get_list(ini, group, key, SIM_KEY_DOUBLE_LIST, n);
}
