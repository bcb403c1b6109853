/* rbs_history.h — the fits a node's RBS pairs had, kept so that a past
 * time converts with the fit that held then, and a time inside an outage
 * across it afterwards (issue 16 item 3; docs/clocks.md "Across an
 * outage").
 *
 * A pair's sliding-window fit covers only its last window (half a minute
 * of beacons): a time older than that plus the graph's tolerance cannot be
 * converted with it at all.  So every_ns of data the pair's current fit is
 * kept as a piece (rbs_history_keep), and between two pieces libsync
 * bridges as across an outage (the gap's length and the measured wander
 * make the uncertainty).
 *
 * When a neighbour falls silent for the peer timeout its pair's fit is
 * forgotten (rbs_core.h) and, once the radio is back, a new fit starts
 * from the new observations.  rbs_history keeps the fit it had then as a
 * *piece* (SYNC_CONV_PIECE, libsync/bridge.h): valid over its own data,
 * its `wander` the rate random walk q2 its fit measured.  The ticker
 * publishes a peer's pieces with its current fit, and libsync's graph
 * bridges the gap between them (graph.h sync_graph_set_history): a time
 * inside the outage converts with the Brownian bridge between the fits on
 * either side and its honest uncertainty.
 *
 * The q2 of a piece: the pair's line is sampled every few seconds while
 * it has a fit (rbs_history_note), across its outages too (the two clocks
 * run on), and its frequency's random walk measured on those samples as
 * syncd/continuity.h measures a followed timescale's (consecutive spans of
 * 32 to 256 s, each sample's stated noise subtracted, the largest kept).
 * Until the samples fit two 32 s spans the fit's own wander bound is used
 * (sync_fit_wander_bound: a window's two halves, which short noisy windows
 * cannot resolve, so it is pessimistic).
 *
 * Bounded: at most max_pieces per peer and max_peers peers (the oldest
 * pieces go first), none ending more than max_age_ns before now.  Pure: no
 * I/O, no clocks (times on this node's cpu clock, ns).
 *
 * This is the table of peers; one pair's history (its pieces, its line
 * and q2) is syncd/history.h, which the local pairs use too (pairs.h).
 */
#ifndef CHORUS_SYNCD_RBS_HISTORY_H
#define CHORUS_SYNCD_RBS_HISTORY_H

#include <glib.h>
#include <stdint.h>

#include "libsync/conv.h"
#include "libsync/ticker_wire.h"
#include "syncd/continuity.h"
#include "syncd/history_store.h"

typedef struct rbs_history rbs_history;

/* A new empty store; max_pieces 0 keeps nothing; a periodic piece every
 * every_ns of data (0: only before outages). */
rbs_history *rbs_history_new(guint max_pieces, guint max_peers, int64_t max_age_ns, int64_t every_ns);

/* Free (NULL is fine). */
void rbs_history_free(rbs_history *h);

/* The pair with `peer` has a fit whose line gives y_ns at x_ns (this
 * node's cpu, the newest observation) with standard error se_ns: noted
 * for the wander (at most one sample per SYNCD_CONTINUITY_SPACING_NS). */
void rbs_history_note(rbs_history *h, uint32_t peer, int64_t x_ns, int64_t y_ns, double se_ns);

/* The fit cpu_self -> cpu_peer `c` (n >= 3) ended: its peer fell silent.
 * Kept as a piece, after the peer's newest piece (one that would overlap
 * it is replaced), with the q2 measured on the noted samples, or
 * fit_q2 (the fit's own wander bound, >= 0) while they are too few.
 * Returns TRUE when kept. */
gboolean rbs_history_close(rbs_history *h, uint32_t peer, const sync_conv *c, double fit_q2);

/* The pair with `peer` has the fit c (published): kept as a periodic piece
 * when it rests on a whole window (n >= min_n) and its data begin every_ns
 * or more after the newest piece's end (the first: at once).  Returns
 * TRUE when kept. */
gboolean rbs_history_keep(rbs_history *h, uint32_t peer, const sync_conv *c, uint32_t min_n, double fit_q2);

/* Append to out (GArray of sync_ticker_entry) the pieces of `peer` that
 * end before `current_xmin` (the data of the pair's current fit begin
 * there), oldest first, as entries cpu_self -> cpu_peer; each one's q2 is
 * the one measured on the line now when it can be (more of the line than
 * when the piece was kept), else the one it was kept with.  Returns how
 * many. */
size_t rbs_history_entries(const rbs_history *h, uint32_t self, uint32_t peer, int64_t current_xmin, GArray *out);

/* Forget pieces that ended more than max_age_ns before now_ns.  Returns
 * how many went. */
guint rbs_history_expire(rbs_history *h, int64_t now_ns);

/* Pieces kept in all (*peers: for how many peers). */
guint rbs_history_count(const rbs_history *h, guint *peers);

/* Give peer's history the n pieces (cpu_self -> cpu_peer, oldest first)
 * it had before syncd restarted (history_store.h): syncd_history_restore,
 * then those that ended more than max_age_ns before now_ns go.  Returns
 * the pieces kept (0 when no history is kept: max_pieces 0, or max_peers
 * peers have one), -EBUSY (the peer has pieces already) or -EINVAL (a bad
 * piece) with the reason in *why. */
int rbs_history_restore(rbs_history *h, uint32_t peer, const sync_conv *pieces, size_t n, int64_t now_ns,
			const char **why);

/* Add every peer's pieces to out (HISTORY_STORE_RBS, cpu_self -> cpu_peer
 * for self = `self`; peers in increasing order), each as
 * syncd_history_export gives them.  When current is not NULL and
 * current(user, peer, &c, &fit_q2) returns TRUE, the peer's current fit c
 * is added as the piece rbs_history_close would keep (syncd stops; h is
 * not changed).  Returns the pieces added. */
size_t rbs_history_export(const rbs_history *h, uint32_t self,
			  gboolean (*current)(void *user, uint32_t peer, sync_conv *c, double *fit_q2), void *user,
			  history_store *out);

/* Append "  history: nodeP N pieces (newest ended S s ago, gap G s)"
 * lines to out, one per peer (gap: from its newest piece to the current
 * fit's data, current_xmin(peer) via the callback; INT64_MIN: none). */
void rbs_history_describe(const rbs_history *h, int64_t now_ns, int64_t (*current_xmin)(void *user, uint32_t peer),
			  void *user, GString *out);

#endif
