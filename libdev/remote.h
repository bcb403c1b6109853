/* remote.h — devices of another node, through its chorus-proxy
 * (docs/protocol.md "Remote devices"): link.c and client.c use it so every
 * client half reaches remote devices unchanged; tools call
 * dev_remote_use_node for their --node.
 *
 * A name "nodeN:NAME" is device NAME on node N; with CHORUS_REMOTE=N in the
 * environment every plain name is (what tools' --node N sets, see
 * dev_remote_use_node).  Node N is found in the nodes file ($CHORUS_NODES,
 * default /etc/chorus/nodes; "ID X Y Z [ADDRESS]" per line, as collab reads
 * it): its ADDRESS on port $CHORUS_PROXY_PORT (default 7402), or, for a node
 * listed without one (a simulation on one machine), 127.0.0.1 on that port
 * + N.  The key is $CHORUS_KEY_FILE, else /etc/chorus/network.key when it
 * exists; without one the OPEN carries no mac (a proxy with a key refuses).
 * Errors are negative errno values with the reason in a caller's buffer.
 */
#ifndef CHORUS_DEV_REMOTE_H
#define CHORUS_DEV_REMOTE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libdev/path.h"

#define DEV_REMOTE_NODES_DEFAULT "/etc/chorus/nodes"
#define DEV_REMOTE_KEY_DEFAULT "/etc/chorus/network.key"

typedef struct {
	uint32_t node;
	char name[DEV_PATH_MAX];       /* the device's name on its node */
	char label[DEV_PATH_MAX + 16]; /* "node3:sync/ticker", for messages */
} dev_remote_target;

/* An open remote connection (after OK; frames follow). */
typedef struct {
	int fd;           /* blocking, close-on-exec; the caller owns it */
	gboolean write;   /* the proxy lets this connection write */
	int keepalive_ms; /* the proxy's heartbeat period */
	char where[160];  /* "HOST:PORT", for messages */
} dev_remote_conn;

/* Whether `name` is remote: 1 with *t filled, 0 local (*t untouched),
 * -EINVAL with *why (a bad node number, a bad device name after it, a bad
 * CHORUS_REMOTE). */
int dev_remote_parse(const char *name, dev_remote_target *t, const char **why);

/* Node N's proxy address: from the nodes file; for a node it does not list
 * (or without one), where this node's syncd hears N's packets from
 * (sync/peers: the sync protocol's beacons, authenticated when keyed; the
 * proxy's handshake authenticates the node in any case).  0 with host and
 * *port, or -ENXIO / -ENOENT with the reason in why[len]. */
int dev_remote_resolve(uint32_t node, char *host, size_t hlen, int *port, char *why, size_t len);

/* Connect to t's node, authenticate and open its device, all within
 * timeout_ms (< 0: 10 s).  0 with *c, or -errno with the reason in why[len]:
 * -ETIMEDOUT, -ECONNREFUSED …, -EACCES (the proxy refused the key), the
 * proxy's errno for the device (-ENOENT: no such device there), -EPROTO. */
int dev_remote_connect(const dev_remote_target *t, int timeout_ms, dev_remote_conn *c, char *why, size_t len);

/* The names of the devices node N's proxy exports, appended to `names`
 * (g_free'd strings), within timeout_ms.  Their count, or -errno with the
 * reason in why[len] (as dev_remote_connect). */
int dev_remote_list(uint32_t node, int timeout_ms, GPtrArray *names, char *why, size_t len);

/* Called on the context given to dev_remote_connect_async: err 0 and *c
 * (the callee owns c->fd), or -errno and the reason. */
typedef void (*dev_remote_done_fn)(void *user, int err, const dev_remote_conn *c, const char *why);

/* dev_remote_connect in a thread of its own, so a main loop never waits
 * for a slow or dead node; `done` runs from ctx's loop (never inside this
 * call).  The caller keeps `user` alive until then. */
void dev_remote_connect_async(const dev_remote_target *t, int timeout_ms, GMainContext *ctx, dev_remote_done_fn done,
			      void *user);

/* Tools' --node N: when the nodes file lists node N, make every plain
 * device name of this process remote to it (CHORUS_REMOTE=N) and return 1;
 * otherwise set CHORUS_NODE=N (a simulated node on this machine) and return
 * 0. */
int dev_remote_use_node(uint32_t node);

/* Time after which a remote link with nothing received is dead, ms, for a
 * heartbeat period of keepalive_ms. */
int dev_remote_dead_ms(int keepalive_ms);

#endif
