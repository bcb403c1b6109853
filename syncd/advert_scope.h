/* advert_scope.h — what an advertisement carries in a large field
 * ([rbs] advert_hops = H, docs/protocol.md "Advertisements in large
 * fields", issue 17).
 *
 * By default every node re-advertises every conversion it knows, so each
 * learns the whole field's (any clock to any clock) and an advertisement
 * grows with the field: O(N) bytes per node, O(N^2) on the radio.  With H
 * >= 1 a node re-advertises only
 *   - conversions that crossed fewer than H advertisements to reach it
 *     (its own fits have crossed none: the neighbourhood within H hops), and
 *   - the conversions on its own minimum-variance path cpu(self) -> global
 *     (a path vector: each node's path is its link to a neighbour plus that
 *     neighbour's path, found by Dijkstra over what it holds, so it cannot
 *     loop; its edges keep their ages, so when the root dies they age out
 *     everywhere as before),
 * so an advertisement carries O(H^2 + path) conversions whatever N is, and
 * every node converts to its neighbourhood and to global.
 *
 * Pure: no I/O, no clocks (the caller passes now).
 */
#ifndef CHORUS_SYNCD_ADVERT_SCOPE_H
#define CHORUS_SYNCD_ADVERT_SCOPE_H

#include <glib.h>
#include <stdint.h>

#include "syncd/conversions.h"

/* The pair keys (rbs_mesh_pair_key) of the conversions on the
 * minimum-variance path from cpu(self) to global at now_ns over `conv`
 * (GArray of syncd_conversion; updated_ns on our cpu clock), as a new set
 * (g_hash_table_destroy it); empty when global cannot be reached.  The
 * number of conversions on the path goes to *len. */
GHashTable *syncd_scope_route(const GArray *conv, uint32_t self, int64_t now_ns, guint *len);

/* Whether `c` goes into an advertisement limited to `hops` (>= 1): it
 * crossed fewer than `hops` advertisements, or it is on `route`. */
gboolean syncd_scope_keep(const syncd_conversion *c, uint32_t hops, GHashTable *route);

#endif
