/* sensor.c — Sensor device, server half (see sensor.h).
 *
 * Nothing is copied per client ahead of time: when a client's socket can
 * take a message, the pump asks the service which indices it holds, and
 * reads the next chunk straight into the message buffer.  A slow client
 * therefore costs nothing while it is slow; when it comes back, indices it
 * missed are no longer held and it gets a GAP. */
#include "libdev/sensor.h"

#include <errno.h>
#include <string.h>

#include "libdev/server.h"

#define PUMP_BUDGET 8 /* chunks per pump call, for fairness between clients */
#define GAPS_MAX 256  /* declared gaps remembered */
#define DATA_HDR (DEV_WIRE_HDR + 16)

struct dev_sensor {
	dev_server srv;
	dev_sensor_ops ops;
	void *user;
	uint32_t item_size; /* bytes, default per client */
	GArray *gaps;       /* gap_range, in order of declaration */
	guint readers;
	uint8_t *buf; /* one message, DEV_WIRE_MAX_MSG bytes */
};

typedef struct {
	int64_t first, last;
} gap_range;

typedef struct {
	gboolean open;
	int64_t next;       /* next index to send */
	int64_t last;       /* exclusive end (DEV_SENSOR_OPEN_END) */
	uint32_t item_size; /* bytes */
	uint32_t id;        /* the OPEN request's id, echoed on errors */
	void *client;       /* the service's context */
} sensor_peer;

static void stream_close(dev_sensor *d, sensor_peer *sp)
{
	if (!sp->open)
		return;
	sp->open = FALSE;
	d->readers--;
	if (d->ops.close)
		d->ops.close(d->user, sp->client);
	sp->client = NULL;
}

/* The end of the declared gap holding `i`, or `i` when none does; *stop
 * gets the start of the nearest gap after i (or INT64_MAX). */
static int64_t gap_end(dev_sensor *d, int64_t i, int64_t *stop)
{
	int64_t end = i;
	*stop = INT64_MAX;
	for (guint k = 0; k < d->gaps->len; k++) {
		gap_range *g = &g_array_index(d->gaps, gap_range, k);
		if (g->first <= i && i < g->last && g->last > end)
			end = g->last;
		else if (g->first > i && g->first < *stop)
			*stop = g->first;
	}
	return end;
}

static int send_small(dev_peer *p, uint8_t type, uint32_t id, int64_t a, int64_t b, int two)
{
	GByteArray *m = g_byte_array_new();
	dev_wire_begin(m, type, 0, id);
	dev_wire_i64(m, a);
	if (two)
		dev_wire_i64(m, b);
	dev_wire_end(m);
	struct iovec iov = {m->data, m->len};
	int e = dev_peer_sendv(p, &iov, 1);
	g_byte_array_unref(m);
	return e;
}

