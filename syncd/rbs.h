/* rbs.h — syncd's network side: the UDP socket, kernel receive timestamps,
 * beacons, reception reports, advertisements, the simulated radio, and the
 * global root rule (docs/protocol.md "Network protocol (syncd, collab)").
 * The maths lives in rbs_core (pairwise fits) and rbs_mesh (what is known
 * of the rest of the network); this file does the I/O and the timers.
 */
#ifndef CHORUS_SYNCD_RBS_H
#define CHORUS_SYNCD_RBS_H

#include <glib.h>

#include "syncd/syncd.h"

typedef struct syncd_rbs syncd_rbs;

/* Open the socket and start the timers on ctx (NULL = default).  Returns
 * the state, or NULL with *err (socket, bad address, key file, scenario). */
syncd_rbs *syncd_rbs_new(syncd *s, GMainContext *ctx, GError **err);

/* Stop and free (NULL is fine). */
void syncd_rbs_free(syncd_rbs *r);

/* Append what the network contributes to the ticker: our RBS fits, then
 * learned conversions whose pair is not already in `have` (a GHashTable of
 * rbs_mesh_pair_key keys, updated). */
void syncd_rbs_entries(syncd_rbs *r, GArray *out, GHashTable *have);

/* Housekeeping at now: expire peers and conversions, apply the root rule. */
void syncd_rbs_tick(syncd_rbs *r, int64_t now);

/* The status text of sync/rbs. */
void syncd_rbs_describe(syncd_rbs *r, int64_t now, GString *out);

#endif
