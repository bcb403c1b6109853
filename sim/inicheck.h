/* inicheck.h — GKeyFile INI files validated against a table, with line numbers.
 *
 * GKeyFile parses values but forgets where they were, so this module scans the
 * file text itself and keeps an index (group, key) -> line.  Every error,
 * whether found here (syntax, unknown group or key, duplicate, wrong type, out
 * of range, missing required key) or later by the caller's semantic checks
 * (sim_ini_fail), reads "FILE:LINE: [group] key: why".  Errors accumulate, so
 * one run reports every mistake in the file, not just the first.
 *
 * A table is an array of sim_group_spec, each with an array of sim_key_spec;
 * numbered groups are written "[NAME.N]" with N a non-negative integer.
 * Values are read back through typed getters that apply the table's default
 * when the key is absent.  Not thread-safe; no global state.
 */
#ifndef CHORUS_SIM_INICHECK_H
#define CHORUS_SIM_INICHECK_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	SIM_KEY_INT,         /* 64-bit integer */
	SIM_KEY_DOUBLE,      /* finite real */
	SIM_KEY_STRING,      /* non-empty text (GKeyFile escapes apply) */
	SIM_KEY_ENUM,        /* one of `choices` */
	SIM_KEY_BOOL,        /* true | false */
	SIM_KEY_VEC3,        /* "x,y" or "x,y,z" (z defaults to 0) */
	SIM_KEY_VEC3_LIST,   /* vectors separated by ';' */
	SIM_KEY_DOUBLE_LIST, /* reals separated by ',' or ';' */
} sim_key_type;

typedef struct {
	const char *name;
	sim_key_type type;
	const char *def;            /* default as it would be written; NULL: none */
	double min, max;            /* inclusive range of each number (ignored if min > max) */
	const char *const *choices; /* SIM_KEY_ENUM: NULL-terminated list */
	int required;               /* missing key is an error */
} sim_key_spec;

typedef struct {
	const char *name;          /* group name, or prefix of numbered groups */
	int numbered;              /* 1: groups are "name.N" */
	const sim_key_spec *keys;  /* terminated by an entry with name == NULL */
} sim_group_spec;

typedef struct sim_ini sim_ini;

#define SIM_INI_ERROR (sim_ini_error_quark())
GQuark sim_ini_error_quark(void);

/* Parse and validate the file at `path` against `groups` (terminated by
 * name == NULL).  Returns the handle, or NULL with *err (SIM_INI_ERROR)
 * listing every problem found, one "FILE:LINE: [group] key: why" per line. */
sim_ini *sim_ini_load_file(const char *path, const sim_group_spec *groups, GError **err);

/* The same for text already in memory; `name` is used in messages. */
sim_ini *sim_ini_load_data(const char *name, const char *text, const sim_group_spec *groups,
			   GError **err);

void sim_ini_free(sim_ini *ini);

/* The file name given at load. */
const char *sim_ini_name(const sim_ini *ini);

/* Line (1-based) of `key` in `group`, or of the group header when key is NULL
 * or absent; 0 when the group is absent too. */
int sim_ini_line(const sim_ini *ini, const char *group, const char *key);

/* Groups whose name is `name` (plain) or "name.N" (numbered), in file order;
 * a NULL-terminated array owned by the handle. */
const char *const *sim_ini_groups(const sim_ini *ini, const char *name);

/* N of a numbered group name "prefix.N"; -1 if not numbered. */
int64_t sim_ini_group_number(const char *group);

/* True when the key is present in the file. */
int sim_ini_has(const sim_ini *ini, const char *group, const char *key);

/* Typed getters: the file's value, else the table default.  The key must be
 * in the table with the matching type (a programming error otherwise, logged
 * with g_critical, returns 0 / NULL).  Strings and arrays are newly
 * allocated (g_free). */
int64_t sim_ini_int(const sim_ini *ini, const char *group, const char *key);
double sim_ini_double(const sim_ini *ini, const char *group, const char *key);
int sim_ini_bool(const sim_ini *ini, const char *group, const char *key);
char *sim_ini_string(const sim_ini *ini, const char *group, const char *key);
/* Index of the value in the key's choices. */
int sim_ini_enum(const sim_ini *ini, const char *group, const char *key);
void sim_ini_vec3(const sim_ini *ini, const char *group, const char *key, double out[3]);
/* Array of 3*n doubles; n in *n. */
double *sim_ini_vec3_list(const sim_ini *ini, const char *group, const char *key, size_t *n);
double *sim_ini_double_list(const sim_ini *ini, const char *group, const char *key, size_t *n);

/* Record a semantic error at the key's line (or the group's when key is
 * NULL or absent): "FILE:LINE: [group] key: <fmt>". */
void sim_ini_fail(sim_ini *ini, const char *group, const char *key, const char *fmt, ...)
	G_GNUC_PRINTF(4, 5);

/* 0 when no error was recorded, else -EINVAL with *err listing them all. */
int sim_ini_check(sim_ini *ini, GError **err);

#endif
