/* caller.h — Command and Query devices, client half (crashproof).
 *
 * Sends requests and delivers each reply to its callback, in order.  While
 * the service is away calls fail at once with -ENOTCONN; requests in flight
 * when it goes away complete with -ECONNRESET (they are not re-sent: a
 * command may not be idempotent).  Reconnects like dev_status_reader.
 */
#ifndef CHORUS_DEV_CALLER_H
#define CHORUS_DEV_CALLER_H

#include "libdev/common.h"

typedef struct dev_caller dev_caller;

/* A reply.  err == 0: the service answered `status` with data (len bytes,
 * data[len] == 0).  err < 0: no answer (-ECONNRESET, -ETIMEDOUT) or an ERROR
 * reply from the device (-EPERM, -EINVAL …, data is its message). */
typedef void (*dev_reply_fn)(void *user, int err, int status, const char *data, size_t len);

/* Connect to command or query device `name` (`pattern` is
 * DEV_PATTERN_COMMAND or DEV_PATTERN_QUERY).  NULL + *error for a bad name
 * or pattern. */
dev_caller *dev_caller_new(const char *name, dev_pattern pattern, GMainContext *ctx,
			   dev_state_fn state, void *user, GError **error);

/* Send request `req` (len bytes; for commands text) and call `done(cb_user,
 * …)` with the reply.  Returns 0, -ENOTCONN (not connected), -EMSGSIZE or
 * -EINVAL (command not valid text).  `done` is never called from inside
 * this function. */
int dev_caller_call(dev_caller *c, const void *req, size_t len, dev_reply_fn done, void *cb_user);

/* Ask a command device for its usage text (reply status 0).  Like
 * dev_caller_call. */
int dev_caller_usage(dev_caller *c, dev_reply_fn done, void *cb_user);

/* True while connected. */
gboolean dev_caller_connected(dev_caller *c);

/* Free; pending callbacks are dropped without being called.  NULL is fine. */
void dev_caller_free(dev_caller *c);

#endif
