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

/* A message with its place in the device's numbering (packet.h
 * "History"): the device instance `boot` and its sequence number. */
typedef void (*dev_packet_seq_fn)(void *user, const char *msg, size_t len, uint32_t dropped, uint64_t boot,
				  uint64_t seq);

/* Subscribe as dev_packet_sub_new, resuming at a cursor: the device's
 * instance `boot` and the next sequence number `next` not yet seen (boot
 * 0: no cursor, new messages only).  The service first replays what its
 * history holds from there (all it holds when `boot` is of an earlier
 * instance), then sends the new ones.  After every message the cursor
 * moves past it, and a reconnect resumes from there: nothing the
 * service's history held is lost across a reconnect or, with the cursor
 * kept (dev_packet_sub_cursor), across this client's restart. */
dev_packet_sub *dev_packet_sub_new_from(const char *name, const void *filter, size_t flen, uint64_t boot,
					uint64_t next, GMainContext *ctx, dev_packet_seq_fn on_packet,
					dev_state_fn state, void *user, GError **error);

/* The cursor: the device instance of the last message received and the
 * next sequence number after it (as given to dev_packet_sub_new_from until
 * a message came). */
void dev_packet_sub_cursor(const dev_packet_sub *s, uint64_t *boot, uint64_t *next);

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
