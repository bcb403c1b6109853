/* cfg.h — the one configuration engine: INI files (GKeyFile syntax)
 * validated against a table, with line numbers and every error at once.
 *
 * A table is an array of cfg_group (terminated by name == NULL), each with an
 * array of cfg_key (terminated by name == NULL).  A group is plain ("[rbs]")
 * or numbered ("[node.N]", N a non-negative decimal integer; leading zeros
 * do not make a new number).  A group header may repeat (the sections
 * merge, as in GKeyFile) unless the group is `unique`; a key given twice in
 * one group is always an error.  Values are parsed one way everywhere:
 *   CFG_INT     base-10 64-bit integer ("010" is 10; no hex, no octal)
 *   CFG_DOUBLE  finite real read with g_ascii_strtod (a '.' whatever the locale)
 *   CFG_BOOL    exactly "true" or "false"
 *   CFG_STRING  text (GKeyFile escapes apply), leading/trailing blanks dropped
 *   CFG_ENUM    one of the key's `choices`; its index is the value
 *   CFG_VEC3    "x,y" or "x,y,z" (z = 0 when absent)
 *   CFG_VEC3_LIST, CFG_DOUBLE_LIST  vectors separated by ';', reals by ',' or ';'
 * Numbers are checked against [min, max] (inclusive; ignored when min > max).
 *
 * Every error, whether found by the engine (syntax, unknown group or key,
 * duplicate, wrong type, out of range, missing required key) or by the
 * caller's semantic checks (cfg_file_fail), reads
 *   FILE:LINE: [group] key: why
 * with "did you mean" for a misspelt group, key or choice, and errors
 * accumulate: one run reports every mistake (up to a cap) in one GError
 * (domain CFG_ERROR), one error per line.
 *
 * Keys may name a deprecated former name (`alias`): the file may still use
 * it, with a g_warning naming file:line, the old and the new key.
 *
 * Two ways to read values, which can be mixed:
 *  - struct tables (daemons): groups with `store` set bind their keys to the
 *    fields of a settings struct (offsetof); cfg_defaults() fills it,
 *    cfg_load() reads a file into it, cfg_set() parses one command-line or
 *    environment override, cfg_describe() prints the table for
 *    --print-config.  A numbered store group is an array of structs holding
 *    N = first .. first+count-1; several specs of the same name may cover
 *    different ranges (to give the first element other defaults).
 *  - the handle (cfg_file): typed getters by group and key, the line of any
 *    group or key, and cfg_file_fail() for semantic errors with their line
 *    (the scenario parser; detector profiles).
 *
 * Field types of store keys: CFG_INT gint64, CFG_DOUBLE double, CFG_BOOL
 * gboolean, CFG_STRING char * (g_free'd by cfg_clear), CFG_ENUM int (index
 * in choices), CFG_VEC3 double[3].  Lists cannot be stored (read them from
 * the handle).  Not thread-safe; no global state.
 */
#ifndef CHORUS_CFG_H
#define CHORUS_CFG_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	CFG_INT,
	CFG_DOUBLE,
	CFG_BOOL,
	CFG_STRING,
	CFG_ENUM,
	CFG_VEC3,
	CFG_VEC3_LIST,
	CFG_DOUBLE_LIST,
} cfg_type;

/* cfg_key.flags */
#define CFG_REQUIRED 1u /* a missing key is an error */
#define CFG_NONEMPTY 2u /* CFG_STRING: an empty value is an error */

typedef struct {
	const char *name; /* key (with its unit: interval_s, f_lo_hz) */
	cfg_type type;
	const char *def;            /* default as it would be written; NULL: none (field left as it is) */
	double min, max;            /* inclusive range of each number (ignored if min > max) */
	size_t offset;              /* store groups: offsetof the field in the group's struct */
	const char *help;           /* one line, for cfg_describe */
	const char *const *choices; /* CFG_ENUM: NULL-terminated */
	unsigned flags;             /* CFG_REQUIRED | CFG_NONEMPTY */
	const char *alias;          /* deprecated former name accepted with a warning; NULL: none */
} cfg_key;

/* Entries of a store group's key table, bound to `field` of struct `type`:
 * a key; a key renamed to carry its unit whose former name `old` is still
 * accepted; an enum key (its field, an int, holds the index of the choice). */
#define CFG_KEY(type, key, t, def, lo, hi, field, help) \
	{ \
		key, t, def, lo, hi, offsetof(type, field), help, NULL, 0, NULL \
	}
#define CFG_KEY_RENAMED(type, key, old, t, def, lo, hi, field, help) \
	{ \
		key, t, def, lo, hi, offsetof(type, field), help, NULL, 0, old \
	}
#define CFG_KEY_ENUM(type, key, def, choices, field, help) \
	{ \
		key, CFG_ENUM, def, 1, 0, offsetof(type, field), help, choices, 0, NULL \
	}

typedef struct {
	const char *name;    /* group name, or prefix of numbered groups */
	int numbered;        /* 1: groups are "name.N" */
	const cfg_key *keys; /* terminated by an entry with name == NULL */
	int store;           /* 1: keys are fields of the target struct */
	size_t offset;       /* store: offsetof the group's struct (element `first` when numbered) */
	size_t stride;       /* store, numbered: bytes from one element to the next */
	int first, count;    /* numbered: N in first..first+count-1; count 0 = any N (not with store) */
	int unique;          /* 1: the group may appear once; 0: repeated headers merge (as in GKeyFile) */
} cfg_group;

