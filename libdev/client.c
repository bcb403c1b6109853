/* client.c — reconnecting client connection (see client.h). */
#include "libdev/client.h"
#include "libdev/heap.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <glib-unix.h>
#include <unistd.h>

#include "libdev/fdsource.h"
#include "libdev/frame.h"
#include "libdev/path.h"
#include "libdev/remote.h"
#include "libdev/server.h"

#define READS_PER_DISPATCH 64
/* Remote: one connection attempt (TCP, handshake, HELLO) at most, ms. */
#define REMOTE_CONNECT_MS 5000

typedef struct {
	uint32_t id;
	dev_reply_fn done;
	void *user;
} pending;

struct dev_client {
	char name[DEV_PATH_MAX];
	char path[DEV_PATH_MAX];
	GMainContext *ctx;
	dev_client_ops ops;
	void *user;
	dev_state_fn state;
	void *state_user;
	int fd;
	GSource *src;
	GSource *timer;
	gboolean up;  /* HELLO seen */
	int reported; /* last state told: 0 none, 1 up, -1 down */
	guint backoff_ms;
	uint32_t next_id;
	GQueue out;  /* GBytes waiting for the socket */
	GQueue pend; /* pending * in send order */
	int refs;
	gboolean freed;
	gboolean warned; /* the wrong-pattern warning was logged */
	uint8_t *rbuf;
	size_t rbuf_hw; /* the largest message received since its tail was last given back */
	/* a device of another node, through its chorus-proxy (remote.h) */
	gboolean remote;
	dev_remote_target rt;
	dev_framer fr;       /* bytes received, not yet taken */
	size_t out_off;      /* bytes of the head of `out` already sent */
	gboolean connecting; /* a connection thread runs (holds a ref) */
	int dead_ms;         /* nothing received this long: the link is dead */
	gint64 last_rx;      /* monotonic µs of the last bytes received */
	GSource *hb;         /* checks the link every keepalive period */
	char why[400];       /* the last remote failure, logged once per outage */
};

static void schedule(dev_client *c, guint ms);

static void client_unref(dev_client *c)
{
	if (--c->refs > 0)
		return;
	g_queue_clear_full(&c->out, (GDestroyNotify)g_bytes_unref);
	g_queue_clear_full(&c->pend, g_free);
	g_free(c->rbuf);
	if (c->remote)
		dev_framer_clear(&c->fr);
	g_main_context_unref(c->ctx);
	g_free(c);
}

static void tell(dev_client *c, gboolean up, int err)
{
	int st = up ? 1 : -1;
	if (c->reported == st)
		return;
	c->reported = st;
	if (c->state && !c->freed)
		c->state(c->state_user, up, err);
}

/* Drop the connection: fail pending requests, tell the app, retry later. */
static void drop(dev_client *c, int err, guint retry_ms)
{
	dev_fd_source_drop(c->src);
	c->src = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->up = FALSE;
	c->out_off = 0;
	if (c->hb) {
		g_source_destroy(c->hb);
		g_source_unref(c->hb);
		c->hb = NULL;
	}
	if (c->remote) {
		dev_framer_reset(&c->fr);
		if (c->reported != -1 && *c->why)
			g_message("device %s: %s", c->rt.label, c->why);
	}
	g_queue_clear_full(&c->out, (GDestroyNotify)g_bytes_unref);
	g_queue_init(&c->out);
	GQueue failed = c->pend;
	g_queue_init(&c->pend);
	tell(c, FALSE, err);
	pending *pd;
	while ((pd = g_queue_pop_head(&failed))) {
		if (!c->freed && pd->done)
			pd->done(pd->user, -ECONNRESET, 0, "", 0);
		g_free(pd);
	}
	if (!c->freed)
		schedule(c, retry_ms);
}

static void update(dev_client *c)
{
	if (c->src)
		dev_fd_source_set(c->src, G_IO_IN | G_IO_HUP | G_IO_ERR | (c->out.length ? G_IO_OUT : 0));
}

