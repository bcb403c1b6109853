/* sidechan_path.h — where the simulator's timestamp side channel of a PCM
 * lives.
 *
 * The side channel is a FIFO of struct chorus_kpatch_record (kpatch/
 * chorus_kpatch.h), one record per period interrupt, flags
 * CHORUS_KPATCH_F_SIM: the kernel module's record format, read with
 * kpatch_reader_open_path() (kpatch/reader.h).  Its writer is the simulator's
 * ALSA plugin (sim/sidechan.h); its reader is audiod.  Both find it here, so
 * a reader needs nothing of the simulator.  Its default path is
 *     <run>/[sim/node<N>/]kpatch/sim-<pcm>
 * where <run> is $CHORUS_RUN, else /run/chorus for root, else
 * $XDG_RUNTIME_DIR/chorus; "sim/node<N>/" is present when CHORUS_NODE=N is
 * set, exactly as for every chorus device path (docs/scenario.md §3); <pcm>
 * is the ALSA PCM name exactly as the application opened it (arguments
 * included, "chorus_sim:NODE=2" -> "chorus_sim_NODE_2") with any character
 * outside [A-Za-z0-9._-] replaced by '_', cut at 127 characters.
 *
 * Errors are negative errno values.
 */
#ifndef CHORUS_KPATCH_SIDECHAN_PATH_H
#define CHORUS_KPATCH_SIDECHAN_PATH_H

#include <stddef.h>

/* Compose the path from explicit parts into buf (len bytes) (pure): run_dir
 * must be non-NULL, chorus_node NULL or "" for none, else a decimal node
 * number 0..65535.  Returns the length written, -EINVAL for a malformed
 * chorus_node or an empty pcm name, -ENAMETOOLONG if it does not fit. */
int kpatch_sidechan_path_for(const char *run_dir, const char *chorus_node, const char *pcm_name,
			     char *buf, size_t len);

/* The default path for `pcm_name` from the environment (CHORUS_RUN,
 * CHORUS_NODE, XDG_RUNTIME_DIR, and whether the process runs as root).
 * Returns the length, or -ENOENT when no run directory can be determined,
 * or as kpatch_sidechan_path_for. */
int kpatch_sidechan_path(const char *pcm_name, char *buf, size_t len);

#endif
