/* many.c — convert arrays of times through a sync_client (many.h). */
#include "libsync/many.h"

#include <math.h>
#include <stdio.h>

#include "libsync/now.h"

size_t sync_client_convert_many(sync_client *c, sync_clock_id from, sync_clock_id to, const int64_t *x, size_t n,
				int64_t now_ns, int64_t *out_i, double *out_f, double *out_se, int32_t *out_err, char *why,
				size_t len)
{
	if (now_ns == INT64_MIN)
		now_ns = sync_now(SYNC_KIND_CPU);
	size_t failed = 0;
	if (why && len)
		why[0] = 0;
	for (size_t i = 0; i < n; i++) {
		sync_graph_result r;
		char one[256];
		int rc = sync_client_convert_at(c, from, to, sync_tval_of(x[i]), now_ns, &r, one, sizeof one);
		if (out_err)
			out_err[i] = rc;
		if (rc < 0) {
			if (!failed && why && len)
				snprintf(why, len, "element %zu (%lld): %s", i, (long long)x[i], one);
			failed++;
			out_i[i] = 0;
			if (out_f)
				out_f[i] = NAN;
			if (out_se)
				out_se[i] = NAN;
			continue;
		}
		out_i[i] = r.value.i;
		if (out_f)
			out_f[i] = r.value.f;
		if (out_se)
			out_se[i] = sqrt(r.var);
	}
	return failed;
}
