/* session.c — one remote client of chorus-proxy (see session.h). */
#include "proxy/session.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "libdev/fdsource.h"
#include "libdev/frame.h"
#include "libdev/le.h"
#include "libdev/proxy_wire.h"
#include "libdev/remote.h"

#define READS_PER_DISPATCH 32

typedef struct {
	GBytes *b;    /* a frame (or a handshake line) */
	uint8_t type; /* libdev type of the message in it; 0: not droppable */
	uint16_t flags;
} item;

struct proxy_session {
	proxy *p;
	int tcp, dev;
	GSource *tsrc, *dsrc;
	GSource *timer; /* handshake timeout, then heartbeat */
	char peer[80];
	char name[256]; /* device, after OPEN */
	char nonce[DEV_PROXY_NONCE_LEN + 1];
	gboolean relay;   /* OPEN accepted */
	gboolean closing; /* flush what is queued, then close */
	gboolean write;
	uint16_t pattern; /* from the device's HELLO */
	GByteArray *line; /* handshake input */
	dev_framer in;    /* client frames */
	GQueue tq;        /* item *, to the client */
	size_t tq_bytes, t_off;
	GQueue dq;      /* GBytes *, datagrams to the device that did not fit */
	uint32_t carry; /* messages dropped here, for the next PKT_DATA's field */
	gint64 last_rx; /* monotonic µs */
	guint64 rx_bytes, tx_bytes, dropped;
	uint8_t *rbuf;
};

static void item_free(item *it)
{
	g_bytes_unref(it->b);
	g_free(it);
}

void proxy_session_free(proxy_session *s)
{
	if (!s)
		return;
	s->p->sessions = g_list_remove(s->p->sessions, s);
	s->p->nsessions--;
	dev_fd_source_drop(s->tsrc);
	dev_fd_source_drop(s->dsrc);
	if (s->timer) {
		g_source_destroy(s->timer);
		g_source_unref(s->timer);
	}
	if (s->tcp >= 0)
		close(s->tcp);
	if (s->dev >= 0)
		close(s->dev);
	g_queue_clear_full(&s->tq, (GDestroyNotify)item_free);
	g_queue_clear_full(&s->dq, (GDestroyNotify)g_bytes_unref);
	g_byte_array_unref(s->line);
	dev_framer_clear(&s->in);
	g_free(s->rbuf);
	proxy_changed(s->p);
	g_free(s);
}

/* The conditions each socket is watched for, from the queues. */
static void update(proxy_session *s)
{
	size_t limit = (size_t)s->p->cfg.queue_bytes;
	GIOCondition t = G_IO_HUP | G_IO_ERR;
	if (!s->closing && !s->dq.length && s->tq_bytes <= limit)
		t |= G_IO_IN;
	if (s->tq.length)
		t |= G_IO_OUT;
	dev_fd_source_set(s->tsrc, t);
	if (s->dsrc) {
		GIOCondition d = G_IO_HUP | G_IO_ERR;
		if (s->pattern == DEV_PATTERN_PACKET || s->pattern == DEV_PATTERN_STATUS || s->tq_bytes <= limit)
			d |= G_IO_IN;
		if (s->dq.length)
			d |= G_IO_OUT;
		dev_fd_source_set(s->dsrc, d);
	}
}

static void push(proxy_session *s, GBytes *b, uint8_t type, uint16_t flags)
{
	item *it = g_new0(item, 1);
	it->b = b;
	it->type = type;
	it->flags = flags;
	g_queue_push_tail(&s->tq, it);
	s->tq_bytes += g_bytes_get_size(b);
}

static void push_frame(proxy_session *s, const void *msg, size_t n, uint8_t type, uint16_t flags)
{
	GByteArray *f = g_byte_array_sized_new((guint)(n + DEV_FRAME_HDR));
	dev_frame_append(f, msg, n);
	push(s, g_byte_array_free_to_bytes(f), type, flags);
}

static void push_text(proxy_session *s, gchar *line)
{
	push(s, g_bytes_new_take(line, strlen(line)), 0, 0);
}

/* An ERROR message to the client, as a service would send it. */
static void push_error(proxy_session *s, uint32_t id, uint8_t ref, int err, const char *text)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_error(b, id, ref, err, text);
	push_frame(s, b->data, b->len, DEV_MSG_ERROR, 0);
	g_byte_array_unref(b);
}

/* A packet message, whose first payload word counts the messages lost
 * before it (PKT_DATA, PKT_SEQDATA). */
