/* history_file.h — the file that keeps syncd's pieces of history across a
 * restart of syncd (a crash, an upgrade, `systemctl restart`, chorus-sim's
 * `down`), so that a restarted syncd converts a time from before its
 * restart with the fits that held then, and bridges its own downtime,
 * instead of extrapolating its new fits back (docs/clocks.md "Across a
 * restart of syncd").
 *
 * What: every piece of the local pairs (syncd/pairs.h, with the histories
 * kept for expired pairs) and of the RBS pairs (syncd/rbs_history.h), as
 * history_store.h encodes them, for this node and this boot: the file
 * names the kernel's boot id (/proc/sys/kernel/random/boot_id) — and in
 * simulation the node's simulated clocks and world ($CHORUS_SIM_CLOCK,
 * $CHORUS_SIM_UTC, $CHORUS_SIM_EPOCH_NS) — because the cpu clock
 * (CLOCK_MONOTONIC_RAW) starts again at a reboot, and pieces of another
 * boot name other instants: such a file, or another node's, is not loaded
 * (logged, and shown on sync/clocks), nor is a corrupt or truncated one;
 * syncd then starts with no pieces, as it did before this file existed.
 *
 * Where: `[syncd] history_file`; "" is $STATE_DIRECTORY/syncd.history under
 * systemd (StateDirectory=chorus: /var/lib/chorus), else syncd.history in
 * the run directory (libdev/path.h dev_run_dir; chorus-sim's node keeps
 * its own, which outlives a `down`); "none" keeps nothing.
 *
 * When: written whole and atomically (a temporary file in the same
 * directory, fsync, rename: g_file_set_contents_full, CONSISTENT |
 * DURABLE), at most every interval_ns (history_file_set_interval;
 * HISTORY_FILE_INTERVAL_NS unless set) while the pieces
 * changed (a piece kept, closed or expired; not a q2 that moved), and at a
 * clean stop with each pair's current fit as its newest piece (what an
 * expiry would keep).  A crash loses the data since the last piece kept:
 * the restarted syncd bridges it.  A write that fails is logged
 * (g_warning: the file and the system's error), counted and shown, and
 * tried again at the next interval.
 *
 * Reads and writes the file and /proc, and the environment; no clocks
 * (times are passed in, ns on the node's cpu clock).  Main context only.
 */
#ifndef CHORUS_SYNCD_HISTORY_FILE_H
#define CHORUS_SYNCD_HISTORY_FILE_H

#include <glib.h>
#include <stdint.h>

#include "syncd/pairs.h"
#include "syncd/rbs_core.h"

/* Least time between two writes while syncd runs, ns, by default
 * (`[syncd] history_write_s`). */
#define HISTORY_FILE_INTERVAL_NS (30LL * 1000000000LL)

/* The file's name in its default directory. */
#define HISTORY_FILE_NAME "syncd.history"

typedef struct history_file history_file;

/* The history file of node `node` as `[syncd] history_file` gives it
 * (`setting`: "" the default place above, "none" no file, else its path).
 * Reads the boot id and the environment; touches no file yet.  Never
 * fails: when there is no place or no boot id it keeps nothing, and says
 * why (history_file_describe). */
history_file *history_file_new(const char *setting, uint32_t node);

/* The least time between two writes while syncd runs, ns (> 0). */
void history_file_set_interval(history_file *f, int64_t interval_ns);

/* Free (NULL is fine).  Writes nothing: history_file_save_final first. */
void history_file_free(history_file *f);

/* The file's path, or NULL when nothing is kept (owned by f). */
const char *history_file_path(const history_file *f);

/* Read and check the file (history_store_unpack), keeping its pieces for
 * the two restore calls.  A missing file is a first start; any other
 * failure is logged (g_message for another boot's or node's file,
 * g_warning for one that cannot be read or is corrupt) and leaves no
 * pieces.  Returns the pieces read. */
size_t history_file_load(history_file *f);

/* Give the local pairs' pieces read to `pairs` (syncd_pairs_restore), at
 * cpu time now_ns (older than [fit] history_s go).  Call it before the
 * pairs are configured.  Returns the pieces kept; a pair refused is
 * logged. */
size_t history_file_restore_pairs(history_file *f, syncd_pairs *pairs, int64_t now_ns);

/* The same for the RBS pairs' pieces and `core` (rbs_core_restore; NULL:
 * RBS is off and they are dropped), before RBS handles its first packet.
 * Returns the pieces kept. */
size_t history_file_restore_rbs(history_file *f, rbs_core *core, int64_t now_ns);

/* From the main loop (now_ns: the cpu time): when the interval has
 * passed since the last attempt, write the pieces of `pairs` and
 * `core` (NULL: RBS off) if they differ from those the file holds.
 * Returns TRUE when it wrote the file. */
gboolean history_file_tick(history_file *f, syncd_pairs *pairs, rbs_core *core, int64_t now_ns);

/* At a clean stop: write every pair's pieces and its current fit as its
 * newest piece.  Returns TRUE when written (FALSE: nothing kept, or the
 * write failed: logged and counted). */
gboolean history_file_save_final(history_file *f, syncd_pairs *pairs, rbs_core *core);

/* Append "history_file PATH saved=N failed=M loaded=K (what the load
 * found)[ last_error=...]\n" to out, or "history_file none (why)\n". */
void history_file_describe(const history_file *f, GString *out);

#endif
