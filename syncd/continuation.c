/* continuation.c — the line global time continues along (continuation.h). */
#include "syncd/continuation.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "libsync/graph.h"
#include "libsync/ticker_wire.h"

int syncd_continuation_measure(const sync_ticker_entry *e, size_t n, uint32_t self, uint32_t root, int64_t now_ns,
			       syncd_continuation *out, char *why, size_t len)
{
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	gp.max_age_ns = 0; /* the ticker's own ages are what syncd publishes */
	sync_graph *g = sync_graph_new(&gp);
	if (!g) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	size_t bad = 0; /* the timescale's segments go in as one (ticker_wire.h) */
	sync_ticker_entries_to_graph(e, n, g, &bad, why, len);
	if (bad) {
		sync_graph_free(g);
		return -EINVAL;
	}
	sync_graph_result a, b;
	int rc = sync_graph_convert(g, sync_clock_cpu(self), sync_clock_global(), sync_tval_of(now_ns), now_ns, &a, why,
				    len);
	/* The earlier point: SYNCD_CONTINUATION_BASE_S back, or half that
	 * and so on while the data does not reach so far. */
	int64_t back = (int64_t)(SYNCD_CONTINUATION_BASE_S * 1e9);
	int rb = -1;
	char why_b[160] = "";
	while (rc == 0 && back >= 100000000 &&
	       (rb = sync_graph_convert(g, sync_clock_cpu(self), sync_clock_global(), sync_tval_of(now_ns - back), now_ns,
					&b, why_b, sizeof why_b)) < 0)
		back /= 2;
	/* How fast libsync says the line's variance grows beyond its data. */
	double rate_var = 0, ahead = SYNCD_CONTINUATION_AHEAD_S * 1e9;
	sync_graph_result f;
	char why_f[160];
	if (rc == 0 && sync_graph_convert(g, sync_clock_cpu(self), sync_clock_global(),
					  sync_tval_of(now_ns + (int64_t)ahead), now_ns, &f, why_f, sizeof why_f) == 0)
		rate_var = fmax(0.0, f.var - a.var) / (ahead * ahead);
	sync_graph_free(g);
	if (rc < 0)
		return rc;
	if (rb < 0) {
		snprintf(why, len, "no earlier conversion for the slope: %s", why_b);
		return rb;
	}
	double dy = (double)(a.value.i - b.value.i) + (a.value.f - b.value.f);
	*out = (syncd_continuation){
		.valid = 1,
		.cpu0_ns = now_ns,
		.global0_ns = a.value.i + (int64_t)llround(a.value.f),
		.slope = dy / (double)back,
		.se_ns = sqrt(a.var),
		.slope_se = (sqrt(a.var) + sqrt(b.var)) / (double)back,
		.rate_var = rate_var,
		.via_root = root,
	};
	return 0;
}

int64_t syncd_continuation_at(const syncd_continuation *c, int64_t x)
{
	return c->global0_ns + (int64_t)llround(c->slope * (double)(x - c->cpu0_ns));
}

double syncd_continuation_se(const syncd_continuation *c, int64_t x)
{
	/* The rate's s.e.: what libsync states for the line extrapolated, when
	 * it could say, else the bound from the two conversions (which a
	 * short base — the data not reaching 10 s back, as just after a
	 * hand-over — makes very loose). */
	double rate_se = c->rate_var > 0 ? fmin(sqrt(c->rate_var), c->slope_se) : c->slope_se;
	return hypot(c->se_ns, rate_se * fabs((double)(x - c->cpu0_ns)));
}
