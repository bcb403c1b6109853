/* media.c — audio by global time and a call's aligned clips:
 * /api/audio, /api/call, /api/clip (docs/protocol.md "chorus-web").
 * Each audio request pauses its message and fetches from the node
 * asynchronously (audio.h); a client that goes away cancels its fetch. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "web/audio.h"
#include "web/http.h"
#include "web/server.h"

/* A call's clips: from CLIP_PRE_NS before its emission to CLIP_POST_NS after. */
#define CLIP_PRE_NS 200000000LL
#define CLIP_POST_NS 1000000000LL

typedef struct {
	web *w;
	SoupServerMessage *msg;
	web_audio *fetch;
	char *filename;
	gulong finished;
} pending;

static void pending_free(pending *p)
{
	p->w->fetching--;
	if (p->finished)
		g_signal_handler_disconnect(p->msg, p->finished);
	g_object_unref(p->msg);
	g_free(p->filename);
	g_free(p);
}

static void on_gone(SoupServerMessage *msg, gpointer data)
{
	pending *p = data;
	web_audio_cancel(p->fetch);
	pending_free(p);
}

static void on_audio(void *user, int err, const char *why, GBytes *wav, const web_audio_info *i)
{
	pending *p = user;
	SoupServerMessage *msg = p->msg;
	if (err) {
		guint st = err == -ETIMEDOUT                  ? SOUP_STATUS_GATEWAY_TIMEOUT
			   : err == -ERANGE || err == -EINVAL ? SOUP_STATUS_UNPROCESSABLE_ENTITY
							      : SOUP_STATUS_BAD_GATEWAY;
		web_reply_error(msg, st, NULL, "%s", why);
	} else {
		SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
		char v[64];
		g_snprintf(v, sizeof v, "%u", i->node);
		soup_message_headers_replace(h, "X-Chorus-Node", v);
		soup_message_headers_replace(h, "X-Chorus-T0-Global-Ns", *i->t0 ? i->t0 : "none");
		soup_message_headers_replace(h, "X-Chorus-T0-Se-Ns", *i->t0_se ? i->t0_se : "none");
		soup_message_headers_replace(h, "X-Chorus-Period-Ns", *i->period ? i->period : "none");
		g_snprintf(v, sizeof v, "%" G_GINT64_FORMAT, i->first_frame);
		soup_message_headers_replace(h, "X-Chorus-First-Frame", v);
		g_snprintf(v, sizeof v, "%" G_GINT64_FORMAT, i->gap_frames);
		soup_message_headers_replace(h, "X-Chorus-Gap-Frames", v);
		gsize n;
		const void *d = g_bytes_get_data(wav, &n);
		web_reply_bytes(msg, "audio/wav", d, n, p->filename);
	}
	soup_server_message_unpause(msg);
	pending_free(p);
}

static void start_fetch(web *w, SoupServerMessage *msg, uint32_t node, int64_t from, int64_t to, char *filename)
{
	if (w->fetching >= WEB_FETCHES_MAX) {
		w->busy++;
		g_free(filename);
		soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Retry-After", "1");
		web_reply_error(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, NULL, "busy: %d audio fetches in flight already; try again",
				WEB_FETCHES_MAX);
		return;
	}
	pending *p = g_new0(pending, 1);
	p->w = w;
	w->fetching++;
	p->msg = g_object_ref(msg);
	p->filename = filename;
	soup_server_message_pause(msg);
	p->finished = g_signal_connect(msg, "finished", G_CALLBACK(on_gone), p);
	p->fetch = web_audio_fetch(node, from, to, (int)(w->cfg.fetch_timeout_s * 1000), on_audio, p);
}

