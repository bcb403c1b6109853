/* ticker_read.h — read the node's ticker (sync/ticker) once, blocking: every
 * conversion syncd publishes, for tools and bindings that do not run a GLib
 * main loop (docs/libsync.md).  For a program that converts continuously,
 * sync_client (client.h) keeps a subscription instead.
 */
#ifndef CHORUS_SYNC_TICKER_READ_H
#define CHORUS_SYNC_TICKER_READ_H

#include <stddef.h>

#include "libsync/ticker_wire.h"

/* Read sync/ticker (binary) under $CHORUS_RUN within timeout_ms, parse its
 * header into *h and up to `max` entries into e[] (e may be NULL when max is
 * 0).  Returns the entries written (h->count says how many the ticker has;
 * malformed entries are skipped), or -errno with the reason in why[len]:
 * the device's error (-ENOENT/-ECONNREFUSED: syncd not running,
 * -ETIMEDOUT) or the ticker's (-EBADMSG, -EMSGSIZE).  Touches the socket
 * only; no GLib main context is used. */
int sync_ticker_read(int timeout_ms, sync_ticker_head *h, sync_ticker_entry *e, size_t max, char *why, size_t len);

#endif
