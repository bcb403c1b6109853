/* rbs_core.h — reference-broadcast synchronization between this node and
 * its neighbours: beacon receptions, matching of reception reports, and the
 * pairwise fits cpu_self -> cpu_peer (pure: no I/O, no clocks; the caller
 * passes every time, on this node's cpu clock, ns).
 *
 * RBS (Elson, Girod, Estrin 2002): a beacon's receivers each timestamp it;
 * two receivers that heard the same beacons fit one's times against the
 * other's, so the sender's own nondeterminism (when it actually sent) never
 * enters.  Each node reports what it heard; a report from peer P matched
 * against our own receptions gives pairs (t_self, t_P):
 *   - beacons sent by a third node: RBS observations (the method proper);
 *   - beacons sent by P or by us, with the sender's own looped-back
 *     reception: "sender-receiver" observations.  Two nodes with no common
 *     third neighbour (the ends of a line) have only these.  Both directions
 *     go into one fit, so a constant send-path delay cancels; they carry the
 *     sender's send-path jitter and are used only while a pair has fewer
 *     than min_rbs RBS observations.
 * Each fit is libsync's robust least squares (MEAN, outlier rejection).
 */
#ifndef CHORUS_SYNCD_RBS_CORE_H
#define CHORUS_SYNCD_RBS_CORE_H

#include <glib.h>
#include <stdint.h>

#include "libsync/fit.h"
#include "libsync/ticker_wire.h"
#include "syncd/history_store.h"
#include "syncd/rbs_paths.h"
#include "syncd/rbs_wire.h"

typedef struct {
	uint32_t self;            /* this node */
	uint32_t window;          /* observations per fit */
	double reject_k;          /* outlier rejection, robust sigmas */
	double wander;            /* fractional frequency wander for aging */
	int64_t max_span_ns;      /* observations older than this leave a fit, ns */
	int64_t hold_ns;          /* keep our own receptions this long, ns */
	int64_t peer_timeout_ns;  /* forget a peer silent this long, ns */
	uint32_t min_rbs;         /* RBS observations before a pair uses its RBS fit (>= 3) */
	uint32_t references;      /* 0: every node is a reference; K >= 2: the K lowest-numbered of the
				  * neighbourhood are (rbs_core_is_reference) */
	double path_tolerance_ns; /* a beacon sender's observations may differ from the others' by this
				   * much before rbs_paths flags the link (rbs_paths.h) */
	int64_t history_ns;       /* keep a pair's fit from before an outage this long (rbs_history.h) */
	uint32_t history_pieces;  /* ... at most this many per peer (0: no history) */
	uint32_t history_peers;   /* ... for at most this many peers */
	int64_t history_every_ns; /* ... and a pair's fit every this much of its data (0: only before outages) */
} rbs_core_cfg;

typedef struct rbs_core rbs_core;

/* A new state.  Returns NULL with *why on a bad parameter. */
rbs_core *rbs_core_new(const rbs_core_cfg *cfg, const char **why);

/* Free (NULL is fine). */
void rbs_core_free(rbs_core *c);

/* We received beacon (sender, seq) at cpu time t_ns (our own beacons too, as
 * looped back).  A duplicate (sender, seq) keeps the first time.  Receptions
 * older than hold_ns before `now_ns` are forgotten. */
void rbs_core_heard(rbs_core *c, uint32_t sender, uint32_t seq, int64_t t_ns, int64_t now_ns);

/* Our receptions at or after `since_ns`, oldest first, at most max into out.
 * Returns how many. */
size_t rbs_core_recent(const rbs_core *c, int64_t since_ns, rbs_reception *out, size_t max);

/* Peer `peer` reported these receptions.  Matches them against ours and adds
 * the new pairs to its fits (each fit takes only x beyond its last one).
 * Returns the observations added (>= 0). */
int rbs_core_report(rbs_core *c, uint32_t peer, const rbs_reception *rx, size_t n, int64_t now_ns);

/* After a report from `peer`: TRUE once when its pair's beacon senders
 * have begun to disagree (rbs_paths.h: a delayed link), the verdict in
 * *v; FALSE otherwise (still disagreeing, agreeing, or too few senders). */
gboolean rbs_core_path_alarm(rbs_core *c, uint32_t peer, rbs_paths_verdict *v);

/* Times a pair's beacon senders began to disagree, over all peers. */
guint64 rbs_core_path_alarms(const rbs_core *c);

