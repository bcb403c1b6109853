/* packet.c — Packet device, server half (see packet.h).
 *
 * A message is one refcounted GBytes shared by every queue it is in; the
 * PKT_DATA header (with the client's drop count) is written at send time,
 * so a drop-oldest queue can tell the client how many it lost in the very
 * next message. */
#include "libdev/packet.h"

#include <errno.h>
#include <string.h>

#include "libdev/server.h"

/* Messages sent to one peer per pump, for fairness between peers. */
#define PUMP_BUDGET 64

struct dev_packet {
	dev_server srv;
	dev_packet_ops ops;
	void *user;
	guint subs;
	gboolean want_writable; /* a send returned -EAGAIN */
};

typedef struct {
	gboolean sub;
	GBytes *filter;
	GQueue q;         /* GBytes messages */
	uint32_t dropped; /* dropped since the last message sent */
} packet_peer;

static gboolean matches(dev_packet *d, packet_peer *pp, const void *msg, size_t len)
{
	gsize fl;
	const void *f = pp->filter ? g_bytes_get_data(pp->filter, &fl) : NULL;
	if (!f)
		fl = 0;
	if (d->ops.filter)
		return d->ops.filter(d->user, f, fl, msg, len);
	return fl <= len && (fl == 0 || memcmp(f, msg, fl) == 0);
}

static gboolean all_have_room(dev_packet *d)
{
	for (GList *l = d->srv.peers; l; l = l->next) {
		packet_peer *pp = ((dev_peer *)l->data)->pdata;
		if (pp->sub && pp->q.length >= d->srv.opt.queue_limit)
			return FALSE;
	}
	return TRUE;
}

int dev_packet_send(dev_packet *d, const void *msg, size_t len)
{
	if (len > DEV_WIRE_MAX_PAYLOAD - 8)
		return -EMSGSIZE;
	size_t limit = d->srv.opt.queue_limit;
	if (d->srv.opt.overflow == DEV_OVERFLOW_BACKPRESSURE) {
		for (GList *l = d->srv.peers; l; l = l->next) {
			packet_peer *pp = ((dev_peer *)l->data)->pdata;
			if (pp->sub && pp->q.length >= limit && matches(d, pp, msg, len)) {
				d->want_writable = TRUE;
				return -EAGAIN;
			}
		}
	}
	GBytes *b = NULL;
	int n = 0;
	for (GList *l = d->srv.peers; l; l = l->next) {
		dev_peer *p = l->data;
		packet_peer *pp = p->pdata;
		if (!pp->sub || !matches(d, pp, msg, len))
			continue;
		if (pp->q.length >= limit) { /* drop-oldest (back-pressure returned above) */
			g_bytes_unref(g_queue_pop_head(&pp->q));
			if (pp->dropped < UINT32_MAX)
				pp->dropped++;
		}
		if (!b)
			b = g_bytes_new(msg, len);
		g_queue_push_tail(&pp->q, g_bytes_ref(b));
		dev_peer_kick(p);
		n++;
	}
	if (b)
		g_bytes_unref(b);
	return n;
}

static void pk_pump(dev_server *s, dev_peer *p)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	gboolean was_full = pp->q.length >= s->opt.queue_limit;
	for (int i = 0; i < PUMP_BUDGET && pp->q.length; i++) {
		GBytes *b = g_queue_peek_head(&pp->q);
		gsize n;
		const void *data = g_bytes_get_data(b, &n);
		uint8_t hdr[DEV_WIRE_HDR + 8] = {0};
		dev_wire_header(hdr, DEV_MSG_PKT_DATA, 0, 0, (uint32_t)(8 + n));
		uint32_t dr = pp->dropped;
		for (int k = 0; k < 4; k++)
			hdr[DEV_WIRE_HDR + k] = (dr >> (8 * k)) & 0xff;
		struct iovec iov[2] = {{hdr, sizeof hdr}, {(void *)data, n}};
		if (dev_peer_sendv(p, iov, n ? 2 : 1) < 0)
			return; /* pumped again when writable */
		g_bytes_unref(g_queue_pop_head(&pp->q));
		pp->dropped = 0;
	}
	if (pp->q.length)
		dev_peer_kick(p);
	if (was_full && d->want_writable && all_have_room(d)) {
		d->want_writable = FALSE;
		if (d->ops.writable)
			d->ops.writable(d->user);
	}
}

