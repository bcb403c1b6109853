/* command.c — Command device, server half (see command.h). */
#include "libdev/command.h"

#include <errno.h>

#include "libdev/server.h"

struct dev_command {
	dev_server srv;
	dev_command_fn run;
	dev_usage_fn usage;
	void *user;
};

static void reply(dev_peer *p, uint8_t type, uint32_t id, const int32_t *status, const GString *text)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, type, 0, id);
	if (status)
		dev_wire_u32(b, (uint32_t)*status);
	/* a message over the limit is cut, not dropped: the status matters more */
	size_t n = MIN(text->len, (size_t)DEV_WIRE_MAX_PAYLOAD - 4);
	dev_wire_bytes(b, text->str, n);
	dev_wire_end(b);
	dev_peer_queue(p, b);
	g_byte_array_unref(b);
}

static void cmd_msg(dev_server *s, dev_peer *p, const dev_msg *m)
{
	dev_command *d = s->owner;
	GString *out = g_string_new(NULL);
	if (m->type == DEV_MSG_CMD) {
		char why[DEV_WHY_MAX] = "";
		int e = dev_server_check_write(s, p, why, sizeof why);
		if (e < 0) {
			dev_peer_error(p, m->id, m->type, -e, "%s", why);
		} else {
			char *cmd = g_strndup((const char *)m->payload, m->len);
			int32_t st = d->run(d->user, &p->creds, cmd, out);
			g_free(cmd);
			reply(p, DEV_MSG_CMD_REPLY, m->id, &st, out);
		}
	} else if (m->type == DEV_MSG_USAGE_GET) {
		if (d->usage)
			d->usage(d->user, out);
		else
			g_string_append_printf(out, "%s: no usage text\n", s->name);
		reply(p, DEV_MSG_USAGE, m->id, NULL, out);
	} else {
		dev_peer_error(p, m->id, m->type, EPROTO, "device %s is a command device: %s not accepted",
			       s->name, dev_wire_type_name(m->type));
	}
	g_string_free(out, TRUE);
}

static const dev_server_ops command_ops = {
	.pattern = DEV_PATTERN_COMMAND,
	.msg = cmd_msg,
};

dev_command *dev_command_new(const char *name, const dev_options *opt, GMainContext *ctx,
			     dev_command_fn run, dev_usage_fn usage, void *user, GError **error)
{
	if (!run)
		return dev_set_error(error, EINVAL, "device %s: a command callback is required", name);
	dev_command *d = g_new0(dev_command, 1);
	if (dev_server_init(&d->srv, name, opt, ctx, &command_ops, d, error) < 0) {
		g_free(d);
		return NULL;
	}
	d->run = run;
	d->usage = usage;
	d->user = user;
	return d;
}

void dev_command_free(dev_command *d)
{
	if (!d)
		return;
	dev_server_fini(&d->srv);
	g_free(d);
}
