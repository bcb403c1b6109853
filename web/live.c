/* live.c — server-sent events with a bounded queue per client (live.h). */
#include "web/live.h"

#include <string.h>

#define KEEPALIVE_S 15

typedef struct {
	web_live *hub;
	SoupServerMessage *msg;
	int64_t spec_node;
	size_t queued; /* bytes appended, not yet written */
	gboolean lagging;
} client;

struct web_live {
	GList *clients; /* client * */
	size_t limit;
	guint64 dropped;
	guint keepalive;
	web_live_watch_fn watch;
	void *user;
};

static void append(client *c, const char *text, size_t n)
{
	SoupMessageBody *b = soup_server_message_get_response_body(c->msg);
	soup_message_body_append(b, SOUP_MEMORY_COPY, text, n);
	c->queued += n;
	soup_server_message_unpause(c->msg);
}

static void on_wrote(SoupServerMessage *msg, guint n, gpointer data)
{
	client *c = data;
	c->queued = n > c->queued ? 0 : c->queued - n;
	if (c->lagging && c->queued < c->hub->limit / 2) {
		c->lagging = FALSE;
		static const char lag[] = "event: lag\ndata: {}\n\n";
		append(c, lag, sizeof lag - 1);
	}
}

static void on_gone(SoupServerMessage *msg, gpointer data)
{
	client *c = data;
	web_live *l = c->hub;
	if (!g_list_find(l->clients, c))
		return;
	l->clients = g_list_remove(l->clients, c);
	g_signal_handlers_disconnect_by_data(msg, c);
	if (l->watch)
		l->watch(l->user, c->spec_node, FALSE);
	g_object_unref(msg);
	g_free(c);
}

static gboolean on_keepalive(gpointer data)
{
	web_live *l = data;
	for (GList *i = l->clients; i; i = i->next) {
		client *c = i->data;
		if (!c->lagging)
			append(c, ": keepalive\n\n", 13);
	}
	return G_SOURCE_CONTINUE;
}

web_live *web_live_new(size_t limit, web_live_watch_fn watch, void *user)
{
	web_live *l = g_new0(web_live, 1);
	l->limit = limit ? limit : 1 << 20;
	l->watch = watch;
	l->user = user;
	l->keepalive = g_timeout_add_seconds(KEEPALIVE_S, on_keepalive, l);
	return l;
}

void web_live_free(web_live *l)
{
	if (!l)
		return;
	while (l->clients) {
		client *c = l->clients->data;
		soup_message_body_complete(soup_server_message_get_response_body(c->msg));
		soup_server_message_unpause(c->msg);
		on_gone(c->msg, c);
	}
	g_source_remove(l->keepalive);
	g_free(l);
}

void web_live_add(web_live *l, SoupServerMessage *msg, int64_t spec_node, const char *hello)
{
	client *c = g_new0(client, 1);
	c->hub = l;
	c->msg = g_object_ref(msg);
	c->spec_node = spec_node;
	SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
	soup_message_headers_set_encoding(h, SOUP_ENCODING_CHUNKED);
	soup_message_headers_replace(h, "Content-Type", "text/event-stream");
	soup_message_headers_replace(h, "Cache-Control", "no-store");
	soup_message_headers_replace(h, "X-Accel-Buffering", "no");
	soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
	soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
	g_signal_connect(msg, "wrote-body-data", G_CALLBACK(on_wrote), c);
	g_signal_connect(msg, "finished", G_CALLBACK(on_gone), c);
	g_signal_connect(msg, "disconnected", G_CALLBACK(on_gone), c);
	l->clients = g_list_prepend(l->clients, c);
	append(c, "retry: 1000\n\n", 13);
	if (hello) {
		char *t = g_strdup_printf("event: hello\ndata: %s\n\n", hello);
		append(c, t, strlen(t));
		g_free(t);
	}
	if (l->watch)
		l->watch(l->user, spec_node, TRUE);
}

void web_live_send(web_live *l, const char *name, const char *json, int64_t spec_node)
{
	char *t = NULL;
	size_t n = 0;
	for (GList *i = l->clients; i; i = i->next) {
		client *c = i->data;
		if (spec_node >= 0 && c->spec_node != spec_node)
			continue;
		if (!t) {
			t = g_strdup_printf("event: %s\ndata: %s\n\n", name, json);
			n = strlen(t);
		}
		if (c->lagging || c->queued + n > l->limit) {
			c->lagging = TRUE;
			l->dropped++;
			continue;
		}
		append(c, t, n);
	}
	g_free(t);
}

guint web_live_clients(const web_live *l)
{
	return g_list_length(l->clients);
}

guint64 web_live_dropped(const web_live *l)
{
	return l->dropped;
}
