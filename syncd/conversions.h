/* conversions.h — every conversion this node knows, in one list, built in
 * one place for both of its readers: the ticker (devices.c) and our RBS
 * advertisement (rbs.c).
 *
 * Order and precedence (a later source adds only pairs the earlier ones
 * lack): the local pairs (pairs.c), the definition of global when this node
 * is the root (root.c), our RBS fits (rbs_core), then conversions learned
 * from other nodes (rbs_mesh, only the root's global edge).  On the
 * ticker only (SYNCD_CONV_ALL) the pairs' history follows: the local
 * pairs' pieces (pairs.h) and the RBS pairs' (rbs_history.h), each pair's
 * after its current fit.  No I/O; the fits are solved lazily as their
 * modules do.
 */
#ifndef CHORUS_SYNCD_CONVERSIONS_H
#define CHORUS_SYNCD_CONVERSIONS_H

#include <glib.h>
#include <stdint.h>

#include "libsync/ticker_wire.h"
#include "syncd/pairs.h"
#include "syncd/rbs_core.h"
#include "syncd/rbs_mesh.h"
#include "syncd/root.h"

typedef struct {
	sync_ticker_entry e; /* from -> to and its conversion (updated_ns: our cpu ns) */
	uint32_t origin;     /* node that fitted or defined it (this node for ours) */
	uint32_t hops;       /* advertisements it crossed to reach us (0 for ours) */
	int64_t age_ns;      /* now - updated as advertised: 0 for the definition of
			      * global, never negative for learned ones */
} syncd_conversion;

/* Which conversions syncd_conversions lists. */
typedef enum {
	SYNCD_CONV_ALL,       /* everything (the ticker) */
	SYNCD_CONV_SHAREABLE, /* without realtime pairs, of local use only (advertisements) */
} syncd_conv_set;

/* The conversions at `now_ns` (node cpu ns) from `pairs` and `root`, and — when
 * RBS runs — `core` and `mesh` (both NULL otherwise), as a new GArray of
 * syncd_conversion (g_array_free it). */
GArray *syncd_conversions(syncd_pairs *pairs, const syncd_root *root, rbs_core *core, const rbs_mesh *mesh,
			  syncd_conv_set set, int64_t now_ns);

/* The same as ticker entries: a new array of *n (g_free it). */
sync_ticker_entry *syncd_conversions_ticker(syncd_pairs *pairs, const syncd_root *root, rbs_core *core,
					    const rbs_mesh *mesh, int64_t now_ns, size_t *n);

#endif
