/* wakeref.h — this machine's floor for waking a thread, measured with bare
 * system calls in the same run as what is compared against it (bench/audio,
 * issue 17): a timer's wakeup (the simulated card's interrupt is a timerfd)
 * and a writer waking N waiter threads through eventfds (the follower path)
 * or socket pairs carrying a chunk (the sensor socket path).
 */
#ifndef CHORUS_BENCH_WAKEREF_H
#define CHORUS_BENCH_WAKEREF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	double p50_us, p99_us, max_us;
	unsigned n; /* samples */
} wake_q;

/* A thread blocked in poll on a timerfd armed at absolute CLOCK_MONOTONIC
 * times `period_ns` apart, `rounds` times: its wakeup minus the armed time. */
wake_q wakeref_timer(int64_t period_ns, int rounds);

/* A writer thread woken by a timerfd every `period_ns` writes to each of
 * `waiters` descriptors and sleeps again; each waiter thread, blocked in
 * poll, records its wakeup (after reading what was written) minus the time
 * the writer began writing.  bytes == 0: eventfds (8 bytes each, the
 * follower path); bytes > 0: SOCK_SEQPACKET socket pairs carrying `bytes`
 * (the sensor socket path).  `rounds` rounds. */
wake_q wakeref_fanout(int waiters, size_t bytes, int64_t period_ns, int rounds);

#endif
