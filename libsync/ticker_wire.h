/* ticker_wire.h — the binary form of syncd's ticker (sync/ticker, binary
 * representation): every conversion syncd knows, for libsync clients.
 *
 * Layout (little-endian; docs/protocol.md "sync/ticker"):
 *   off size field
 *   0   4    magic     "CHTK" (0x4b544843)
 *   4   2    version   SYNC_TICKER_VERSION
 *   6   2    count     number of entries
 *   8   4    node      publishing node
 *   12  4    root      global root node (SYNC_TICKER_NO_ROOT: none known)
 *   16  8    now       publisher's cpu clock when the ticker was written, ns
 *   24  ...  entries, each SYNC_TICKER_ENTRY bytes:
 *        0  8  from clock (u32 node, u16 kind, u16 index)
 *        8  8  to clock
 *        16 104 sync_conv wire form (conv.h); its `updated` is on the
 *               publisher's cpu clock, so age = now - updated.
 * Pure: no I/O.  Errors are negative errno with a static reason.
 */
#ifndef CHORUS_TICKER_WIRE_H
#define CHORUS_TICKER_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"
#include "libsync/graph.h"

#define SYNC_TICKER_MAGIC 0x4b544843u
#define SYNC_TICKER_VERSION 1
#define SYNC_TICKER_HDR 24
#define SYNC_TICKER_ENTRY (16 + SYNC_CONV_WIRE_SIZE)
#define SYNC_TICKER_NO_ROOT UINT32_MAX

typedef struct {
	sync_clock_id from; /* x clock of conv */
	sync_clock_id to;   /* y clock of conv */
	sync_conv conv;     /* x -> y */
} sync_ticker_entry;

typedef struct {
	uint32_t node;  /* publishing node */
	uint32_t root;  /* global root node or SYNC_TICKER_NO_ROOT */
	int64_t now_ns; /* publisher's cpu time at writing, ns */
	size_t count;   /* entries */
} sync_ticker_head;

/* Bytes needed for `count` entries. */
size_t sync_ticker_size(size_t count);

/* Write header h and h->count entries into buf (sync_ticker_size bytes).
 * Returns the bytes written. */
size_t sync_ticker_pack(const sync_ticker_head *h, const sync_ticker_entry *e, uint8_t *buf);

/* Parse the header of buf (len bytes) into *h and check the size against
 * h->count.  Returns 0, -EBADMSG (magic/version) or -EMSGSIZE, reason in *why. */
int sync_ticker_unpack_head(const uint8_t *buf, size_t len, sync_ticker_head *h, const char **why);

/* Parse entry i (< h.count, after a successful unpack_head) into *e.
 * Returns 0 or -EINVAL (bad conversion) with a reason. */
int sync_ticker_unpack_entry(const uint8_t *buf, size_t i, sync_ticker_entry *e, const char **why);

/* Replace the contents of graph g with the conversions of ticker buf (len
 * bytes); *h gets its header.  Entries that are malformed are skipped and
 * counted in *skipped (may be NULL).  Returns the entries loaded, or a
 * negative errno (bad header: g untouched) with the reason in why[wlen]. */
int sync_ticker_to_graph(const uint8_t *buf, size_t len, sync_graph *g, sync_ticker_head *h, size_t *skipped,
			 char *why, size_t wlen);

#endif
