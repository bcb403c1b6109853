/* sidechan.h — the simulator's timestamp side channel: where it lives and how
 * the plugin writes it.
 *
 * The side channel is a FIFO of struct chorus_kpatch_record (kpatch/
 * chorus_kpatch.h), one record per period interrupt, flags
 * CHORUS_KPATCH_F_SIM.  Its default path is
 *     <run>/[sim/node<N>/]kpatch/sim-<pcm>
 * where <run> is $CHORUS_RUN, else /run/chorus for root, else
 * $XDG_RUNTIME_DIR/chorus; "sim/node<N>/" is present when CHORUS_NODE=N is
 * set, exactly as for every chorus device path (DESIGN §3); <pcm> is the
 * ALSA PCM name exactly as the application opened it (arguments included,
 * "chorus_sim:NODE=2" -> "chorus_sim_NODE_2") with any character outside
 * [A-Za-z0-9._-] replaced by '_', cut at 127 characters.
 * audiod finds the channel of the PCM it opens with sim_sidechan_path().
 *
 * The writer opens the FIFO O_RDWR | O_NONBLOCK: opening never waits for a
 * reader and a write never blocks; a full FIFO drops the record and counts
 * it in `dropped` (carried by every later record), as the kernel module does.
 */
#ifndef CHORUS_SIM_SIDECHAN_H
#define CHORUS_SIM_SIDECHAN_H

#include <stddef.h>
#include <stdint.h>

#include "kpatch/chorus_kpatch.h"

/* Compose the path from explicit parts (pure): run_dir must be non-NULL,
 * chorus_node NULL or "" for none.  Returns the length written, -EINVAL for
 * a malformed chorus_node or empty pcm name, -ENAMETOOLONG if it does not fit. */
int sim_sidechan_path_for(const char *run_dir, const char *chorus_node, const char *pcm_name,
			  char *buf, size_t len);

/* The default path for `pcm_name` from the environment (CHORUS_RUN,
 * CHORUS_NODE, XDG_RUNTIME_DIR).  Returns the length, or -ENOENT when no run
 * directory can be determined, or as sim_sidechan_path_for. */
int sim_sidechan_path(const char *pcm_name, char *buf, size_t len);

typedef struct sim_sidechan sim_sidechan;

/* Create the directories and the FIFO if missing and open it for writing.
 * Returns 0 with *out, or -errno (-EEXIST: the path exists and is not a FIFO). */
int sim_sidechan_open(const char *path, sim_sidechan **out);

/* Write one record (its `dropped` field is filled in here).  Returns 0, or
 * -EAGAIN when the FIFO was full (the record is counted as dropped), or
 * another -errno. */
int sim_sidechan_write(sim_sidechan *sc, struct chorus_kpatch_record *rec);

/* Records dropped so far. */
uint32_t sim_sidechan_dropped(const sim_sidechan *sc);

void sim_sidechan_close(sim_sidechan *sc);

#endif
