/* path.h — device names to socket paths (docs/architecture.md §3.3, "Simulation naming").
 *
 * A device name is a relative path of components [A-Za-z0-9_.-]+ joined by
 * '/', e.g. "sync/ticker", "audio/0/data".  Its socket lives at
 *   RUN/NAME                 normally
 *   RUN/sim/node<N>/NAME     when CHORUS_NODE=N is set
 * where RUN is $CHORUS_RUN, else /run/chorus for root, else
 * $XDG_RUNTIME_DIR/chorus, else /tmp/chorus-<uid>.
 * Errors are negative errno values with a static reason.
 */
#ifndef CHORUS_DEV_PATH_H
#define CHORUS_DEV_PATH_H

#include <stddef.h>

/* Longest socket path (sun_path is 108 bytes with the NUL). */
#define DEV_PATH_MAX 108

/* Check a device name: 0, or -EINVAL (empty, absolute, "..", ".", empty
 * component, bad character) with a reason in *why (may be NULL).  Pure. */
int dev_name_check(const char *name, const char **why);

/* Write the run directory for this process (with sim/node<N> when CHORUS_NODE
 * is set) into buf.  Returns 0, -EINVAL (CHORUS_NODE not a number) or
 * -ENAMETOOLONG, with a reason in *why. */
int dev_run_dir(char *buf, size_t len, const char **why);

/* Write the socket path of device `name` into buf.  Returns 0, -EINVAL (bad
 * name or CHORUS_NODE) or -ENAMETOOLONG (over DEV_PATH_MAX), reason in *why. */
int dev_path(const char *name, char *buf, size_t len, const char **why);

/* Create the parent directories of `path` (mode 0755; existing ones are
 * fine).  Returns 0 or the negative errno of the mkdir that failed. */
int dev_path_mkparents(const char *path);

#endif
