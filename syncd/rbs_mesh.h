/* rbs_mesh.h — what this node knows of the rest of the network: conversions
 * fitted elsewhere (learned from advertisements, re-advertised so they reach
 * nodes several hops away), which nodes are alive, and the global root
 * (pure: the caller passes every time, on this node's cpu clock, ns).
 *
 * Conversions are soft state keyed by their (unordered) pair of clocks; the
 * freshest version wins.  Ages, not times, travel (every node has its own
 * clock): an edge advertised with age a, received at local time now, was
 * last updated at now - a here.  An edge nobody refreshes grows old and is
 * forgotten after edge_expire_ns — no count-to-infinity, as its age keeps
 * growing wherever it is copied.
 *
 * Liveness: a node is alive while some news of it (a packet from it, or an
 * advertisement carrying its age) is younger than node_timeout_ns.
 * Root rule (docs/protocol.md): the configured root while it is alive,
 * otherwise the lowest-numbered live node (this node always counts).
 */
#ifndef CHORUS_SYNCD_RBS_MESH_H
#define CHORUS_SYNCD_RBS_MESH_H

#include <glib.h>
#include <stdint.h>

#include "libsync/ticker_wire.h"
#include "syncd/rbs_wire.h"

typedef struct {
	uint32_t self;           /* this node */
	int64_t edge_expire_ns;  /* forget a learned conversion not updated this long */
	int64_t node_timeout_ns; /* a node with no news this long is dead */
	uint32_t max_hops;       /* ignore conversions that crossed more advertisements */
} rbs_mesh_cfg;

typedef struct rbs_mesh rbs_mesh;

/* A new mesh view.  Never fails. */
rbs_mesh *rbs_mesh_new(const rbs_mesh_cfg *cfg);

/* Free (NULL is fine). */
void rbs_mesh_free(rbs_mesh *m);

/* A packet came from `node` at now (direct news, one hop). */
void rbs_mesh_heard(rbs_mesh *m, uint32_t node, int64_t now_ns);

/* Merge an advertisement received at now: its node news and its conversions
 * (those originated by this node are ignored: ours are authoritative).  The
 * freshest copy of a conversion wins; its hop count is the fewest of the
 * copies received recently (see rbs_mesh_news).  Returns how many
 * conversions changed. */
int rbs_mesh_merge(rbs_mesh *m, const rbs_packet *adv, int64_t now_ns);

/* Forget stale conversions and news.  Returns how many conversions went. */
guint rbs_mesh_expire(rbs_mesh *m, int64_t now_ns);

/* TRUE when `node` is this node or has news younger than node_timeout_ns. */
gboolean rbs_mesh_alive(const rbs_mesh *m, uint32_t node, int64_t now_ns);

/* The root by the rule above; `preferred` < 0: none configured. */
uint32_t rbs_mesh_root(const rbs_mesh *m, int64_t preferred, int64_t now_ns);

/* The lowest-numbered live node other than this one whose definition of
 * global (a learned cpu(node) -> global edge) is held, or RBS_NO_NODE. */
uint32_t rbs_mesh_lowest_definer(const rbs_mesh *m, int64_t now_ns);

/* News for our advertisement: ourselves (hops 0, age 0) and every live node
 * with its age now and hop count (the fewest of its recent news: a relay's
 * age leaves out its transit, so the freshest news is not always the one
 * that came the shortest way), into a new array of *n (g_free it).  With
 * `scope` >= 1 only the nodes within `scope` hops and the n_keep nodes of
 * `keep` (the root, the lowest live node: what the root rule needs
 * everywhere); 0: every live node. */
rbs_node_news *rbs_mesh_news(const rbs_mesh *m, int64_t now_ns, uint32_t scope, const uint32_t *keep, size_t n_keep,
			     size_t *n);

/* Learned conversions as ticker entries (conv.updated_ns on our clock), for
 * every edge whose pair is not in `skip` (a GHashTable of pair keys from
 * rbs_mesh_pair_key, may be NULL); the global edge only for `root`.
 * Appended to out (GArray of sync_ticker_entry); the origin and hops of each
 * go to origins/hops (GArray of guint32, may be NULL).  Returns how many. */
size_t rbs_mesh_entries(const rbs_mesh *m, uint32_t root, GHashTable *skip, GArray *out, GArray *origins,
			GArray *hops);

/* A key naming the unordered pair {a, b} (for skip sets); g_free it. */
char *rbs_mesh_pair_key(sync_clock_id a, sync_clock_id b);

/* Number of learned conversions. */
guint rbs_mesh_n_edges(const rbs_mesh *m);

/* Append a table of nodes (age, hops) and learned conversions to out. */
void rbs_mesh_describe(const rbs_mesh *m, int64_t now_ns, GString *out);

#endif