#define CFG_ERROR (cfg_error_quark())
GQuark cfg_error_quark(void);

/* --- the handle ------------------------------------------------------------ */

typedef struct cfg_file cfg_file;

/* Parse and validate the file at `path` against `groups`.  Returns the
 * handle, or NULL with *err listing every problem found, one
 * "FILE:LINE: [group] key: why" per line; "PATH: cannot read: …" (code
 * ENOENT when the file does not exist, else EIO) when it cannot be read. */
cfg_file *cfg_file_load(const char *path, const cfg_group *groups, GError **err);

/* The same for text in memory; `name` stands for the file in messages. */
cfg_file *cfg_file_load_data(const char *name, const char *text, const cfg_group *groups, GError **err);

void cfg_file_free(cfg_file *f);

/* The file name given at load. */
const char *cfg_file_name(const cfg_file *f);

/* Line (1-based) of `key` (its current or deprecated name) in `group`, or of
 * the group header when key is NULL or absent; 0 when the group is absent. */
int cfg_file_line(const cfg_file *f, const char *group, const char *key);

/* Groups whose name is `name` (plain) or "name.N" (numbered), in file order;
 * a NULL-terminated array owned by the handle. */
const char *const *cfg_file_groups(const cfg_file *f, const char *name);

/* N of a numbered group name "prefix.N"; -1 if not numbered.  Pure. */
int64_t cfg_group_number(const char *group);

/* TRUE when the key (or its deprecated name) is present in the file. */
gboolean cfg_file_has(const cfg_file *f, const char *group, const char *key);

/* Typed getters: the file's value, else the table default.  The key must be
 * in the table with the matching type (else a programming error, logged with
 * g_critical, returns 0 / NULL).  Strings and arrays are newly allocated
 * (g_free); an absent list without default gives NULL and *n = 0. */
gint64 cfg_file_int(const cfg_file *f, const char *group, const char *key);
double cfg_file_double(const cfg_file *f, const char *group, const char *key);
gboolean cfg_file_bool(const cfg_file *f, const char *group, const char *key);
char *cfg_file_string(const cfg_file *f, const char *group, const char *key);
/* Index of the value in the key's choices. */
int cfg_file_enum(const cfg_file *f, const char *group, const char *key);
void cfg_file_vec3(const cfg_file *f, const char *group, const char *key, double out[3]);
/* Array of 3*n doubles (vectors), or of n doubles. */
double *cfg_file_vec3_list(const cfg_file *f, const char *group, const char *key, size_t *n);
double *cfg_file_double_list(const cfg_file *f, const char *group, const char *key, size_t *n);

/* Record a semantic error at the key's line (or the group's when key is
 * NULL or absent): "FILE:LINE: [group] key: <fmt>". */
void cfg_file_fail(cfg_file *f, const char *group, const char *key, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* TRUE when no error was recorded, else FALSE with *err listing them all. */
gboolean cfg_file_check(cfg_file *f, GError **err);

/* Store every value present in the file into the fields of the store groups
 * of *target (values were validated at load, so this cannot fail). */
void cfg_file_store(const cfg_file *f, void *target);

/* --- struct tables ----------------------------------------------------------- */

/* Fill the store groups' fields of *target with the defaults (every element
 * of numbered groups); TRUE, or FALSE with *err if a default is malformed
 * (a programming error). */
gboolean cfg_defaults(const cfg_group *groups, void *target, GError **err);

/* Load `path` into *target (defaults must have been applied first): TRUE, or
 * FALSE with *err listing every error.  A missing file is fine (TRUE, target
 * untouched) when missing_ok, else an error. */
gboolean cfg_load(const char *path, gboolean missing_ok, const cfg_group *groups, void *target,
		  GError **err);

/* cfg_load, then check(f, target) with the values stored, which records
 * semantic errors at their keys' lines (cfg_file_fail: an address that
 * is not what the key needs, a group or file that does not exist).  TRUE,
 * or FALSE with *err listing every error. */
gboolean cfg_load_checked(const char *path, gboolean missing_ok, const cfg_group *groups, void *target,
			  void (*check)(cfg_file *f, const void *target), GError **err);

/* Parse and store one value given as text (command-line or environment
 * overrides) into [group] key ("device.1" for a numbered group; the key's
 * deprecated name works too).  `where` prefixes the error message.  TRUE, or
 * FALSE with *err "WHERE[group] key: why" (unknown group/key included). */
gboolean cfg_set(const cfg_group *groups, void *target, const char *group, const char *key,
		 const char *text, const char *where, GError **err);

/* Free the strings the store groups' CFG_STRING fields hold in *target. */
void cfg_clear(const cfg_group *groups, void *target);

/* The store groups as a commented INI file (each key's help, type, range and
 * default; one group per element of numbered groups), newly allocated. */
char *cfg_describe(const cfg_group *groups);

/* --- a program's command line ------------------------------------------------ */

/* Parse the command line with GOption: the program's `entries` (NULL-ended)
 * and --print-config, which prints cfg_describe(table) (or describe(), when
 * given) to standard output.  `summary` follows the usage line; `no_args`
 * refuses arguments left over.  Returns -1 when the program goes on; else
 * the status it exits with now: 0 after --print-config (1 when standard
 * output could not take it), 2 after a parse error (printed as "PROG:
 * why"). */
int cfg_options(const char *prog, const char *summary, const GOptionEntry *entries, const cfg_group *table,
		char *(*describe)(void), gboolean no_args, int *argc, char ***argv);

#endif
