/* packet_sub.c — Packet device, client half (see packet_sub.h). */
#include "libdev/packet_sub.h"

#include <errno.h>
#include <string.h>

#include "libdev/client.h"
#include "libdev/le.h"

struct dev_packet_sub {
	dev_client *c;
	GBytes *filter;
	dev_packet_fn on_packet;
	dev_packet_seq_fn on_seq; /* resuming (new_from) */
	uint64_t boot, next;      /* its cursor */
	void *user;
};

static void send_sub(dev_packet_sub *s)
{
	gsize n;
	const void *f = g_bytes_get_data(s->filter, &n);
	GByteArray *b = g_byte_array_new();
	if (s->on_seq) {
		uint8_t cur[16];
		le_put64(cur, s->boot);
		le_put64(cur + 8, s->next);
		dev_wire_begin(b, DEV_MSG_PKT_SUB_FROM, 0, dev_client_id(s->c));
		dev_wire_bytes(b, cur, sizeof cur);
	} else {
		dev_wire_begin(b, DEV_MSG_PKT_SUB, 0, dev_client_id(s->c));
	}
	dev_wire_bytes(b, f, n);
	dev_wire_end(b);
	dev_client_send(s->c, b);
	g_byte_array_unref(b);
}

static void ps_up(void *user)
{
	dev_packet_sub *s = user;
	if (s->on_packet || s->on_seq)
		send_sub(s);
}

static void ps_msg(void *user, const dev_msg *m)
{
	dev_packet_sub *s = user;
	if (m->type == DEV_MSG_PKT_DATA && s->on_packet) {
		/* Packets may be binary: copy all len bytes (g_strndup would stop
		 * at the first NUL), then add the promised terminator. */
		char *t = g_malloc(m->u.pkt.len + 1);
		memcpy(t, m->u.pkt.data, m->u.pkt.len);
		t[m->u.pkt.len] = 0;
		s->on_packet(s->user, t, m->u.pkt.len, m->u.pkt.dropped);
		g_free(t);
	} else if (m->type == DEV_MSG_PKT_SEQDATA && s->on_seq) {
		char *t = g_malloc(m->u.pkt.len + 1);
		memcpy(t, m->u.pkt.data, m->u.pkt.len);
		t[m->u.pkt.len] = 0;
		/* moved before the callback: one that frees s is fine */
		s->boot = m->u.pkt.boot;
		s->next = m->u.pkt.seq + 1;
		s->on_seq(s->user, t, m->u.pkt.len, m->u.pkt.dropped, m->u.pkt.boot, m->u.pkt.seq);
		g_free(t);
	} else if (m->type == DEV_MSG_ERROR) {
		g_warning("packet device: %.*s", (int)m->u.error.text_len, m->u.error.text);
	}
}

dev_packet_sub *dev_packet_sub_new(const char *name, const void *filter, size_t flen, GMainContext *ctx,
				   dev_packet_fn on_packet, dev_state_fn state, void *user, GError **error)
{
	static const dev_client_ops ops = {.pattern = DEV_PATTERN_PACKET, .up = ps_up, .msg = ps_msg};
	if (flen > DEV_WIRE_MAX_PAYLOAD) {
		g_set_error(error, DEV_ERROR, EMSGSIZE, "device %s: filter too long", name);
		return NULL;
	}
	dev_packet_sub *s = g_new0(dev_packet_sub, 1);
	s->filter = g_bytes_new(filter, flen);
	s->on_packet = on_packet;
	s->user = user;
	s->c = dev_client_new(name, ctx, &ops, s, state, user, error);
	if (!s->c) {
		g_bytes_unref(s->filter);
		g_free(s);
		return NULL;
	}
	return s;
}

dev_packet_sub *dev_packet_sub_new_from(const char *name, const void *filter, size_t flen, uint64_t boot,
					uint64_t next, GMainContext *ctx, dev_packet_seq_fn on_packet,
					dev_state_fn state, void *user, GError **error)
{
	if (flen > DEV_WIRE_MAX_PAYLOAD - 16) {
		g_set_error(error, DEV_ERROR, EMSGSIZE, "device %s: filter too long", name);
		return NULL;
	}
	dev_packet_sub *s = dev_packet_sub_new(name, filter, flen, ctx, NULL, state, user, error);
	if (!s)
		return NULL;
	s->on_seq = on_packet;
	s->boot = boot;
	s->next = next;
	return s;
}

void dev_packet_sub_cursor(const dev_packet_sub *s, uint64_t *boot, uint64_t *next)
{
	*boot = s->boot;
	*next = s->next;
}

int dev_packet_sub_set_filter(dev_packet_sub *s, const void *filter, size_t flen)
{
	if (flen > DEV_WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	g_bytes_unref(s->filter);
	s->filter = g_bytes_new(filter, flen);
	if (dev_client_up(s->c) && (s->on_packet || s->on_seq))
		send_sub(s);
	return 0;
}

int dev_packet_sub_send(dev_packet_sub *s, const void *msg, size_t len, dev_reply_fn done, void *cb_user)
{
	if (len > DEV_WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (!dev_client_up(s->c))
		return -ENOTCONN;
	uint32_t id = dev_client_id(s->c);
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_PKT_SEND, 0, id);
	dev_wire_bytes(b, msg, len);
	dev_wire_end(b);
	int e = dev_client_request(s->c, b, id, done, cb_user);
	g_byte_array_unref(b);
	return e;
}

gboolean dev_packet_sub_connected(dev_packet_sub *s) { return dev_client_up(s->c); }

void dev_packet_sub_free(dev_packet_sub *s)
{
	if (!s)
		return;
	dev_client_free(s->c);
	g_bytes_unref(s->filter);
	g_free(s);
}
