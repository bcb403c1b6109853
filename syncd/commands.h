/* commands.h — the text command language of sync/command: registering
 * clocks, feeding and steering pairs, choosing the global root.  Works on
 * the daemon's state (syncd.h) and takes the caller's `now_ns`; reads no
 * clock except through syncd_root_take (the `root` command on this node).
 */
#ifndef CHORUS_SYNCD_COMMANDS_H
#define CHORUS_SYNCD_COMMANDS_H

#include <glib.h>
#include <stdint.h>

#include "libdev/dev.h"
#include "syncd/syncd.h"

/* Run one command line from `who` (may be NULL) against *s (now_ns = node cpu
 * ns); append the reply message; count it in s->commands (and
 * s->bad_commands when refused); return 0 or a negative errno (EINVAL for
 * malformed input, ENOENT for an unknown pair, EOPNOTSUPP for a remote root
 * with RBS off). */
int syncd_command(syncd *s, const dev_creds *who, const char *line, int64_t now_ns, GString *reply);

/* The usage text of sync/command, appended to out. */
void syncd_usage(GString *out);

#endif
