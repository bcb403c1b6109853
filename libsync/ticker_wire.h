/* ticker_wire.h — the binary form of syncd's ticker (sync/ticker, binary
 * representation, and its continuation device sync/ticker-part): every
 * conversion syncd knows, for libsync clients, in parts of at most
 * SYNC_TICKER_PART_MAX entries so that no field size meets libdev's
 * 131,072-byte message limit (docs/protocol.md "sync/ticker").
 *
 * syncd takes a snapshot of its conversions (an *epoch*, numbered from 1)
 * and hands it out in parts: sync/ticker carries the part that starts at
 * entry 0; the query device sync/ticker-part hands out the part that starts
 * at any entry of a snapshot it still holds.  Every part names its epoch,
 * the snapshot's total and its own first entry, so a reader knows when it
 * has them all and never mixes two snapshots.
 *
 * Part layout (little-endian):
 *   off size field
 *   0   4    magic     "CHTK" (0x4b544843)
 *   4   2    version   SYNC_TICKER_VERSION (2; version 1 was one message)
 *   6   2    flags     0 (readers refuse others)
 *   8   4    node      publishing node
 *   12  4    root      global root node (SYNC_TICKER_NO_ROOT: none known)
 *   16  8    now       publisher's cpu clock when the snapshot was taken, ns
 *   24  8    epoch     snapshot number, >= 1
 *   32  4    total     entries in the whole snapshot
 *   36  4    first     index of this part's first entry
 *   40  4    count     entries in this part (first + count <= total)
 *   44  ...  entries, each SYNC_TICKER_ENTRY bytes:
 *        0  8  from clock (u32 node, u16 kind, u16 index)
 *        8  8  to clock
 *        16 104 sync_conv wire form (conv.h); its `updated` is on the
 *               publisher's cpu clock, so age = now - updated.
 * Request to sync/ticker-part (SYNC_TICKER_REQ bytes):
 *   0 4 magic "CHTR" (0x52544843), 4 2 version (2), 6 2 flags (0),
 *   8 8 epoch (0: the newest snapshot), 16 4 first entry wanted.
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
#define SYNC_TICKER_REQ_MAGIC 0x52544843u
#define SYNC_TICKER_VERSION 2
#define SYNC_TICKER_HDR 44
#define SYNC_TICKER_REQ 20
#define SYNC_TICKER_ENTRY (16 + SYNC_CONV_WIRE_SIZE)
/* Entries in one part: 44 + 1000 x 120 = 120,044 bytes, under libdev's
 * 131,072-byte message with room for its headers. */
#define SYNC_TICKER_PART_MAX 1000
#define SYNC_TICKER_NO_ROOT UINT32_MAX
/* The continuation device (query): parts after the first. */
#define SYNC_TICKER_PART_DEVICE "sync/ticker-part"

typedef struct {
	sync_clock_id from; /* x clock of conv */
	sync_clock_id to;   /* y clock of conv */
	sync_conv conv;     /* x -> y */
} sync_ticker_entry;

typedef struct {
	uint32_t node;  /* publishing node */
	uint32_t root;  /* global root node or SYNC_TICKER_NO_ROOT */
	int64_t now_ns; /* publisher's cpu time at writing, ns */
	size_t count;   /* entries (in the whole snapshot) */
} sync_ticker_head;

/* One part's header: the snapshot's head (count = its total) and the
 * part's place in it. */
typedef struct {
	sync_ticker_head head;
	uint64_t epoch; /* snapshot, >= 1 */
	size_t first;   /* index of the part's first entry */
	size_t n;       /* entries in this part */
} sync_ticker_part;

/* A request for the part of snapshot `epoch` (0: the newest) that starts at
 * entry `first`. */
typedef struct {
	uint64_t epoch;
	size_t first;
} sync_ticker_req;

/* Bytes of a part of n entries. */
size_t sync_ticker_part_size(size_t n);

/* Write part p's header into buf (SYNC_TICKER_HDR bytes). */
void sync_ticker_pack_part_head(const sync_ticker_part *p, uint8_t *buf);

/* Write one entry into buf (SYNC_TICKER_ENTRY bytes). */
void sync_ticker_pack_entry(const sync_ticker_entry *e, uint8_t *buf);

/* Parse the header of part buf (len bytes) into *p and check it: magic,
 * version, flags, epoch >= 1, first + n <= total, n <= SYNC_TICKER_PART_MAX
 * and len == sync_ticker_part_size(n).  Returns 0, -EBADMSG (not a ticker,
 * another version: the reason says which) or -EMSGSIZE (truncated, or the
 * sizes disagree), reason in *why. */
int sync_ticker_unpack_part(const uint8_t *buf, size_t len, sync_ticker_part *p, const char **why);

/* Parse entry i (< p.n, after a successful unpack_part) of part buf into
 * *e.  Returns 0 or -EINVAL (bad clock kind or conversion) with a reason. */
int sync_ticker_unpack_entry(const uint8_t *buf, size_t i, sync_ticker_entry *e, const char **why);

/* Write request r into buf (SYNC_TICKER_REQ bytes). */
void sync_ticker_pack_req(const sync_ticker_req *r, uint8_t *buf);

/* Parse a request (len bytes).  Returns 0, or -EBADMSG / -EMSGSIZE with a
 * reason in *why. */
int sync_ticker_unpack_req(const uint8_t *buf, size_t len, sync_ticker_req *r, const char **why);

/* One-part ticker helpers (every entry in the part of entry 0: a snapshot
 * of at most SYNC_TICKER_PART_MAX entries).  sync_ticker_size: its bytes.
 * sync_ticker_pack: write it as epoch 1 (h->count <= SYNC_TICKER_PART_MAX),
 * returning the bytes written.  sync_ticker_unpack_head: parse its header
 * (h->count = the snapshot's total; -EMSGSIZE when the part does not hold
 * them all).  A reader of tickers of any size uses sync_ticker_asm
 * (ticker_asm.h) or sync_ticker_fetch (ticker_read.h). */
size_t sync_ticker_size(size_t count);
size_t sync_ticker_pack(const sync_ticker_head *h, const sync_ticker_entry *e, uint8_t *buf);
int sync_ticker_unpack_head(const uint8_t *buf, size_t len, sync_ticker_head *h, const char **why);

/* Replace the contents of graph g with the n entries e.  Consecutive exact
 * (SYNC_CONV_FIXED) entries of one pair with increasing xmin are the
 * segments of a timescale (the root's steered definition of global,
 * docs/protocol.md "sync/ticker") and go in as one piecewise conversion
 * (sync_graph_set_segments); history pieces (SYNC_CONV_PIECE, bridge.h)
 * of one pair that follow one another are given to that pair once every
 * other entry is in (sync_graph_set_history: its history across outages,
 * whichever publisher's current fit the pair got); any other entry
 * replaces what came before for its pair.  Entries the graph refuses are skipped and counted in *skipped
 * (may be NULL), the last reason in why[wlen].  Returns the entries loaded. */
int sync_ticker_entries_to_graph(const sync_ticker_entry *e, size_t n, sync_graph *g, size_t *skipped, char *why,
				 size_t wlen);

/* Replace the contents of graph g with the conversions of one-part ticker
 * buf (len bytes); *h gets its header.  Malformed entries are skipped and
 * counted in *skipped (may be NULL).  Returns the entries loaded, or a
 * negative errno (bad header, or a ticker in several parts: g untouched)
 * with the reason in why[wlen]. */
int sync_ticker_to_graph(const uint8_t *buf, size_t len, sync_graph *g, sync_ticker_head *h, size_t *skipped,
			 char *why, size_t wlen);

#endif
