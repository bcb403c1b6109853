/* sidechan.h — the simulator's timestamp side channel: how the plugin
 * writes it.
 *
 * The side channel is a FIFO of struct chorus_kpatch_record (kpatch/
 * chorus_kpatch.h), one record per period interrupt, flags
 * CHORUS_KPATCH_F_SIM.  Where it lives is the kernel module's side of the
 * story (its record format): kpatch_sidechan_path() in
 * kpatch/sidechan_path.h computes the default path of a PCM, for the plugin
 * that writes here and for audiod that reads with kpatch/reader.h.
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