static void h_audio(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t node;
	int64_t from, to;
	if (!web_admit(w, msg, query) || web_param_node(w, msg, query, "node", &node) < 0)
		return;
	const char *miss = !web_param_str(query, "from") ? "from" : !web_param_str(query, "to") ? "to"
												: NULL;
	if (miss) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, miss, "%s: missing (global time, ns)", miss);
		return;
	}
	if (web_param_int(msg, query, "from", 1, (int64_t)1 << 62, 0, &from) < 0 ||
	    web_param_int(msg, query, "to", 1, (int64_t)1 << 62, 0, &to) < 0) {
		w->bad++;
		return;
	}
	if (to <= from || to - from > WEB_AUDIO_MAX_NS) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, "to",
				"to - from = %" G_GINT64_FORMAT " ns: the range must be 1 ns .. %" G_GINT64_FORMAT " ns", to - from,
				WEB_AUDIO_MAX_NS);
		return;
	}
	start_fetch(w, msg, node, from, to,
		    g_strdup_printf("node%u-%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT ".wav", node, from, to));
}

/* The call of parameter `key`, or NULL after replying 400/404. */
static JsonNode *param_call(web *w, SoupServerMessage *msg, GHashTable *query, const char *key)
{
	int64_t id;
	int r = web_param_int(msg, query, key, 1, INT64_MAX, 0, &id);
	if (r <= 0) {
		w->bad++;
		if (r == 0)
			web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, key, "%s: missing (a call's id from /api/calls)", key);
		return NULL;
	}
	JsonNode *c = web_field_call(w->field, (uint64_t)id);
	if (!c) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_NOT_FOUND, key, "%s=%" G_GINT64_FORMAT ": no such call (or no longer kept)", key, id);
	}
	return c;
}

/* The call's emission, global ns; FALSE when it has none. */
static gboolean call_time(JsonNode *c, int64_t *t)
{
	JsonNode *m = json_object_get_member(json_node_get_object(c), "t_global_ns");
	if (!m || JSON_NODE_TYPE(m) != JSON_NODE_VALUE)
		return FALSE;
	*t = json_node_get_int(m);
	return *t > CLIP_PRE_NS;
}

static void h_call(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	JsonNode *c;
	if (!web_admit(w, msg, query) || !(c = param_call(w, msg, query, "id")))
		return;
	JsonObject *o = json_object_new();
	json_object_set_member(o, "call", json_node_ref(c));
	int64_t t;
	JsonArray *clips = json_array_new();
	JsonArray *nodes = json_object_get_array_member(json_node_get_object(c), "nodes");
	gint64 id = json_object_get_int_member(json_node_get_object(c), "id");
	if (call_time(c, &t) && nodes) {
		json_object_set_int_member(o, "from_ns", t - CLIP_PRE_NS);
		json_object_set_int_member(o, "to_ns", t + CLIP_POST_NS);
		for (guint i = 0; i < json_array_get_length(nodes); i++) {
			gint64 n = json_array_get_int_element(nodes, i);
			JsonObject *e = json_object_new();
			json_object_set_int_member(e, "node", n);
			char *u = g_strdup_printf("/api/clip?call=%" G_GINT64_FORMAT "&node=%" G_GINT64_FORMAT, id, n);
			json_object_set_string_member(e, "url", u);
			g_free(u);
			json_array_add_object_element(clips, e);
		}
	}
	json_object_set_array_member(o, "clips", clips);
	json_node_unref(c);
	JsonNode *j = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j, o);
	web_reply_json(msg, SOUP_STATUS_OK, j);
}

static void h_clip(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	uint32_t node;
	JsonNode *c;
	if (!web_admit(w, msg, query) || !(c = param_call(w, msg, query, "call")))
		return;
	int64_t t;
	gint64 id = json_object_get_int_member(json_node_get_object(c), "id");
	gboolean timed = call_time(c, &t);
	json_node_unref(c);
	if (web_param_node(w, msg, query, "node", &node) < 0)
		return;
	if (!timed) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_UNPROCESSABLE_ENTITY, "call",
				"call=%" G_GINT64_FORMAT ": collab gave it no global time (t_global_ns)", id);
		return;
	}
	start_fetch(w, msg, node, t - CLIP_PRE_NS, t + CLIP_POST_NS,
		    g_strdup_printf("call%" G_GINT64_FORMAT "-node%u.wav", id, node));
}

void web_media_add(web *w)
{
	soup_server_add_handler(w->soup, "/api/audio", h_audio, w, NULL);
	soup_server_add_handler(w->soup, "/api/call", h_call, w, NULL);
	soup_server_add_handler(w->soup, "/api/clip", h_clip, w, NULL);
}
