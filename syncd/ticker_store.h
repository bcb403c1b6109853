/* ticker_store.h — syncd's ticker snapshots (docs/protocol.md "sync/ticker"):
 * the conversion list packed once per change as a numbered snapshot (an
 * epoch, from 1), handed out in parts of at most `part` entries.  The last
 * `keep` snapshots are held, so a reader fetching the later parts of one
 * (sync/ticker-part) finishes it while newer ones are taken; memory is
 * keep x entries x SYNC_TICKER_ENTRY bytes.  No I/O.
 */
#ifndef CHORUS_SYNCD_TICKER_STORE_H
#define CHORUS_SYNCD_TICKER_STORE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libsync/ticker_wire.h"

typedef struct syncd_ticker_store syncd_ticker_store;

/* A store holding `keep` (>= 1) snapshots, parts of `part` entries (1 to
 * SYNC_TICKER_PART_MAX; clamped). */
syncd_ticker_store *syncd_ticker_store_new(unsigned keep, size_t part);

/* Free (NULL is fine). */
void syncd_ticker_store_free(syncd_ticker_store *st);

/* TRUE when the newest snapshot still stands for the state: taken at state
 * generation `gen` and at most max_age_ns (publisher cpu ns) before now_ns. */
gboolean syncd_ticker_store_fresh(const syncd_ticker_store *st, guint64 gen, int64_t now_ns, int64_t max_age_ns);

/* Take a new snapshot of head h (h->now_ns: when; h->count ignored) and
 * the n entries e (packed; not kept), at state generation gen, dropping the
 * oldest beyond `keep`.  Returns its epoch. */
uint64_t syncd_ticker_store_take(syncd_ticker_store *st, guint64 gen, const sync_ticker_head *h,
				 const sync_ticker_entry *e, size_t n);

/* Append to out the part of snapshot `epoch` (0: the newest) that starts at
 * entry `first` (a whole ticker part, ticker_wire.h).  Returns 0, or
 * -ENOENT (no snapshot yet), -ESTALE (that epoch is not held: start again
 * from the newest), -ERANGE (first beyond the snapshot's total), with the
 * reason in why[len]. */
int syncd_ticker_store_part(const syncd_ticker_store *st, uint64_t epoch, size_t first, GByteArray *out, char *why,
			    size_t len);

/* Snapshots taken so far (the newest epoch). */
uint64_t syncd_ticker_store_epoch(const syncd_ticker_store *st);

#endif
