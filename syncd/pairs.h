/* pairs.h — syncd's table of clocks and fitted clock pairs (no I/O).
 *
 * Local services register clocks and feed observation pairs (x on clock A,
 * y on clock B); each pair keeps a sliding-window fit (libsync/fit.h) that is
 * solved lazily when the ticker is written.  Soft state: a pair with no
 * observation for `expire_ns` of the node's cpu time is forgotten, and a
 * clock nobody feeds with it.  Every function takes the caller's `now_ns`
 * (node cpu ns) instead of reading a clock.
 */
#ifndef CHORUS_SYNCD_PAIRS_H
#define CHORUS_SYNCD_PAIRS_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "libsync/clockid.h"
#include "libsync/fit.h"
#include "libsync/ticker_wire.h"

typedef struct {
	uint32_t window;     /* observations per fit */
	double reject_k;     /* outlier rejection, robust sigmas */
	double wander;       /* fractional frequency wander for aging */
	int64_t max_span_ns; /* observations older than this leave the fit (x in ns; audio x: count only) */
	int64_t expire_ns;   /* forget a pair with no observation for this long */
} syncd_pairs_cfg;

typedef struct syncd_pairs syncd_pairs;

/* A new empty table.  Never fails (aborts on out of memory, as GLib does). */
syncd_pairs *syncd_pairs_new(const syncd_pairs_cfg *cfg);

/* Free the table (NULL is fine). */
void syncd_pairs_free(syncd_pairs *p);

/* Register (or refresh) clock `id` fed by `feeder` (a name) from process
 * `pid`.  Returns 0 (new), 1 (already known: feeder updated). */
int syncd_pairs_register(syncd_pairs *p, sync_clock_id id, const char *feeder, pid_t pid, int64_t now_ns);

/* Set how pair (a, b) is fitted: mode and nominal slope dy/dx (0 = from the
 * data).  Creates the pair, resetting its observations if the mode changed.
 * Returns 0 or -EINVAL with a reason (same clock twice, global). */
int syncd_pairs_configure(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_fit_mode mode,
			  double nominal, const char **why);

/* State a systematic error of pair (a, b), fitted a -> b (syncd_pairs_configure):
 * a standard deviation `sd` in b's units that no observation reveals (an
 * interrupt latency floor known only from calibration, the residual delay
 * of ALSA timestamps).  It is added to the variance of the line's offset
 * (var_c) of every conversion published, so it reaches every conversion
 * through the pair.  Keeps the observations.  Returns 0, -ENOENT (no such
 * pair) or -EINVAL with a reason (sd negative or not finite, the pair is
 * fitted b -> a). */
int syncd_pairs_set_systematic(syncd_pairs *p, sync_clock_id a, sync_clock_id b, double sd, const char **why);

/* Add observation: x on clock a corresponds to y on clock b.  Creates the
 * pair (MEAN mode) and registers unknown clocks as fed by "?".  Observations
 * on (b, a) go to the same pair with x and y swapped.  Returns 0, or -EINVAL
 * with a reason (same clock, global, time going backwards). */
int syncd_pairs_observe(syncd_pairs *p, sync_clock_id a, sync_clock_id b, int64_t x, int64_t y,
			int64_t now_ns, const char **why);

/* Forget the observations of pair (a, b) (a discontinuity: the next fit
 * starts afresh).  Returns 0 or -ENOENT. */
int syncd_pairs_reset(syncd_pairs *p, sync_clock_id a, sync_clock_id b);

/* Forget pairs not observed for expire_ns, and clocks left without pairs
 * that were not registered explicitly.  Returns how many pairs went. */
guint syncd_pairs_expire(syncd_pairs *p, int64_t now_ns);

/* A counter that changes whenever a clock or pair changes. */
guint64 syncd_pairs_generation(const syncd_pairs *p);

/* Solve every changed fit and return the conversions that have one (at
 * least 3 observations) as a new array of *n entries (g_free it); each
 * conv's `updated_ns` is the cpu time of its last observation. */
sync_ticker_entry *syncd_pairs_entries(syncd_pairs *p, size_t *n);

/* The current conversion a -> b (reversed when the pair is fitted b -> a),
 * solving it if needed.  Returns 0, -ENOENT (no such pair) or -EAGAIN (no
 * fit yet). */
int syncd_pairs_conv(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_conv *out);

/* Append a human-readable table of clocks (feeder, pid, last observation,
 * pairs and fit quality) to out. */
void syncd_pairs_describe_clocks(syncd_pairs *p, int64_t now_ns, GString *out);

#endif
