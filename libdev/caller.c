/* caller.c — Command and Query devices, client half (see caller.h). */
#include "libdev/caller.h"

#include <errno.h>
#include <string.h>

#include "libdev/client.h"

struct dev_caller {
	dev_client *c;
	dev_pattern pattern;
};

dev_caller *dev_caller_new(const char *name, dev_pattern pattern, GMainContext *ctx, dev_state_fn state,
			   void *user, GError **error)
{
	static const dev_client_ops cmd_ops = {.pattern = DEV_PATTERN_COMMAND};
	static const dev_client_ops query_ops = {.pattern = DEV_PATTERN_QUERY};
	if (pattern != DEV_PATTERN_COMMAND && pattern != DEV_PATTERN_QUERY) {
		g_set_error(error, DEV_ERROR, EINVAL, "device %s: a caller is for command or query devices", name);
		return NULL;
	}
	dev_caller *k = g_new0(dev_caller, 1);
	k->pattern = pattern;
	k->c = dev_client_new(name, ctx, pattern == DEV_PATTERN_COMMAND ? &cmd_ops : &query_ops, k, state, user,
			      error);
	if (!k->c) {
		g_free(k);
		return NULL;
	}
	return k;
}

static int request(dev_caller *k, uint8_t type, const void *req, size_t len, dev_reply_fn done, void *cb_user)
{
	if (!dev_client_up(k->c))
		return -ENOTCONN;
	if (len > DEV_WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (type == DEV_MSG_CMD &&
	    (len > DEV_WIRE_MAX_TEXT || memchr(req, 0, len) || !g_utf8_validate(req, (gssize)len, NULL)))
		return len > DEV_WIRE_MAX_TEXT ? -EMSGSIZE : -EINVAL;
	uint32_t id = dev_client_id(k->c);
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, type, 0, id);
	dev_wire_bytes(b, req, len);
	dev_wire_end(b);
	int e = dev_client_request(k->c, b, id, done, cb_user);
	g_byte_array_unref(b);
	return e;
}

int dev_caller_call(dev_caller *k, const void *req, size_t len, dev_reply_fn done, void *cb_user)
{
	return request(k, k->pattern == DEV_PATTERN_COMMAND ? DEV_MSG_CMD : DEV_MSG_QUERY, req, len, done, cb_user);
}

int dev_caller_usage(dev_caller *k, dev_reply_fn done, void *cb_user)
{
	if (k->pattern != DEV_PATTERN_COMMAND)
		return -EOPNOTSUPP;
	return request(k, DEV_MSG_USAGE_GET, NULL, 0, done, cb_user);
}

gboolean dev_caller_connected(dev_caller *k) { return dev_client_up(k->c); }

void dev_caller_free(dev_caller *k)
{
	if (!k)
		return;
	dev_client_free(k->c);
	g_free(k);
}
