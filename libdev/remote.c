/* remote.c — devices of another node through its chorus-proxy (see remote.h). */
#include "libdev/waitfd.h"
#include "libdev/remote.h"
#include "libdev/link.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libdev/netkey.h"
#include "libdev/proxy_wire.h"

static gboolean parse_node(const char *s, size_t n, uint32_t *node)
{
	if (n == 0 || n > 10)
		return FALSE;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!g_ascii_isdigit(s[i]))
			return FALSE;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return FALSE;
	*node = (uint32_t)v;
	return TRUE;
}

int dev_remote_parse(const char *name, dev_remote_target *t, const char **why)
{
	const char *colon = strchr(name, ':');
	uint32_t node;
	const char *dev = name;
	if (colon) {
		if (strncmp(name, "node", 4) != 0 || !parse_node(name + 4, (size_t)(colon - name - 4), &node)) {
			*why = "a remote device is nodeN:NAME (N a node number)";
			return -EINVAL;
		}
		dev = colon + 1;
	} else {
		const char *env = g_getenv("CHORUS_REMOTE");
		if (!env || !*env)
			return 0;
		if (!parse_node(env, strlen(env), &node)) {
			*why = "CHORUS_REMOTE is not a node number";
			return -EINVAL;
		}
	}
	if (dev_name_check(dev, why) < 0)
		return -EINVAL;
	if (strlen(dev) >= sizeof t->name) {
		*why = "device name too long";
		return -EINVAL;
	}
	t->node = node;
	g_strlcpy(t->name, dev, sizeof t->name);
	g_snprintf(t->label, sizeof t->label, "node%u:%s", node, dev);
	return 1;
}

static const char *nodes_path(void)
{
	const char *p = g_getenv("CHORUS_NODES");
	return p && *p ? p : DEV_REMOTE_NODES_DEFAULT;
}

/* Find node in the nodes file: 1 listed (*addr: its address or NULL, g_free),
 * 0 not listed, -errno when the file cannot be read. */
