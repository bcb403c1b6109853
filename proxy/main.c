/* main.c — chorus-proxy: this node's devices for other machines, over TCP
 * (issue 19 item 1; docs/protocol.md "Remote devices", chorus-proxy(8)).
 *
 *   chorus-proxy [-c /etc/chorus/proxy.conf] [--port P] [--print-config]
 *
 * Listens on [proxy] bind:port (port + N under CHORUS_NODE=N, a simulated
 * node); each connection is a session (session.h) that authenticates with
 * the field's network key and relays one exported device.  Writes only
 * with the key, to devices matching [proxy] writable, and then the device's
 * own write policy applies to this process's uid.  The state is on the
 * status device proxy/status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "libcfg/cfg.h"
#include "libdev/heap.h"
#include "libdev/netkey.h"
#include "proxy/session.h"

#define K(...) CFG_KEY(proxy_cfg, __VA_ARGS__)
static const cfg_key keys[] = {
	K("bind", CFG_STRING, "127.0.0.1", 1, 0, bind, "listening address (IPv4 or IPv6 literal; :: = every interface)"),
	K("port", CFG_INT, "7402", 1, 65535, port, "TCP port (a simulated node, CHORUS_NODE=N, listens on port + N)"),
	K("node", CFG_INT, "-1", -1, 4294967295.0, node, "this node's number, in the greeting; -1 = $CHORUS_NODE, else 0"),
	K("key_file", CFG_STRING, "", 1, 0, key_file, "the field's network key (16 bytes or more; the file syncd and collab use)"),
	K("insecure", CFG_BOOL, "false", 1, 0, insecure, "true: serve without key_file beyond loopback (anyone can read the devices; writes stay refused)"),
	K("export", CFG_STRING, "*", 1, 0, exported, "devices served: glob patterns separated by ';' (sync/*;audio/*/status)"),
	K("writable", CFG_STRING, "", 1, 0, writable, "devices that take writes (commands, queries, packet sends) from clients with the key; globs, ';'-separated"),
	K("max_clients", CFG_INT, "32", 1, 4096, max_clients, "sessions served at once; more are refused with EBUSY"),
	K("queue_bytes", CFG_INT, "1048576", 65536, 1073741824, queue_bytes, "bytes queued to one client before it is paced (packets dropped oldest first, sensor streams paused)"),
	K("keepalive_ms", CFG_INT, "1000", 10, 600000, keepalive_ms, "heartbeat period, ms; a peer silent 3 periods + 0.5 s is dead"),
	K("handshake_timeout_s", CFG_DOUBLE, "5", 0.1, 3600, handshake_timeout_s, "time a new connection has to send its OPEN, s"),
	{NULL},
};
static const cfg_group table[] = {
	{.name = "proxy", .keys = keys, .store = 1},
	{NULL},
};

void proxy_changed(proxy *p)
{
	if (p->status)
		dev_status_notify(p->status);
}

static int status_text(void *user, GString *out)
{
	proxy *p = user;
	const proxy_counts *n = &p->n;
	g_string_append_printf(out, "proxy node%u on %s port %d %s; export=%s writable=%s\n", p->node, p->cfg.bind, p->port,
			       p->key ? "authenticated (HMAC-SHA256)" : "WITHOUT A KEY (reads only)", p->cfg.exported,
			       *p->cfg.writable ? p->cfg.writable : "(none)");
	g_string_append_printf(out,
			       "connections: accepted=%" G_GUINT64_FORMAT " opened=%" G_GUINT64_FORMAT " listed=%" G_GUINT64_FORMAT
			       " now=%u max=%" G_GINT64_FORMAT "\n",
			       n->accepted, n->opened, n->listed, p->nsessions, p->cfg.max_clients);
	g_string_append_printf(out,
			       "refused: auth=%" G_GUINT64_FORMAT " not_exported=%" G_GUINT64_FORMAT " busy=%" G_GUINT64_FORMAT
			       " no_device=%" G_GUINT64_FORMAT " bad_handshake=%" G_GUINT64_FORMAT "\n",
			       n->refused_auth, n->refused_policy, n->refused_busy, n->refused_device, n->bad_handshake);
	g_string_append_printf(out,
			       "relayed: bad_frames=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT " writes_denied=%" G_GUINT64_FORMAT
			       " dropped=%" G_GUINT64_FORMAT " dead_peers=%" G_GUINT64_FORMAT "\n",
			       n->bad_frames, n->malformed, n->writes_denied, n->dropped, n->dead_peers);
	g_string_append_printf(out, "sessions: %u\n", p->nsessions);
	for (GList *l = p->sessions; l; l = l->next)
		proxy_session_describe(l->data, out);
	dev_heap_usage_append(out);
	return 0;
}

static int bind_addr(const char *text, int port, struct sockaddr_in6 *a)
{
	*a = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct in_addr v4;
	if (inet_pton(AF_INET, text, &v4) == 1) {
		a->sin6_addr.s6_addr[10] = a->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&a->sin6_addr.s6_addr[12], &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, text, &a->sin6_addr) == 1 ? 0 : -1;
}

static gboolean is_loopback(const struct sockaddr_in6 *a)
{
	static const uint8_t v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) || (!memcmp(a->sin6_addr.s6_addr, v4m, 12) && a->sin6_addr.s6_addr[12] == 127);
}

static int listen_fd;
static guint accept_watch;
static guint64 accept_errors;

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data);

