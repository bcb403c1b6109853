/* ticker_asm.h — put a ticker together from its parts (ticker_wire.h):
 * the part sync/ticker carries (entry 0 on), then the parts
 * sync/ticker-part hands out, each for the next entry wanted, until the
 * snapshot's total is reached.  Parts of one snapshot (epoch) only: a part
 * that starts at entry 0 begins a new assembly (dropping one in progress),
 * and a later part of another epoch is refused, so two snapshots are never
 * mixed.  Malformed entries are skipped and counted; a malformed part is
 * refused whole.  Pure: no I/O.
 */
#ifndef CHORUS_SYNC_TICKER_ASM_H
#define CHORUS_SYNC_TICKER_ASM_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/ticker_wire.h"

typedef struct sync_ticker_asm sync_ticker_asm;

/* A new, empty assembler. */
sync_ticker_asm *sync_ticker_asm_new(void);

/* Free (NULL is fine). */
void sync_ticker_asm_free(sync_ticker_asm *a);

/* Take part buf (len bytes).  Returns 1 when the snapshot is complete, 0
 * when more parts are needed (ask for sync_ticker_asm_next() of
 * sync_ticker_asm_epoch()), or a negative errno with the reason in why[wlen]
 * and the assembly in progress kept: -EBADMSG / -EMSGSIZE (malformed part,
 * ticker_wire.h), -ESTALE (a part of another epoch than the one being
 * assembled: a late answer; ignore it), -EPROTO (not the part asked for:
 * its first entry is not the next one wanted, or its head disagrees with
 * the snapshot's). */
int sync_ticker_asm_add(sync_ticker_asm *a, const uint8_t *buf, size_t len, char *why, size_t wlen);

/* TRUE when the last snapshot begun is complete. */
int sync_ticker_asm_complete(const sync_ticker_asm *a);

/* The epoch being assembled (0: none begun) and the next entry wanted. */
uint64_t sync_ticker_asm_epoch(const sync_ticker_asm *a);
size_t sync_ticker_asm_next(const sync_ticker_asm *a);

/* The snapshot's head (count = its total) and its well-formed entries so
 * far: *n of them (fewer than the total by the skipped ones). */
const sync_ticker_head *sync_ticker_asm_head(const sync_ticker_asm *a);
const sync_ticker_entry *sync_ticker_asm_entries(const sync_ticker_asm *a, size_t *n);

/* Entries skipped as malformed in this snapshot, and the last reason (""
 * when none). */
size_t sync_ticker_asm_skipped(const sync_ticker_asm *a, const char **why);

#endif