static void se_pump(dev_server *s, dev_peer *p)
{
	dev_sensor *d = s->owner;
	sensor_peer *sp = p->pdata;
	size_t chunk_items = MAX(1, s->opt.chunk_bytes / sp->item_size);
	chunk_items = MIN(chunk_items, (DEV_WIRE_MAX_MSG - DATA_HDR) / sp->item_size);
	for (int budget = PUMP_BUDGET; sp->open; budget--) {
		if (budget == 0) {
			dev_peer_kick(p);
			return;
		}
		if (sp->next >= sp->last) {
			if (send_small(p, DEV_MSG_SENS_END, sp->id, sp->next, 0, 0) == 0)
				stream_close(d, sp);
			return;
		}
		int64_t oldest, held;
		d->ops.range(d->user, &oldest, &held);
		int64_t stop, skip = gap_end(d, sp->next, &stop);
		if (sp->next < oldest && oldest > skip) {
			int64_t to = sp->next;
			if (d->ops.below && d->ops.below(d->user, sp->client, sp->next, oldest, &to) && to > sp->next)
				stop = MIN(stop, to); /* served from below the held range */
			else
				skip = to > sp->next ? MIN(to, oldest) : MIN(oldest, held);
		}
		if (skip > sp->next) {
			int64_t to = MIN(skip, sp->last);
			if (to <= sp->next)
				to = sp->next + 1;
			if (send_small(p, DEV_MSG_SENS_GAP, sp->id, sp->next, to, 1) < 0)
				return;
			sp->next = to;
			continue;
		}
		int64_t avail = MIN(MIN(held, sp->last), stop) - sp->next;
		if (avail <= 0)
			return; /* wait for dev_sensor_advance */
		size_t n = (size_t)MIN((int64_t)chunk_items, avail);
		uint8_t *m = d->buf;
		int e = d->ops.read(d->user, sp->client, sp->next, n, m + DATA_HDR);
		if (e < 0) {
			dev_peer_error(p, sp->id, DEV_MSG_SENS_OPEN, -e, "device %s: reading items %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT " failed: %s", s->name, sp->next, sp->next + (int64_t)n,
				       g_strerror(-e));
			stream_close(d, sp);
			return;
		}
		size_t bytes = n * sp->item_size;
		dev_wire_header(m, DEV_MSG_SENS_DATA, 0, sp->id, (uint32_t)(16 + bytes));
		uint64_t f = (uint64_t)sp->next;
		for (int k = 0; k < 8; k++)
			m[DEV_WIRE_HDR + k] = (f >> (8 * k)) & 0xff;
		for (int k = 0; k < 4; k++) {
			m[DEV_WIRE_HDR + 8 + k] = ((uint32_t)n >> (8 * k)) & 0xff;
			m[DEV_WIRE_HDR + 12 + k] = 0;
		}
		struct iovec iov = {m, DATA_HDR + bytes};
		if (dev_peer_sendv(p, &iov, 1) < 0)
			return; /* re-read when writable: cheaper than holding a copy per slow client */
		sp->next += (int64_t)n;
	}
}

static void opened_reply(dev_peer *p, uint32_t id, const dev_sensor_request *r, const GByteArray *blob)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_SENS_OPENED, 0, id);
	dev_wire_i64(b, r->first);
	dev_wire_i64(b, r->last);
	dev_wire_u32(b, r->item_size);
	dev_wire_u32(b, 0);
	dev_wire_bytes(b, blob->data, blob->len);
	if (dev_wire_end(b) < 0)
		dev_peer_error(p, id, DEV_MSG_SENS_OPEN, EMSGSIZE, "device %s: open reply too long", p->srv->name);
	else
		dev_peer_queue(p, b);
	g_byte_array_unref(b);
}

static void do_open(dev_sensor *d, dev_peer *p, const dev_msg *m)
{
	sensor_peer *sp = p->pdata;
	const char *name = d->srv.name;
	if (sp->open) {
		dev_peer_error(p, m->id, m->type, EBUSY, "device %s: a stream is already open on this connection; "
							 "close it first",
			       name);
		return;
	}
	dev_sensor_request r = {
		.first = m->u.open.first,
		.last = m->u.open.last,
		.flags = m->u.open.flags,
		.params = m->u.open.params,
		.params_len = m->u.open.params_len,
		.item_size = d->item_size,
	};
	if (r.flags & DEV_SENSOR_FROM_NEXT) {
		int64_t oldest, held;
		d->ops.range(d->user, &oldest, &held);
		r.first = held;
		if (r.last < r.first)
			r.last = DEV_SENSOR_OPEN_END;
	}
	void *client = NULL;
	GByteArray *blob = g_byte_array_new();
	char why[DEV_WHY_MAX] = "";
	int e = d->ops.open ? d->ops.open(d->user, &p->creds, &r, &client, blob, why, sizeof why) : 0;
	if (e < 0) {
		dev_peer_error(p, m->id, m->type, -e, "device %s: %s", name, *why ? why : g_strerror(-e));
	} else if (r.item_size == 0 || r.item_size > DEV_WIRE_MAX_MSG - DATA_HDR || r.last < r.first) {
		if (d->ops.close)
			d->ops.close(d->user, client);
		dev_peer_error(p, m->id, m->type, EINVAL, "device %s: the service resolved an invalid range or item size",
			       name);
	} else {
		sp->open = TRUE;
		d->readers++;
		sp->next = r.first;
		sp->last = r.last;
		sp->item_size = r.item_size;
		sp->id = m->id;
		sp->client = client;
		opened_reply(p, m->id, &r, blob);
		dev_peer_kick(p);
	}
	g_byte_array_unref(blob);
}

