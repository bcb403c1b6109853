/* rbs.h — syncd's network side: the UDP socket, kernel receive timestamps,
 * the receive filter (rxfilter.h), beacons, reception reports,
 * advertisements, and applying the global root rule (docs/protocol.md
 * "Network protocol (syncd, collab)").  The maths lives in rbs_core
 * (pairwise fits) and rbs_mesh (what is known of the rest of the network),
 * the root in root.c; this file does the I/O and the timers.
 *
 * It is given what it needs, not the daemon: the configuration, the local
 * pairs (for the realtime -> cpu conversion of receive times and for what
 * it advertises), the root (which it steers by the root rule) and a
 * listener for changes that the devices show (notify.h).
 */
#ifndef CHORUS_SYNCD_RBS_H
#define CHORUS_SYNCD_RBS_H

#include <glib.h>

#include "syncd/config.h"
#include "syncd/notify.h"
#include "syncd/pairs.h"
#include "syncd/rbs_core.h"
#include "syncd/rbs_mesh.h"
#include "syncd/root.h"

typedef struct syncd_rbs syncd_rbs;

/* Open the socket, load the receive filter named by CHORUS_RX_FILTER (if
 * any) and start the timers on ctx (NULL = default).  cfg, pairs and root
 * must outlive the result.  Returns the state, or NULL with *err (socket,
 * bad address, key file, receive filter). */
syncd_rbs *syncd_rbs_new(const syncd_config *cfg, syncd_pairs *pairs, syncd_root *root, syncd_notify on_change,
			 GMainContext *ctx, GError **err);

/* Stop and free (NULL is fine). */
void syncd_rbs_free(syncd_rbs *r);

/* Our RBS fits, for the node's conversion list (conversions.h); NULL when
 * r is NULL (RBS off). */
rbs_core *syncd_rbs_core(syncd_rbs *r);

/* What we learned of the network, for the same; NULL when r is NULL. */
const rbs_mesh *syncd_rbs_mesh(const syncd_rbs *r);

/* Housekeeping at now: expire peers and conversions, apply the root rule. */
void syncd_rbs_tick(syncd_rbs *r, int64_t now_ns);

/* The status text of sync/rbs. */
void syncd_rbs_describe(syncd_rbs *r, int64_t now_ns, GString *out);

/* The nodes whose packets passed (authentication, replay windows, the
 * peers list), where from and how long ago, one line each, by node:
 * "node=N addr=A.B.C.D age_s=S[ authenticated]" — sync/peers, where remote
 * device access finds a node the nodes file gives no address for
 * (libdev/remote.h). */
void syncd_rbs_describe_peers(syncd_rbs *r, int64_t now_ns, GString *out);

#endif
