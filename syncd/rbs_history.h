/* rbs_history.h — the fits a node's RBS pairs had before an outage, kept
 * so that a time inside the outage converts across it afterwards (issue 16
 * item 3; docs/clocks.md "Across an outage").
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
 * Bounded: at most max_pieces per peer and max_peers peers (the oldest
 * pieces go first), none ending more than max_age_ns before now.  Pure: no
 * I/O, no clocks (times on this node's cpu clock, ns).
 */
#ifndef CHORUS_SYNCD_RBS_HISTORY_H
#define CHORUS_SYNCD_RBS_HISTORY_H

#include <glib.h>
#include <stdint.h>

#include "libsync/conv.h"
#include "libsync/ticker_wire.h"

typedef struct rbs_history rbs_history;

/* A new empty store; max_pieces 0 keeps nothing. */
rbs_history *rbs_history_new(guint max_pieces, guint max_peers, int64_t max_age_ns);

/* Free (NULL is fine). */
void rbs_history_free(rbs_history *h);

/* The fit cpu_self -> cpu_peer `c` (n >= 3) ended: its peer fell silent.
 * Kept as a piece with q2 (the rate random walk its fit measured, >= 0),
 * after the peer's newest piece (one that would overlap it is replaced).
 * Returns TRUE when kept. */
gboolean rbs_history_close(rbs_history *h, uint32_t peer, const sync_conv *c, double q2);

/* Append to out (GArray of sync_ticker_entry) the pieces of `peer` that
 * end before `current_xmin` (the data of the pair's current fit begin
 * there), oldest first, as entries cpu_self -> cpu_peer.  Returns how many. */
size_t rbs_history_entries(const rbs_history *h, uint32_t self, uint32_t peer, int64_t current_xmin, GArray *out);

/* Forget pieces that ended more than max_age_ns before now_ns.  Returns
 * how many went. */
guint rbs_history_expire(rbs_history *h, int64_t now_ns);

/* Pieces kept in all (*peers: for how many peers). */
guint rbs_history_count(const rbs_history *h, guint *peers);

/* Append "  history: nodeP N pieces (newest ended S s ago, gap G s)"
 * lines to out, one per peer (gap: from its newest piece to the current
 * fit's data, current_xmin(peer) via the callback; INT64_MIN: none). */
void rbs_history_describe(const rbs_history *h, int64_t now_ns, int64_t (*current_xmin)(void *user, uint32_t peer),
			  void *user, GString *out);

#endif
