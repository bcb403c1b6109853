/* now.c — reading clocks, real or simulated (see now.h). */
#include "libsync/now.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_state; /* 0 = not read, 1 = real, 2 = simulated */
static sync_simclock g_sim;
static int64_t g_rt_minus_raw; /* host realtime - raw at init, ns */

static int64_t host_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int sync_simclock_parse(const char *text, sync_simclock *out, const char **why)
{
	char *end;
	const char *dummy;
	if (!why)
		why = &dummy;
	errno = 0;
	double skew = strtod(text, &end);
	if (end == text || *end != ',' || errno || !isfinite(skew) || fabs(skew) > 1e5) {
		*why = "CHORUS_SIM_CLOCK must be SKEW_PPM,OFFSET_NS with |skew| <= 1e5 ppm";
		return -EINVAL;
	}
	const char *o = end + 1;
	errno = 0;
	long long off = strtoll(o, &end, 10);
	if (end == o || *end || errno) {
		*why = "CHORUS_SIM_CLOCK offset must be an integer number of ns";
		return -EINVAL;
	}
	out->skew_ppm = skew;
	out->offset_ns = off;
	return 0;
}

int64_t sync_simclock_apply(const sync_simclock *c, int64_t h)
{
	return h + c->offset_ns + (int64_t)llround((double)h * c->skew_ppm * 1e-6);
}

int64_t sync_simclock_invert(const sync_simclock *c, int64_t node_ns)
{
	/* h = (node - off) / (1 + s); then one Newton-like correction step. */
	int64_t h = (int64_t)llround((double)(node_ns - c->offset_ns) / (1.0 + c->skew_ppm * 1e-6));
	h += node_ns - sync_simclock_apply(c, h);
	return h;
}

int sync_now_init(const char **why)
{
	const char *env = getenv("CHORUS_SIM_CLOCK");
	if (g_state)
		return 0;
	if (!env || !*env) {
		g_state = 1;
		return 0;
	}
	if (sync_simclock_parse(env, &g_sim, why) < 0)
		return -EINVAL;
	/* Tightest of a few raw-realtime-raw sandwiches. */
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t a = host_read(CLOCK_MONOTONIC_RAW);
		int64_t r = host_read(CLOCK_REALTIME);
		int64_t b = host_read(CLOCK_MONOTONIC_RAW);
		if (b - a < best) {
			best = b - a;
			g_rt_minus_raw = r - (a + (b - a) / 2);
		}
	}
	g_state = 2;
	return 0;
}

static void ensure_init(void)
{
	const char *why = NULL;
	if (!g_state && sync_now_init(&why) < 0) {
		fprintf(stderr, "chorus: %s\n", why);
		abort();
	}
}

int sync_now_simulated(void)
{
	ensure_init();
	return g_state == 2;
}

int64_t sync_host_to_node(sync_kind kind, int64_t host_ns)
{
	ensure_init();
	if (g_state != 2)
		return host_ns;
	if (kind == SYNC_KIND_CPU)
		return sync_simclock_apply(&g_sim, host_ns);
	if (kind == SYNC_KIND_REALTIME)
		return host_ns + (int64_t)llround((double)(host_ns - g_rt_minus_raw) * g_sim.skew_ppm * 1e-6);
	return host_ns;
}

int64_t sync_node_to_host_cpu(int64_t node_ns)
{
	ensure_init();
	return g_state == 2 ? sync_simclock_invert(&g_sim, node_ns) : node_ns;
}

int64_t sync_now(sync_kind kind)
{
	if (kind == SYNC_KIND_CPU)
		return sync_host_to_node(kind, host_read(CLOCK_MONOTONIC_RAW));
	if (kind == SYNC_KIND_REALTIME)
		return sync_host_to_node(kind, host_read(CLOCK_REALTIME));
	return INT64_MIN;
}