/* A packet from `peer` carried boot number `boot` (rbs_wire.h: larger at
 * every start of its syncd).  When it grows, the peer's next report tells
 * whether its cpu clock started again with it (a reboot) or went on (a
 * restart of syncd alone): the median residual of its first 3 new
 * observations beyond 5 s.e. of the pair's fit is a restarted clock, and
 * the pair's fit becomes a piece of its history and starts afresh
 * (counted: rbs_core_restarts), instead of standing for the new clock
 * while the window still holds the old one's observations. */
void rbs_core_boot(rbs_core *c, uint32_t peer, uint64_t boot, int64_t now_ns);

/* Peers whose cpu clock was found to have started again (rbs_core_boot). */
guint64 rbs_core_restarts(const rbs_core *c);

/* Any packet from `peer` at `now_ns`: it is alive. */
void rbs_core_touch(rbs_core *c, uint32_t peer, int64_t now_ns);

/* Forget peers silent for peer_timeout_ns, keeping each one's fit as a
 * piece of its pair's history (rbs_history.h), and history older than
 * history_ns.  Returns how many peers went. */
guint rbs_core_expire(rbs_core *c, int64_t now_ns);

/* The usable fits: entries cpu_self -> cpu_peer (conv.updated_ns = time of the
 * newest observation), appended to `out` (GArray of sync_ticker_entry).
 * Each fit published is also noted in the pairs' history (its line
 * sampled, a periodic piece kept: rbs_history.h; at most one sample per
 * 4 s, so the ticker's and the advertisement's calls note it once).
 * Returns how many. */
size_t rbs_core_entries(rbs_core *c, GArray *out);

/* The history pieces of the pairs rbs_core_entries publishes (each
 * peer's from before its outages, rbs_history.h), appended to `out` as
 * entries cpu_self -> cpu_peer flagged SYNC_CONV_PIECE, for the ticker
 * only (not advertised: the two ends of a pair hold its history).
 * Returns how many. */
size_t rbs_core_history_entries(rbs_core *c, GArray *out);

/* Give peer's pair the pieces of history it had before syncd restarted
 * (rbs_history_restore: cpu_self -> cpu_peer, oldest first; those older
 * than history_ns before now_ns go).  Returns the pieces kept (0 when no
 * history is kept), -EINVAL (peer is this node, or a bad piece) or
 * -EBUSY (the peer has pieces already) with the reason in *why. */
int rbs_core_restore(rbs_core *c, uint32_t peer, const sync_conv *pieces, size_t n, int64_t now_ns, const char **why);

/* Add every peer's history to out (rbs_history_export); with_current:
 * each peer's current fit too, as the piece its falling silent would keep
 * (syncd stops; nothing is changed).  Returns the pieces added. */
size_t rbs_core_export(rbs_core *c, gboolean with_current, history_store *out);

/* Reference broadcasters in a dense field ([rbs] references = K, issue 17).
 * With K = 0 every node beacons and every pair with observations is
 * published.  With K >= 2, `node` is one of this node's references when
 * fewer than K of the nodes this one knows (itself and its peers) have a
 * lower number: in a field where every node hears every other, the same K
 * nodes everywhere.  This node publishes its fits only to its references
 * (cpu_self -> cpu_ref), so the field's graph has about N*K edges instead of
 * N^2/2 and two other nodes convert through a reference (two hops).
 * TRUE for every node when K = 0. */
gboolean rbs_core_is_reference(const rbs_core *c, uint32_t node);

/* Peer `peer` advertised news of these nodes (rbs_node_news: hops 1 are
 * the nodes it hears).  Kept, with references, to decide rbs_core_beacons. */
void rbs_core_advertised(rbs_core *c, uint32_t peer, const rbs_node_news *news, size_t n, int64_t now_ns);

/* Whether this node beacons at now_ns: always with K = 0; with K >= 2 when
 * it is a reference of its own view or of some peer that hears it (among
 * the K lowest of that peer and the neighbours it advertised).  So every
 * node hears the K references it fits to, in a sparse field too (where
 * that makes most nodes beacon: references save traffic only where many
 * nodes hear each other), while in a dense field only K nodes beacon and a
 * reception report carries K beacons per interval instead of N. */
gboolean rbs_core_beacons(const rbs_core *c, int64_t now_ns);

/* Neighbours kept per peer for rbs_core_beacons. */
#define RBS_CORE_MAX_NBRS 4096

/* Number of peers (heard within the timeout). */

/* Number of peers (heard within the timeout). */
guint rbs_core_n_peers(const rbs_core *c);

/* A counter that changes whenever a fit gains observations or a peer comes
 * or goes. */
guint64 rbs_core_generation(const rbs_core *c);

/* Append a table of peers and fits to out. */
void rbs_core_describe(rbs_core *c, int64_t now_ns, GString *out);

#endif