static int lookup(uint32_t node, char **addr, char *why, size_t len)
{
	gchar *text = NULL;
	GError *ge = NULL;
	*addr = NULL;
	if (!g_file_get_contents(nodes_path(), &text, NULL, &ge)) {
		g_snprintf(why, len, "nodes file %s: %s", nodes_path(), ge->message);
		int e = ge->code == G_FILE_ERROR_NOENT ? -ENOENT : -EACCES;
		g_error_free(ge);
		return e;
	}
	int found = 0;
	gchar **lines = g_strsplit(text, "\n", -1);
	g_free(text);
	for (gchar **l = lines; *l && !found; l++) {
		char *hash = strchr(*l, '#');
		if (hash)
			*hash = 0;
		gchar **f = g_strsplit_set(g_strstrip(*l), " \t", -1);
		const char *tok[6] = {0};
		int nf = 0;
		/* KEY=VALUE tokens (collab's mic1=) say nothing of the address */
		for (gchar **q = f; *q; q++)
			if (**q && !strchr(*q, '=') && nf < 6)
				tok[nf++] = *q;
		uint32_t id;
		if (nf >= 4 && nf <= 5 && parse_node(tok[0], strlen(tok[0]), &id) && id == node) {
			found = 1;
			*addr = nf == 5 ? g_strdup(tok[4]) : NULL;
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	return found;
}

static int proxy_port(void)
{
	const char *p = g_getenv("CHORUS_PROXY_PORT");
	int v = p && *p ? atoi(p) : 0;
	return v > 0 && v < 65536 ? v : DEV_PROXY_PORT;
}

/* Where this node's syncd hears node's packets from (sync/peers, as
 * syncd_rbs_describe_peers writes it): 1 with its address in host, or 0. */
static int heard_at(uint32_t node, char *host, size_t hlen)
{
	GByteArray *b = g_byte_array_new();
	int found = 0;
	if (dev_status_read_local_sync("sync/peers", b, 500) == 0) {
		char want[24];
		g_snprintf(want, sizeof want, "node=%u addr=", node);
		for (const char *l = (const char *)b->data; l && *l && !found;) {
			const char *nl = strchr(l, '\n');
			if (!strncmp(l, want, strlen(want))) {
				const char *a = l + strlen(want);
				size_t n = strcspn(a, " \n");
				if (n > 0 && n < hlen) {
					memcpy(host, a, n);
					host[n] = 0;
					found = 1;
				}
			}
			l = nl ? nl + 1 : NULL;
		}
	}
	g_byte_array_unref(b);
	return found;
}

int dev_remote_resolve(uint32_t node, char *host, size_t hlen, int *port, char *why, size_t len)
{
	char *addr;
	int e = lookup(node, &addr, why, len);
	if ((e == 0 || e == -ENOENT) && heard_at(node, host, hlen)) {
		/* Not in the nodes file: where this node's syncd hears its
		 * beacons from (the proxy's handshake authenticates it). */
		*port = proxy_port();
		return 0;
	}
	if (e < 0)
		return e;
	if (e == 0) {
		g_snprintf(why, len, "node%u is not in the nodes file %s, and this node's syncd has not heard it (sync/peers)",
			   node, nodes_path());
		return -ENXIO;
	}
	g_strlcpy(host, addr ? addr : "127.0.0.1", hlen);
	*port = addr ? proxy_port() : proxy_port() + (int)node;
	g_free(addr);
	if (*port > 65535) {
		g_snprintf(why, len, "node%u: port %d out of range", node, *port);
		return -ENXIO;
	}
	return 0;
}

int dev_remote_use_node(uint32_t node)
{
	char *addr;
	char why[256];
	char n[16];
	g_snprintf(n, sizeof n, "%u", node);
	if (lookup(node, &addr, why, sizeof why) == 1) {
		g_free(addr);
		g_setenv("CHORUS_REMOTE", n, TRUE);
		return 1;
	}
	g_setenv("CHORUS_NODE", n, TRUE);
	return 0;
}

int dev_remote_dead_ms(int keepalive_ms) { return 3 * keepalive_ms + 500; }


/* Receive one line (up to and with its newline, which becomes a NUL) into
 * buf without reading past it: the frames that follow stay in the socket. */
static int recv_line(int fd, char *buf, size_t len, int64_t deadline)
{
	size_t have = 0;
	while (have < len - 1) {
		int e = dev_wait_fd(fd, POLLIN, deadline);
		if (e < 0)
			return e;
		ssize_t r = recv(fd, buf + have, len - 1 - have, MSG_PEEK | MSG_DONTWAIT);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		char *nl = memchr(buf + have, '\n', (size_t)r);
		size_t take = nl ? (size_t)(nl - (buf + have)) + 1 : (size_t)r;
		ssize_t got = recv(fd, buf + have, take, MSG_DONTWAIT);
		if (got != (ssize_t)take)
			return got < 0 ? -errno : -EIO;
		have += take;
		if (nl) {
			buf[have - 1] = 0;
			return 0;
		}
	}
	return -EMSGSIZE;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t r = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -errno;
			int e = dev_wait_fd(fd, POLLOUT, deadline);
			if (e < 0)
				return e;
			continue;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* TCP connect to host:port before the deadline; fd (non-blocking) or -errno. */
static int tcp_connect(const char *host, int port, int64_t deadline, char *why, size_t len)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	char ps[8];
	g_snprintf(ps, sizeof ps, "%d", port);
	int g = getaddrinfo(host, ps, &hints, &ai);
	if (g != 0) {
		g_snprintf(why, len, "%s: %s", host, gai_strerror(g));
		return -EHOSTUNREACH;
	}
	int e = -EHOSTUNREACH;
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
			e = -errno;
			close(fd);
			continue;
		}
		e = dev_wait_fd(fd, POLLOUT, deadline);
		int soe = 0;
		socklen_t sl = sizeof soe;
		if (e == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soe, &sl) == 0 && soe)
			e = -soe;
		if (e == 0) {
			freeaddrinfo(ai);
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			return fd;
		}
		close(fd);
	}
	freeaddrinfo(ai);
	g_snprintf(why, len, "cannot connect to %s:%d: %s", host, port, g_strerror(-e));
	return e;
}

static void load_key(uint8_t **key, size_t *klen)
{
	const char *p = g_getenv("CHORUS_KEY_FILE");
	*key = NULL;
	*klen = 0;
	if (!p || !*p) {
		if (!g_file_test(DEV_REMOTE_KEY_DEFAULT, G_FILE_TEST_EXISTS))
			return;
		p = DEV_REMOTE_KEY_DEFAULT;
	}
	GError *ge = NULL;
	if (!dev_netkey_load("remote", p, key, klen, &ge)) {
		g_warning("%s; connecting without a key", ge->message);
		g_error_free(ge);
	}
}

