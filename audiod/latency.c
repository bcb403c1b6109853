/* latency.c — wakeup latency histogram (see latency.h). */
#include "audiod/latency.h"

void latency_add(latency_hist *h, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	int64_t us = ns / 1000;
	if (us < LATENCY_FINE)
		h->fine[us]++;
	else {
		int64_t b = (us - LATENCY_FINE) / 100;
		h->coarse[b < LATENCY_COARSE ? b : LATENCY_COARSE - 1]++;
	}
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
}

int64_t latency_quantile(const latency_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t want = (uint64_t)(q * (double)h->count + 0.5), seen = 0;
	if (want < 1)
		want = 1;
	/* The upper edge of the bucket, but never above the largest sample
	 * (a quantile cannot exceed the max: samples of 0 ns gave p50 1 us,
	 * max 0 us). */
	for (int i = 0; i < LATENCY_FINE; i++)
		if ((seen += h->fine[i]) >= want)
			return (int64_t)(i + 1) * 1000 < h->max_ns ? (int64_t)(i + 1) * 1000 : h->max_ns;
	for (int i = 0; i < LATENCY_COARSE; i++)
		if ((seen += h->coarse[i]) >= want) {
			int64_t edge = ((int64_t)LATENCY_FINE + (int64_t)(i + 1) * 100) * 1000;
			return edge < h->max_ns ? edge : h->max_ns;
		}
	return h->max_ns;
}
