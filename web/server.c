/* server.c — what every handler shares: the token check, the node
 * parameter, the spectrogram streams and their viewers (server.h). */
#include "web/server.h"

#include "web/http.h"

typedef struct {
	web *w;
	uint32_t node;
	web_spec *spec;
	guint viewers;
	guint stop; /* timer: stop the stream, nobody watches */
} spec_slot;

gboolean web_authorized(web *w, SoupServerMessage *msg, GHashTable *query)
{
	const char *where = NULL;
	w->requests++;
	if (web_auth_ok(msg, query, w->keyed ? w->token : NULL, &where))
		return TRUE;
	w->refused++;
	web_auth_refuse(msg, where);
	return FALSE;
}

gboolean web_admit(web *w, SoupServerMessage *msg, GHashTable *query)
{
	return web_authorized(w, msg, query) && web_require_get(msg);
}

int web_param_node(web *w, SoupServerMessage *msg, GHashTable *query, const char *key, uint32_t *id)
{
	int64_t n;
	int r = web_param_int(msg, query, key, 0, 4294967294LL, -1, &n);
	if (r < 0) {
		w->bad++;
		return -1;
	}
	if (r == 0) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, key, "%s: missing (a node number of the nodes file)", key);
		return -1;
	}
	if (!web_field_has(w->field, (uint32_t)n)) {
		w->bad++;
		web_reply_error(msg, SOUP_STATUS_NOT_FOUND, key, "%s=%" G_GINT64_FORMAT ": no such node in the nodes file %s", key,
				n, w->cfg.nodes);
		return -1;
	}
	*id = (uint32_t)n;
	return 1;
}

static void on_columns(void *user, uint32_t node, JsonNode *batch)
{
	web *w = user;
	char *t = web_json_text(batch);
	web_live_send(w->live, "spec", t, node);
	g_free(t);
}

static void slot_free(gpointer data)
{
	spec_slot *s = data;
	if (s->stop)
		g_source_remove(s->stop);
	web_spec_free(s->spec);
	g_free(s);
}

web_spec *web_spec_want(web *w, uint32_t node)
{
	if (!w->specs)
		w->specs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, slot_free);
	spec_slot *s = g_hash_table_lookup(w->specs, GUINT_TO_POINTER(node));
	if (!s) {
		s = g_new0(spec_slot, 1);
		s->w = w;
		s->node = node;
		s->spec = web_spec_new(node, on_columns, w);
		g_hash_table_insert(w->specs, GUINT_TO_POINTER(node), s);
	}
	if (s->stop) {
		g_source_remove(s->stop);
		s->stop = 0;
	}
	s->viewers++;
	return s->spec;
}

static gboolean on_stop(gpointer data)
{
	spec_slot *s = data;
	s->stop = 0;
	g_hash_table_remove(s->w->specs, GUINT_TO_POINTER(s->node));
	return G_SOURCE_REMOVE;
}

void web_spec_release(web *w, uint32_t node)
{
	spec_slot *s = w->specs ? g_hash_table_lookup(w->specs, GUINT_TO_POINTER(node)) : NULL;
	if (!s || !s->viewers)
		return;
	if (--s->viewers == 0 && !s->stop)
		s->stop = g_timeout_add((guint)(w->cfg.spec_linger_s * 1000), on_stop, s);
}

void web_handlers_add(web *w)
{
	web_api_add(w);
	web_media_add(w);
	web_browse_add(w);
	web_assets_add(w);
}