static void se_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	dev_sensor *d = s->owner;
	sensor_peer *sp = p->pdata;
	if (m->type == DEV_MSG_SENS_OPEN) {
		do_open(d, p, m);
	} else if (m->type == DEV_MSG_SENS_CLOSE) {
		if (!sp->open) {
			dev_peer_error(p, m->id, m->type, EPROTO, "device %s: SENS_CLOSE without an open stream", s->name);
			return;
		}
		stream_close(d, sp);
		GByteArray *b = g_byte_array_new();
		dev_wire_begin(b, DEV_MSG_OK, 0, m->id);
		dev_wire_end(b);
		dev_peer_queue(p, b);
		g_byte_array_unref(b);
	} else {
		dev_peer_error(p, m->id, m->type, EPROTO, "device %s is a sensor device: %s not accepted",
			       s->name, dev_wire_type_name(m->type));
	}
}

static void se_new(dev_server *s, dev_peer *p) { p->pdata = g_new0(sensor_peer, 1); }

static void se_gone(dev_server *s, dev_peer *p)
{
	stream_close(s->owner, p->pdata);
	g_free(p->pdata);
	p->pdata = NULL;
}

static const dev_server_ops sensor_ops = {
	.pattern = DEV_PATTERN_SENSOR,
	.peer_new = se_new,
	.msg = se_msg,
	.pump = se_pump,
	.peer_gone = se_gone,
};

dev_sensor *dev_sensor_new(const char *name, const dev_options *opt, GMainContext *ctx, uint32_t item_size,
			   const dev_sensor_ops *ops, void *user, GError **error)
{
	if (!ops || !ops->range || !ops->read)
		return dev_set_error(error, EINVAL, "device %s: range and read callbacks are required", name);
	if (item_size == 0 || item_size > DEV_WIRE_MAX_MSG - DATA_HDR)
		return dev_set_error(error, EINVAL, "device %s: item size %u out of range", name, item_size);
	dev_sensor *d = g_new0(dev_sensor, 1);
	if (dev_server_init(&d->srv, name, opt, ctx, &sensor_ops, d, error) < 0) {
		g_free(d);
		return NULL;
	}
	d->srv.item_size = item_size;
	d->ops = *ops;
	d->user = user;
	d->item_size = item_size;
	d->gaps = g_array_new(FALSE, FALSE, sizeof(gap_range));
	d->buf = g_malloc(DEV_WIRE_MAX_MSG);
	return d;
}

static void kick_all(dev_sensor *d)
{
	for (GList *l = d->srv.peers; l; l = l->next) {
		dev_peer *p = l->data;
		if (((sensor_peer *)p->pdata)->open)
			dev_peer_kick(p);
	}
}

void dev_sensor_advance(dev_sensor *d, int64_t next)
{
	(void)next; /* the range callback is the truth; next only says "something new" */
	if (d->readers)
		kick_all(d);
}

int dev_sensor_gap(dev_sensor *d, int64_t first, int64_t last)
{
	if (first >= last)
		return -EINVAL;
	/* forget gaps that lie wholly before the oldest held index */
	int64_t oldest, held;
	d->ops.range(d->user, &oldest, &held);
	for (guint k = d->gaps->len; k-- > 0;)
		if (g_array_index(d->gaps, gap_range, k).last <= oldest)
			g_array_remove_index(d->gaps, k);
	if (d->gaps->len >= GAPS_MAX)
		g_array_remove_index(d->gaps, 0);
	gap_range g = {first, last};
	g_array_append_val(d->gaps, g);
	if (d->readers)
		kick_all(d);
	return 0;
}

guint dev_sensor_readers(dev_sensor *d) { return d->readers; }

void dev_sensor_free(dev_sensor *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_array_unref(d->gaps);
	g_free(d->buf);
	g_free(d);
}