/* The handshake on a connected fd: OPEN t->name, or LIST when t is NULL. */
static int handshake(int fd, const dev_remote_target *t, int64_t dl, dev_remote_conn *c, char *why, size_t len)
{
	char line[DEV_PROXY_LINE_MAX + 2];
	const char *w;
	int e = recv_line(fd, line, sizeof line, dl);
	dev_proxy_greeting g;
	dev_proxy_reply busy;
	if (e == 0 && g_str_has_prefix(line, "ERR ") && dev_proxy_parse_reply(line, &busy, &w) == 0) {
		/* refused before the greeting (too many sessions) */
		g_snprintf(why, len, "%s: refused: %s", c->where, busy.text);
		return -busy.err;
	}
	if (e == 0 && (e = dev_proxy_parse_greeting(line, &g, &w)) < 0)
		e = -EPROTO;
	if (e < 0) {
		g_snprintf(why, len, "%s: no proxy greeting: %s", c->where, e == -EPROTO ? w : g_strerror(-e));
		return e;
	}
	uint8_t *key;
	size_t klen;
	load_key(&key, &klen);
	char cn[DEV_PROXY_NONCE_LEN + 1];
	dev_proxy_nonce(cn);
	gchar *open = t ? dev_proxy_open_line(t->name, cn, key, klen, g.nonce) : dev_proxy_list_line(cn, key, klen, g.nonce);
	e = send_all(fd, open, strlen(open), dl);
	g_free(open);
	if (e == 0)
		e = recv_line(fd, line, sizeof line, dl);
	dev_proxy_reply r;
	if (e < 0) {
		g_snprintf(why, len, "%s: %s", c->where, g_strerror(-e));
	} else if (dev_proxy_parse_reply(line, &r, &w) < 0) {
		g_snprintf(why, len, "%s: bad reply from the proxy: %s", c->where, w);
		e = -EPROTO;
	} else if (!r.ok) {
		g_snprintf(why, len, "%s: refused: %s%s", c->where, r.text,
			   r.err == EACCES && !key ? " (no network key here: set CHORUS_KEY_FILE)" : "");
		e = -r.err;
	} else if (key && (!r.has_mac || dev_proxy_check_mac(key, klen, cn, line, &w) < 0)) {
		g_snprintf(why, len, "%s: the proxy did not prove the network key", c->where);
		e = -EACCES;
	} else {
		c->write = r.write;
		c->keepalive_ms = r.keepalive_ms;
	}
	g_free(key);
	return e;
}

/* Resolve, connect and shake hands (t NULL: LIST on node `node`). */
static int connect_node(uint32_t node, const dev_remote_target *t, int64_t dl, dev_remote_conn *c, char *why, size_t len)
{
	char host[128];
	int port;
	memset(c, 0, sizeof *c);
	c->fd = -1;
	int e = dev_remote_resolve(node, host, sizeof host, &port, why, len);
	if (e < 0)
		return e;
	g_snprintf(c->where, sizeof c->where, "%s:%d", host, port);
	int fd = tcp_connect(host, port, dl, why, len);
	if (fd < 0)
		return fd;
	e = handshake(fd, t, dl, c, why, len);
	if (e < 0) {
		close(fd);
		return e;
	}
	c->fd = fd;
	return 0;
}

int dev_remote_connect(const dev_remote_target *t, int timeout_ms, dev_remote_conn *c, char *why, size_t len)
{
	int64_t dl = dev_now_ms() + (timeout_ms < 0 ? 10000 : timeout_ms);
	int e = connect_node(t->node, t, dl, c, why, len);
	if (e < 0)
		return e;
	int fl = fcntl(c->fd, F_GETFL);
	fcntl(c->fd, F_SETFL, fl & ~O_NONBLOCK);
	return 0;
}

int dev_remote_list(uint32_t node, int timeout_ms, GPtrArray *names, char *why, size_t len)
{
	int64_t dl = dev_now_ms() + (timeout_ms < 0 ? 10000 : timeout_ms);
	dev_remote_conn c;
	int e = connect_node(node, NULL, dl, &c, why, len);
	if (e < 0)
		return e;
	char line[DEV_PROXY_LINE_MAX + 2];
	for (;;) {
		e = recv_line(c.fd, line, sizeof line, dl);
		if (e < 0) {
			g_snprintf(why, len, "%s: the list ended early: %s", c.where, g_strerror(-e));
			break;
		}
		if (g_str_has_prefix(line, "END ")) {
			e = (int)names->len;
			break;
		}
		if (!g_str_has_prefix(line, "DEV ") || dev_name_check(line + 4, NULL) < 0) {
			g_snprintf(why, len, "%s: bad line in the list", c.where);
			e = -EPROTO;
			break;
		}
		g_ptr_array_add(names, g_strdup(line + 4));
	}
	close(c.fd);
	return e;
}