static gboolean flush(dev_client *c)
{
	while (c->out.length) {
		GBytes *b = g_queue_peek_head(&c->out);
		gsize n;
		const uint8_t *d = g_bytes_get_data(b, &n);
		ssize_t r = send(c->fd, d + c->out_off, n - c->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return FALSE;
		}
		if (c->remote && c->out_off + (size_t)r < n) { /* a stream takes part of it */
			c->out_off += (size_t)r;
			break;
		}
		c->out_off = 0;
		g_bytes_unref(g_queue_pop_head(&c->out));
	}
	update(c);
	return TRUE;
}

static void handle(dev_client *c, const dev_msg *m)
{
	if (m->type == DEV_MSG_HELLO) {
		if (c->up)
			return;
		if (m->u.hello.pattern != c->ops.pattern) {
			if (!c->warned) /* once: it is retried every 2 s */
				g_warning("device %s (%s) is a %s device, not a %s device", c->name, c->path,
					  dev_pattern_name(m->u.hello.pattern), dev_pattern_name(c->ops.pattern));
			c->warned = TRUE;
			drop(c, -EPROTOTYPE, DEV_BACKOFF_MAX_MS);
			return;
		}
		c->up = TRUE;
		c->backoff_ms = DEV_BACKOFF_MIN_MS;
		tell(c, TRUE, 0);
		if (!c->freed && c->ops.up)
			c->ops.up(c->user);
		return;
	}
	if (!c->up)
		return; /* nothing but HELLO is meaningful before HELLO */
	if (m->id && (m->type == DEV_MSG_CMD_REPLY || m->type == DEV_MSG_QUERY_REPLY || m->type == DEV_MSG_USAGE ||
		      m->type == DEV_MSG_OK || m->type == DEV_MSG_ERROR)) {
		for (GList *l = c->pend.head; l; l = l->next) {
			pending *pd = l->data;
			if (pd->id != m->id)
				continue;
			g_queue_delete_link(&c->pend, l);
			char *text;
			if (m->type == DEV_MSG_ERROR) {
				text = g_strndup(m->u.error.text, m->u.error.text_len);
				if (pd->done)
					pd->done(pd->user, -m->u.error.err, 0, text, m->u.error.text_len);
			} else if (m->type == DEV_MSG_USAGE || m->type == DEV_MSG_OK) {
				text = g_strndup((const char *)m->payload, m->len);
				if (pd->done)
					pd->done(pd->user, 0, 0, text, m->len);
			} else {
				/* A query's reply is bytes: copied whole (g_strndup
				 * would stop at its first NUL), NUL added after. */
				text = g_malloc(m->u.reply.len + 1);
				memcpy(text, m->u.reply.data, m->u.reply.len);
				text[m->u.reply.len] = 0;
				if (pd->done)
					pd->done(pd->user, 0, m->u.reply.status, text, m->u.reply.len);
			}
			g_free(text);
			g_free(pd);
			return;
		}
	}
	if (c->ops.msg)
		c->ops.msg(c->user, m);
}

static void queue_frame(dev_client *c, const void *p, size_t n)
{
	GByteArray *f = g_byte_array_sized_new((guint)(n + DEV_FRAME_HDR));
	dev_frame_append(f, p, n);
	g_queue_push_tail(&c->out, g_byte_array_free_to_bytes(f));
}

/* Remote: read what the stream has and handle every whole frame. */
static void read_stream(dev_client *c)
{
	for (int i = 0; i < READS_PER_DISPATCH && c->fd >= 0 && !c->freed; i++) {
		ssize_t r = dev_framer_read(&c->fr, c->fd, 65536);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			g_snprintf(c->why, sizeof c->why, "the connection to the proxy %s", r == 0 ? "closed" : g_strerror(errno));
			drop(c, r == 0 ? -ECONNRESET : -errno, c->backoff_ms);
			return;
		}
		c->last_rx = g_get_monotonic_time();
		const uint8_t *p;
		size_t n;
		const char *why = "";
		int e = 0;
		while (c->fd >= 0 && !c->freed && (e = dev_framer_next(&c->fr, &p, &n, &why)) == 1) {
			if (n == 0) { /* the proxy's heartbeat: answer it */
				queue_frame(c, NULL, 0);
				flush(c);
				continue;
			}
			dev_msg m;
			if (dev_wire_decode(p, n, &m, &why) < 0)
				e = -EBADMSG;
			else
				handle(c, &m);
			if (e < 0)
				break;
		}
		if (e < 0 && c->fd >= 0 && !c->freed) {
			g_snprintf(c->why, sizeof c->why, "bad data from the proxy (%s); reconnecting", why);
			drop(c, -EPROTO, c->backoff_ms);
			return;
		}
	}
}

