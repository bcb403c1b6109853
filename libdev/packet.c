/* packet.c — Packet device, server half (see packet.h).
 *
 * A message is one refcounted GBytes shared by every queue it is in (and
 * the history); the PKT_DATA header (with the client's drop count) is
 * written at send time, so a drop-oldest queue can tell the client how
 * many it lost in the very next message. */
#include "libdev/packet.h"

#include <errno.h>
#include <string.h>

#include "libdev/le.h"
#include "libdev/server.h"

/* Messages sent to one peer per pump, for fairness between peers. */
#define PUMP_BUDGET 64

/* A message in a queue or the history. */
typedef struct {
	GBytes *b;
	uint64_t seq;
} qent;

struct dev_packet {
	dev_server srv;
	dev_packet_ops ops;
	void *user;
	guint subs;
	gboolean want_writable; /* a send returned -EAGAIN */
	uint64_t boot;          /* this instance, never 0 */
	uint64_t next_seq;      /* of the next message sent, from 1 */
	GQueue hist;            /* qent: the last opt.history messages */
};

typedef struct {
	gboolean sub;
	gboolean seqs; /* subscribed with PKT_SUB_FROM: PKT_SEQDATA */
	GBytes *filter;
	GQueue q;         /* qent messages */
	uint32_t dropped; /* dropped since the last message sent */
} packet_peer;

static qent *qent_new(GBytes *b, uint64_t seq)
{
	qent *e = g_new(qent, 1);
	e->b = g_bytes_ref(b);
	e->seq = seq;
	return e;
}

static void qent_free(qent *e)
{
	g_bytes_unref(e->b);
	g_free(e);
}

/* A client that resumes may get the whole history at once. */
static size_t peer_limit(const dev_packet *d, const packet_peer *pp)
{
	return d->srv.opt.queue_limit + (pp->seqs ? d->srv.opt.history : 0);
}

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
		if (pp->sub && pp->q.length >= peer_limit(d, pp))
			return FALSE;
	}
	return TRUE;
}

int dev_packet_send(dev_packet *d, const void *msg, size_t len)
{
	if (len > DEV_WIRE_MAX_PAYLOAD - 8)
		return -EMSGSIZE;
	if (d->srv.opt.overflow == DEV_OVERFLOW_BACKPRESSURE) {
		for (GList *l = d->srv.peers; l; l = l->next) {
			packet_peer *pp = ((dev_peer *)l->data)->pdata;
			if (pp->sub && pp->q.length >= peer_limit(d, pp) && matches(d, pp, msg, len)) {
				d->want_writable = TRUE;
				return -EAGAIN;
			}
		}
	}
	GBytes *b = g_bytes_new(msg, len);
	uint64_t seq = d->next_seq++;
	int n = 0;
	for (GList *l = d->srv.peers; l; l = l->next) {
		dev_peer *p = l->data;
		packet_peer *pp = p->pdata;
		if (!pp->sub || !matches(d, pp, msg, len))
			continue;
		if (pp->q.length >= peer_limit(d, pp)) { /* drop-oldest (back-pressure returned above) */
			qent_free(g_queue_pop_head(&pp->q));
			if (pp->dropped < UINT32_MAX)
				pp->dropped++;
		}
		g_queue_push_tail(&pp->q, qent_new(b, seq));
		dev_peer_kick(p);
		n++;
	}
	if (d->srv.opt.history) {
		g_queue_push_tail(&d->hist, qent_new(b, seq));
		while (d->hist.length > d->srv.opt.history)
			qent_free(g_queue_pop_head(&d->hist));
	}
	g_bytes_unref(b);
	return n;
}