static gboolean resume_accept(gpointer data)
{
	accept_watch = g_unix_fd_add(listen_fd, G_IO_IN, on_accept, data);
	return G_SOURCE_REMOVE;
}

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data)
{
	proxy *p = data;
	struct sockaddr_in6 sa;
	socklen_t sl = sizeof sa;
	int c = accept4(fd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* the pending connection stays queued and the watch would
			 * fire at once, forever: stop listening for a second */
			if (accept_errors++ % 100 == 0)
				g_warning("cannot accept (%s); pausing 1 s", g_strerror(errno));
			accept_watch = 0;
			g_timeout_add(1000, resume_accept, p);
			return G_SOURCE_REMOVE;
		}
		return G_SOURCE_CONTINUE;
	}
	char host[INET6_ADDRSTRLEN] = "?";
	inet_ntop(AF_INET6, &sa.sin6_addr, host, sizeof host);
	char peer[80];
	g_snprintf(peer, sizeof peer, "%s:%u", g_str_has_prefix(host, "::ffff:") ? host + 7 : host, ntohs(sa.sin6_port));
	int one = 1;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	p->n.accepted++;
	if (p->nsessions >= (guint)p->cfg.max_clients) {
		p->n.refused_busy++;
		proxy_session_refuse(c, "busy: too many sessions ([proxy] max_clients)");
		proxy_changed(p);
		return G_SOURCE_CONTINUE;
	}
	proxy_session_new(p, c, peer);
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* Key, node, port, patterns and the security rule.  FALSE + *err. */
static gboolean derive(proxy *p, struct sockaddr_in6 *a, GError **err)
{
	const char *env = g_getenv("CHORUS_NODE");
	gboolean sim = env && *env;
	p->node = p->cfg.node >= 0 ? (uint32_t)p->cfg.node : sim ? (uint32_t)strtoul(env, NULL, 10)
								 : 0;
	p->port = (int)p->cfg.port + (sim ? (int)strtoul(env, NULL, 10) : 0);
	if (p->port > 65535) {
		g_set_error(err, DEV_ERROR, EINVAL, "[proxy] port %d + node is over 65535", (int)p->cfg.port);
		return FALSE;
	}
	if (bind_addr(p->cfg.bind, p->port, a) < 0) {
		g_set_error(err, DEV_ERROR, EINVAL, "[proxy] bind \"%s\" is not an IPv4 or IPv6 address", p->cfg.bind);
		return FALSE;
	}
	if (*p->cfg.key_file && !dev_netkey_load("proxy", p->cfg.key_file, &p->key, &p->klen, err))
		return FALSE;
	if (!p->key && !is_loopback(a) && !p->cfg.insecure) {
		g_set_error(err, DEV_ERROR, EPERM,
			    "[proxy] bind %s reaches beyond loopback and there is no key_file: anyone could read this node's devices (set key_file, or insecure = true)",
			    p->cfg.bind);
		return FALSE;
	}
	p->exported = g_strsplit(p->cfg.exported, ";", -1);
	p->writable = g_strsplit(p->cfg.writable, ";", -1);
	for (gchar **g = p->exported; *g; g++)
		g_strstrip(*g);
	for (gchar **g = p->writable; *g; g++)
		g_strstrip(*g);
	return TRUE;
}

int main(int argc, char **argv)
{
	char *conf = NULL;
	gint64 port = 0;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/proxy.conf)", "FILE"},
		{"port", 'p', 0, G_OPTION_ARG_INT64, &port, "TCP port ([proxy] port)", "PORT"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("chorus-proxy", "- this node's devices for other machines, over TCP", entries, table, NULL, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	/* the proxy serves its own node's devices: never relay to another */
	g_unsetenv("CHORUS_REMOTE");
	static proxy p;
	const char *path = conf ? conf : "/etc/chorus/proxy.conf";
	if (!cfg_defaults(table, &p.cfg, &err) || !cfg_load(path, conf == NULL, table, &p.cfg, &err)) {
		fprintf(stderr, "chorus-proxy: %s\n", err->message);
		return 2;
	}
	if (port > 0 && port < 65536)
		p.cfg.port = port;
	struct sockaddr_in6 a;
	if (!derive(&p, &a, &err)) {
		fprintf(stderr, "chorus-proxy: %s\n", err->message);
		return 2;
	}
	/* the signals first: once it accepts, a SIGTERM must stop it cleanly */
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	g_unix_signal_add(SIGINT, on_signal, loop);
	g_unix_signal_add(SIGTERM, on_signal, loop);
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
		fprintf(stderr, "chorus-proxy: %s TCP port %d: %s\n", p.cfg.bind, p.port, g_strerror(errno));
		return 2;
	}
	listen_fd = fd;
	p.status = dev_status_new("proxy/status", NULL, NULL, status_text, NULL, &p, &err);
	if (!p.status) {
		fprintf(stderr, "chorus-proxy: %s\n", err->message);
		return 2;
	}
	accept_watch = g_unix_fd_add(fd, G_IO_IN, on_accept, &p);
	g_message("node%u: serving %s on %s port %d, %s", p.node, p.cfg.exported, p.cfg.bind, p.port,
		  p.key ? "with the network key" : "without a key (reads only)");
	sd_notify(0, "READY=1\nSTATUS=serving");
	g_main_loop_run(loop);
	sd_notify(0, "STOPPING=1");
	while (p.sessions)
		proxy_session_free(p.sessions->data);
	if (accept_watch)
		g_source_remove(accept_watch);
	close(fd);
	dev_status_free(p.status);
	g_main_loop_unref(loop);
	g_strfreev(p.exported);
	g_strfreev(p.writable);
	g_free(p.key);
	cfg_clear(table, &p.cfg);
	g_free(conf);
	return 0;
}
