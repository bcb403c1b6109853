/* status.c — Status device, server half (see status.h).
 *
 * Coalescing: the device has a generation counter bumped by notify; each
 * subscriber remembers the generation it was last sent.  A subscriber is
 * pumped only when its socket can take a message, and then gets the state
 * of the current generation, so a slow reader skips intermediate states.
 * Renderings are cached per generation: one callback per representation
 * per change, however many readers. */
#include "libdev/status.h"

#include <errno.h>

#include "libdev/server.h"

struct dev_status {
	dev_server srv;
	dev_status_text_fn text;
	dev_status_binary_fn binary;
	void *user;
	uint64_t gen;          /* bumped by notify; starts at 1 */
	GByteArray *cache[2];  /* [0] text, [1] binary: encoded STATUS_DATA payload */
	uint64_t cache_gen[2]; /* generation cached, 0 = none */
	int cache_err[2];      /* callback's error for that generation */
	guint subs;
};

typedef struct {
	gboolean sub;
	gboolean binary;
	uint64_t sent_gen;
} status_peer;

/* Render the state for `bin` into the cache unless it holds this generation
 * (or `fresh`: a GET always asks the service).  Returns 0 or -errno. */
static int render(dev_status *d, int bin, gboolean fresh)
{
	if (!fresh && d->cache_gen[bin] == d->gen)
		return d->cache_err[bin];
	GByteArray *c = d->cache[bin];
	g_byte_array_set_size(c, 0);
	int e;
	if (bin) {
		e = d->binary ? d->binary(d->user, c) : -EOPNOTSUPP;
	} else {
		GString *s = g_string_new(NULL);
		e = d->text(d->user, s);
		g_byte_array_append(c, (const guint8 *)s->str, s->len);
		g_string_free(s, TRUE);
	}
	if (e >= 0 && c->len > DEV_WIRE_MAX_PAYLOAD)
		e = -EMSGSIZE;
	d->cache_gen[bin] = d->gen;
	d->cache_err[bin] = e < 0 ? e : 0;
	return d->cache_err[bin];
}

static void send_state(dev_status *d, dev_peer *p, int bin, uint32_t id, uint16_t flags, gboolean fresh)
{
	int e = render(d, bin, fresh);
	if (e < 0) {
		dev_peer_error(p, id, DEV_MSG_STATUS_GET, -e, "device %s: %s state unavailable: %s", d->srv.name,
			       bin ? "binary" : "text", e == -EOPNOTSUPP ? "not provided by this device" : g_strerror(-e));
		return;
	}
	uint8_t hdr[DEV_WIRE_HDR];
	dev_wire_header(hdr, DEV_MSG_STATUS_DATA, flags | (bin ? DEV_F_BINARY : 0), id, d->cache[bin]->len);
	GByteArray *b = g_byte_array_sized_new(DEV_WIRE_HDR + d->cache[bin]->len);
	g_byte_array_append(b, hdr, sizeof hdr);
	g_byte_array_append(b, d->cache[bin]->data, d->cache[bin]->len);
	dev_peer_queue(p, b);
	g_byte_array_unref(b);
}

static void st_pump(dev_server *s, dev_peer *p)
{
	dev_status *d = s->owner;
	status_peer *sp = p->pdata;
	if (!sp->sub || sp->sent_gen == d->gen)
		return;
	uint16_t flags = sp->sent_gen ? DEV_F_NOTIFY : 0; /* not the first state it gets */
	sp->sent_gen = d->gen;
	send_state(d, p, sp->binary, 0, flags, FALSE);
}

static void st_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	dev_status *d = s->owner;
	status_peer *sp = p->pdata;
	int bin = (m->flags & DEV_F_BINARY) != 0;
	switch (m->type) {
	case DEV_MSG_STATUS_GET:
		send_state(d, p, bin, m->id, 0, TRUE);
		break;
	case DEV_MSG_STATUS_SUB:
		if (!sp->sub)
			d->subs++;
		sp->sub = TRUE;
		sp->binary = bin;
		sp->sent_gen = 0; /* a new subscriber gets the current state */
		dev_peer_kick(p);
		break;
	case DEV_MSG_STATUS_UNSUB:
		if (sp->sub)
			d->subs--;
		sp->sub = FALSE;
		break;
	default:
		dev_peer_error(p, m->id, m->type, EPROTO, "device %s is a status device: %s not accepted",
			       s->name, dev_wire_type_name(m->type));
	}
}

static void st_new(dev_server *s, dev_peer *p) { p->pdata = g_new0(status_peer, 1); }

static void st_gone(dev_server *s, dev_peer *p)
{
	dev_status *d = s->owner;
	status_peer *sp = p->pdata;
	if (sp->sub)
		d->subs--;
	g_free(sp);
	p->pdata = NULL;
}

static const dev_server_ops status_ops = {
	.pattern = DEV_PATTERN_STATUS,
	.peer_new = st_new,
	.msg = st_msg,
	.pump = st_pump,
	.peer_gone = st_gone,
};

dev_status *dev_status_new(const char *name, const dev_options *opt, GMainContext *ctx,
			   dev_status_text_fn text, dev_status_binary_fn binary, void *user, GError **error)
{
	if (!text)
		return dev_set_error(error, EINVAL, "device %s: a text callback is required", name);
	dev_status *d = g_new0(dev_status, 1);
	if (dev_server_init(&d->srv, name, opt, ctx, &status_ops, d, error) < 0) {
		g_free(d);
		return NULL;
	}
	d->text = text;
	d->binary = binary;
	d->user = user;
	d->gen = 1;
	d->cache[0] = g_byte_array_new();
	d->cache[1] = g_byte_array_new();
	return d;
}

void dev_status_notify(dev_status *d)
{
	d->gen++;
	if (!d->subs)
		return;
	for (GList *l = d->srv.peers; l; l = l->next) {
		dev_peer *p = l->data;
		if (((status_peer *)p->pdata)->sub)
			dev_peer_kick(p);
	}
}

guint dev_status_subscribers(dev_status *d) { return d->subs; }

void dev_status_free(dev_status *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_byte_array_unref(d->cache[0]);
	g_byte_array_unref(d->cache[1]);
	g_free(d);
}
