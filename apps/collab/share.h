/* share.h — detections shared between nodes over UDP (docs/protocol.md).
 *
 * Datagram:  "CHORUS-COLLAB 1 DET " + the detection's text (apps/detect/event.h).
 * Sent to a broadcast (or any) address and port; every node binds the port
 * with SO_REUSEADDR/SO_REUSEPORT so several simulated nodes share one host.
 * Soft state: a lost datagram loses that node's arrival for the call; there
 * is no retransmission (the call is over by then anyway).
 */
#ifndef CHORUS_COLLAB_SHARE_H
#define CHORUS_COLLAB_SHARE_H

#include <glib.h>

#include "apps/detect/event.h"

typedef struct collab_share collab_share;

/* A received, well-formed detection from another node (own node ignored). */
typedef void (*collab_share_fn)(void *user, const det_event *e);

/* Bind UDP `port`, send to `address` (IPv4 literal, broadcast allowed).
 * Malformed datagrams are counted and logged (rate-limited), never fatal.
 * NULL + *err. */
collab_share *collab_share_new(uint32_t self, const char *address, int port, collab_share_fn fn, void *user,
			       GError **err);

/* Send e to every node.  Returns 0 or a negative errno. */
int collab_share_send(collab_share *s, const det_event *e);

/* Datagrams received, accepted and rejected. */
void collab_share_counts(const collab_share *s, guint64 *sent, guint64 *accepted, guint64 *rejected);

void collab_share_free(collab_share *s);

#endif
