/* status_reader.c — Status device, client half (see status_reader.h). */
#include "libdev/status_reader.h"

#include <errno.h>
#include <string.h>

#include "libdev/client.h"

struct dev_status_reader {
	dev_client *c;
	gboolean binary;
	dev_status_update_fn update;
	void *user;
};

/* (Re)subscribe after every connect: the service sends the current state. */
static void sr_up(void *user)
{
	dev_status_reader *r = user;
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_STATUS_SUB, r->binary ? DEV_F_BINARY : 0, dev_client_id(r->c));
	dev_wire_end(b);
	dev_client_send(r->c, b);
	g_byte_array_unref(b);
}

static void sr_msg(void *user, const dev_msg *m)
{
	dev_status_reader *r = user;
	if (m->type == DEV_MSG_STATUS_DATA) {
		/* Binary states hold NULs: copy all of it, then add the NUL. */
		char *t = g_malloc(m->len + 1);
		memcpy(t, m->payload, m->len);
		t[m->len] = 0;
		r->update(r->user, 0, t, m->len);
		g_free(t);
	} else if (m->type == DEV_MSG_ERROR) {
		char *t = g_strndup(m->u.error.text, m->u.error.text_len);
		r->update(r->user, -m->u.error.err, t, m->u.error.text_len);
		g_free(t);
	}
}

dev_status_reader *dev_status_reader_new(const char *name, gboolean binary, GMainContext *ctx,
					 dev_status_update_fn update, dev_state_fn state, void *user,
					 GError **error)
{
	static const dev_client_ops ops = {.pattern = DEV_PATTERN_STATUS, .up = sr_up, .msg = sr_msg};
	dev_status_reader *r = g_new0(dev_status_reader, 1);
	r->binary = binary;
	r->update = update;
	r->user = user;
	r->c = dev_client_new(name, ctx, &ops, r, state, user, error);
	if (!r->c) {
		g_free(r);
		return NULL;
	}
	return r;
}

gboolean dev_status_reader_connected(dev_status_reader *r) { return dev_client_up(r->c); }

void dev_status_reader_free(dev_status_reader *r)
{
	if (!r)
		return;
	dev_client_free(r->c);
	g_free(r);
}
