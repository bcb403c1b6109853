/* devices.c — syncd's devices: sync/ticker, sync/clocks, sync/rbs (status)
 * and sync/command (command); see devices.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libdev/wire.h"
#include "libdev/heap.h"
#include "libsync/now.h"
#include "libsync/ticker_text.h"
#include "syncd/commands.h"
#include "syncd/conversions.h"
#include "syncd/devices.h"
#include "syncd/rtstep.h"
#include "syncd/ticker_store.h"

/* The ticker: every conversion, plus global <-> root cpu (new array, *n). */
static sync_ticker_entry *ticker_entries(syncd *s, int64_t now_ns, size_t *n)
{
	return syncd_conversions_ticker(s->pairs, s->root, syncd_rbs_core(s->rbs), syncd_rbs_mesh(s->rbs), now_ns, n);
}

static sync_ticker_head ticker_head(syncd *s, int64_t now_ns, size_t n)
{
	sync_ticker_head h = {(uint32_t)s->cfg.node,
			      syncd_root_have_global(s->root) ? syncd_root_node(s->root) : SYNC_TICKER_NO_ROOT, now_ns, n};
	return h;
}

/* Make sure the newest snapshot stands for the state now: a new one when
 * the state changed or the newest is older than a ticker interval. */
static void ticker_snapshot(syncd *s, int64_t now_ns)
{
	guint64 gen = syncd_pairs_generation(s->pairs) + s->net_gen;
	if (syncd_ticker_store_fresh(s->tstore, gen, now_ns, (int64_t)(s->cfg.ticker_interval_s * 1e9)))
		return;
	size_t n;
	sync_ticker_entry *e = ticker_entries(s, now_ns, &n);
	sync_ticker_head h = ticker_head(s, now_ns, n);
	syncd_ticker_store_take(s->tstore, gen, &h, e, n);
	g_free(e);
}

/* sync/ticker binary: the first part of the newest snapshot. */
static int ticker_binary(void *user, GByteArray *out)
{
	syncd *s = user;
	char why[200];
	ticker_snapshot(s, sync_now(SYNC_KIND_CPU));
	int rc = syncd_ticker_store_part(s->tstore, 0, 0, out, why, sizeof why);
	if (rc < 0)
		g_warning("sync/ticker: %s", why);
	return rc;
}

/* sync/ticker-part: the part of a held snapshot a reader asks for. */
static void ticker_part_query(void *user, const dev_creds *who, const void *req, size_t len, dev_query_handle *qh)
{
	syncd *s = user;
	sync_ticker_req r;
	const char *bad;
	char why[200];
	GByteArray *out = g_byte_array_new();
	int rc = sync_ticker_unpack_req(req, len, &r, &bad);
	if (rc < 0) {
		g_snprintf(why, sizeof why, "%s", bad);
	} else {
		if (r.epoch == 0)
			ticker_snapshot(s, sync_now(SYNC_KIND_CPU));
		rc = syncd_ticker_store_part(s->tstore, r.epoch, r.first, out, why, sizeof why);
	}
	int e = rc < 0 ? dev_query_complete(qh, rc, why, strlen(why)) : dev_query_complete(qh, 0, out->data, out->len);
	if (e < 0 && e != -ENOTCONN)
		g_warning("%s: reply to pid %d not sent: %s", SYNC_TICKER_PART_DEVICE, who ? (int)who->pid : 0, g_strerror(-e));
	g_byte_array_unref(out);
}

/* The text form stops before libdev's message limit, saying so; `synctool
 * ticker` lists every conversion (from the binary parts). */
#define TEXT_MAX (DEV_WIRE_MAX_PAYLOAD - 512)

static int ticker_text(void *user, GString *out)
{
	syncd *s = user;
	size_t n;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	sync_ticker_entry *e = ticker_entries(s, now_ns, &n);
	sync_ticker_head h = ticker_head(s, now_ns, n);
	sync_ticker_format_head(&h, out);
	for (size_t i = 0; i < n; i++) {
		gsize before = out->len;
		sync_ticker_format_entry(&e[i], now_ns, out);
		if (out->len > TEXT_MAX) {
			g_string_truncate(out, before);
			g_string_append_printf(out,
					       "... %zu more conversions: the text form stops at %d bytes; `synctool ticker` lists them all\n",
					       n - i, TEXT_MAX);
			break;
		}
	}
	g_free(e);
	return 0;
}

static int clocks_text(void *user, GString *out)
{
	syncd *s = user;
	syncd_pairs_describe_clocks(s->pairs, sync_now(SYNC_KIND_CPU), out);
	if (s->hfile)
		history_file_describe(s->hfile, out);
	syncd_root_describe_utc(s->root, out);
	if (s->rtstep)
		g_string_append_printf(out, "realtime steps=%" G_GUINT64_FORMAT " (each starts the realtime<->cpu pair afresh)\n",
				       rtstep_count(s->rtstep));
	else
		g_string_append_printf(out, "realtime steps not watched: %s\n", s->rtstep_off);
	g_string_append_printf(out, "commands: %" G_GUINT64_FORMAT " served, %" G_GUINT64_FORMAT " refused\n",
			       s->commands, s->bad_commands);
	return 0;
}

