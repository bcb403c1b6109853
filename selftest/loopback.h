/* loopback.h — the self-test with a known signal: play it into a PCM whose
 * sound audiod captures (the loopback card, or a cable from a line out to
 * the card's input), stream it back with `audioget --follow`, and check:
 * bit-exact samples after aligning the start, no gaps unless an overrun was
 * reported (one is provoked on request, see xrun.h), and each click asked
 * for by global time is at the frame audiod's conversion predicts from the
 * player's own timing, within the stated errors; the mean difference of the
 * two clocks (audiod's time of a frame minus the player's) is the
 * timestamp source's offset, saved and compared across runs.
 */
#ifndef CHORUS_SELFTEST_LOOPBACK_H
#define CHORUS_SELFTEST_LOOPBACK_H

#include "selftest/tools.h"

typedef struct {
	int device;          /* audiod's audio/K */
	const char *play;    /* playback PCM */
	int seconds;         /* length of the signal */
	int seed;            /* noise seed */
	int rt;              /* player's SCHED_FIFO priority (0: none) */
	int xrun_pid;        /* > 0: provoke an overrun halfway (xrun.h) */
	int stop_ms;         /* its length (0: default) */
	const char *save;    /* write the offset here (NULL: not) */
	const char *compare; /* compare with this earlier --save (NULL: not) */
	const char *label;   /* this run's name, saved with the offset */
} loopback_cfg;

/* Run it and add the rows to the report (report.h); s0 is audiod's status
 * before (its format is the signal's). */
void loopback_run(const loopback_cfg *cfg, const tools_status *s0);

#endif
