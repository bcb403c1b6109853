/* ticker_text.h — the ticker's text form for people (sync/ticker text,
 * `synctool ticker`): a head line, then one line per conversion, e.g.
 *
 *   ticker node3 now=123456789 conversions=2 root=node1
 *   node3:cpu -> node4:cpu slope=1.0000012 n=64 rms=812.5 se_end=143.2 age=0.412s
 *   node1:cpu -> global slope=1 exact x0=0 y0=0
 *
 * Pure: appends to a GString.
 */
#ifndef CHORUS_SYNC_TICKER_TEXT_H
#define CHORUS_SYNC_TICKER_TEXT_H

#include <glib.h>

#include "libsync/ticker_wire.h"

/* Append the head line of h (h->count conversions; root omitted when
 * SYNC_TICKER_NO_ROOT). */
void sync_ticker_format_head(const sync_ticker_head *h, GString *out);

/* Append entry e's line; its age is now_ns - updated (publisher cpu ns). */
void sync_ticker_format_entry(const sync_ticker_entry *e, int64_t now_ns, GString *out);

#endif
