/* client.h — libsync's client: subscribe to the node's ticker (sync/ticker,
 * binary) through libdev and convert any time between any two clocks with
 * its uncertainty (docs/architecture.md §2.6).
 *
 * The subscription is crashproof (libdev's status reader): when syncd
 * restarts the client reconnects and re-subscribes by itself; meanwhile it
 * keeps converting with the conversions it last received, which age (their
 * uncertainty grows, and past max_age they are refused).  Conversions use a
 * cached path: no allocation and no system call besides reading the cpu
 * clock (vDSO), or none at all with sync_client_convert_at().
 * Errors: negative errno with a reason written to the caller's buffer.
 */
#ifndef CHORUS_SYNC_CLIENT_H
#define CHORUS_SYNC_CLIENT_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"
#include "libsync/graph.h"

typedef struct sync_client sync_client;

/* The set of conversions changed (a ticker arrived) or the connection went
 * up/down (connected).  May be NULL. */
typedef void (*sync_client_fn)(void *user, gboolean connected);

/* Subscribe to sync/ticker on ctx (NULL = default); `p` NULL = defaults.
 * Returns the client, or NULL with *err (bad device name). */
sync_client *sync_client_new(GMainContext *ctx, const sync_graph_params *p, sync_client_fn fn, void *user,
			     GError **err);

/* Unsubscribe and free (NULL is fine). */
void sync_client_free(sync_client *c);

/* Convert x on `from` to `to` now.  Returns 0 and *out (value, variance,
 * hops), or a negative errno as sync_graph_convert() (-ENOENT unknown clock,
 * -ENOLINK no path, -ERANGE outside validity, -ESTALE too old), or -EAGAIN
 * before the first ticker arrived; reason in why[len]. */
int sync_client_convert(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x,
			sync_graph_result *out, char *why, size_t len);

/* The same at an explicit node cpu time `now_ns` (no clock read at all). */
int sync_client_convert_at(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			   sync_graph_result *out, char *why, size_t len);

/* sync_client_convert() reaching up to reach_ns further into the past
 * than the graph's tolerance, with the variance the extrapolation grows
 * (sync_graph_convert_past: for timing events no fit reaches). */
int sync_client_convert_past(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t reach_ns,
			     sync_graph_result *out, char *why, size_t len);

/* TRUE once a ticker has been received (conversions are possible). */
gboolean sync_client_ready(const sync_client *c);

/* TRUE while subscribed to syncd. */
gboolean sync_client_connected(const sync_client *c);

/* Iterate the client's context until a ticker has arrived or timeout_ms
 * passed.  Returns 0 or -ETIMEDOUT. */
int sync_client_wait(sync_client *c, int timeout_ms);

/* The last ticker's publisher node and root (SYNC_TICKER_NO_ROOT if none). */
void sync_client_info(const sync_client *c, uint32_t *node, uint32_t *root);

/* The graph (for listing); owned by the client. */
sync_graph *sync_client_graph(sync_client *c);

#endif
