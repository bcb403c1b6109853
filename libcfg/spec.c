/* spec.c — what a table says about a value: parsing and validating values
 * by key type, and finding groups and keys in a table (see spec.h).  Pure:
 * no I/O, no state. */
#include "libcfg/spec.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* --- value parsing ---------------------------------------------------------- */

int cfg_parse_double(const char *s, double *out)
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

int cfg_parse_int(const char *s, gint64 *out)
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

int cfg_parse_vec3(const char *s, double out[3])
{
	guint n;
	char **tok = split(s, ",", &n);
	int rc = (n == 2 || n == 3) ? 0 : -EINVAL;
	out[2] = 0;
	for (guint i = 0; rc == 0 && i < n; i++)
		rc = cfg_parse_double(tok[i], &out[i]);
	g_strfreev(tok);
	return rc;
}

/* Parse a list of reals (vec = 0) or vectors (vec = 1) into a new array. */
int cfg_parse_list(const char *s, int vec, double **out, size_t *count)
{
	guint n;
	char **tok = split(s, vec ? ";" : ",;", &n);
	size_t w = vec ? 3 : 1;
	double *v = g_new0(double, n *w + 1);
	int rc = 0;
	for (guint i = 0; rc == 0 && i < n; i++)
		rc = vec ? cfg_parse_vec3(tok[i], v + 3 * i) : cfg_parse_double(tok[i], v + i);
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

static int in_range(const cfg_key *k, double v)
{
	return k->min > k->max || (v >= k->min && v <= k->max);
}

int cfg_enum_index(const cfg_key *k, const char *s)
{
	for (int i = 0; k->choices && k->choices[i]; i++)
		if (strcmp(k->choices[i], s) == 0)
			return i;
	return -1;
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
const char *cfg_closest(const char *s, const char *const *names, size_t n)
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

/* At most this many bytes of a bad value are echoed in its error. */
#define SHOWN_MAX 80

/* Why `text` (already unescaped and stripped) is not a valid value of k, as
 * a new string; NULL when it is valid. */
static char *check_value(const cfg_key *k, const char *text);

char *cfg_check_value(const cfg_key *k, const char *text)
{
	size_t n = strlen(text);
	if (n <= SHOWN_MAX)
		return check_value(k, text);
	/* A long bad value is named by its start and length, not echoed
	 * whole (a 3 MB line in a log helps nobody). */
	char *why = check_value(k, text);
	if (!why)
		return NULL;
	char *start = g_strndup(text, 40);
	char *shown = g_strdup_printf("%s… (%zu bytes)", start, n);
	GString *s = g_string_new(NULL);
	for (const char *p = why; *p;) {
		const char *hit = strstr(p, text);
		if (!hit) {
			g_string_append(s, p);
			break;
		}
		g_string_append_len(s, p, hit - p);
		g_string_append(s, shown);
		p = hit + n;
	}
	g_free(start);
	g_free(shown);
	g_free(why);
	return g_string_free(s, FALSE);
}

static char *check_value(const cfg_key *k, const char *text)
{
	double d, v3[3];
	gint64 i;
	double *list;
	size_t n;
	switch (k->type) {
	case CFG_INT:
		if (cfg_parse_int(text, &i) < 0)
			return g_strdup_printf("'%s' is not an integer", text);
		if (!in_range(k, (double)i))
			return g_strdup_printf("%s is out of range [%.17g, %.17g]", text, k->min, k->max);
		return NULL;
	case CFG_DOUBLE:
		if (cfg_parse_double(text, &d) < 0)
			return g_strdup_printf("'%s' is not a number", text);
		if (!in_range(k, d))
			return g_strdup_printf("%s is out of range [%g, %g]", text, k->min, k->max);
		return NULL;
	case CFG_STRING:
		if ((k->flags & CFG_NONEMPTY) && !*text)
			return g_strdup("must not be empty");
		return NULL;
	case CFG_ENUM:
		if (cfg_enum_index(k, text) < 0) {
			char *all = g_strjoinv(", ", (char **)k->choices);
			const char *near = cfg_closest(text, k->choices, g_strv_length((char **)k->choices));
			char *why = g_strdup_printf("'%s' is not one of: %s%s%s%s", text, all,
						    near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
			g_free(all);
			return why;
		}
		return NULL;
	case CFG_BOOL:
		if (strcmp(text, "true") && strcmp(text, "false"))
			return g_strdup_printf("'%s' is not true or false", text);
		return NULL;
	case CFG_VEC3:
		if (cfg_parse_vec3(text, v3) < 0)
			return g_strdup_printf("'%s' is not a position x,y[,z]", text);
		for (int j = 0; j < 3; j++)
			if (!in_range(k, v3[j]))
				return g_strdup_printf("component %g is out of range [%g, %g]", v3[j], k->min, k->max);
		return NULL;
	case CFG_VEC3_LIST:
	case CFG_DOUBLE_LIST: {
		int vec = k->type == CFG_VEC3_LIST;
		if (cfg_parse_list(text, vec, &list, &n) < 0)
			return g_strdup_printf(vec ? "'%s' is not a list of positions x,y[,z] separated by ';'"
						   : "'%s' is not a list of numbers",
					       text);
		char *why = NULL;
		for (size_t j = 0; j < n * (vec ? 3 : 1) && !why; j++)
			if (!in_range(k, list[j]))
				why = g_strdup_printf("value %g is out of range [%g, %g]", list[j], k->min, k->max);
		g_free(list);
		return why;
	}
	}
	return g_strdup("unknown key type");
}

/* Store a valid value into its field (see cfg.h for the field types). */
void cfg_store_value(const cfg_key *k, char *field, const char *text)
{
	switch (k->type) {
	case CFG_INT:
		cfg_parse_int(text, (gint64 *)field);
		break;
	case CFG_DOUBLE:
		cfg_parse_double(text, (double *)field);
		break;
	case CFG_BOOL:
		*(gboolean *)field = strcmp(text, "true") == 0;
		break;
	case CFG_STRING:
		g_free(*(char **)field);
		*(char **)field = g_strdup(text);
		break;
	case CFG_ENUM:
		*(int *)field = cfg_enum_index(k, text);
		break;
	case CFG_VEC3:
		cfg_parse_vec3(text, (double *)field);
		break;
	case CFG_VEC3_LIST:
	case CFG_DOUBLE_LIST:
		g_critical("cfg: [%s] lists cannot be stored in a struct", k->name);
		break;
	}
}

/* --- table lookup ----------------------------------------------------------- */

int64_t cfg_group_number(const char *group)
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

/* A numbered group name "prefix.N" of spec g (any N, in range or not). */
static int numbered_name(const cfg_group *g, const char *group)
{
	size_t len = strlen(g->name);
	return strncmp(group, g->name, len) == 0 && group[len] == '.' && cfg_group_number(group) >= 0 &&
	       !strchr(group + len + 1, '.');
}

static int in_numbers(const cfg_group *g, int64_t n)
{
	return g->count == 0 || (n >= g->first && n < (int64_t)g->first + g->count);
}

const cfg_group *cfg_group_spec(const cfg_group *specs, const char *group)
{
	for (const cfg_group *g = specs; g->name; g++) {
		if (!g->numbered && strcmp(group, g->name) == 0)
			return g;
		if (g->numbered && numbered_name(g, group) && in_numbers(g, cfg_group_number(group)))
			return g;
	}
	return NULL;
}

const cfg_key *cfg_key_spec(const cfg_group *g, const char *key)
{
	for (const cfg_key *k = g->keys; k->name; k++)
		if (strcmp(k->name, key) == 0)
			return k;
	return NULL;
}

/* The key whose current or deprecated name is `key`. */
const cfg_key *cfg_key_spec_any(const cfg_group *g, const char *key)
{
	const cfg_key *k = cfg_key_spec(g, key);
	for (const cfg_key *a = g->keys; !k && a->name; a++)
		if (a->alias && strcmp(a->alias, key) == 0)
			k = a;
	return k;
}

/* The field of key k of group `group` (spec g, a store group) in target. */
char *cfg_field_of(const cfg_group *g, const cfg_key *k, const char *group, void *target)
{
	size_t idx = g->numbered ? (size_t)(cfg_group_number(group) - g->first) : 0;
	return (char *)target + g->offset + idx * g->stride + k->offset;
}

const char *cfg_type_name(cfg_type t)
{
	switch (t) {
	case CFG_INT: return "an integer";
	case CFG_DOUBLE: return "a number";
	case CFG_BOOL: return "true or false";
	case CFG_STRING: return "a string";
	case CFG_ENUM: return "one of";
	case CFG_VEC3: return "x,y[,z]";
	case CFG_VEC3_LIST: return "x,y[,z]; …";
	case CFG_DOUBLE_LIST: return "numbers";
	}
	return "?";
}
