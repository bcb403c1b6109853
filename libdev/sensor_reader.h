/* sensor_reader.h — Sensor device, client half (crashproof).
 *
 * Opens a range [first, last) (or open-ended, or from the service's next
 * index) and receives chunks, gaps and the end.  After a reconnect the
 * reader opens again by itself from the next index it has not received
 * (flag DEV_SENSOR_RESUME, same params), unless the stream had ended; the
 * outage itself shows up as a GAP if the service no longer holds that index.
 */
#ifndef CHORUS_DEV_SENSOR_READER_H
#define CHORUS_DEV_SENSOR_READER_H

#include "libdev/common.h"

typedef struct dev_sensor_reader dev_sensor_reader;

typedef struct {
	/* The service accepted the request: resolved [first, last), bytes per
	 * item, and the service's reply blob.  May be NULL. */
	void (*opened)(void *user, int64_t first, int64_t last, uint32_t item_size,
		       const void *reply, size_t len);
	/* n items starting at index `first` (n * item_size bytes). */
	void (*data)(void *user, int64_t first, const void *items, size_t n);
	/* Items [from, to) will never come.  May be NULL. */
	void (*gap)(void *user, int64_t from, int64_t to);
	/* The stream reached `last`; nothing more comes.  May be NULL. */
	void (*end)(void *user, int64_t next);
	/* The service rejected the request or failed (err < 0, its message);
	 * the reader stops and does not retry.  May be NULL. */
	void (*error)(void *user, int err, const char *msg);
	/* Connection up/down.  May be NULL. */
	dev_state_fn state;
} dev_sensor_reader_ops;

/* Open sensor device `name` for [first, last) with `flags`
 * (DEV_SENSOR_FROM_NEXT …) and a parameter blob (copied).  NULL + *error
 * for a bad name or a blob over the message size. */
dev_sensor_reader *dev_sensor_reader_new(const char *name, int64_t first, int64_t last,
					 uint32_t flags, const void *params, size_t params_len,
					 GMainContext *ctx, const dev_sensor_reader_ops *ops,
					 void *user, GError **error);

/* The next index this reader has not received (INT64_MIN before the open
 * was answered). */
int64_t dev_sensor_reader_next(dev_sensor_reader *r);

/* True while connected. */
gboolean dev_sensor_reader_connected(dev_sensor_reader *r);

/* Close the stream and free; no callback runs afterwards.  NULL is fine. */
void dev_sensor_reader_free(dev_sensor_reader *r);

#endif
