/* sensor.h — Sensor device, server half: range streaming of ordered,
 * indexed, fixed-size items (audio frames first).
 *
 * The library pulls from the service instead of copying into per-client
 * queues: `range` says which indices the service holds, [oldest, next);
 * `read` copies items for one client when that client's socket can take a
 * chunk.  A client asks for [first, last) (or open-ended); the past is sent
 * at once, the future as dev_sensor_advance() announces it, each chunk
 * tagged with its first index.  A client whose next index is no longer held
 * (it fell behind, or the service declared a gap) gets a GAP [from, to)
 * marker and continues at the next held index; END follows the last item.
 * One slow reader never blocks the service or the other readers.
 */
#ifndef CHORUS_DEV_SENSOR_H
#define CHORUS_DEV_SENSOR_H

#include "libdev/common.h"

typedef struct dev_sensor dev_sensor;

/* A client's request, as seen (and possibly rewritten) by ops.open. */
typedef struct {
	int64_t first;      /* first index wanted (after resolution: what will be sent) */
	int64_t last;       /* one past the last index; DEV_SENSOR_OPEN_END = open-ended */
	uint32_t flags;     /* DEV_SENSOR_FROM_NEXT, DEV_SENSOR_RESUME */
	const void *params; /* opaque parameter blob from the client (may be NULL) */
	size_t params_len;  /* bytes */
	uint32_t item_size; /* bytes per item for this client; preset to the device's */
} dev_sensor_request;

typedef struct {
	/* The indices held now: [*oldest, *next).  Required. */
	void (*range)(void *user, int64_t *oldest, int64_t *next);
	/* Copy items [first, first+n) for client `client` (its ops.open context)
	 * into buf (n * item_size bytes).  Only held indices are asked for.
	 * Return 0 or a negative errno (the client gets ERROR and its stream
	 * ends).  Required. */
	int (*read)(void *user, void *client, int64_t first, size_t n, void *buf);
	/* Validate / resolve a request (FROM_NEXT is already resolved): may
	 * rewrite req->first/last/item_size, set *client, append a reply blob to
	 * `reply`; return 0, or a negative errno with the reason in why[len]
	 * ("frame 123 is older than the oldest held, 4567"; len is
	 * DEV_WHY_MAX, empty: the errno's text is sent).  May be NULL. */
	int (*open)(void *user, const dev_creds *who, dev_sensor_request *req, void **client, GByteArray *reply,
		    char *why, size_t len);
	/* The stream of `client` ended (END sent, closed, disconnected).  May be NULL. */
	void (*close)(void *user, void *client);
	/* Items older than the held range that this client can still be served
	 * (an archive behind a ring): for `from` < oldest, TRUE when `read`
	 * may be asked for [from, *to) (*to <= oldest), or FALSE when [from,
	 * *to) is lost for it too (a GAP; *to <= oldest, or `from` itself when
	 * nothing older is kept at all).  May be NULL: nothing below oldest. */
	gboolean (*below)(void *user, void *client, int64_t from, int64_t oldest, int64_t *to);
} dev_sensor_ops;

/* Create sensor device `name` with items of `item_size` bytes (1 ..
 * dev_options.chunk_bytes).  NULL + *error on failure (see dev_status_new). */
dev_sensor *dev_sensor_new(const char *name, const dev_options *opt, GMainContext *ctx,
			   uint32_t item_size, const dev_sensor_ops *ops, void *user, GError **error);

/* New data: the service now holds up to `next` (exclusive).  Streams are
 * served from the main loop, never from inside this call. */
void dev_sensor_advance(dev_sensor *d, int64_t next);

/* Items [first, last) are lost for good (xrun): clients reaching them get a
 * GAP marker instead.  Returns 0 or -EINVAL (first >= last). */
int dev_sensor_gap(dev_sensor *d, int64_t first, int64_t last);

/* Number of clients with an open stream. */
guint dev_sensor_readers(dev_sensor *d);

/* Close every connection (close callbacks run), remove the socket file,
 * free.  NULL is fine. */
void dev_sensor_free(dev_sensor *d);

#endif