static gboolean is_pkt_data(int type)
{
	return type == DEV_MSG_PKT_DATA || type == DEV_MSG_PKT_SEQDATA;
}

/* Add `n` lost messages to the first queued PKT_DATA not yet being sent
 * (its `dropped` field), or to s->carry when there is none. */
static void add_dropped(proxy_session *s, GList *from, uint32_t n)
{
	for (GList *l = from; l; l = l->next) {
		item *it = l->data;
		if (!is_pkt_data(it->type))
			continue;
		gsize len;
		const uint8_t *d = g_bytes_get_data(it->b, &len);
		uint8_t *c = g_memdup2(d, len);
		uint32_t was = le_get32(c + DEV_FRAME_HDR + DEV_WIRE_HDR);
		le_put32(c + DEV_FRAME_HDR + DEV_WIRE_HDR, was + n > was ? was + n : UINT32_MAX);
		g_bytes_unref(it->b);
		it->b = g_bytes_new_take(c, len);
		return;
	}
	s->carry = s->carry + n > s->carry ? s->carry + n : UINT32_MAX;
}

/* Over the bound: drop what the pattern allows, oldest first (never the
 * head once it is partly sent, never the newest: a message larger than
 * the bound still goes). */
static void bound(proxy_session *s)
{
	size_t limit = (size_t)s->p->cfg.queue_bytes;
	GList *l = s->tq.head;
	if (l && s->t_off)
		l = l->next;
	while (s->tq_bytes > limit && l && l->next) {
		GList *next = l->next;
		item *it = l->data;
		gboolean drop = is_pkt_data(it->type);
		uint32_t lost = 0;
		if (drop) {
			gsize len;
			const uint8_t *d = g_bytes_get_data(it->b, &len);
			lost = le_get32(d + DEV_FRAME_HDR + DEV_WIRE_HDR) + 1;
		}
		if (drop) {
			s->tq_bytes -= g_bytes_get_size(it->b);
			g_queue_delete_link(&s->tq, l);
			item_free(it);
			s->dropped++; /* `lost` also counts earlier ones, carried */
			s->p->n.dropped++;
			add_dropped(s, next, lost);
		}
		l = next;
	}
}

/* A status notification replaces an older one not yet being sent. */
static void supersede(proxy_session *s)
{
	GList *l = s->tq.head;
	if (l && s->t_off)
		l = l->next;
	for (; l;) {
		GList *next = l->next;
		item *it = l->data;
		if (it->type == DEV_MSG_STATUS_DATA && (it->flags & DEV_F_NOTIFY)) {
			s->tq_bytes -= g_bytes_get_size(it->b);
			g_queue_delete_link(&s->tq, l);
			item_free(it);
		}
		l = next;
	}
}

