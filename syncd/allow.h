/* allow.h — the node numbers a syncd believes ([rbs] peers = 1-8, 12).
 *
 * A list of numbers and inclusive ranges, separated by commas or spaces.
 * Packets from a sender not on it are dropped before decoding, and what an
 * advertisement says of nodes not on it (news, edges, a root) is left out,
 * so a forged or misconfigured node id takes no memory and no role.  An
 * empty list allows every node (bounded by [rbs] max_peers).  Pure.
 */
#ifndef CHORUS_SYNCD_ALLOW_H
#define CHORUS_SYNCD_ALLOW_H

#include <stddef.h>
#include <stdint.h>

typedef struct syncd_allow syncd_allow;

/* Parse text into *out (NULL for an empty text: every node allowed).
 * Returns 0, or -EINVAL with the offending item and why in why[len]
 * (not a number, above 4294967294, a range whose end is below its start). */
int syncd_allow_parse(const char *text, syncd_allow **out, char *why, size_t len);

/* Free a (NULL is fine). */
void syncd_allow_free(syncd_allow *a);

/* Whether node is on the list (always true for a NULL list). */
int syncd_allow_has(const syncd_allow *a, uint32_t node);

/* The list as text, e.g. "1-8,12" (g_free it); "any" for NULL. */
char *syncd_allow_format(const syncd_allow *a);

#endif
