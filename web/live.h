/* live.h — chorus-web's live updates: server-sent events (text/event-stream,
 * docs/protocol.md "chorus-web") to every browser on /api/events.
 *
 * Each client's queue is bounded: an event that would take it past
 * `limit` bytes not yet written to its socket is dropped for that client
 * and counted, and when it has drained the client gets a `lag` event (the
 * page then re-reads the state).  libsoup writes without blocking, so a
 * slow or stalled browser costs its queue and nothing else.  A comment line
 * every 15 s keeps proxies and the browser from timing out an idle stream.
 */
#ifndef CHORUS_WEB_LIVE_H
#define CHORUS_WEB_LIVE_H

#include <glib.h>
#include <libsoup/soup.h>
#include <stdint.h>

typedef struct web_live web_live;

/* A client joined (spec_node: the node whose spectrogram it watches, -1
 * none) or left (joined FALSE). */
typedef void (*web_live_watch_fn)(void *user, int64_t spec_node, gboolean joined);

/* A live hub; `limit` bytes queued per client (0: 1 MiB). */
web_live *web_live_new(size_t limit, web_live_watch_fn watch, void *user);

/* Free; every stream is ended. */
void web_live_free(web_live *l);

/* Turn msg into an event stream (the handler returns; the stream stays
 * open until the client goes) watching spec_node's spectrogram (-1 none);
 * `hello` (JSON, may be NULL) is sent first as event `hello`. */
void web_live_add(web_live *l, SoupServerMessage *msg, int64_t spec_node, const char *hello);

/* Send event `name` with data `json` (one line) to every client, or with
 * spec_node >= 0 only to those watching that node. */
void web_live_send(web_live *l, const char *name, const char *json, int64_t spec_node);

/* Clients now; events dropped for slow clients since the start. */
guint web_live_clients(const web_live *l);
guint64 web_live_dropped(const web_live *l);

#endif
