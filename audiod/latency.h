/* latency.h — a histogram of wakeup latencies for p50/p99/max (pure).
 *
 * Buckets are 1 µs wide up to 1 ms, then 100 µs wide up to 100 ms; larger
 * values land in the last bucket (the max is kept exactly).
 */
#ifndef CHORUS_AUDIOD_LATENCY_H
#define CHORUS_AUDIOD_LATENCY_H

#include <stdint.h>

#define LATENCY_FINE 1000  /* 1 µs buckets: 0 .. 999 µs */
#define LATENCY_COARSE 990 /* 100 µs buckets: 1 ms .. 100 ms */

typedef struct {
	uint64_t count;                  /* samples */
	int64_t max_ns;                  /* largest sample, ns */
	uint32_t fine[LATENCY_FINE];     /* counts per µs */
	uint32_t coarse[LATENCY_COARSE]; /* counts per 100 µs from 1 ms */
} latency_hist;

/* Add one latency (ns; negative counts as 0). */
void latency_add(latency_hist *h, int64_t ns);

/* The q-quantile (0..1) in ns: the upper edge of its bucket, at most the
 * largest sample; 0 when empty. */
int64_t latency_quantile(const latency_hist *h, double q);

#endif
