/* server.h — the server half shared by every pattern (internal to libdev):
 * the listening socket, accepted peers with their credentials, a bounded
 * outgoing queue per peer, non-blocking sends, and a pump scheduler that
 * lets a pattern push more data to a peer when its socket can take it.
 *
 * Peers are reference counted: a pattern may keep a reference (a query
 * handle) past the peer's disconnection; `closed` then says so.  Nothing
 * here closes a peer from inside a send, so patterns may iterate their
 * peers while sending; a broken peer is closed at its next dispatch.
 */
#ifndef CHORUS_DEV_SERVER_H
#define CHORUS_DEV_SERVER_H

#include <sys/uio.h>

#include "libdev/common.h"
#include "libdev/path.h"

typedef struct dev_server dev_server;
typedef struct dev_peer dev_peer;

typedef struct {
	dev_pattern pattern;
	/* A peer connected (HELLO already queued).  May be NULL. */
	void (*peer_new)(dev_server *s, dev_peer *p);
	/* A decoded client->server message.  Required. */
	void (*msg)(dev_server *s, dev_peer *p, const dev_msg *m);
	/* The peer's queue is empty and its socket writable: send more with
	 * dev_peer_sendv().  May be NULL. */
	void (*pump)(dev_server *s, dev_peer *p);
	/* May the core read more requests from this peer?  NULL = yes. */
	gboolean (*want_input)(dev_server *s, dev_peer *p);
	/* The peer is going away (still in the peer list).  May be NULL. */
	void (*peer_gone)(dev_server *s, dev_peer *p);
} dev_server_ops;

struct dev_peer {
	dev_server *srv; /* NULL once the server is freed */
	int fd;
	GSource *src;
	dev_creds creds;
	GQueue out;       /* GBytes, whole messages waiting to be sent */
	size_t out_bytes; /* bytes in `out` */
	gboolean blocked; /* a send hit EAGAIN: wait for G_IO_OUT */
	gboolean broken;  /* a send failed hard: close at next dispatch */
	gboolean closed;  /* disconnected; the struct lives while referenced */
	gboolean pump_queued;
	int refs;
	void *pdata; /* the pattern's per-peer state */
};

struct dev_server {
	char name[DEV_PATH_MAX];
	char path[DEV_PATH_MAX];
	GMainContext *ctx;
	dev_options opt; /* uid/gid arrays point to owned copies */
	const dev_server_ops *ops;
	void *owner;        /* the pattern object */
	uint32_t item_size; /* announced in HELLO (sensor) */
	int lfd;
	GSource *lsrc;
	GList *peers;     /* dev_peer *, each holding one reference */
	GPtrArray *pumps; /* peers waiting for a pump call */
	GSource *pump_src;
	dev_t dev; /* identity of our socket file, for unlink */
	ino_t ino;
	uint8_t *rbuf;  /* receive buffer, DEV_WIRE_MAX_MSG + 1 bytes */
	size_t rbuf_hw; /* the largest message received since its tail was last given back */
};

/* Bind and listen on the device's socket (creating parents, replacing a
 * stale socket file, applying mode and group).  0, or -errno with *error. */
int dev_server_init(dev_server *s, const char *name, const dev_options *opt, GMainContext *ctx,
		    const dev_server_ops *ops, void *owner, GError **error);

/* Close every peer (peer_gone runs), the listener, unlink the socket. */
void dev_server_fini(dev_server *s);

/* Queue a whole message (b is copied) for p; sent in order.  Never fails
 * (a closed peer drops it). */
void dev_peer_queue(dev_peer *p, const GByteArray *b);

/* Queue an ERROR reply formatted like printf. */
void dev_peer_error(dev_peer *p, uint32_t id, uint8_t ref_type, int err, const char *fmt, ...)
	G_GNUC_PRINTF(5, 6);

/* Send one message made of iov[0..n) now, if the queue is empty and the
 * socket takes it.  0, -EAGAIN (nothing sent; the pump runs again when the
 * socket is writable) or -EPIPE (peer broken or closed). */
int dev_peer_sendv(dev_peer *p, const struct iovec *iov, int n);

/* Ask for a pump call for p from the main loop (not from this call). */
void dev_peer_kick(dev_peer *p);

/* Re-evaluate the events watched for p (after want_input may have changed). */
void dev_peer_update(dev_peer *p);

/* 0 when p may write to the device, else -EPERM with the reason (naming
 * uid, gid and device) in `why`. */
int dev_server_check_write(dev_server *s, dev_peer *p, char *why, size_t len);

/* Reference counting of peers. */
dev_peer *dev_peer_ref(dev_peer *p);
void dev_peer_unref(dev_peer *p);

/* Set *error for a failed constructor: DEV_ERROR, code -err. Returns NULL. */
void *dev_set_error(GError **error, int err, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

#endif