static gboolean dispatch(gpointer user, GIOCondition rev)
{
	dev_client *c = user;
	c->refs++;
	if ((rev & G_IO_OUT) && !flush(c)) {
		drop(c, -ECONNRESET, c->backoff_ms);
		goto out;
	}
	if (c->remote) {
		if (rev & (G_IO_IN | G_IO_HUP | G_IO_ERR))
			read_stream(c);
		goto out;
	}
	for (int i = 0; i < READS_PER_DISPATCH && c->fd >= 0 && !c->freed && (rev & (G_IO_IN | G_IO_HUP | G_IO_ERR)); i++) {
		ssize_t r = recv(c->fd, c->rbuf, DEV_WIRE_MAX_MSG + 1, MSG_DONTWAIT | MSG_TRUNC);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (r <= 0) {
			drop(c, r == 0 ? -ECONNRESET : -errno, c->backoff_ms);
			break;
		}
		dev_msg m;
		const char *why;
		if (dev_wire_decode(c->rbuf, MIN((size_t)r, (size_t)DEV_WIRE_MAX_MSG + 1), &m, &why) < 0) {
			g_warning("device %s: bad message from the service (%s); reconnecting", c->name, why);
			drop(c, -EPROTO, c->backoff_ms);
			break;
		}
		if ((size_t)r > c->rbuf_hw)
			c->rbuf_hw = (size_t)r;
		handle(c, &m);
	}
	if (c->rbuf_hw > DEV_HEAP_RBUF_KEEP && c->rbuf) {
		/* a large message (a backlog) touched the buffer's tail */
		dev_heap_release_tail(c->rbuf, DEV_WIRE_MAX_MSG + 1, DEV_HEAP_RBUF_KEEP);
		c->rbuf_hw = 0;
	}
out:;
	gboolean keep = c->src != NULL && !c->freed;
	/* the source may have been replaced by a reconnect inside a callback */
	GSource *cur = g_main_current_source();
	if (cur && cur != c->src)
		keep = FALSE;
	client_unref(c);
	return keep ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* Remote: every keepalive period, whether anything came recently. */
static gboolean check_link(gpointer user)
{
	dev_client *c = user;
	if (g_get_monotonic_time() - c->last_rx > (gint64)c->dead_ms * 1000) {
		g_snprintf(c->why, sizeof c->why, "nothing from the proxy for %d ms: the link is dead", c->dead_ms);
		drop(c, -ETIMEDOUT, c->backoff_ms);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static void remote_done(void *user, int err, const dev_remote_conn *rc, const char *why)
{
	dev_client *c = user;
	c->connecting = FALSE;
	if (c->freed) {
		if (err == 0)
			close(rc->fd);
		client_unref(c);
		return;
	}
	if (err < 0) {
		g_strlcpy(c->why, why, sizeof c->why);
		drop(c, err, err == -EACCES ? DEV_BACKOFF_MAX_MS : c->backoff_ms);
	} else {
		g_unix_set_fd_nonblocking(rc->fd, TRUE, NULL);
		c->fd = rc->fd;
		c->out_off = 0;
		c->why[0] = 0;
		dev_framer_reset(&c->fr);
		c->last_rx = g_get_monotonic_time();
		c->dead_ms = dev_remote_dead_ms(rc->keepalive_ms);
		c->hb = g_timeout_source_new((guint)rc->keepalive_ms);
		g_source_set_callback(c->hb, check_link, c, NULL);
		g_source_attach(c->hb, c->ctx);
		c->src = dev_fd_source_new(c->fd, G_IO_IN | G_IO_HUP | G_IO_ERR, dispatch, c, c->ctx);
	}
	client_unref(c);
}

static gboolean attempt(gpointer user)
{
	dev_client *c = user;
	g_source_unref(c->timer);
	c->timer = NULL;
	if (c->remote) {
		c->connecting = TRUE;
		c->refs++;
		dev_remote_connect_async(&c->rt, REMOTE_CONNECT_MS, c->ctx, remote_done, c);
		return G_SOURCE_REMOVE;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		drop(c, -errno, c->backoff_ms);
		return G_SOURCE_REMOVE;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, c->path, sizeof sa.sun_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		drop(c, -e, c->backoff_ms);
		return G_SOURCE_REMOVE;
	}
	c->fd = fd;
	c->src = dev_fd_source_new(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, dispatch, c, c->ctx);
	return G_SOURCE_REMOVE;
}

static void schedule(dev_client *c, guint ms)
{
	if (c->timer)
		return;
	c->timer = g_timeout_source_new(ms);
	g_source_set_callback(c->timer, attempt, c, NULL);
	g_source_attach(c->timer, c->ctx);
	c->backoff_ms = MIN(c->backoff_ms * 2, DEV_BACKOFF_MAX_MS);
}

dev_client *dev_client_new(const char *name, GMainContext *ctx, const dev_client_ops *ops, void *user,
			   dev_state_fn state, void *state_user, GError **error)
{
	const char *why;
	char path[DEV_PATH_MAX];
	dev_remote_target rt;
	int remote = dev_remote_parse(name, &rt, &why);
	if (remote < 0)
		return dev_set_error(error, remote, "device %s: %s", name, why);
	int e = remote ? 0 : dev_path(name, path, sizeof path, &why);
	if (e < 0)
		return dev_set_error(error, e, "device %s: %s", name, why);
	if (remote)
		g_strlcpy(path, rt.label, sizeof path);
	dev_client *c = g_new0(dev_client, 1);
	if (remote) {
		c->remote = TRUE;
		c->rt = rt;
		dev_framer_init(&c->fr);
	}
	g_strlcpy(c->name, name, sizeof c->name);
	g_strlcpy(c->path, path, sizeof c->path);
	c->ctx = ctx ? g_main_context_ref(ctx) : g_main_context_ref(g_main_context_default());
	c->ops = *ops;
	c->user = user;
	c->state = state;
	c->state_user = state_user;
	c->fd = -1;
	c->refs = 1;
	c->next_id = 1;
	c->backoff_ms = DEV_BACKOFF_MIN_MS;
	c->rbuf = g_malloc(DEV_WIRE_MAX_MSG + 1);
	g_queue_init(&c->out);
	g_queue_init(&c->pend);
	/* first attempt at once, but from the loop: no callback inside _new */
	c->timer = g_timeout_source_new(0);
	g_source_set_callback(c->timer, attempt, c, NULL);
	g_source_attach(c->timer, c->ctx);
	return c;
}

uint32_t dev_client_id(dev_client *c)
{
	uint32_t id = c->next_id++;
	if (c->next_id == 0)
		c->next_id = 1;
	return id;
}

int dev_client_send(dev_client *c, const GByteArray *b)
{
	if (!c->up)
		return -ENOTCONN;
	if (b->len > DEV_WIRE_MAX_MSG)
		return -EMSGSIZE;
	if (c->remote) { /* a stream: framed, sent in as many pieces as it takes */
		queue_frame(c, b->data, b->len);
		flush(c);
		return 0;
	}
	if (!c->out.length && send(c->fd, b->data, b->len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)b->len)
		return 0;
	/* EAGAIN or a hard error: queue; a hard error shows up at dispatch */
	g_queue_push_tail(&c->out, g_bytes_new(b->data, b->len));
	update(c);
	return 0;
}

int dev_client_request(dev_client *c, const GByteArray *b, uint32_t id, dev_reply_fn done, void *cb_user)
{
	int e = dev_client_send(c, b);
	if (e < 0)
		return e;
	pending *pd = g_new0(pending, 1);
	pd->id = id;
	pd->done = done;
	pd->user = cb_user;
	g_queue_push_tail(&c->pend, pd);
	return 0;
}

gboolean dev_client_up(dev_client *c) { return c->up; }

void dev_client_free(dev_client *c)
{
	if (!c)
		return;
	c->freed = TRUE;
	dev_fd_source_drop(c->src);
	c->src = NULL;
	if (c->hb) {
		g_source_destroy(c->hb);
		g_source_unref(c->hb);
		c->hb = NULL;
	}
	if (c->timer) {
		g_source_destroy(c->timer);
		g_source_unref(c->timer);
		c->timer = NULL;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	client_unref(c);
}
