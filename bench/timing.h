/* timing.h — the little the benchmarks share for timing: a monotonic clock
 * in ns and qsort's order of int64 samples (header-only: each benchmark is
 * its own program). */
#ifndef CHORUS_BENCH_TIMING_H
#define CHORUS_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, ns. */
static inline int64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* qsort order of int64_t. */
static inline int bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

#endif
