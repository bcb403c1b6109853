/* query.h — Query device, server half: request/response.
 *
 * Each client's requests are served in order, one at a time: the next one
 * is handed to the service only after the previous one was completed.
 * Different clients are served concurrently.  The service completes a
 * request at once or later through its handle.
 */
#ifndef CHORUS_DEV_QUERY_H
#define CHORUS_DEV_QUERY_H

#include "libdev/common.h"

typedef struct dev_query dev_query;
typedef struct dev_query_handle dev_query_handle;

/* A request arrived: `req` (len bytes, valid only during the call) from
 * `who`.  The service must call dev_query_complete(h, …) exactly once, now
 * or later. */
typedef void (*dev_query_fn)(void *user, const dev_creds *who, const void *req, size_t len,
			     dev_query_handle *h);

/* Create query device `name`.  NULL + *error on failure (see dev_status_new). */
dev_query *dev_query_new(const char *name, const dev_options *opt, GMainContext *ctx,
			 dev_query_fn fn, void *user, GError **error);

/* Complete a request with `status` and a reply of len bytes, and free the
 * handle.  A no-op (apart from freeing) when the client has gone or the
 * device was freed.  Returns 0, -ENOTCONN (client gone) or -EMSGSIZE (reply
 * too long: the client gets an EMSGSIZE error instead). */
int dev_query_complete(dev_query_handle *h, int status, const void *reply, size_t len);

/* True while the requesting client is still connected. */
gboolean dev_query_handle_alive(const dev_query_handle *h);

/* Credentials of the requesting client. */
const dev_creds *dev_query_handle_creds(const dev_query_handle *h);

/* Close every connection, remove the socket file, free.  Outstanding
 * handles stay valid (completing them is a no-op).  NULL is fine. */
void dev_query_free(dev_query *d);

#endif
