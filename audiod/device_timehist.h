/* device_timehist.h — the parameters of a capture device's time history
 * (frame -> cpu ns), in one place for audiod/device.c and for tests that
 * replay audiod's observations through the same fit
 * (tests/test_audiod_obslog.c).
 */
#ifndef CHORUS_AUDIOD_DEVICE_TIMEHIST_H
#define CHORUS_AUDIOD_DEVICE_TIMEHIST_H

#include <stdint.h>

#include "timehist/timehist.h"

/* Fill *tp for a device at rate_hz whose ring holds capacity frames. */
static inline void audiod_timehist_params(timehist_params *tp, unsigned rate_hz, uint64_t capacity)
{
	timehist_params_default(tp);
	tp->fit.mode = SYNC_FIT_LOWER; /* interrupt latency only makes cpu late */
	tp->fit.window = 256;
	tp->fit.nominal_slope = 1e9 / rate_hz;
	tp->jump_min = 1e6;                     /* 1 ms: a real step, not latency */
	tp->tolerance = (int64_t)rate_hz * 600; /* convert up to 10 min ahead */
	tp->max_history = (int64_t)capacity * 2;
	/* A 256-observation envelope solved at every period interrupt was a
	 * quarter of audiod's CPU (perf, issue 17); every 8th is enough for the
	 * line (the newest frames extrapolate it by < 8 periods, within its
	 * stated variance) and a piece is always solved over all its data. */
	tp->refit = 8;
}

#endif
