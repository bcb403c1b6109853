/* link.c — blocking helpers (see link.h).  Plain blocking I/O with poll()
 * for the timeouts; no main loop, so tools and benchmarks stay simple. */
#include "libdev/waitfd.h"
#include "libdev/link.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libdev/frame.h"
#include "libdev/path.h"
#include "libdev/remote.h"

struct dev_link {
	int fd;
	dev_pattern pattern;
	uint32_t item_size;
	uint32_t next_id;
	char name[DEV_PATH_MAX];
	GByteArray *msg; /* scratch for requests */
	int tmo_ms;      /* SO_RCVTIMEO/SO_SNDTIMEO now set, ms; -2 = unknown */
	gboolean remote; /* a TCP stream to a node's chorus-proxy (frame.h) */
	dev_framer fr;   /* remote: bytes received, not yet taken */
};

static int recv_stream(dev_link *l, GByteArray *buf, dev_msg *m);

/* Blocking I/O bounded by socket timeouts: one system call per message,
 * where a non-blocking try + poll + retry costs three on every reply.  The
 * timeout is set only when the caller's value changes. */
static void set_timeout(dev_link *l, int ms)
{
	if (ms == l->tmo_ms)
		return;
	struct timeval tv = {0, 0};
	if (ms > 0) {
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
	} else if (ms == 0) {
		tv.tv_usec = 1; /* zero would mean "forever" */
	}
	setsockopt(l->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	l->tmo_ms = ms;
}

/* Receive one message, blocking up to the socket timeout. */
static int recv_blocking(dev_link *l, GByteArray *buf, dev_msg *m)
{
	if (l->remote)
		return recv_stream(l, buf, m);
	g_byte_array_set_size(buf, DEV_WIRE_MAX_MSG + 1);
	for (;;) {
		ssize_t r = recv(l->fd, buf->data, buf->len, MSG_TRUNC);
		if (r > 0) {
			size_t n = MIN((size_t)r, buf->len);
			g_byte_array_set_size(buf, (guint)n);
			return dev_wire_decode(buf->data, n, m, NULL) < 0 ? -EBADMSG : 0;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}


static int64_t deadline_of(int timeout_ms) { return timeout_ms < 0 ? -1 : dev_now_ms() + timeout_ms; }

/* Write all n bytes at p to a stream, blocking up to the socket timeout. */
static int send_stream(dev_link *l, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = send(l->fd, p, n, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Remote: the next message from the stream; heartbeats are answered and
 * skipped, and do not extend the wait past the timeout. */
static int recv_stream(dev_link *l, GByteArray *buf, dev_msg *m)
{
	int64_t dl = l->tmo_ms >= 0 ? dev_now_ms() + l->tmo_ms : -1;
	for (;;) {
		const uint8_t *p;
		size_t n;
		int e = dev_framer_next(&l->fr, &p, &n, NULL);
		if (e < 0)
			return -EPROTO;
		if (e == 1 && n == 0) {
			static const uint8_t hb[DEV_FRAME_HDR];
			if (send(l->fd, hb, sizeof hb, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
				return -errno;
			continue;
		}
		if (e == 1) {
			g_byte_array_set_size(buf, (guint)n);
			memcpy(buf->data, p, n);
			return dev_wire_decode(buf->data, n, m, NULL) < 0 ? -EBADMSG : 0;
		}
		if (dl >= 0 && dev_now_ms() > dl)
			return -ETIMEDOUT;
		ssize_t r = dev_framer_read(&l->fr, l->fd, 65536);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0 && errno != EINTR)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
	}
}

int dev_link_send(dev_link *l, const GByteArray *b, int timeout_ms)
{
	set_timeout(l, timeout_ms);
	if (l->remote) {
		uint8_t h[DEV_FRAME_HDR] = {(uint8_t)b->len, (uint8_t)(b->len >> 8), (uint8_t)(b->len >> 16),
					    (uint8_t)(b->len >> 24)};
		int e = send_stream(l, h, sizeof h);
		return e < 0 ? e : send_stream(l, b->data, b->len);
	}
	for (;;) {
		if (send(l->fd, b->data, b->len, MSG_NOSIGNAL) == (ssize_t)b->len)
			return 0;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int recv_dl(int fd, GByteArray *buf, dev_msg *m, int64_t dl)
{
	g_byte_array_set_size(buf, DEV_WIRE_MAX_MSG + 1);
	for (;;) {
		ssize_t r = recv(fd, buf->data, buf->len, MSG_DONTWAIT | MSG_TRUNC);
		if (r > 0) {
			size_t n = MIN((size_t)r, buf->len);
			g_byte_array_set_size(buf, (guint)n);
			return dev_wire_decode(buf->data, n, m, NULL) < 0 ? -EBADMSG : 0;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		int e = dev_wait_fd(fd, POLLIN, dl);
		if (e < 0)
			return e;
	}
}

int dev_link_recv(dev_link *l, GByteArray *buf, dev_msg *m, int timeout_ms)
{
	set_timeout(l, timeout_ms);
	return recv_blocking(l, buf, m);
}

/* Open a device of another node through its proxy (remote.h). */
static dev_link *open_remote(const dev_remote_target *t, int timeout_ms, GError **error)
{
	char why[400];
	dev_remote_conn c;
	int e = dev_remote_connect(t, timeout_ms, &c, why, sizeof why);
	if (e < 0) {
		g_set_error(error, DEV_ERROR, -e, "device %s: %s", t->label, why);
		return NULL;
	}
	dev_link *l = g_new0(dev_link, 1);
	l->fd = c.fd;
	l->remote = TRUE;
	l->tmo_ms = -2;
	l->next_id = 1;
	l->msg = g_byte_array_new();
	dev_framer_init(&l->fr);
	g_strlcpy(l->name, t->label, sizeof l->name);
	set_timeout(l, timeout_ms);
	dev_msg m;
	e = recv_stream(l, l->msg, &m);
	if (e == 0 && m.type != DEV_MSG_HELLO)
		e = -EPROTO;
	if (e < 0) {
		g_set_error(error, DEV_ERROR, -e, "device %s (%s): no valid HELLO through the proxy: %s", t->label, c.where,
			    g_strerror(-e));
		dev_link_close(l);
		return NULL;
	}
	l->pattern = m.u.hello.pattern;
	l->item_size = m.u.hello.item_size;
	return l;
}

static dev_link *open_local(const char *name, int timeout_ms, GError **error);

dev_link *dev_link_open(const char *name, int timeout_ms, GError **error)
{
	const char *why;
	dev_remote_target rt;
	int e = dev_remote_parse(name, &rt, &why);
	if (e < 0) {
		g_set_error(error, DEV_ERROR, -e, "device %s: %s", name, why);
		return NULL;
	}
	if (e == 1)
		return open_remote(&rt, timeout_ms, error);
	return open_local(name, timeout_ms, error);
}

/* This node's own device `name` (never remote, whatever CHORUS_REMOTE). */
static dev_link *open_local(const char *name, int timeout_ms, GError **error)
{
	const char *why;
	char path[DEV_PATH_MAX];
	int e = dev_path(name, path, sizeof path, &why);
	if (e < 0) {
		g_set_error(error, DEV_ERROR, -e, "device %s: %s", name, why);
		return NULL;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		g_set_error(error, DEV_ERROR, errno, "socket: %s", g_strerror(errno));
		return NULL;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		e = errno;
		g_set_error(error, DEV_ERROR, e, "device %s: cannot connect to %s: %s%s", name, path, g_strerror(e),
			    e == ECONNREFUSED ? " (stale socket: the service is not running)" : "");
		close(fd);
		return NULL;
	}
	GByteArray *buf = g_byte_array_new();
	dev_msg m;
	e = recv_dl(fd, buf, &m, deadline_of(timeout_ms));
	if (e == 0 && m.type != DEV_MSG_HELLO)
		e = -EPROTO;
	if (e < 0) {
		g_set_error(error, DEV_ERROR, -e, "device %s (%s): no valid HELLO from the service: %s", name, path,
			    g_strerror(-e));
		g_byte_array_unref(buf);
		close(fd);
		return NULL;
	}
	dev_link *l = g_new0(dev_link, 1);
	l->fd = fd;
	l->pattern = m.u.hello.pattern;
	l->item_size = m.u.hello.item_size;
	l->next_id = 1;
	l->msg = buf;
	l->tmo_ms = -2;
	g_strlcpy(l->name, name, sizeof l->name);
	return l;
}

dev_pattern dev_link_pattern(dev_link *l) { return l->pattern; }
uint32_t dev_link_item_size(dev_link *l) { return l->item_size; }
int dev_link_fd(dev_link *l) { return l->fd; }

/* Send a request and wait for the message answering it (same id);
 * unsolicited messages are skipped.  On ERROR: its errno, text in out. */
static int transact(dev_link *l, uint8_t type, uint16_t flags, const void *req, size_t len, dev_msg *m,
		    GByteArray *rbuf, GByteArray *out, int timeout_ms)
{
	int64_t dl = deadline_of(timeout_ms);
	uint32_t id = l->next_id++;
	if (!l->next_id)
		l->next_id = 1;
	dev_wire_begin(l->msg, type, flags, id);
	dev_wire_bytes(l->msg, req, len);
	if (dev_wire_end(l->msg) < 0)
		return -EMSGSIZE;
	int e = dev_link_send(l, l->msg, timeout_ms);
	if (e < 0)
		return e;
	for (;;) {
		/* each wait is bounded by the timeout; skipping unsolicited
		 * messages must not extend the whole call past it */
		e = recv_blocking(l, rbuf, m);
		if (e < 0)
			return e;
		if (m->id != id) {
			if (dl >= 0 && dev_now_ms() > dl)
				return -ETIMEDOUT;
			continue;
		}
		if (m->type == DEV_MSG_ERROR) {
			g_byte_array_set_size(out, 0);
			g_byte_array_append(out, (const guint8 *)m->u.error.text, m->u.error.text_len);
			return -m->u.error.err;
		}
		return 0;
	}
}

static void put_out(GByteArray *out, const void *p, size_t n)
{
	g_byte_array_set_size(out, 0);
	if (n)
		g_byte_array_append(out, p, (guint)n);
}

int dev_link_status(dev_link *l, gboolean binary, GByteArray *out, int timeout_ms)
{
	if (l->pattern != DEV_PATTERN_STATUS)
		return -EPROTOTYPE;
	GByteArray *rb = g_byte_array_new();
	dev_msg m;
	int e = transact(l, DEV_MSG_STATUS_GET, binary ? DEV_F_BINARY : 0, NULL, 0, &m, rb, out, timeout_ms);
	if (e == 0)
		put_out(out, m.payload, m.len);
	g_byte_array_unref(rb);
	return e;
}

int dev_link_call(dev_link *l, const void *req, size_t len, int *status, GByteArray *out, int timeout_ms)
{
	uint8_t type;
	if (l->pattern == DEV_PATTERN_COMMAND)
		type = DEV_MSG_CMD;
	else if (l->pattern == DEV_PATTERN_QUERY)
		type = DEV_MSG_QUERY;
	else
		return -EPROTOTYPE;
	GByteArray *rb = g_byte_array_new();
	dev_msg m;
	int e = transact(l, type, 0, req, len, &m, rb, out, timeout_ms);
	if (e == 0 && m.type != DEV_MSG_CMD_REPLY && m.type != DEV_MSG_QUERY_REPLY)
		e = -EPROTO;
	if (e == 0) {
		*status = m.u.reply.status;
		put_out(out, m.u.reply.data, m.u.reply.len);
	}
	g_byte_array_unref(rb);
	return e;
}

int dev_link_usage(dev_link *l, GByteArray *out, int timeout_ms)
{
	if (l->pattern != DEV_PATTERN_COMMAND)
		return -EPROTOTYPE;
	GByteArray *rb = g_byte_array_new();
	dev_msg m;
	int e = transact(l, DEV_MSG_USAGE_GET, 0, NULL, 0, &m, rb, out, timeout_ms);
	if (e == 0)
		put_out(out, m.payload, m.len);
	g_byte_array_unref(rb);
	return e;
}

void dev_link_close(dev_link *l)
{
	if (!l)
		return;
	close(l->fd);
	g_byte_array_unref(l->msg);
	if (l->remote)
		dev_framer_clear(&l->fr);
	g_free(l);
}

static dev_link *open_or_text(const char *name, int timeout_ms, GByteArray *out, int *err)
{
	GError *ge = NULL;
	dev_link *l = dev_link_open(name, timeout_ms, &ge);
	if (!l) {
		*err = -ge->code;
		put_out(out, ge->message, strlen(ge->message));
		g_error_free(ge);
	}
	return l;
}

int dev_status_read_sync(const char *name, gboolean binary, GByteArray *out, int timeout_ms)
{
	int e;
	dev_link *l = open_or_text(name, timeout_ms, out, &e);
	if (l) {
		e = dev_link_status(l, binary, out, timeout_ms);
		dev_link_close(l);
	}
	/* a NUL after the data, not counted */
	g_byte_array_append(out, (const guint8 *)"", 1);
	out->len--;
	return e;
}

int dev_status_read_local_sync(const char *name, GByteArray *out, int timeout_ms)
{
	GError *err = NULL;
	dev_link *l = open_local(name, timeout_ms, &err);
	int e;
	if (!l) {
		e = -err->code;
		g_error_free(err);
	} else {
		e = dev_link_status(l, FALSE, out, timeout_ms);
		dev_link_close(l);
	}
	g_byte_array_append(out, (const guint8 *)"", 1);
	out->len--;
	return e;
}

int dev_command_run_sync(const char *name, const char *cmd, int *status, GString *msg, int timeout_ms)
{
	GByteArray *out = g_byte_array_new();
	int e;
	dev_link *l = open_or_text(name, timeout_ms, out, &e);
	if (l) {
		e = l->pattern == DEV_PATTERN_COMMAND ? dev_link_call(l, cmd, strlen(cmd), status, out, timeout_ms)
						      : -EPROTOTYPE;
		if (e == -EPROTOTYPE)
			put_out(out, "not a command device", 20);
		dev_link_close(l);
	}
	g_string_truncate(msg, 0);
	g_string_append_len(msg, (const char *)out->data, out->len);
	g_byte_array_unref(out);
	return e;
}

int dev_query_run_sync(const char *name, const void *req, size_t len, int *status, GByteArray *out,
		       int timeout_ms)
{
	int e;
	dev_link *l = open_or_text(name, timeout_ms, out, &e);
	if (l) {
		e = l->pattern == DEV_PATTERN_QUERY ? dev_link_call(l, req, len, status, out, timeout_ms) : -EPROTOTYPE;
		dev_link_close(l);
	}
	return e;
}
