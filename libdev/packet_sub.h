/* packet_sub.h — Packet device, client half (crashproof).
 *
 * Subscribes with a filter and receives every matching message; re-sends
 * the subscription and filter after a reconnect.  May also write packets.
 */
#ifndef CHORUS_DEV_PACKET_SUB_H
#define CHORUS_DEV_PACKET_SUB_H

#include "libdev/caller.h"
#include "libdev/common.h"

typedef struct dev_packet_sub dev_packet_sub;

/* A message (len bytes, msg[len] == 0); `dropped`: messages the service
 * dropped for this client since the previous one (drop-oldest policy). */
typedef void (*dev_packet_fn)(void *user, const char *msg, size_t len, uint32_t dropped);

/* Subscribe to packet device `name` with `filter` (flen bytes, copied;
 * NULL/0 = everything).  `on_packet` may be NULL for a writer that does not
 * read.  NULL + *error for a bad name. */
dev_packet_sub *dev_packet_sub_new(const char *name, const void *filter, size_t flen,
				   GMainContext *ctx, dev_packet_fn on_packet, dev_state_fn state,
				   void *user, GError **error);

/* Replace the filter (sent now if connected, and after every reconnect).
 * Returns 0 or -EMSGSIZE. */
int dev_packet_sub_set_filter(dev_packet_sub *s, const void *filter, size_t flen);

/* Write a packet to the service; `done` (may be NULL) gets err 0 when the
 * service took it.  Returns 0, -ENOTCONN or -EMSGSIZE. */
int dev_packet_sub_send(dev_packet_sub *s, const void *msg, size_t len, dev_reply_fn done, void *cb_user);

/* True while connected. */
gboolean dev_packet_sub_connected(dev_packet_sub *s);

/* Free; no callback runs afterwards.  NULL is fine. */
void dev_packet_sub_free(dev_packet_sub *s);

#endif
