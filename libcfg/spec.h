/* spec.h — libcfg's internals shared by its files (not installed, not for
 * callers): parsing and validating one value against its key, and finding
 * groups and keys in a table.  Pure: no I/O, no global state.
 *
 * Value text is as written in the file, unescaped and stripped of blanks.
 * The parsers return 0, or -EINVAL (malformed, out of the type's range, not
 * finite) and leave *out alone.
 */
#ifndef CHORUS_CFG_SPEC_H
#define CHORUS_CFG_SPEC_H

#include <glib.h>
#include <stddef.h>

#include "libcfg/cfg.h"

/* A finite real in C syntax, locale-independent (g_ascii_strtod). */
int cfg_parse_double(const char *s, double *out);

/* A base-10 64-bit integer ("010" is ten; no hex, no octal). */
int cfg_parse_int(const char *s, gint64 *out);

/* "x,y" or "x,y,z" (z = 0 when absent). */
int cfg_parse_vec3(const char *s, double out[3]);

/* A list of reals (vec = 0: separated by ',' or ';') or of vectors (vec =
 * 1: separated by ';') into a new array of *count entries (a vector takes 3
 * doubles; g_free it).  An empty list is -EINVAL. */
int cfg_parse_list(const char *s, int vec, double **out, size_t *count);

/* Index of `s` in k's choices, or -1. */
int cfg_enum_index(const cfg_key *k, const char *s);

/* The one of n `names` closest to `s` when close enough to be a typo
 * (edit distance), else NULL. */
const char *cfg_closest(const char *s, const char *const *names, size_t n);

/* Why `text` is not a valid value of k (type, range, choices), as a new
 * string; NULL when it is valid. */
char *cfg_check_value(const cfg_key *k, const char *text);

/* Store a value that cfg_check_value accepted into its field (field types:
 * cfg.h). */
void cfg_store_value(const cfg_key *k, char *field, const char *text);

/* The table's group that `group` ("name" or "name.N") belongs to, or NULL. */
const cfg_group *cfg_group_spec(const cfg_group *specs, const char *group);

/* The key of g named `key` (its current name), or NULL. */
const cfg_key *cfg_key_spec(const cfg_group *g, const char *key);

/* The key of g whose current or deprecated name is `key`, or NULL. */
const cfg_key *cfg_key_spec_any(const cfg_group *g, const char *key);

/* The field of key k of group `group` (spec g, a store group) in target. */
char *cfg_field_of(const cfg_group *g, const cfg_key *k, const char *group, void *target);

/* What a value of type t looks like, for help and errors ("an integer"). */
const char *cfg_type_name(cfg_type t);

#endif
