/* history.h — the fits one clock pair had, kept so that a past time
 * converts with the fit that held then, and a time between two of them
 * (an outage, or the minutes between two periodic pieces) across the gap
 * (issue 16 item 3; docs/clocks.md "Across an outage").
 *
 * A pair's sliding-window fit covers only its last window: a time older
 * than that plus the graph's tolerance cannot be converted with it at all.
 * So every `every_ns` of data the pair's current fit is kept as a *piece*
 * (syncd_history_keep), and when the fit ends (an RBS neighbour fell
 * silent; a local pair was reset) its last fit too (syncd_history_close).
 * The ticker publishes a pair's pieces with its current fit
 * (SYNC_CONV_PIECE, libsync/bridge.h; each one's `wander` the rate random
 * walk q2 of the pair), and libsync's graph (graph.h
 * sync_graph_set_history) converts a time in a piece's data with it, and
 * one in the gap after a piece with the Brownian bridge from it to the
 * next piece or the current fit.
 *
 * Breaks.  A pair reset (a discontinuity: realtime stepped; an audio
 * clock's run restarted after an overrun) is a step of unknown size
 * between its last fit and the next: the piece before it is kept with
 * SYNC_CONV_BREAK, and the graph refuses a time in the gap after it
 * instead of bridging (a time in a piece's data still converts).  When
 * the pair's x goes back (an audio clock numbered afresh from 0: its frame
 * indices now name other instants), the pieces of the old numbering are
 * dropped (syncd_history_renumber): nothing of it is converted again.
 *
 * q2, the pair's rate random walk: the pair's line is sampled while it has
 * a fit (syncd_history_note) and measured as syncd/continuity.h measures a
 * followed timescale's (consecutive spans of 32 to 256 s, each sample's
 * stated noise subtracted, the largest kept), in the pair's own units:
 * `unit_ns` is the ns one unit of x lasts (1 for a clock in ns, 1e9/rate
 * for an audio clock's frames), so q2 is in (y/x)^2 per x unit, as the
 * bridge wants it.  Until the samples fit two 32 s spans the fit's own
 * wander bound is used (sync_fit_wander_bound: pessimistic).  A break
 * starts the samples afresh (a step is no wander).
 *
 * Bounded: at most max_pieces pieces (the oldest go first), none last
 * updated (conv.updated_ns: on this node's cpu clock) more than max_age_ns
 * before now.  Pure: no I/O, no clocks.
 *
 * Across a restart of syncd (history_file.h): the pieces are saved as
 * syncd_history_export gives them (each with the q2 it is published with
 * then) and a restarted syncd gives them to a new history
 * (syncd_history_restore).  The line's samples are not saved: the
 * restarted history measures its line afresh, and until it has a measure
 * each restored piece is published with the q2 it was saved with.
 */
#ifndef CHORUS_SYNCD_HISTORY_H
#define CHORUS_SYNCD_HISTORY_H

#include <glib.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"
#include "libsync/fit.h"
#include "syncd/continuity.h"

typedef struct {
	guint max_pieces;   /* pieces kept (0: none) */
	int64_t max_age_ns; /* a piece last updated longer ago than this goes */
	int64_t every_ns;   /* a periodic piece every this much of data (ns; 0: none) */
	double unit_ns;     /* ns per unit of the pair's x (1: ns; 1e9/rate: frames) */
} syncd_history_params;

typedef struct syncd_history syncd_history;

/* A new empty history. */
syncd_history *syncd_history_new(const syncd_history_params *p);

/* Free (NULL is fine). */
void syncd_history_free(syncd_history *h);

/* The pair's fit gives y at x (its newest observation) with standard error
 * se (y units), noted at cpu time at_ns: a sample of the line for the
 * wander (at most one per SYNCD_CONTINUITY_SPACING_NS of x; one before the
 * newest is skipped).  Samples with se not finite or <= 0 are ignored. */
void syncd_history_note(syncd_history *h, int64_t x, int64_t y, double se, int64_t at_ns);

/* The fit c (n >= 3, slope > 0) ended: kept as a piece, after the newest
 * (one that would overlap it is replaced), with the q2 measured on the
 * noted samples, or fit_q2 (the fit's own wander bound, >= 0) while they
 * are too few.  `brk`: a break follows it (flagged SYNC_CONV_BREAK: never
 * bridged), and the samples start afresh.  Returns TRUE when kept. */