/* Write what the client's socket takes.  FALSE: the client is gone. */
static gboolean flush_tcp(proxy_session *s)
{
	while (s->tq.length) {
		item *it = g_queue_peek_head(&s->tq);
		gsize n;
		const uint8_t *d = g_bytes_get_data(it->b, &n);
		ssize_t r = send(s->tcp, d + s->t_off, n - s->t_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		s->tx_bytes += (guint64)r;
		s->t_off += (size_t)r;
		if (s->t_off < n)
			return TRUE;
		s->t_off = 0;
		s->tq_bytes -= n;
		item_free(g_queue_pop_head(&s->tq));
	}
	return TRUE;
}

/* Send queued datagrams to the device.  FALSE: the device is gone. */
static gboolean flush_dev(proxy_session *s)
{
	while (s->dq.length) {
		gsize n;
		const void *d = g_bytes_get_data(g_queue_peek_head(&s->dq), &n);
		if (send(s->dev, d, n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			return errno == EAGAIN || errno == EINTR;
		g_bytes_unref(g_queue_pop_head(&s->dq));
	}
	return TRUE;
}

static void end(proxy_session *s, const char *why)
{
	if (why)
		g_message("%s%s%s: %s", s->peer, *s->name ? " " : "", s->name, why);
	proxy_session_free(s);
}

/* Refuse the OPEN: an ERR line, then close once it is sent (by on_tcp;
 * the session stays valid here). */
static void refuse(proxy_session *s, int err, const char *text)
{
	g_message("%s: refused: %s", s->peer, text);
	push_text(s, dev_proxy_err_line(err, text));
	s->closing = TRUE;
}

static gboolean on_timer(gpointer user);

static gboolean on_dev(gpointer user, GIOCondition rev);
static gboolean relay_read(proxy_session *s);

/* Connect to the local device; fd or -errno with text in why. */
static int connect_dev(const char *name, char *why, size_t len)
{
	char path[DEV_PATH_MAX];
	const char *w;
	int e = dev_path(name, path, sizeof path, &w);
	if (e < 0) {
		g_snprintf(why, len, "device %s: %s", name, w);
		return e;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		g_snprintf(why, len, "socket: %s", g_strerror(errno));
		return -errno;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		e = errno;
		g_snprintf(why, len, "cannot connect to %s: %s", path, g_strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* The OPEN line: authenticate, check the export, open the device. */
static void open_line(proxy_session *s, const char *line)
{
	proxy *p = s->p;
	dev_proxy_open o;
	const char *why;
	int e = dev_proxy_parse_open(line, &o, &why);
	if (e < 0) {
		p->n.bad_handshake++;
		refuse(s, -e, why);
		return;
	}
	g_strlcpy(s->name, o.dev, sizeof s->name);
	if (p->key && dev_proxy_check_mac(p->key, p->klen, s->nonce, line, &why) < 0) {
		p->n.refused_auth++;
		refuse(s, EACCES, why);
		return;
	}
	if (o.list) { /* the exported devices' names, then close */
		GString *l = g_string_new(NULL);
		guint n = proxy_list(p, l);
		g_string_append_printf(l, "END %u\n", n);
		push_text(s, dev_proxy_ok_line(FALSE, (int)p->cfg.keepalive_ms, p->key, p->klen, o.cnonce));
		push_text(s, g_string_free(l, FALSE));
		s->closing = TRUE;
		p->n.listed++;
		return;
	}
	if (!proxy_match(p->exported, o.dev)) {
		p->n.refused_policy++;
		char t[400];
		g_snprintf(t, sizeof t, "device %s is not exported by node %u ([proxy] export)", o.dev, p->node);
		refuse(s, EPERM, t);
		return;
	}
	char t[400];
	int fd = connect_dev(o.dev, t, sizeof t);
	if (fd < 0) {
		p->n.refused_device++;
		char u[500];
		g_snprintf(u, sizeof u, "node %u: %s", p->node, t);
		refuse(s, -fd, u);
		return;
	}
	s->dev = fd;
	s->write = p->key && proxy_match(p->writable, o.dev);
	s->relay = TRUE;
	p->n.opened++;
	push_text(s, dev_proxy_ok_line(s->write, (int)p->cfg.keepalive_ms, p->key, p->klen, o.cnonce));
	s->dsrc = dev_fd_source_new(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_dev, s, NULL);
	g_source_destroy(s->timer); /* the handshake timeout gives way to the heartbeat */
	g_source_unref(s->timer);
	s->timer = g_timeout_source_new((guint)p->cfg.keepalive_ms);
	g_source_set_callback(s->timer, on_timer, s, NULL);
	g_source_attach(s->timer, NULL);
	g_message("%s: %s opened (%s)", s->peer, s->name, s->write ? "read-write" : "read-only");
	proxy_changed(p);
}

static gboolean is_write(uint8_t type)
{
	return type == DEV_MSG_CMD || type == DEV_MSG_QUERY || type == DEV_MSG_PKT_SEND;
}

/* One frame from the client.  FALSE: the session ended. */
static gboolean client_msg(proxy_session *s, const uint8_t *d, size_t n)
{
	proxy *p = s->p;
	dev_msg m;
	const char *why;
	int e = dev_wire_decode(d, n, &m, &why);
	uint32_t id = n >= DEV_WIRE_HDR ? le_get32(d + 12) : 0;
	uint8_t type = n >= 4 ? d[3] : 0;
	if (e < 0) {
		p->n.malformed++;
		char t[300];
		g_snprintf(t, sizeof t, "device %s: %s", s->name, why);
		push_error(s, id, type, -e, t);
		return TRUE;
	}
	if (is_write(m.type) && !s->write) {
		p->n.writes_denied++;
		char t[400];
		g_snprintf(t, sizeof t,
			   "device %s: write denied to remote clients (%s)", s->name,
			   p->key ? "not in [proxy] writable" : "the proxy has no key: reads only");
		push_error(s, m.id, m.type, EPERM, t);
		return TRUE;
	}
	if (!s->dq.length && send(s->dev, d, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n)
		return TRUE;
	if (!s->dq.length && errno != EAGAIN && errno != EINTR) {
		end(s, "the device went away");
		return FALSE;
	}
	g_queue_push_tail(&s->dq, g_bytes_new(d, n));
	return TRUE;
}

/* Handshake bytes: up to the newline; what follows is frames. */
static gboolean handshake_read(proxy_session *s)
{
	char buf[512];
	ssize_t r = recv(s->tcp, buf, sizeof buf, MSG_DONTWAIT);
	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? TRUE : (end(s, NULL), FALSE);
	if (r == 0) {
		end(s, NULL);
		return FALSE;
	}
	s->rx_bytes += (guint64)r;
	char *nl = memchr(buf, '\n', (size_t)r);
	size_t take = nl ? (size_t)(nl - buf) + 1 : (size_t)r;
	g_byte_array_append(s->line, (const guint8 *)buf, (guint)take);
	if (!nl) {
		if (s->line->len > DEV_PROXY_LINE_MAX) {
			s->p->n.bad_handshake++;
			refuse(s, EBADMSG, "OPEN line too long");
		}
		return TRUE;
	}
	if (s->line->len > DEV_PROXY_LINE_MAX + 1 || memchr(s->line->data, 0, s->line->len)) {
		s->p->n.bad_handshake++;
		refuse(s, EBADMSG, "malformed OPEN line");
		return TRUE;
	}
	g_byte_array_append(s->line, (const guint8 *)"", 1);
	dev_framer_feed(&s->in, buf + take, (size_t)r - take);
	open_line(s, (const char *)s->line->data);
	/* frames sent right behind the OPEN wait in the reassembler */
	if (s->relay && dev_framer_pending(&s->in))
		return relay_read(s);
	return TRUE;
}

static gboolean relay_read(proxy_session *s)
{
	for (int i = 0; i < READS_PER_DISPATCH && !s->dq.length; i++) {
		const uint8_t *d;
		size_t n;
		const char *why;
		int e;
		while (!s->dq.length && (e = dev_framer_next(&s->in, &d, &n, &why)) == 1)
			if (n && !client_msg(s, d, n))
				return FALSE;
		if (e < 0) {
			s->p->n.bad_frames++;
			push_error(s, 0, 0, -e, why);
			s->closing = TRUE;
			g_message("%s %s: %s; closing", s->peer, s->name, why);
			return TRUE;
		}
		if (s->dq.length)
			break;
		ssize_t r = dev_framer_read(&s->in, s->tcp, 65536);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			end(s, NULL);
			return FALSE;
		}
		s->rx_bytes += (guint64)r;
		s->last_rx = g_get_monotonic_time();
	}
	return TRUE;
}

static gboolean on_tcp(gpointer user, GIOCondition rev)
{
	proxy_session *s = user;
	if ((rev & (G_IO_HUP | G_IO_ERR)) && (s->dq.length || s->closing)) {
		/* gone while its input was paused (or while closing): nothing
		 * more will be read, and HUP would fire forever */
		end(s, NULL);
		return G_SOURCE_REMOVE;
	}
	if (!s->closing && (rev & (G_IO_IN | G_IO_HUP | G_IO_ERR))) {
		s->last_rx = g_get_monotonic_time();
		if (!(s->relay ? relay_read(s) : handshake_read(s)))
			return G_SOURCE_REMOVE; /* the session ended */
	}
	if (!flush_tcp(s) || (s->closing && !s->tq.length)) {
		end(s, NULL);
		return G_SOURCE_REMOVE;
	}
	update(s);
	return G_SOURCE_CONTINUE;
}

static gboolean on_dev(gpointer user, GIOCondition rev)
{
	proxy_session *s = user;
	if ((rev & G_IO_OUT) && !flush_dev(s)) {
		end(s, "the device went away");
		return G_SOURCE_REMOVE;
	}
	size_t limit = (size_t)s->p->cfg.queue_bytes;
	for (int i = 0; i < READS_PER_DISPATCH && (rev & (G_IO_IN | G_IO_HUP | G_IO_ERR)); i++) {
		gboolean paced = !(s->pattern == DEV_PATTERN_PACKET || s->pattern == DEV_PATTERN_STATUS);
		if (paced && s->tq_bytes > limit) {
			if (rev & (G_IO_HUP | G_IO_ERR)) { /* the service left; HUP would fire forever */
				end(s, "the device closed (service stopped?)");
				return G_SOURCE_REMOVE;
			}
			break;
		}
		ssize_t r = recv(s->dev, s->rbuf, DEV_WIRE_MAX_MSG + 1, MSG_DONTWAIT | MSG_TRUNC);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0 || r > DEV_WIRE_MAX_MSG) {
			end(s, r == 0 ? "the device closed (service stopped?)" : "device read failed");
			return G_SOURCE_REMOVE;
		}
		dev_msg m;
		if (dev_wire_decode(s->rbuf, (size_t)r, &m, NULL) < 0) {
			end(s, "bad message from the device");
			return G_SOURCE_REMOVE;
		}
		if (m.type == DEV_MSG_HELLO)
			s->pattern = m.u.hello.pattern;
		if (m.type == DEV_MSG_STATUS_DATA && (m.flags & DEV_F_NOTIFY))
			supersede(s);
		if (is_pkt_data(m.type) && s->carry) {
			uint32_t was = le_get32(s->rbuf + DEV_WIRE_HDR);
			le_put32(s->rbuf + DEV_WIRE_HDR, was + s->carry > was ? was + s->carry : UINT32_MAX);
			s->carry = 0;
		}
		push_frame(s, s->rbuf, (size_t)r, m.type, m.flags);
		if (s->tq_bytes > limit)
			bound(s);
	}
	if (!flush_tcp(s)) {
		end(s, NULL);
		return G_SOURCE_REMOVE;
	}
	update(s);
	return G_SOURCE_CONTINUE;
}

static gboolean on_timer(gpointer user)
{
	proxy_session *s = user;
	if (!s->relay) {
		s->p->n.bad_handshake++;
		g_source_unref(s->timer);
		s->timer = NULL;
		end(s, "no OPEN within the handshake timeout");
		return G_SOURCE_REMOVE;
	}
	gint64 dead = (gint64)dev_remote_dead_ms((int)s->p->cfg.keepalive_ms) * 1000;
	if (g_get_monotonic_time() - s->last_rx > dead) {
		s->p->n.dead_peers++;
		g_source_unref(s->timer);
		s->timer = NULL;
		end(s, "the client is silent: dead link");
		return G_SOURCE_REMOVE;
	}
	if (s->tq_bytes <= (size_t)s->p->cfg.queue_bytes)
		push_frame(s, NULL, 0, 0, 0);
	if (!flush_tcp(s)) {
		g_source_unref(s->timer);
		s->timer = NULL;
		end(s, NULL);
		return G_SOURCE_REMOVE;
	}
	update(s);
	return G_SOURCE_CONTINUE;
}

proxy_session *proxy_session_new(proxy *p, int fd, const char *peer)
{
	proxy_session *s = g_new0(proxy_session, 1);
	s->p = p;
	s->tcp = fd;
	s->dev = -1;
	g_strlcpy(s->peer, peer, sizeof s->peer);
	s->line = g_byte_array_new();
	dev_framer_init(&s->in);
	g_queue_init(&s->tq);
	g_queue_init(&s->dq);
	s->rbuf = g_malloc(DEV_WIRE_MAX_MSG + 1);
	s->last_rx = g_get_monotonic_time();
	p->sessions = g_list_prepend(p->sessions, s);
	p->nsessions++;
	dev_proxy_nonce(s->nonce);
	push_text(s, dev_proxy_greeting_line(p->node, s->nonce));
	s->tsrc = dev_fd_source_new(fd, G_IO_IN | G_IO_OUT | G_IO_HUP | G_IO_ERR, on_tcp, s, NULL);
	s->timer = g_timeout_source_new((guint)(p->cfg.handshake_timeout_s * 1000));
	g_source_set_callback(s->timer, on_timer, s, NULL);
	g_source_attach(s->timer, NULL);
	proxy_changed(p);
	return s;
}

void proxy_session_refuse(int fd, const char *why)
{
	gchar *l = dev_proxy_err_line(EBUSY, why);
	/* a fresh socket's buffer takes one short line; nothing else is owed */
	if (send(fd, l, strlen(l), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		g_debug("refusing a client: %s", g_strerror(errno));
	g_free(l);
	close(fd);
}

void proxy_session_describe(const proxy_session *s, GString *out)
{
	g_string_append_printf(out, "  %s %s %s rx=%" G_GUINT64_FORMAT " tx=%" G_GUINT64_FORMAT " queued=%zu dropped=%" G_GUINT64_FORMAT "\n",
			       s->peer, s->relay ? s->name : "(handshake)", s->write ? "rw" : "ro", s->rx_bytes,
			       s->tx_bytes, s->tq_bytes, s->dropped);
}
