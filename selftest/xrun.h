/* xrun.h — provoking an overrun from outside: audiod is stopped (SIGSTOP)
 * for longer than its ALSA buffer and resumed; the card overruns, audiod
 * must report it on its status and keep the frame index on real time.
 */
#ifndef CHORUS_SELFTEST_XRUN_H
#define CHORUS_SELFTEST_XRUN_H

#include "selftest/tools.h"

/* Stop process pid for stop_ms (0: three of s0's buffers), resume it, and
 * add the rows: the stop, the overrun on audio/<device>/status, and the
 * stated time of a frame after the restart against the line that held
 * before (within 3 stated s.e.).  Takes about stop_ms + 3 s.  Returns
 * that stated s.e. in frames, or -1 when the overrun was not measured. */
double xrun_provoke(int device, int pid, int stop_ms, const tools_status *s0);

#endif