gboolean syncd_history_close(syncd_history *h, const sync_conv *c, double fit_q2, gboolean brk);

/* The pair's current fit c: kept as a periodic piece when it rests on
 * min_n observations or more and its data begin every_ns (in x's unit) or
 * more after the newest piece's end (the first, and the first after a
 * break: at once).  Returns TRUE when kept. */
gboolean syncd_history_keep(syncd_history *h, const sync_conv *c, uint32_t min_n, double fit_q2);

/* The min_n for syncd_history_keep of a pair fitted by f over windows of
 * `window` observations: half a window, or 3 once the fit has shortened
 * its window because the rate wanders (sync_fit_used_from > 0: it holds
 * more than it uses, so it is no young fit) — else a wandering pair, whose
 * fits rest on fewer than half a window, would never keep a piece. */
uint32_t syncd_history_min_n(const sync_fit *f, uint32_t window);

/* The pair's x starts again at x, before the newest piece's end (a clock
 * numbered afresh): every piece goes (they name other instants now), and
 * the samples.  Returns how many pieces went (0 when x is after them). */
guint syncd_history_renumber(syncd_history *h, int64_t x);

/* Append to out (GArray of sync_ticker_entry) the pieces that end at or
 * before current_xmin (where the current fit's data begin), oldest first,
 * as entries from -> to; each one's q2 is the one measured on the line now
 * when it can be (more of the line than when the piece was kept), else the
 * one it was kept with.  Returns how many. */
size_t syncd_history_entries(const syncd_history *h, sync_clock_id from, sync_clock_id to, int64_t current_xmin,
			     GArray *out);

/* Forget pieces last updated more than max_age_ns before now_ns.  Returns
 * how many went. */
guint syncd_history_expire(syncd_history *h, int64_t now_ns);

/* TRUE when it holds no piece and no sample of the line noted within
 * max_age_ns of now_ns (its owner may forget it). */
gboolean syncd_history_idle(const syncd_history *h, int64_t now_ns);

/* Pieces kept. */
guint syncd_history_count(const syncd_history *h);

/* Append " N pieces (newest: data D s, ended E s ago, wander W, measured
 * ...), bridged over G s to the current fit" (current_xmin: where the
 * current fit's data begin, INT64_MIN: none) to out, and ", R from before
 * syncd restarted" when some were restored, nothing when it holds no
 * piece.  Durations in s through unit_ns; the wander as ppb/sqrt(s) of
 * the pair's relative rate (slope taken from the newest piece). */
void syncd_history_describe(const syncd_history *h, int64_t now_ns, int64_t current_xmin, GString *out);

/* ns per unit of the pair's x (the params' unit_ns; 1 when it was not
 * > 0). */
double syncd_history_unit(const syncd_history *h);

/* Append to out (GArray of sync_conv) every piece, oldest first, as
 * syncd_history_entries publishes them (each one's q2 the line's measure
 * now when there is one, its span in the flags), whatever the current
 * fit: what a restarted syncd is to publish again.  When `current` is not
 * NULL (the pair's current fit, with fit_q2 its wander bound, as for
 * syncd_history_close) it is appended too, as syncd_history_close would
 * keep it (not a break), without changing h: the pieces of a pair whose
 * syncd stops.  Returns how many were appended. */
size_t syncd_history_export(const syncd_history *h, const sync_conv *current, double fit_q2, GArray *out);

/* Give a new history the n pieces saved by syncd_history_export before a
 * restart (oldest first): kept as they are (their q2 in `wander`, its
 * span in the flags), the newest max_pieces of them.  Each must be flagged
 * SYNC_CONV_PIECE (not FIXED), rest on n >= 3 observations with slope > 0,
 * a finite q2 >= 0, pass sync_conv_check, and begin at or after the end of
 * the one before.  Until its line has a measure of its own, each is
 * published with the q2 it was saved with.  Returns how many were kept
 * (0 when max_pieces is 0), -EBUSY when h holds pieces already, or
 * -EINVAL with the reason in *why (then h is unchanged).  Pure. */
int syncd_history_restore(syncd_history *h, const sync_conv *pieces, size_t n, const char **why);

/* How many of the pieces held came from syncd_history_restore. */
guint syncd_history_restored(const syncd_history *h);

#endif
