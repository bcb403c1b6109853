/* pairs.h — syncd's table of clocks and fitted clock pairs (no I/O).
 *
 * Local services register clocks and feed observation pairs (x on clock A,
 * y on clock B); each pair keeps a sliding-window fit (libsync/fit.h) that is
 * solved lazily when the ticker is written.  Soft state: a pair with no
 * observation for `expire_ns` of the node's cpu time is forgotten, and a
 * clock nobody feeds with it.  Every function takes the caller's `now_ns`
 * (node cpu ns) instead of reading a clock.
 *
 * Each pair keeps its history too (syncd/history.h, as RBS pairs do): its
 * fit every `history_every_ns` of data and the fit before each reset, as
 * pieces the ticker publishes beside the current fit (SYNC_CONV_PIECE;
 * syncd_pairs_history_entries), so that a past time (an audio frame ten
 * minutes old) converts with the fit that held then, or bridged between
 * two pieces.  A reset is a break the graph never bridges
 * (SYNC_CONV_BREAK); a pair whose x starts again below its history after
 * a reset (an audio clock numbered afresh) drops it.  An audio clock's x
 * is in frames: the history's spans are scaled by the pair's ns per frame
 * (its nominal slope, else its fitted one).  The histories outlive a
 * restart of syncd through its file (syncd_pairs_export,
 * syncd_pairs_restore; history_file.h).
 */
#ifndef CHORUS_SYNCD_PAIRS_H
#define CHORUS_SYNCD_PAIRS_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "libsync/clockid.h"
#include "libsync/fit.h"
#include "libsync/ticker_wire.h"
#include "syncd/history_store.h"

typedef struct {
	uint32_t window;          /* observations per fit */
	double reject_k;          /* outlier rejection, robust sigmas */
	double wander;            /* fractional frequency wander for aging */
	int64_t max_span_ns;      /* observations older than this leave the fit (x in ns; audio x: count only) */
	int64_t expire_ns;        /* forget a pair with no observation for this long */
	uint32_t history_pieces;  /* pieces of history per pair (0: none; history.h) */
	int64_t history_ns;       /* ... each kept this long after its data end */
	int64_t history_every_ns; /* ... a periodic one every this much of data (0: only at resets) */
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
 * starts afresh).  Its fit until then is kept as the last piece of its
 * history before a break (never bridged across).  Returns 0 or -ENOENT. */
int syncd_pairs_reset(syncd_pairs *p, sync_clock_id a, sync_clock_id b);

/* The same, where the run after the break starts: *from on clock a (an
 * overrun's restart frame, which audiod numbers on real time).  The run's
 * fits then hold from there rather than from its first observation, so
 * the frames between the restart and its first interrupt convert (by the
 * run's line, extrapolated back) instead of falling in the break.  from
 * NULL, or a pair whose x clock is b: as syncd_pairs_reset.  0 or
 * -ENOENT. */
int syncd_pairs_reset_from(syncd_pairs *p, sync_clock_id a, sync_clock_id b, const int64_t *from);

/* Forget pairs not observed for expire_ns, and clocks left without pairs
 * that were not registered explicitly, and pieces of history older than
 * history_ns.  An expired pair's last fit becomes a piece of its history
 * (an outage: the clocks ran on), which is kept (for at most 16 expired
 * pairs) and goes on when the pair is created again fitted the same way
 * (audiod restarted and numbering on).  Returns how many pairs went. */
guint syncd_pairs_expire(syncd_pairs *p, int64_t now_ns);

/* A counter that changes whenever a clock or pair changes. */
guint64 syncd_pairs_generation(const syncd_pairs *p);

/* Solve every changed fit and return the conversions that have one (at
 * least 3 observations) as a new array of *n entries (g_free it); each
 * conv's `updated_ns` is the cpu time of its last observation. */
sync_ticker_entry *syncd_pairs_entries(syncd_pairs *p, size_t *n);

/* Append to out (GArray of sync_ticker_entry) every pair's history pieces
 * that end before its current fit's data (SYNC_CONV_PIECE, history.h),
 * oldest first, pair by pair in the order of syncd_pairs_entries, for the
 * ticker.  At most history_pieces per pair.  Returns how many. */
size_t syncd_pairs_history_entries(syncd_pairs *p, GArray *out);

/* The current conversion a -> b (reversed when the pair is fitted b -> a),
 * solving it if needed.  Returns 0, -ENOENT (no such pair) or -EAGAIN (no
 * fit yet). */
int syncd_pairs_conv(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_conv *out);

/* Give pair (a, b), fitted a -> b by `mode` with nominal slope `nominal`,
 * the n pieces its history had before syncd restarted (history_store.h,
 * oldest first; unit_ns the ns per unit of a's x they were kept in): as
 * the history of an expired pair (syncd_pairs_expire), which goes on when
 * the pair is created fitted the same way, or at once when the pair is
 * in the table already so fitted and holds no history yet.  Those last
 * updated more than history_ns before now_ns go at once; at most
 * history_pieces are kept.  Returns the pieces kept (0 when the table
 * keeps no history), -EEXIST (the pair is in the table with a history of
 * its own, or fitted otherwise) or -EINVAL (a bad pair, mode, slope, unit
 * or piece: syncd_history_restore) with the reason in *why. */
int syncd_pairs_restore(syncd_pairs *p, sync_clock_id a, sync_clock_id b, sync_fit_mode mode, double nominal,
			double unit_ns, const sync_conv *pieces, size_t n, int64_t now_ns, const char **why);

/* Add to out every pair's history (history_store.h, HISTORY_STORE_LOCAL):
 * the expired pairs' kept for when they are fed again, oldest first, then
 * the pairs in the table, each as syncd_history_export gives it.
 * with_current: each pair's current fit too, as the piece its expiry
 * would keep (syncd stops; the table is not changed).  Solves the fits
 * that changed.  Returns the pieces added. */
size_t syncd_pairs_export(syncd_pairs *p, gboolean with_current, history_store *out);

/* Append a human-readable table of clocks (feeder, pid, last observation,
 * pairs and fit quality, and each pair's history) to out. */
void syncd_pairs_describe_clocks(syncd_pairs *p, int64_t now_ns, GString *out);

#endif
