/* cfg.h — table-driven GKeyFile configuration with file:line:key errors.
 *
 * A service describes its configuration as a table of cfg_entry (group, key,
 * type, default, range, offset of the field in its settings struct).
 * cfg_defaults() fills a struct from the table; cfg_load() reads an INI file
 * with GKeyFile, checks every key against the table (unknown groups and keys
 * are errors too) and stores the values.  Every error names the file, the
 * line, the group and key, and why, e.g.
 *   /etc/chorus/syncd.conf:12: [fit] window: expected an integer in 4..4096, got "abc"
 * Errors are reported as GError (domain CFG_ERROR) at this GLib-facing edge.
 */
#ifndef CHORUS_CFG_H
#define CHORUS_CFG_H

#include <glib.h>
#include <stddef.h>

typedef enum {
	CFG_INT,    /* gint64 field */
	CFG_DOUBLE, /* double field */
	CFG_BOOL,   /* gboolean field */
	CFG_STRING, /* char * field, g_free'd by cfg_clear() */
} cfg_type;

typedef struct {
	const char *group;  /* INI group */
	const char *key;    /* key within group */
	cfg_type type;
	const char *def;    /* default as text (parsed like a file value); NULL: none (field left zero/NULL) */
	double min, max;    /* inclusive range for CFG_INT/CFG_DOUBLE; ignored when min > max */
	size_t offset;      /* offsetof(settings struct, field) */
	const char *help;   /* one line, for --help-config and docs */
} cfg_entry;

#define CFG_ERROR (cfg_error_quark())
GQuark cfg_error_quark(void);

/* Fill *target with the table's defaults; returns TRUE, or FALSE with
 * *err set if a default is malformed (a programming error). */
gboolean cfg_defaults(const cfg_entry *table, size_t n, void *target, GError **err);

/* Load path into *target (defaults must have been applied first); returns
 * TRUE, or FALSE with *err naming file:line, group, key and the reason.
 * A missing file is an error unless missing_ok. */
gboolean cfg_load(const char *path, gboolean missing_ok, const cfg_entry *table, size_t n,
		  void *target, GError **err);

/* Parse and store one value given as text (command-line overrides use it);
 * `where` prefixes the error message.  Returns TRUE or FALSE with *err. */
gboolean cfg_set(const cfg_entry *e, void *target, const char *text, const char *where, GError **err);

/* Free the strings the table's CFG_STRING fields hold in *target. */
void cfg_clear(const cfg_entry *table, size_t n, void *target);

/* Write the table as a commented INI file (defaults and help) to a new string. */
char *cfg_describe(const cfg_entry *table, size_t n);

#endif