static int rbs_text(void *user, GString *out)
{
	syncd *s = user;
	if (!s->rbs) {
		g_string_append_printf(out, "rbs off ([rbs] enable = false); root node%u\n", syncd_root_node(s->root));
		syncd_root_describe_utc(s->root, out);
	} else
		syncd_rbs_describe(s->rbs, sync_now(SYNC_KIND_CPU), out);
	dev_heap_usage_append(out);
	return 0;
}

static int peers_text(void *user, GString *out)
{
	syncd *s = user;
	if (s->rbs)
		syncd_rbs_describe_peers(s->rbs, sync_now(SYNC_KIND_CPU), out);
	return 0;
}

static int command_run(void *user, const dev_creds *who, const char *cmd, GString *reply)
{
	syncd *s = user;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	int rc = syncd_command(s, who, cmd, now_ns, reply);
	if (rc < 0)
		g_info("sync/command from pid %d refused: %s: %s", who ? (int)who->pid : 0, cmd, reply->str);
	syncd_devices_flush(s, now_ns);
	return rc;
}

static void command_usage(void *user, GString *out)
{
	syncd_usage(out);
}

gboolean syncd_devices_open(syncd *s, GMainContext *ctx, GError **err)
{
	dev_options o;
	dev_options_init(&o);
	if (s->cfg.group && *s->cfg.group) {
		o.group = s->cfg.group;
		o.mode = 0664; /* others may read the ticker; writers must be in the group */
	}
	s->tstore = syncd_ticker_store_new((unsigned)s->cfg.ticker_keep, (size_t)s->cfg.ticker_part);
	s->ticker = dev_status_new("sync/ticker", &o, ctx, ticker_text, ticker_binary, s, err);
	if (!s->ticker)
		return FALSE;
	s->ticker_part = dev_query_new(SYNC_TICKER_PART_DEVICE, &o, ctx, ticker_part_query, s, err);
	if (!s->ticker_part)
		return FALSE;
	s->clocks = dev_status_new("sync/clocks", &o, ctx, clocks_text, NULL, s, err);
	if (!s->clocks)
		return FALSE;
	s->rbs_status = dev_status_new("sync/rbs", &o, ctx, rbs_text, NULL, s, err);
	if (!s->rbs_status)
		return FALSE;
	s->peers_status = dev_status_new("sync/peers", &o, ctx, peers_text, NULL, s, err);
	if (!s->peers_status)
		return FALSE;
	dev_options oc = o;
	if (s->cfg.group && *s->cfg.group)
		oc.mode = 0660;
	s->command = dev_command_new("sync/command", &oc, ctx, command_run, command_usage, s, err);
	return s->command != NULL;
}

void syncd_devices_flush(syncd *s, int64_t now_ns)
{
	guint64 gen = syncd_pairs_generation(s->pairs) + s->net_gen;
	if (gen == s->notified_gen && s->last_notify_ns != INT64_MIN)
		return;
	if (s->last_notify_ns != INT64_MIN && now_ns - s->last_notify_ns < (int64_t)(s->cfg.ticker_interval_s * 1e9))
		return;
	s->last_notify_ns = now_ns;
	s->notified_gen = gen;
	dev_status_notify(s->ticker);
	dev_status_notify(s->clocks);
	dev_status_notify(s->rbs_status);
}

static void on_change(void *user, syncd_change what)
{
	syncd *s = user;
	switch (what) {
	case SYNCD_CHANGED_AT_ONCE:
		s->last_notify_ns = INT64_MIN; /* publish at the next flush */
		s->net_gen++;
		break;
	case SYNCD_CHANGED:
		s->net_gen++;
		break;
	case SYNCD_SETTLED:
		syncd_devices_flush(s, sync_now(SYNC_KIND_CPU));
		break;
	}
}

syncd_notify syncd_devices_notify(syncd *s)
{
	return (syncd_notify){on_change, s};
}

void syncd_devices_close(syncd *s)
{
	dev_command_free(s->command);
	dev_status_free(s->rbs_status);
	dev_status_free(s->peers_status);
	dev_status_free(s->clocks);
	dev_query_free(s->ticker_part);
	dev_status_free(s->ticker);
	syncd_ticker_store_free(s->tstore);
	s->ticker_part = NULL;
	s->tstore = NULL;
	s->command = NULL;
	s->rbs_status = NULL;
	s->peers_status = NULL;
	s->clocks = NULL;
	s->ticker = NULL;
}
