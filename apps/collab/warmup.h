/* warmup.h — the solver run once at start on a call it makes itself.
 *
 * A solve's first run makes state that stays for the process's life:
 * FFTW's planner (185 kB, which fftwf_forget_wisdom does not free) and the
 * first sizes of the correlation and search buffers (another ~40 kB,
 * saturating at ~80 kB over the next solves).  A node that locates its
 * first call an hour into its life steps up its footprint then: in the
 * chaos soak collab on node 2 (a corner node, rarely the first to hear)
 * stepped 765 -> 938 kB of heap in use at its first solve, 23 minutes
 * after a restart, and was judged to grow.  Made at start, that state is
 * part of the footprint from the first minute, as it is of every node that
 * has solved once.  The call: a chirp from inside a 20 m square of five
 * microphones, clean; the answer is checked (within 5 cm), so a solver
 * that cannot locate it says so at start.
 */
#ifndef CHORUS_COLLAB_WARMUP_H
#define CHORUS_COLLAB_WARMUP_H

#include <stddef.h>

/* Solve the synthetic call (then forget FFTW's wisdom, as every solve
 * does: xcorr.h dsp_fft_forget).  Call from the thread that will solve,
 * or before it starts (FFTW's planner is not thread safe).  0 when it was
 * located where it was made; -1 with why[] saying what went wrong. */
int collab_warm_up(char *why, size_t wlen);

#endif