static void pk_pump(dev_server *s, dev_peer *p)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	gboolean was_full = pp->q.length >= peer_limit(d, pp);
	for (int i = 0; i < PUMP_BUDGET && pp->q.length; i++) {
		qent *e = g_queue_peek_head(&pp->q);
		gsize n;
		const void *data = g_bytes_get_data(e->b, &n);
		uint8_t hdr[DEV_WIRE_HDR + 24] = {0};
		size_t extra = pp->seqs ? 24 : 8;
		dev_wire_header(hdr, pp->seqs ? DEV_MSG_PKT_SEQDATA : DEV_MSG_PKT_DATA, 0, 0, (uint32_t)(extra + n));
		le_put32(hdr + DEV_WIRE_HDR, pp->dropped);
		if (pp->seqs) {
			le_put64(hdr + DEV_WIRE_HDR + 8, d->boot);
			le_put64(hdr + DEV_WIRE_HDR + 16, e->seq);
		}
		struct iovec iov[2] = {{hdr, DEV_WIRE_HDR + extra}, {(void *)data, n}};
		if (dev_peer_sendv(p, iov, n ? 2 : 1) < 0)
			return; /* pumped again when writable */
		qent_free(g_queue_pop_head(&pp->q));
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

static void subscribe(dev_packet *d, packet_peer *pp, const void *filter, size_t flen, gboolean seqs)
{
	if (!pp->sub)
		d->subs++;
	pp->sub = TRUE;
	pp->seqs = seqs;
	if (pp->filter)
		g_bytes_unref(pp->filter);
	pp->filter = g_bytes_new(filter, flen);
}

/* PKT_SUB_FROM: what the history holds from the client's cursor on,
 * queued before anything new.  A cursor of this instance resumes after it;
 * one of another instance (this service restarted) gets everything kept,
 * from this instance's first message; boot 0 gets nothing old.  Messages
 * the history no longer holds are counted as dropped (at most: some may
 * not have matched the filter). */
static void resume(dev_packet *d, dev_peer *p, uint64_t boot, uint64_t next)
{
	packet_peer *pp = p->pdata;
	g_queue_clear_full(&pp->q, (GDestroyNotify)qent_free);
	g_queue_init(&pp->q);
	if (boot == 0)
		return;
	uint64_t from = boot == d->boot ? next : 1;
	if (from == 0)
		from = 1;
	qent *oldest = g_queue_peek_head(&d->hist);
	uint64_t first = oldest ? oldest->seq : d->next_seq;
	if (from < first && from < d->next_seq) {
		uint64_t lost = first - from;
		pp->dropped = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
	}
	for (GList *l = d->hist.head; l; l = l->next) {
		qent *e = l->data;
		gsize n;
		const void *msg = g_bytes_get_data(e->b, &n);
		if (e->seq >= from && matches(d, pp, msg, n))
			g_queue_push_tail(&pp->q, qent_new(e->b, e->seq));
	}
	if (pp->q.length)
		dev_peer_kick(p);
}

static void pk_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	switch (m->type) {
	case DEV_MSG_PKT_SUB:
		subscribe(d, pp, m->payload, m->len, FALSE);
		break;
	case DEV_MSG_PKT_SUB_FROM:
		subscribe(d, pp, m->u.from.filter, m->u.from.flen, TRUE);
		resume(d, p, m->u.from.boot, m->u.from.next);
		break;
	case DEV_MSG_PKT_UNSUB:
		if (pp->sub)
			d->subs--;
		pp->sub = FALSE;
		g_queue_clear_full(&pp->q, (GDestroyNotify)qent_free);
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
	g_queue_clear_full(&pp->q, (GDestroyNotify)qent_free);
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
	/* An instance's id: clients holding a cursor of an earlier one know
	 * this service restarted.  Real time and a random number: never 0,
	 * never the same twice in practice. */
	do
		d->boot = ((uint64_t)g_get_real_time() << 20) ^ ((uint64_t)g_random_int() << 1) ^ (uint64_t)g_random_int();
	while (d->boot == 0);
	d->next_seq = 1;
	g_queue_init(&d->hist);
	return d;
}

guint dev_packet_subscribers(dev_packet *d) { return d->subs; }

void dev_packet_free(dev_packet *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_queue_clear_full(&d->hist, (GDestroyNotify)qent_free);
	g_free(d);
}
