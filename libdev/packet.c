/* packet.c — Packet device, server half (see packet.h).
 *
 * A message is one refcounted block (its sequence number, length and
 * bytes together) shared by every queue it is in (and the history); the
 * queues are rings of references, so a message costs one allocation
 * however many clients queue it, and nothing per client.  A burst (a
 * service catching up after a stall, queueing hundreds of messages for a
 * slow client) then leaves no small per-entry blocks among the large ones
 * to pin heap pages once it is sent: the blocks free in order, coalesce,
 * and the periodic trim (heap.h) gives them back.  The PKT_DATA header
 * (with the client's drop count) is written at send time, so a
 * drop-oldest queue can tell the client how many it lost in the very
 * next message. */
#include "libdev/packet.h"

#include <errno.h>
#include <string.h>

#include "libdev/le.h"
#include "libdev/server.h"

/* Messages sent to one peer per pump, for fairness between peers. */
#define PUMP_BUDGET 64

/* A message: shared by the queues and the history that hold it. */
typedef struct {
	gint ref;
	uint64_t seq;
	size_t len;
	uint8_t data[];
} pmsg;

/* A FIFO of message references: a ring of pointers that grows by
 * doubling and shrinks back to RING_MIN when emptied. */
typedef struct {
	pmsg **v;
	guint cap, head, len;
} pring;

#define RING_MIN 16

struct dev_packet {
	dev_server srv;
	dev_packet_ops ops;
	void *user;
	guint subs;
	gboolean want_writable; /* a send returned -EAGAIN */
	uint64_t boot;          /* this instance, never 0 */
	uint64_t next_seq;      /* of the next message sent, from 1 */
	pring hist;             /* the last opt.history messages */
};

typedef struct {
	gboolean sub;
	gboolean seqs; /* subscribed with PKT_SUB_FROM: PKT_SEQDATA */
	GBytes *filter;
	pring q;          /* messages to send */
	uint32_t dropped; /* dropped since the last message sent */
} packet_peer;

static pmsg *pmsg_new(const void *msg, size_t len, uint64_t seq)
{
	pmsg *m = g_malloc(sizeof *m + len);
	m->ref = 1;
	m->seq = seq;
	m->len = len;
	if (len)
		memcpy(m->data, msg, len);
	return m;
}

static pmsg *pmsg_ref(pmsg *m)
{
	g_atomic_int_inc(&m->ref);
	return m;
}

static void pmsg_unref(pmsg *m)
{
	if (g_atomic_int_dec_and_test(&m->ref))
		g_free(m);
}

/* r's storage at capacity cap (>= r->len), the entries kept in order. */
static void pring_resize(pring *r, guint cap)
{
	pmsg **v = g_new(pmsg *, cap);
	for (guint i = 0; i < r->len; i++)
		v[i] = r->v[(r->head + i) % r->cap];
	g_free(r->v);
	r->v = v;
	r->cap = cap;
	r->head = 0;
}

/* Append a reference to m (the ring takes the caller's reference). */
static void pring_push(pring *r, pmsg *m)
{
	if (r->len == r->cap)
		pring_resize(r, r->cap ? r->cap * 2 : RING_MIN);
	r->v[(r->head + r->len) % r->cap] = m;
	r->len++;
}

/* The i-th oldest entry (i < r->len). */
static pmsg *pring_at(const pring *r, guint i)
{
	return r->v[(r->head + i) % r->cap];
}

/* Remove the oldest entry and drop its reference (r->len > 0). */
static void pring_drop(pring *r)
{
	pmsg_unref(r->v[r->head]);
	r->head = (r->head + 1) % r->cap;
	if (--r->len == 0 && r->cap > RING_MIN) {
		g_free(r->v); /* a burst's ring goes back too */
		r->v = NULL;
		r->cap = r->head = 0;
	}
}

/* Drop every entry and the storage. */
static void pring_clear(pring *r)
{
	for (guint i = 0; i < r->len; i++)
		pmsg_unref(pring_at(r, i));
	g_free(r->v);
	memset(r, 0, sizeof *r);
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
		if (pp->sub && pp->q.len >= peer_limit(d, pp))
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
			if (pp->sub && pp->q.len >= peer_limit(d, pp) && matches(d, pp, msg, len)) {
				d->want_writable = TRUE;
				return -EAGAIN;
			}
		}
	}
	pmsg *m = pmsg_new(msg, len, d->next_seq++);
	int n = 0;
	for (GList *l = d->srv.peers; l; l = l->next) {
		dev_peer *p = l->data;
		packet_peer *pp = p->pdata;
		if (!pp->sub || !matches(d, pp, msg, len))
			continue;
		if (pp->q.len >= peer_limit(d, pp)) { /* drop-oldest (back-pressure returned above) */
			pring_drop(&pp->q);
			if (pp->dropped < UINT32_MAX)
				pp->dropped++;
		}
		pring_push(&pp->q, pmsg_ref(m));
		dev_peer_kick(p);
		n++;
	}
	if (d->srv.opt.history) {
		pring_push(&d->hist, pmsg_ref(m));
		while (d->hist.len > d->srv.opt.history)
			pring_drop(&d->hist);
	}
	pmsg_unref(m);
	return n;
}

static void pk_pump(dev_server *s, dev_peer *p)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	gboolean was_full = pp->q.len >= peer_limit(d, pp);
	for (int i = 0; i < PUMP_BUDGET && pp->q.len; i++) {
		const pmsg *e = pring_at(&pp->q, 0);
		size_t n = e->len;
		const void *data = e->data;
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
		pring_drop(&pp->q);
		pp->dropped = 0;
	}
	if (pp->q.len)
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
	pring_clear(&pp->q);
	if (boot == 0)
		return;
	uint64_t from = boot == d->boot ? next : 1;
	if (from == 0)
		from = 1;
	uint64_t first = d->hist.len ? pring_at(&d->hist, 0)->seq : d->next_seq;
	if (from < first && from < d->next_seq) {
		uint64_t lost = first - from;
		pp->dropped = lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost;
	}
	for (guint i = 0; i < d->hist.len; i++) {
		pmsg *e = pring_at(&d->hist, i);
		if (e->seq >= from && matches(d, pp, e->data, e->len))
			pring_push(&pp->q, pmsg_ref(e));
	}
	if (pp->q.len)
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
		pring_clear(&pp->q);
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
	p->pdata = pp;
}

static void pk_gone(dev_server *s, dev_peer *p)
{
	dev_packet *d = s->owner;
	packet_peer *pp = p->pdata;
	if (pp->sub)
		d->subs--;
	pp->sub = FALSE;
	pring_clear(&pp->q);
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
	return d;
}

guint dev_packet_subscribers(dev_packet *d) { return d->subs; }

void dev_packet_free(dev_packet *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	pring_clear(&d->hist);
	g_free(d);
}
