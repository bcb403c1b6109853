/* simtime.c — world time of a node cpu time in simulation (see simtime.h). */
#include "apps/detect/simtime.h"

#include <math.h>
#include <stdlib.h>

#include "libsync/now.h"

double simtime_world_s(int64_t cpu_ns, double frac_ns)
{
	const char *e = getenv("CHORUS_SIM_EPOCH_NS");
	if (!sync_now_simulated() || !e || !*e)
		return NAN;
	int64_t epoch = strtoll(e, NULL, 10);
	int64_t host = sync_node_to_host_cpu(cpu_ns);
	return ((double)(host - epoch) + frac_ns) * 1e-9;
}
