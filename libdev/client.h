/* client.h — the reconnecting client connection under every client half
 * (internal to libdev).
 *
 * Connects to a device, checks its HELLO (pattern), and on loss reconnects
 * with exponential back-off (DEV_BACKOFF_MIN_MS doubling to
 * DEV_BACKOFF_MAX_MS, reset by a good HELLO).  Requests sent with
 * dev_client_request() are matched to their replies by id; requests in
 * flight when the connection drops fail with -ECONNRESET.  Replies and
 * unsolicited messages run callbacks from the main loop only.
 * A remote name ("nodeN:NAME", remote.h) connects through that node's
 * chorus-proxy, in a thread so the loop never waits; frames, heartbeats and
 * the dead-link check (nothing received for dev_remote_dead_ms) are handled
 * here, and everything above sees the same messages and states as locally.
 */
#ifndef CHORUS_DEV_CLIENT_H
#define CHORUS_DEV_CLIENT_H

#include "libdev/caller.h"
#include "libdev/common.h"

#define DEV_BACKOFF_MIN_MS 20
#define DEV_BACKOFF_MAX_MS 2000

typedef struct dev_client dev_client;

typedef struct {
	dev_pattern pattern;
	/* HELLO accepted: re-send the configuration (subscriptions …).  May be NULL. */
	void (*up)(void *user);
	/* A message that is not the reply to a dev_client_request. */
	void (*msg)(void *user, const dev_msg *m);
} dev_client_ops;

/* Start connecting to `name` on ctx (first attempt from the main loop).
 * NULL + *error for a bad name. */
dev_client *dev_client_new(const char *name, GMainContext *ctx, const dev_client_ops *ops, void *user,
			   dev_state_fn state, void *state_user, GError **error);

/* A fresh request id (never 0). */
uint32_t dev_client_id(dev_client *c);

/* Send an encoded message; 0, -ENOTCONN or -EMSGSIZE. */
int dev_client_send(dev_client *c, const GByteArray *b);

/* Send request b (with id `id`) and call done(cb_user, …) with its reply
 * (any message carrying that id: *_REPLY, USAGE, OK or ERROR).
 * 0, -ENOTCONN or -EMSGSIZE. */
int dev_client_request(dev_client *c, const GByteArray *b, uint32_t id, dev_reply_fn done, void *cb_user);

/* True after a good HELLO, until the connection drops. */
gboolean dev_client_up(dev_client *c);

/* Disconnect and free; no callback runs afterwards (also when called from
 * inside one of this client's callbacks). */
void dev_client_free(dev_client *c);

#endif
