/* numline.h — the numbering line audiod keeps in the run directory, so that
 * a restarted audiod numbers on when syncd cannot tell it the earlier run's
 * audio<k> <-> cpu line (stopped, restarting; docs/audiod.md "Restarts keep
 * the frame numbering").
 *
 * Once a second audiod writes NUMLINE_POINTS (cpu ns, frame) points of its
 * own current fit, a quarter second apart up to the newest frame, to
 * $CHORUS_RUN/audio<k>.numbering (tmpfs: a reboot, which restarts the cpu
 * clock, clears it).  The file's first line names its owner — this boot
 * (/proc/sys/kernel/random/boot_id), the node's simulated cpu clock
 * ($CHORUS_SIM_CLOCK) and the device — and the rate; a line of another
 * owner or rate, or older than NUMLINE_MAX_AGE_NS, is not continued.
 * Format (text):
 *
 *     chorus-audiod-numbering 1 rate=48000 boot=… clock=… dev=0
 *     CPU_NS FRAME            (NUMLINE_POINTS lines, cpu non-decreasing)
 *
 * Not data: a failed save is logged once and the next run numbers afresh.
 * Reads and writes files and /proc; no clocks read (times are passed in,
 * ns on the node's cpu clock).  One per device, used from the main loop.
 */
#ifndef CHORUS_AUDIOD_NUMLINE_H
#define CHORUS_AUDIOD_NUMLINE_H

#include <stdint.h>

#include <glib.h>

#include "timehist/timehist.h"

/* Points of a saved line. */
#define NUMLINE_POINTS 8

/* A saved line whose newest point is older than this (ns) is not continued. */
#define NUMLINE_MAX_AGE_NS (600LL * 1000000000LL)

/* Least time between two saves, ns. */
#define NUMLINE_SAVE_INTERVAL_NS 1000000000LL

typedef struct numline numline;

/* The line of device k (audio<k>) at rate_hz frames/s (> 0).  Returns the
 * object (never NULL); touches no file yet. */
numline *numline_new(int k, unsigned rate_hz);

/* Free (NULL is fine). */
void numline_free(numline *nl);

/* Save the line now when NUMLINE_SAVE_INTERVAL_NS have passed since the
 * last save: `now` is the node's cpu time (ns), `newest` the end of the
 * frames captured (the ring's next frame; nothing is saved while it is
 * <= 0), `th` the device's timehist, whose current fit gives the points
 * (nothing is saved before it has one).  Returns TRUE when it wrote the
 * file; a failure to write is logged once (g_warning) and returns FALSE. */
gboolean numline_save(numline *nl, int64_t now, int64_t newest, const timehist *th);

/* The line the last run of this device saved, if it is this owner's and
 * rate's, well formed, and its newest point at most NUMLINE_MAX_AGE_NS
 * before `now` (cpu ns) and not after it.  Returns TRUE with the points
 * in cpu[NUMLINE_POINTS] (ns, non-decreasing) and frame[NUMLINE_POINTS],
 * else FALSE (no file, another owner, malformed, too old). */
gboolean numline_load(const numline *nl, int64_t now, int64_t *cpu, int64_t *frame);

#endif
