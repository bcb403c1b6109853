/* sensor_reader.c — Sensor device, client half (see sensor_reader.h). */
#include "libdev/sensor_reader.h"

#include <errno.h>

#include "libdev/client.h"

struct dev_sensor_reader {
	dev_client *c;
	dev_sensor_reader_ops ops;
	void *user;
	int64_t first, last; /* as asked */
	uint32_t flags;
	GBytes *params;
	gboolean opened;       /* an OPENED was ever received */
	gboolean done;         /* END or a fatal ERROR: do not reopen */
	int64_t next;          /* next index not received */
	int64_t last_resolved; /* the service's resolved end */
	uint32_t item_size;
	uint32_t open_id;
};

static void sd_up(void *user)
{
	dev_sensor_reader *r = user;
	if (r->done)
		return;
	int64_t first = r->first, last = r->last;
	uint32_t flags = r->flags;
	if (r->opened) { /* resume where we stopped */
		first = r->next;
		last = r->last_resolved;
		flags = DEV_SENSOR_RESUME;
	}
	r->open_id = dev_client_id(r->c);
	gsize n;
	const void *p = g_bytes_get_data(r->params, &n);
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_SENS_OPEN, 0, r->open_id);
	dev_wire_i64(b, first);
	dev_wire_i64(b, last);
	dev_wire_u32(b, flags);
	dev_wire_u32(b, 0);
	dev_wire_bytes(b, p, n);
	dev_wire_end(b);
	dev_client_send(r->c, b);
	g_byte_array_unref(b);
}

static void sd_msg(void *user, const dev_msg *m)
{
	dev_sensor_reader *r = user;
	if (r->done || m->id != r->open_id)
		return; /* stale: from an earlier connection's stream */
	switch (m->type) {
	case DEV_MSG_SENS_OPENED: {
		gboolean first_time = !r->opened;
		r->item_size = m->u.opened.item_size;
		r->last_resolved = m->u.opened.last;
		if (first_time || m->u.opened.first > r->next)
			r->next = m->u.opened.first;
		r->opened = TRUE;
		if (first_time && r->ops.opened)
			r->ops.opened(r->user, m->u.opened.first, m->u.opened.last, m->u.opened.item_size,
				      m->u.opened.reply, m->u.opened.reply_len);
		break;
	}
	case DEV_MSG_SENS_DATA:
		if (!r->opened || (uint64_t)m->u.data.count * r->item_size != m->u.data.bytes) {
			g_warning("sensor device: chunk of %u bytes does not hold %u items of %u bytes",
				  m->u.data.bytes, m->u.data.count, r->item_size);
			return;
		}
		r->next = m->u.data.first + m->u.data.count;
		r->ops.data(r->user, m->u.data.first, m->u.data.items, m->u.data.count);
		break;
	case DEV_MSG_SENS_GAP:
		r->next = m->u.gap.to;
		if (r->ops.gap)
			r->ops.gap(r->user, m->u.gap.from, m->u.gap.to);
		break;
	case DEV_MSG_SENS_END:
		r->done = TRUE;
		r->next = m->u.end.next;
		if (r->ops.end)
			r->ops.end(r->user, m->u.end.next);
		break;
	case DEV_MSG_ERROR: {
		r->done = TRUE;
		char *t = g_strndup(m->u.error.text, m->u.error.text_len);
		if (r->ops.error)
			r->ops.error(r->user, -m->u.error.err, t);
		g_free(t);
		break;
	}
	default:
		break;
	}
}

dev_sensor_reader *dev_sensor_reader_new(const char *name, int64_t first, int64_t last, uint32_t flags,
					 const void *params, size_t params_len, GMainContext *ctx,
					 const dev_sensor_reader_ops *ops, void *user, GError **error)
{
	static const dev_client_ops cops = {.pattern = DEV_PATTERN_SENSOR, .up = sd_up, .msg = sd_msg};
	if (params_len > DEV_WIRE_MAX_PAYLOAD - 24) {
		g_set_error(error, DEV_ERROR, EMSGSIZE, "device %s: parameter blob too long", name);
		return NULL;
	}
	if (!ops || !ops->data) {
		g_set_error(error, DEV_ERROR, EINVAL, "device %s: a data callback is required", name);
		return NULL;
	}
	dev_sensor_reader *r = g_new0(dev_sensor_reader, 1);
	r->ops = *ops;
	r->user = user;
	r->first = first;
	r->last = last;
	r->flags = flags & (DEV_SENSOR_FROM_NEXT | DEV_SENSOR_RESUME);
	r->params = g_bytes_new(params, params_len);
	r->next = INT64_MIN;
	r->c = dev_client_new(name, ctx, &cops, r, ops->state, user, error);
	if (!r->c) {
		g_bytes_unref(r->params);
		g_free(r);
		return NULL;
	}
	return r;
}

int64_t dev_sensor_reader_next(dev_sensor_reader *r) { return r->opened ? r->next : INT64_MIN; }

gboolean dev_sensor_reader_connected(dev_sensor_reader *r) { return dev_client_up(r->c); }

void dev_sensor_reader_free(dev_sensor_reader *r)
{
	if (!r)
		return;
	dev_client_free(r->c); /* closing the socket ends the stream on the service side */
	g_bytes_unref(r->params);
	g_free(r);
}
