/* bootid.h — a service's boot number (syncd's, collab's): larger at every
 * start, so that its peers'
 * replay windows (libdev/replay.h) can tell a packet of this run from one
 * recorded in an earlier run and sent again.
 *
 * The number is the larger of CLOCK_REALTIME in ns and one more than the
 * number the previous start saved in the boot file, and is saved there for
 * the next start (written to a temporary file, fsync'd, renamed).  Either
 * alone keeps it increasing: the file across a clock set back (a node with no
 * RTC boots in 1970), the clock across a lost file.  Only a node that loses
 * both gets a smaller number, and its peers refuse it as a replay
 * (`stale_boot` on their sync/rbs) until its clock passes the old number or
 * they restart; docs/protocol.md "Replays".
 */
#ifndef CHORUS_LIBDEV_BOOTID_H
#define CHORUS_LIBDEV_BOOTID_H

#include <stddef.h>
#include <stdint.h>

/* The boot number for this start; path (may be NULL: none) is the boot
 * file, read and rewritten.  A file that cannot be read as a number or
 * written leaves its reason in why[len] (empty when all went well); the
 * number is then the clock's alone. */
uint64_t dev_bootid_next(const char *path, char *why, size_t len);

/* The boot number from the clock and the number saved before (pure). */
uint64_t dev_bootid_pick(uint64_t realtime_ns, int have_saved, uint64_t saved);

#endif
