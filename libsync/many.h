/* many.h — convert arrays of times at once through a sync_client (for
 * bindings: numpy arrays in and out, docs/libsync.md).
 *
 * Each element is converted as sync_client_convert_at() would at the same
 * `now_ns`, so one call sees one set of conversions.  Integer inputs only
 * (ns, or frames for audio clocks); the results are split into an integer
 * part and a fraction so that ns near 2^62 keep their precision.
 * Pure but for reading the cpu clock once (sync_now) when now_ns is
 * INT64_MIN; no allocation.
 */
#ifndef CHORUS_SYNC_MANY_H
#define CHORUS_SYNC_MANY_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/client.h"

/* Convert x[0..n) from clock `from` to clock `to` at node cpu time now_ns
 * (INT64_MIN: now).  For every i: out_i[i] + out_f[i] is the value (units of
 * `to`; |out_f| <= 0.5), out_se[i] its standard error (units of `to`),
 * out_err[i] 0 or the negative errno of sync_client_convert() (then out_i
 * is 0 and out_f, out_se are NaN).  out_f, out_se and out_err may be NULL.
 * Returns how many failed (0..n); the first failure's reason, prefixed with
 * its index, in why[len] ("" when none failed). */
size_t sync_client_convert_many(sync_client *c, sync_clock_id from, sync_clock_id to, const int64_t *x, size_t n,
				int64_t now_ns, int64_t *out_i, double *out_f, double *out_se, int32_t *out_err, char *why,
				size_t len);

#endif
