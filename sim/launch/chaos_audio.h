/* chaos_audio.h — chorus-sim --chaos: every audio gap a client sees is
 * explained (issue 15's chaos soak).
 *
 * From the start of the faults, chorus-sim itself reads every node's
 * audio/0/data as fft does (one channel, from audiod's next frame,
 * open-ended, resuming by itself after audiod restarts), and keeps each
 * gap it meets with its time (the world's clock: s from csim_epoch_ns): GAP markers
 * audiod sent, chunks that skipped frames without one (silent holes) and
 * chunks that went back.  The reader is never stopped by the faults and
 * audiod's ring holds a minute, so it never falls behind: every gap it
 * sees is audiod's.  At the report each gap is judged against audiod's own
 * overrun reports (its journal, DIR/node<N>-audiod.log) and the downtimes
 * the faults caused (gapcheck.h).
 */
#ifndef CHORUS_SIM_CHAOS_AUDIO_H
#define CHORUS_SIM_CHAOS_AUDIO_H

#include <glib.h>

#include "sim/launch/gapcheck.h"
#include "sim/launch/launch.h"

typedef struct csim_chaos_audio csim_chaos_audio;

/* Start reading every node of s that runs audiod, on the default main
 * context.  Never fails (a node whose device cannot be named is reported
 * at the end). */
csim_chaos_audio *csim_chaos_audio_new(csim *s);

/* The report: a line per unexplained gap (and a summary of the explained)
 * into out, given audiod's downtimes (dt[n_dt], world s).  Returns the unexplained
 * gaps plus the nodes that could not be read at all. */
int csim_chaos_audio_report(csim_chaos_audio *a, const csim_downtime *dt, size_t n_dt, GString *out);

void csim_chaos_audio_free(csim_chaos_audio *a);

#endif
