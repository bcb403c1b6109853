/* proxy.h — chorus-proxy's shared state: the settings, the key, the
 * sessions and the counters (docs/protocol.md "Remote devices",
 * chorus-proxy(8)).  One process, one GLib main loop. */
#ifndef CHORUS_PROXY_PROXY_H
#define CHORUS_PROXY_PROXY_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libdev/dev.h"

typedef struct {
	char *bind;          /* listening address, IPv4 or IPv6 literal */
	gint64 port;         /* TCP port (+ node under CHORUS_NODE) */
	gint64 node;         /* this node's number (greeting); -1 = $CHORUS_NODE or 0 */
	char *key_file;      /* the field's network key; empty = none (needs insecure) */
	gboolean insecure;   /* serve without a key (reads only) */
	char *exported;      /* device name patterns served, ';'-separated globs */
	char *writable;      /* device name patterns that take writes */
	gint64 max_clients;  /* sessions at once */
	gint64 queue_bytes;  /* bytes queued to one client before it is paced */
	gint64 keepalive_ms; /* heartbeat period; a peer silent 3 periods + 0.5 s is dead */
	double handshake_timeout_s;
} proxy_cfg;

/* Counters shown on proxy/status. */
typedef struct {
	guint64 accepted, opened, listed, refused_auth, refused_policy, refused_busy, refused_device;
	guint64 bad_handshake, bad_frames, malformed, writes_denied, dropped, dead_peers;
} proxy_counts;

typedef struct proxy_session proxy_session;

typedef struct {
	proxy_cfg cfg;
	uint32_t node;
	int port;     /* the port listened on */
	uint8_t *key; /* NULL: no key (insecure) */
	size_t klen;
	gchar **exported; /* globs */
	gchar **writable; /* globs */
	GList *sessions;  /* proxy_session * */
	guint nsessions;
	proxy_counts n;
	dev_status *status; /* proxy/status */
} proxy;

/* Whether device `name` matches one of the globs.  Pure (export.c). */
gboolean proxy_match(gchar **globs, const char *name);

/* The exported devices: every socket under this node's run directory whose
 * name passes dev_name_check and matches p->exported, sorted, as
 * "DEV NAME\n" lines appended to out; returns how many (export.c). */
guint proxy_list(const proxy *p, GString *out);

/* The state changed (proxy/status subscribers are told). */
void proxy_changed(proxy *p);

#endif
