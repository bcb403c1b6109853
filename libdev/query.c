/* query.c — Query device, server half (see query.h).
 *
 * Each peer has a FIFO of requests; one is in service at a time.  Input
 * from a peer pauses while its FIFO is full (QUEUE_MAX), so a client that
 * pipelines requests is held back by its own socket, not by our memory.
 * A handle holds a reference to its peer, so completing after the client
 * left (or after the device was freed) is safe and does nothing. */
#include "libdev/query.h"

#include <errno.h>
#include <string.h>

#include "libdev/server.h"

#define QUEUE_MAX 16

struct dev_query {
	dev_server srv;
	dev_query_fn fn;
	void *user;
};

struct dev_query_handle {
	dev_peer *peer; /* referenced */
	uint32_t id;
	dev_creds creds;
};

typedef struct {
	GQueue reqs;      /* GBytes: u32 id then the request bytes */
	gboolean busy;    /* a request is with the service */
	gboolean serving; /* inside serve(): do not recurse */
} query_peer;

static void serve(dev_query *d, dev_peer *p)
{
	query_peer *qp = p->pdata;
	if (qp->serving)
		return;
	qp->serving = TRUE;
	dev_peer_ref(p);
	while (!p->closed && !qp->busy && qp->reqs.length) {
		GBytes *b = g_queue_pop_head(&qp->reqs);
		gsize n;
		const uint8_t *r = g_bytes_get_data(b, &n);
		uint32_t id;
		memcpy(&id, r, 4);
		char why[DEV_WHY_MAX] = "";
		int e = dev_server_check_write(&d->srv, p, why, sizeof why);
		if (e < 0) {
			dev_peer_error(p, id, DEV_MSG_QUERY, -e, "%s", why);
		} else {
			dev_query_handle *h = g_new0(dev_query_handle, 1);
			h->peer = dev_peer_ref(p);
			h->id = id;
			h->creds = p->creds;
			qp->busy = TRUE;
			d->fn(d->user, &p->creds, r + 4, n - 4, h);
		}
		g_bytes_unref(b);
	}
	if (!p->closed) {
		qp->serving = FALSE;
		dev_peer_update(p);
	}
	dev_peer_unref(p);
}

int dev_query_complete(dev_query_handle *h, int status, const void *reply, size_t len)
{
	dev_peer *p = h->peer;
	int e = 0;
	if (p->closed || !p->srv) {
		e = -ENOTCONN;
	} else {
		GByteArray *b = g_byte_array_new();
		dev_wire_begin(b, DEV_MSG_QUERY_REPLY, 0, h->id);
		dev_wire_u32(b, (uint32_t)status);
		dev_wire_bytes(b, reply, len);
		if (dev_wire_end(b) < 0) {
			e = -EMSGSIZE;
			dev_peer_error(p, h->id, DEV_MSG_QUERY, EMSGSIZE, "device %s: reply of %zu bytes is too long",
				       p->srv->name, len);
		} else {
			dev_peer_queue(p, b);
		}
		g_byte_array_unref(b);
		query_peer *qp = p->pdata;
		qp->busy = FALSE;
		serve(p->srv->owner, p);
	}
	dev_peer_unref(p);
	g_free(h);
	return e;
}

gboolean dev_query_handle_alive(const dev_query_handle *h) { return !h->peer->closed && h->peer->srv; }

const dev_creds *dev_query_handle_creds(const dev_query_handle *h) { return &h->creds; }

static void q_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	if (m->type != DEV_MSG_QUERY) {
		dev_peer_error(p, m->id, m->type, EPROTO, "device %s is a query device: %s not accepted",
			       s->name, dev_wire_type_name(m->type));
		return;
	}
	query_peer *qp = p->pdata;
	GByteArray *b = g_byte_array_sized_new(4 + m->len);
	g_byte_array_append(b, (const guint8 *)&m->id, 4);
	g_byte_array_append(b, m->payload, m->len);
	g_queue_push_tail(&qp->reqs, g_byte_array_free_to_bytes(b));
	serve(s->owner, p);
}

static gboolean q_want_input(dev_server *s, dev_peer *p)
{
	return ((query_peer *)p->pdata)->reqs.length < QUEUE_MAX;
}

static void q_new(dev_server *s, dev_peer *p)
{
	query_peer *qp = g_new0(query_peer, 1);
	g_queue_init(&qp->reqs);
	p->pdata = qp;
}

static void q_gone(dev_server *s, dev_peer *p)
{
	query_peer *qp = p->pdata;
	g_queue_clear_full(&qp->reqs, (GDestroyNotify)g_bytes_unref);
	g_free(qp);
	p->pdata = NULL;
}

static const dev_server_ops query_ops = {
	.pattern = DEV_PATTERN_QUERY,
	.peer_new = q_new,
	.msg = q_msg,
	.want_input = q_want_input,
	.peer_gone = q_gone,
};

dev_query *dev_query_new(const char *name, const dev_options *opt, GMainContext *ctx, dev_query_fn fn,
			 void *user, GError **error)
{
	if (!fn)
		return dev_set_error(error, EINVAL, "device %s: a query callback is required", name);
	dev_query *d = g_new0(dev_query, 1);
	if (dev_server_init(&d->srv, name, opt, ctx, &query_ops, d, error) < 0) {
		g_free(d);
		return NULL;
	}
	d->fn = fn;
	d->user = user;
	return d;
}

void dev_query_free(dev_query *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_free(d);
}
