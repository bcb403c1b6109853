/* rtcpu.h — sampling the node's realtime clock against its cpu clock.
 *
 * Kernel timestamps (SO_TIMESTAMPNS receive times) are in CLOCK_REALTIME;
 * chorus converts them to the node's cpu clock (CLOCK_MONOTONIC_RAW) through
 * a fitted realtime <-> cpu pair.  A sample reads cpu, realtime, cpu and keeps
 * the tightest of several such sandwiches: the realtime reading happened
 * somewhere between the two cpu readings, so the midpoint is off by at most
 * half the sandwich width, which is reported as the sample's uncertainty.
 */
#ifndef CHORUS_SYNCD_RTCPU_H
#define CHORUS_SYNCD_RTCPU_H

#include <stdint.h>

typedef struct {
	int64_t cpu_ns;      /* midpoint of the tightest sandwich, node cpu clock */
	int64_t realtime_ns; /* realtime read inside that sandwich */
	int64_t width_ns;    /* width of the sandwich (cpu after - cpu before) */
} rtcpu_sample;

/* Take `tries` sandwiches (>= 1) through sync_now() and return the tightest. */
rtcpu_sample rtcpu_sample_take(int tries);

#endif
