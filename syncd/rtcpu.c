/* rtcpu.c — realtime vs cpu sandwiches (see rtcpu.h). */
#include "syncd/rtcpu.h"

#include "libsync/now.h"

rtcpu_sample rtcpu_sample_take(int tries)
{
	rtcpu_sample best = {0, 0, INT64_MAX};
	for (int i = 0; i < (tries < 1 ? 1 : tries); i++) {
		int64_t a = sync_now(SYNC_KIND_CPU);
		int64_t r = sync_now(SYNC_KIND_REALTIME);
		int64_t b = sync_now(SYNC_KIND_CPU);
		if (b - a < best.width_ns) {
			best.width_ns = b - a;
			best.cpu_ns = a + (b - a) / 2;
			best.realtime_ns = r;
		}
	}
	return best;
}
