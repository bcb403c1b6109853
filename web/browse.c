/* browse.c — the device browser: /api/devices (what a node's proxy
 * exports, with each device's pattern) and /api/device (one read of a
 * status device's text, as chorus-cat prints it).  libdev's blocking
 * helpers run in a GTask thread each, so the main loop never waits for a
 * node; the message is paused meanwhile. */
#include <errno.h>
#include <string.h>

#include "libdev/dev.h"
#include "web/http.h"
#include "web/server.h"

typedef struct {
	SoupServerMessage *msg;
	uint32_t node;
	char *name; /* /api/device: the device; NULL: the list */
	int timeout_ms;
	int err;
	char why[512];
	JsonNode *reply;
	gboolean gone; /* the client went away: nothing to answer */
	gulong finished;
} job;

static void job_free(gpointer data)
{
	job *j = data;
	g_signal_handler_disconnect(j->msg, j->finished);
	g_object_unref(j->msg);
	g_free(j->name);
	if (j->reply)
		json_node_unref(j->reply);
	g_free(j);
}

static void list_devices(job *j)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	int n = dev_remote_list(j->node, j->timeout_ms, names, j->why, sizeof j->why);
	if (n < 0) {
		j->err = n;
		g_ptr_array_unref(names);
		return;
	}
	JsonArray *a = json_array_new();
	for (guint i = 0; i < names->len; i++) {
		char *r = g_strdup_printf("node%u:%s", j->node, (char *)names->pdata[i]);
		GError *err = NULL;
		dev_link *l = dev_link_open(r, j->timeout_ms, &err);
		JsonObject *o = json_object_new();
		json_object_set_string_member(o, "name", names->pdata[i]);
		if (l)
			json_object_set_string_member(o, "pattern", dev_pattern_name(dev_link_pattern(l)));
		else
			json_object_set_string_member(o, "error", err->message);
		json_array_add_object_element(a, o);
		dev_link_close(l);
		g_clear_error(&err);
		g_free(r);
	}
	g_ptr_array_unref(names);
	JsonObject *o = json_object_new();
	json_object_set_int_member(o, "node", j->node);
	json_object_set_array_member(o, "devices", a);
	j->reply = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j->reply, o);
}

static void read_device(job *j)
{
	char *r = g_strdup_printf("node%u:%s", j->node, j->name);
	GByteArray *out = g_byte_array_new();
	int e = dev_status_read_sync(r, FALSE, out, j->timeout_ms);
	if (e < 0) {
		j->err = e;
		g_snprintf(j->why, sizeof j->why, "%s: %.*s", r, (int)out->len, out->data);
		if (e == -EPROTOTYPE && !out->len)
			g_snprintf(j->why, sizeof j->why, "%s: not a status device (chorus-cat reads the others)", r);
	} else {
		JsonObject *o = json_object_new();
		json_object_set_int_member(o, "node", j->node);
		json_object_set_string_member(o, "name", j->name);
		char *t = g_utf8_make_valid((const char *)out->data, out->len);
		json_object_set_string_member(o, "text", t);
		g_free(t);
		j->reply = json_node_new(JSON_NODE_OBJECT);
		json_node_take_object(j->reply, o);
	}
	g_byte_array_unref(out);
	g_free(r);
}

static void run(GTask *t, gpointer src, gpointer data, GCancellable *c)
{
	job *j = data;
	if (j->name)
		read_device(j);
	else
		list_devices(j);
	g_task_return_boolean(t, TRUE);
}

static void done(GObject *src, GAsyncResult *res, gpointer data)
{
	job *j = g_task_get_task_data(G_TASK(res));
	if (j->gone)
		return;
	if (j->err) {
		guint st = j->err == -ENOENT       ? SOUP_STATUS_NOT_FOUND
			   : j->err == -EPROTOTYPE ? SOUP_STATUS_UNPROCESSABLE_ENTITY
			   : j->err == -ETIMEDOUT  ? SOUP_STATUS_GATEWAY_TIMEOUT
			   : j->err == -EPERM      ? SOUP_STATUS_FORBIDDEN
						   : SOUP_STATUS_BAD_GATEWAY;
		web_reply_error(j->msg, st, j->name ? "name" : "node", "%s", j->why);
	} else {
		web_reply_json(j->msg, SOUP_STATUS_OK, j->reply);
		j->reply = NULL;
	}
	soup_server_message_unpause(j->msg);
}

static void on_finished(SoupServerMessage *msg, gpointer data)
{
	((job *)data)->gone = TRUE;
}

static void start(web *w, SoupServerMessage *msg, uint32_t node, const char *name)
{
	job *j = g_new0(job, 1);
	j->msg = g_object_ref(msg);
	j->node = node;
	j->name = g_strdup(name);
	j->timeout_ms = (int)(w->cfg.fetch_timeout_s * 1000);
	soup_server_message_pause(msg);
	j->finished = g_signal_connect(msg, "finished", G_CALLBACK(on_finished), j);
	GTask *t = g_task_new(NULL, NULL, done, NULL);
	g_task_set_task_data(t, j, job_free);
	g_task_run_in_thread(t, run);
	g_object_unref(t);
}

static void h_devices(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t node;
	if (web_admit(w, msg, query) && web_param_node(w, msg, query, "node", &node) > 0)
		start(w, msg, node, NULL);
}

static void h_device(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t node;
	if (!web_admit(w, msg, query) || web_param_node(w, msg, query, "node", &node) < 0)
		return;
	const char *name = web_param_str(query, "name"), *why = NULL;
	if (!name || dev_name_check(name, &why) < 0 || strlen(name) >= DEV_PATH_MAX) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "name", "name%s%.60s%s: %s", name ? "=\"" : "", name ? name : "",
				name ? "\"" : "", !name ? "missing (a device name, e.g. sync/rbs)" : why ? why
													 : "too long");
		return;
	}
	start(w, msg, node, name);
}

void web_browse_add(web *w)
{
	soup_server_add_handler(w->soup, "/api/devices", h_devices, w, NULL);
	soup_server_add_handler(w->soup, "/api/device", h_device, w, NULL);
}
