/* packet.h — Packet device, server half: messages delivered to every
 * subscribed client whose filter matches, each client with its own bounded
 * queue.  Overflow policy per device (dev_options.overflow):
 *   DROP_OLDEST  the oldest queued message is dropped; the client is told
 *                how many it lost in the next message it gets;
 *   BACKPRESSURE dev_packet_send() returns -EAGAIN and queues nothing; the
 *                `writable` callback runs when every queue has room again.
 * Clients may also write packets to the service (ops.recv; a write).
 *
 * History (dev_options.history > 0): the device numbers its messages
 * (1, 2, … within this instance, which has a random non-zero boot id) and
 * keeps the last `history` of them.  A client that subscribes with a
 * cursor (PKT_SUB_FROM: the boot and the next seq it has not seen; see
 * packet_sub.h dev_packet_sub_new_from) first gets what is kept from its
 * cursor on — everything kept when the cursor is of an earlier instance —
 * then the new ones, each with its boot and seq (PKT_SEQDATA); what the
 * history no longer held is counted as dropped.  So a client that
 * restarts, and keeps its cursor, misses nothing the history still held.
 */
#ifndef CHORUS_DEV_PACKET_H
#define CHORUS_DEV_PACKET_H

#include "libdev/common.h"

typedef struct dev_packet dev_packet;

typedef struct {
	/* Does message `msg` match a client's `filter`?  NULL = the filter is a
	 * byte prefix of the message (empty filter = everything). */
	gboolean (*filter)(void *user, const void *filter, size_t flen, const void *msg, size_t len);
	/* A client wrote a packet; return 0 or a negative errno (its reply).
	 * NULL = the device is read-only (-EOPNOTSUPP). */
	int (*recv)(void *user, const dev_creds *who, const void *msg, size_t len);
	/* Back-pressure only: queues have room again after -EAGAIN.  May be NULL. */
	void (*writable)(void *user);
} dev_packet_ops;

/* Create packet device `name`.  NULL + *error on failure (see dev_status_new). */
dev_packet *dev_packet_new(const char *name, const dev_options *opt, GMainContext *ctx,
			   const dev_packet_ops *ops, void *user, GError **error);

/* Queue message `msg` (len bytes, copied) for every matching subscriber.
 * Returns the number of subscribers it was queued for (>= 0), -EAGAIN
 * (back-pressure: a matching queue is full, nothing queued) or -EMSGSIZE. */
int dev_packet_send(dev_packet *d, const void *msg, size_t len);

/* Number of subscribed clients. */
guint dev_packet_subscribers(dev_packet *d);

/* Close every connection, remove the socket file, free.  NULL is fine. */
void dev_packet_free(dev_packet *d);

#endif
