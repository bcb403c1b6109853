/* client.c — ticker subscription and conversions (see client.h). */
#include "libsync/client.h"

#include <errno.h>
#include <stdio.h>

#include "libdev/caller.h"
#include "libdev/status_reader.h"
#include "libsync/now.h"
#include "libsync/ticker_asm.h"
#include "libsync/ticker_wire.h"

struct sync_client {
	GMainContext *ctx;
	dev_status_reader *reader;
	dev_caller *parts;    /* sync/ticker-part, made when a ticker first needs it */
	sync_ticker_asm *tas; /* the snapshot being put together */
	gboolean asking;      /* a part request is in flight */
	int restarts;         /* snapshots found dropped since the last complete one */
	sync_graph *graph;
	sync_client_fn fn;
	void *user;
	gboolean ready;
	uint32_t node, root;
	guint64 tickers;  /* tickers received */
	guint64 rejected; /* tickers refused as malformed */
};

#define MAX_RESTARTS 4

static void ask(sync_client *c, uint64_t epoch, size_t first);
static void on_part_state(void *user, gboolean connected, int err);

/* A whole snapshot is in: it becomes the graph. */
static void load(sync_client *c)
{
	size_t n, skipped = 0;
	char why[200] = "";
	const sync_ticker_entry *e = sync_ticker_asm_entries(c->tas, &n);
	const char *bad;
	size_t malformed = sync_ticker_asm_skipped(c->tas, &bad);
	sync_ticker_entries_to_graph(e, n, c->graph, &skipped, why, sizeof why);
	if (malformed)
		g_warning("sync/ticker: %zu entries skipped as malformed, last: %s", malformed, bad);
	if (skipped)
		g_warning("sync/ticker: %zu entries skipped, last: %s", skipped, why);
	const sync_ticker_head *h = sync_ticker_asm_head(c->tas);
	c->node = h->node;
	c->root = h->root;
	c->ready = TRUE;
	c->restarts = 0;
	c->tickers++;
	if (c->fn)
		c->fn(c->user, TRUE);
}

/* Take one part (from either device); ask for the next when more are due. */
static void take(sync_client *c, const char *dev, const char *data, size_t len)
{
	char why[200];
	int rc = sync_ticker_asm_add(c->tas, (const uint8_t *)data, len, why, sizeof why);
	if (rc == 1) {
		load(c);
	} else if (rc == 0 || rc == -ESTALE) {
		/* More to come, or a late part of an older snapshot: carry on with
		 * the one being assembled. */
		if (!sync_ticker_asm_complete(c->tas) && sync_ticker_asm_epoch(c->tas))
			ask(c, sync_ticker_asm_epoch(c->tas), sync_ticker_asm_next(c->tas));
	} else {
		c->rejected++;
		g_warning("%s refused: %s", dev, why);
	}
}

static void on_part(void *user, int err, int status, const char *data, size_t len)
{
	sync_client *c = user;
	c->asking = FALSE;
	if (err < 0) {
		g_debug("%s: %s; waiting for the next ticker", SYNC_TICKER_PART_DEVICE, data ? data : g_strerror(-err));
	} else if (status == -ESTALE) {
		/* syncd no longer holds the snapshot: read its newest instead. */
		if (++c->restarts <= MAX_RESTARTS)
			ask(c, 0, 0);
		else
			g_warning("%s: the ticker changed %d times while it was read; waiting for the next", SYNC_TICKER_PART_DEVICE,
				  c->restarts);
	} else if (status != 0) {
		c->rejected++;
		g_warning("%s refused our request: %.*s", SYNC_TICKER_PART_DEVICE, (int)len, data);
	} else {
		take(c, SYNC_TICKER_PART_DEVICE, data, len);
	}
}

/* Request the part of `epoch` from entry `first`, unless one is in flight
 * (its answer continues the assembly) or the device is not connected yet
 * (on_part_state continues then). */
static void ask(sync_client *c, uint64_t epoch, size_t first)
{
	if (c->asking)
		return;
	if (!c->parts) {
		GError *err = NULL;
		c->parts = dev_caller_new(SYNC_TICKER_PART_DEVICE, DEV_PATTERN_QUERY, c->ctx, on_part_state, c, &err);
		if (!c->parts) {
			g_warning("%s: %s", SYNC_TICKER_PART_DEVICE, err->message);
			g_error_free(err);
		}
		return;
	}
	uint8_t req[SYNC_TICKER_REQ];
	sync_ticker_req r = {epoch, first};
	sync_ticker_pack_req(&r, req);
	if (dev_caller_call(c->parts, req, sizeof req, on_part, c) == 0)
		c->asking = TRUE;
}

static void on_part_state(void *user, gboolean connected, int err)
{
	sync_client *c = user;
	if (connected && !c->asking && sync_ticker_asm_epoch(c->tas) && !sync_ticker_asm_complete(c->tas))
		ask(c, sync_ticker_asm_epoch(c->tas), sync_ticker_asm_next(c->tas));
}

static void on_update(void *user, int err, const char *data, size_t len)
{
	sync_client *c = user;
	if (err < 0) {
		g_warning("sync/ticker: %s", data);
		return;
	}
	c->restarts = 0;
	take(c, "sync/ticker", data, len);
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
	c->tas = sync_ticker_asm_new();
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
	dev_caller_free(c->parts);
	sync_ticker_asm_free(c->tas);
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

int sync_client_convert_past(sync_client *c, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t reach_ns,
			     sync_graph_result *out, char *why, size_t len)
{
	if (!c->ready && !sync_clock_equal(from, to)) {
		snprintf(why, len, "no conversions yet: syncd's sync/ticker has not answered");
		return -EAGAIN;
	}
	return sync_graph_convert_past(c->graph, from, to, x, sync_now(SYNC_KIND_CPU), reach_ns, out, why, len);
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
