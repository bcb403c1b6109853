/* status_reader.h — Status device, client half (crashproof).
 *
 * Subscribes to a status device and calls `update` with the current state
 * and then with the latest state after each change.  When the service goes
 * away the reader reports it through `state`, reconnects with exponential
 * back-off (20 ms doubling to 2 s, reset on success) and subscribes again.
 */
#ifndef CHORUS_DEV_STATUS_READER_H
#define CHORUS_DEV_STATUS_READER_H

#include "libdev/common.h"

typedef struct dev_status_reader dev_status_reader;

/* The state: len bytes (text is not NUL-terminated on the wire; data[len]
 * is a NUL added for convenience).  err < 0: the service answered an error
 * instead (data is its message). */
typedef void (*dev_status_update_fn)(void *user, int err, const char *data, size_t len);

/* Start reading status device `name` on ctx (NULL = default), text or
 * `binary`.  `state` may be NULL.  NULL + *error only for a bad name. */
dev_status_reader *dev_status_reader_new(const char *name, gboolean binary, GMainContext *ctx,
					 dev_status_update_fn update, dev_state_fn state, void *user,
					 GError **error);

/* True while connected. */
gboolean dev_status_reader_connected(dev_status_reader *r);

/* Stop and free.  No callback runs afterwards.  NULL is fine. */
void dev_status_reader_free(dev_status_reader *r);

#endif
