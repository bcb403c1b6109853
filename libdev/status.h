/* status.h — Status device, server half: the current state of a service.
 *
 * Readers GET it once or SUBscribe; a subscriber gets the current state at
 * once, and after dev_status_notify() the *latest* state when it is ready to
 * read (intermediate states are coalesced, never queued).  The callbacks are
 * called only when some reader wants the state, at most once per
 * representation per change however many readers there are.
 */
#ifndef CHORUS_DEV_STATUS_H
#define CHORUS_DEV_STATUS_H

#include "libdev/common.h"

typedef struct dev_status dev_status;

/* Append the text state to `out`; return 0 or a negative errno (the reader
 * gets an ERROR reply with that errno). */
typedef int (*dev_status_text_fn)(void *user, GString *out);
/* Append the binary state to `out`; 0 or a negative errno. */
typedef int (*dev_status_binary_fn)(void *user, GByteArray *out);

/* Create status device `name` on `ctx` (NULL = default context); `binary`
 * may be NULL (binary requests then get -EOPNOTSUPP).  Returns NULL with
 * *error (DEV_ERROR, errno code, message naming the path) on failure. */
dev_status *dev_status_new(const char *name, const dev_options *opt, GMainContext *ctx,
			   dev_status_text_fn text, dev_status_binary_fn binary, void *user,
			   GError **error);

/* The state changed: subscribers will be sent the latest state.  No callback
 * runs here or later unless a reader is subscribed. */
void dev_status_notify(dev_status *d);

/* Number of subscribed readers. */
guint dev_status_subscribers(dev_status *d);

/* Close every connection, remove the socket file, free.  NULL is fine. */
void dev_status_free(dev_status *d);

#endif