static void pk_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	switch (m->type) {
	case DEV_MSG_PKT_SUB:
		if (!pp->sub)
			d->subs++;
		pp->sub = TRUE;
		if (pp->filter)
			g_bytes_unref(pp->filter);
		pp->filter = g_bytes_new(m->payload, m->len);
		break;
	case DEV_MSG_PKT_UNSUB:
		if (pp->sub)
			d->subs--;
		pp->sub = FALSE;
		g_queue_clear_full(&pp->q, (GDestroyNotify)g_bytes_unref);
		g_queue_init(&pp->q);
		break;
	case DEV_MSG_PKT_SEND: {
		char why[DEV_WHY_MAX] = "";
		int e = d->ops.recv ? dev_server_check_write(s, p, why, sizeof why) : -EOPNOTSUPP;
		if (e == -EOPNOTSUPP)
			g_snprintf(why, sizeof why, "device %s does not accept packets from clients", s->name);
		if (e == 0) {
			e = d->ops.recv(d->user, &p->creds, m->payload, m->len);
			if (e < 0)
				g_snprintf(why, sizeof why, "device %s refused the packet: %s", s->name, g_strerror(-e));
		}
		if (e < 0) {
			dev_peer_error(p, m->id, m->type, -e, "%s", why);
		} else {
			GByteArray *b = g_byte_array_new();
			dev_wire_begin(b, DEV_MSG_OK, 0, m->id);
			dev_wire_end(b);
			dev_peer_queue(p, b);
			g_byte_array_unref(b);
		}
		break;
	}
	default:
		dev_peer_error(p, m->id, m->type, EPROTO, "device %s is a packet device: %s not accepted",
			       s->name, dev_wire_type_name(m->type));
	}
}

static void pk_new(dev_server *s, dev_peer *p)
{
	packet_peer *pp = g_new0(packet_peer, 1);
	g_queue_init(&pp->q);
	p->pdata = pp;
}

static void pk_gone(dev_server *s, dev_peer *p)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	if (pp->sub)
		d->subs--;
	pp->sub = FALSE;
	g_queue_clear_full(&pp->q, (GDestroyNotify)g_bytes_unref);
	g_queue_init(&pp->q);
	/* a full queue that leaves may be the one back-pressure waited for */
	if (d->want_writable && all_have_room(d)) {
		d->want_writable = FALSE;
		if (d->ops.writable)
			d->ops.writable(d->user);
	}
	if (pp->filter)
		g_bytes_unref(pp->filter);
	g_free(pp);
	p->pdata = NULL;
}

static const dev_server_ops packet_ops = {
	.pattern = DEV_PATTERN_PACKET,
	.peer_new = pk_new,
	.msg = pk_msg,
	.pump = pk_pump,
	.peer_gone = pk_gone,
};

dev_packet *dev_packet_new(const char *name, const dev_options *opt, GMainContext *ctx,
			   const dev_packet_ops *ops, void *user, GError **error)
{
	dev_packet *d = g_new0(dev_packet, 1);
	if (dev_server_init(&d->srv, name, opt, ctx, &packet_ops, d, error) < 0) {
		g_free(d);
		return NULL;
	}
	if (ops)
		d->ops = *ops;
	d->user = user;
	return d;
}

guint dev_packet_subscribers(dev_packet *d) { return d->subs; }

void dev_packet_free(dev_packet *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_free(d);
}
