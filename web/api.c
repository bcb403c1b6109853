/* api.c — the field's state as JSON and the live stream: /api/info,
 * /api/nodes, /api/node, /api/calls, /api/detections, /api/truth,
 * /api/spectrogram, /api/events (docs/protocol.md "chorus-web"). */
#include <errno.h>
#include <string.h>

#include "web/http.h"
#include "web/server.h"

#define NS_MAX ((int64_t)1 << 62)

static void h_info(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	if (!web_admit(w, msg, query))
		return;
	guint64 calls, dets, bad;
	web_field_counts(w->field, &calls, &dets, &bad);
	JsonObject *o = json_object_new();
	json_object_set_string_member(o, "service", "chorus-web");
	json_object_set_int_member(o, "version", 1);
	json_object_set_int_member(o, "nodes", w->nodes->nodes->len);
	json_object_set_int_member(o, "clients", web_live_clients(w->live));
	json_object_set_int_member(o, "events_dropped", (gint64)web_live_dropped(w->live));
	json_object_set_int_member(o, "calls", (gint64)calls);
	json_object_set_int_member(o, "detections", (gint64)dets);
	json_object_set_int_member(o, "malformed_events", (gint64)bad);
	json_object_set_int_member(o, "requests", (gint64)w->requests);
	json_object_set_int_member(o, "refused", (gint64)w->refused);
	json_object_set_int_member(o, "bad_requests", (gint64)w->bad);
	json_object_set_int_member(o, "busy", (gint64)w->busy);
	json_object_set_boolean_member(o, "truth", *w->cfg.truth != 0);
	json_object_set_boolean_member(o, "authenticated", w->keyed);
	json_object_set_int_member(o, "now_ms", g_get_monotonic_time() / 1000);
	JsonNode *j = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j, o);
	web_reply_json(msg, SOUP_STATUS_OK, j);
}

static void h_nodes(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	if (web_admit(w, msg, query))
		web_reply_json(msg, SOUP_STATUS_OK, web_field_nodes_json(w->field));
}

static void h_node(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t id;
	if (web_admit(w, msg, query) && web_param_node(w, msg, query, "id", &id) > 0)
		web_reply_json(msg, SOUP_STATUS_OK, web_field_node_json(w->field, id, TRUE));
}

static void h_calls(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	int64_t since;
	if (!web_admit(w, msg, query))
		return;
	if (web_param_int(msg, query, "since", 0, INT64_MAX, 0, &since) < 0) {
		w->bad++;
		return;
	}
	web_reply_json(msg, SOUP_STATUS_OK, web_field_calls_json(w->field, (uint64_t)since));
}

/* from/to (global ns) of a request: both optional here (whole history). */
static gboolean time_range(web *w, SoupServerMessage *msg, GHashTable *query, int64_t *from, int64_t *to)
{
	if (web_param_int(msg, query, "from", 0, NS_MAX, 0, from) < 0 ||
	    web_param_int(msg, query, "to", 0, NS_MAX, NS_MAX, to) < 0) {
		w->bad++;
		return FALSE;
	}
	if (*to <= *from) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "to",
				"to=%" G_GINT64_FORMAT " is not after from=%" G_GINT64_FORMAT " (global ns)", *to, *from);
		return FALSE;
	}
	return TRUE;
}

static void h_dets(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	int64_t from, to;
	uint32_t id = 0;
	gboolean any = !web_param_str(query, "node");
	if (!web_admit(w, msg, query) || (!any && web_param_node(w, msg, query, "node", &id) < 0) ||
	    !time_range(w, msg, query, &from, &to))
		return;
	web_reply_json(msg, SOUP_STATUS_OK, web_field_dets_json(w->field, any ? -1 : (int64_t)id, from, to));
}

static void h_truth(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	if (!web_admit(w, msg, query))
		return;
	if (!*w->cfg.truth) {
		web_reply_error(msg, SOUP_STATUS_NOT_FOUND, NULL,
				"no truth: this is not a simulation (chorus-sim --web gives chorus-web its sources)");
		return;
	}
	JsonParser *p = json_parser_new();
	GError *err = NULL;
	if (!json_parser_load_from_file(p, w->cfg.truth, &err)) {
		web_reply_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, NULL, "truth %s: %s", w->cfg.truth, err->message);
		g_error_free(err);
	} else {
		web_reply_json(msg, SOUP_STATUS_OK, json_node_copy(json_parser_get_root(p)));
	}
	g_object_unref(p);
}

static void h_spec(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t id;
	if (!web_admit(w, msg, query) || web_param_node(w, msg, query, "node", &id) < 0)
		return;
	/* a look keeps the stream going for spec_linger_s */
	web_spec *sp = web_spec_want(w, id);
	web_reply_json(msg, SOUP_STATUS_OK, web_spec_json(sp, WEB_SPEC_KEEP));
	web_spec_release(w, id);
}

static void on_watch(void *user, int64_t spec_node, gboolean joined)
{
	web *w = user;
	if (spec_node < 0)
		return;
	if (joined)
		web_spec_want(w, (uint32_t)spec_node);
	else
		web_spec_release(w, (uint32_t)spec_node);
}

static void h_events(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t id = 0;
	gboolean spec = web_param_str(query, "spec") != NULL;
	if (!web_admit(w, msg, query) || (spec && web_param_node(w, msg, query, "spec", &id) < 0))
		return;
	JsonObject *o = json_object_new();
	json_object_set_int_member(o, "now_ms", g_get_monotonic_time() / 1000);
	json_object_set_member(o, "nodes", web_field_nodes_json(w->field));
	if (spec)
		json_object_set_int_member(o, "spec", id);
	JsonNode *j = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j, o);
	char *hello = web_json_text(j);
	json_node_unref(j);
	web_live_add(w->live, msg, spec ? (int64_t)id : -1, hello);
	g_free(hello);
}

static void on_field(void *user, const char *event, JsonNode *data)
{
	web *w = user;
	char *t = web_json_text(data);
	web_live_send(w->live, event, t, -1);
	g_free(t);
}

void web_api_add(web *w)
{
	w->live = web_live_new((size_t)w->cfg.queue_bytes, on_watch, w);
	w->field = web_field_new(w->nodes, on_field, w);
	soup_server_add_handler(w->soup, "/api/info", h_info, w, NULL);
	soup_server_add_handler(w->soup, "/api/nodes", h_nodes, w, NULL);
	soup_server_add_handler(w->soup, "/api/node", h_node, w, NULL);
	soup_server_add_handler(w->soup, "/api/calls", h_calls, w, NULL);
	soup_server_add_handler(w->soup, "/api/detections", h_dets, w, NULL);
	soup_server_add_handler(w->soup, "/api/truth", h_truth, w, NULL);
	soup_server_add_handler(w->soup, "/api/spectrogram", h_spec, w, NULL);
	soup_server_add_handler(w->soup, "/api/events", h_events, w, NULL);
}
