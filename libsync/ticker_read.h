/* ticker_read.h — read the node's ticker once, blocking: every conversion
 * syncd publishes, for tools and bindings that do not run a GLib main loop
 * (docs/libsync.md).  The part sync/ticker holds comes first; a snapshot of
 * more than SYNC_TICKER_PART_MAX entries is completed from sync/ticker-part
 * over one connection (ticker_wire.h, ticker_asm.h).  For a program that
 * converts continuously, sync_client (client.h) keeps a subscription
 * instead.
 */
#ifndef CHORUS_SYNC_TICKER_READ_H
#define CHORUS_SYNC_TICKER_READ_H

#include <stddef.h>

#include "libsync/ticker_asm.h"
#include "libsync/ticker_wire.h"

/* Read one whole snapshot of the ticker under $CHORUS_RUN within
 * timeout_ms into assembler a (complete on success: its head and entries).
 * A snapshot that syncd dropped while it was being read (it keeps the last
 * few) is read again from its newest, at most 4 times.  Returns the
 * snapshot's total entries, or -errno with the reason in why[len]: the
 * device's error (-ENOENT/-ECONNREFUSED: syncd not running, -ETIMEDOUT),
 * the ticker's (-EBADMSG, -EMSGSIZE, -EPROTO), or -EAGAIN (the snapshot
 * changed faster than it could be read).  Touches the sockets only; no GLib
 * main context is used. */
int sync_ticker_fetch(int timeout_ms, sync_ticker_asm *a, char *why, size_t len);

/* Read the ticker as sync_ticker_fetch, parse its head into *h and copy up
 * to `max` entries into e[] (e may be NULL when max is 0).  Returns the
 * entries written (h->count says how many the ticker has; malformed entries
 * are skipped), or -errno with the reason in why[len] as sync_ticker_fetch. */
int sync_ticker_read(int timeout_ms, sync_ticker_head *h, sync_ticker_entry *e, size_t max, char *why, size_t len);

#endif
