/* client.c — ticker subscription and conversions (see client.h). */
#include "libsync/client.h"

#include <errno.h>
#include <stdio.h>

#include "libdev/status_reader.h"
#include "libsync/now.h"
#include "libsync/ticker_wire.h"

struct sync_client {
	GMainContext *ctx;
	dev_status_reader *reader;
	sync_graph *graph;
	sync_client_fn fn;
	void *user;
	gboolean ready;
	uint32_t node, root;
	guint64 tickers;  /* tickers received */
	guint64 rejected; /* tickers refused as malformed */
};

static void on_update(void *user, int err, const char *data, size_t len)
{
	sync_client *c = user;
	sync_ticker_head h;
	size_t skipped = 0;
	char why[200];
	if (err < 0) {
		g_warning("sync/ticker: %s", data);
		return;
	}
	if (sync_ticker_to_graph((const uint8_t *)data, len, c->graph, &h, &skipped, why, sizeof why) < 0) {
		c->rejected++;
		g_warning("sync/ticker refused: %s", why);
		return;
	}
	if (skipped)
		g_warning("sync/ticker: %zu entries skipped, last: %s", skipped, why);
	c->node = h.node;
	c->root = h.root;
	c->ready = TRUE;
	c->tickers++;
	if (c->fn)
		c->fn(c->user, TRUE);
}

static void on_state(void *user, gboolean connected, int err)
{
	sync_client *c = user;
	if (!connected)
		g_debug("sync/ticker: disconnected (%s); converting with the last conversions", g_strerror(-err));
	if (c->fn)
		c->fn(c->user, connected);
}

sync_client *sync_client_new(GMainContext *ctx, const sync_graph_params *p, sync_client_fn fn, void *user,
			     GError **err)
{
	sync_graph_params dp;
	sync_client *c = g_new0(sync_client, 1);
	if (!p) {
		sync_graph_params_default(&dp);
		p = &dp;
	}
	c->ctx = ctx ? g_main_context_ref(ctx) : g_main_context_ref(g_main_context_default());
	c->graph = sync_graph_new(p);
	c->fn = fn;
	c->user = user;
	c->root = SYNC_TICKER_NO_ROOT;
	c->reader = dev_status_reader_new("sync/ticker", TRUE, c->ctx, on_update, on_state, c, err);
	if (!c->reader) {
		sync_client_free(c);
		return NULL;
	}
	return c;
}

void sync_client_free(sync_client *c)
{
	if (!c)
		return;
	dev_status_reader_free(c->reader);
	sync_graph_free(c->graph);
	g_main_context_unref(c->ctx);
	g_free(c);
}

int sync_client_convert_at(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now_ns,
			   sync_graph_result *out, char *why, size_t len)
{
	if (!c->ready && !sync_clock_equal(from, to)) {
		snprintf(why, len, "no conversions yet: syncd's sync/ticker has not answered");
		return -EAGAIN;
	}
	return sync_graph_convert(c->graph, from, to, x, now_ns, out, why, len);
}

int sync_client_convert(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x,
			sync_graph_result *out, char *why, size_t len)
{
	return sync_client_convert_at(c, from, to, x, sync_now(SYNC_KIND_CPU), out, why, len);
}

gboolean sync_client_ready(const sync_client *c)
{
	return c->ready;
}

gboolean sync_client_connected(const sync_client *c)
{
	return dev_status_reader_connected(c->reader);
}

static gboolean on_timeout(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

int sync_client_wait(sync_client *c, int timeout_ms)
{
	gboolean expired = FALSE;
	GSource *t = g_timeout_source_new((guint)timeout_ms);
	g_source_set_callback(t, on_timeout, &expired, NULL);
	g_source_attach(t, c->ctx);
	while (!c->ready && !expired)
		g_main_context_iteration(c->ctx, TRUE);
	g_source_destroy(t);
	g_source_unref(t);
	return c->ready ? 0 : -ETIMEDOUT;
}

void sync_client_info(const sync_client *c, uint32_t *node, uint32_t *root)
{
	*node = c->node;
	*root = c->root;
}

sync_graph *sync_client_graph(sync_client *c)
{
	return c->graph;
}
