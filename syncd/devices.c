/* devices.c — syncd's devices: sync/ticker, sync/clocks, sync/rbs (status)
 * and sync/command (command); see devices.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libsync/now.h"
#include "syncd/commands.h"
#include "syncd/conversions.h"
#include "syncd/devices.h"

/* The ticker: every conversion, plus global <-> root cpu (new array, *n). */
static sync_ticker_entry *ticker_entries(syncd *s, int64_t now_ns, size_t *n)
{
	return syncd_conversions_ticker(s->pairs, s->root, syncd_rbs_core(s->rbs), syncd_rbs_mesh(s->rbs), now_ns, n);
}

static int ticker_binary(void *user, GByteArray *out)
{
	syncd *s = user;
	size_t n;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	sync_ticker_entry *e = ticker_entries(s, now_ns, &n);
	sync_ticker_head h = {(uint32_t)s->cfg.node,
			      syncd_root_have_global(s->root) ? syncd_root_node(s->root) : SYNC_TICKER_NO_ROOT, now_ns, n};
	g_byte_array_set_size(out, (guint)sync_ticker_size(n));
	sync_ticker_pack(&h, e, out->data);
	g_free(e);
	return 0;
}

static int ticker_text(void *user, GString *out)
{
	syncd *s = user;
	size_t n;
	char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	sync_ticker_entry *e = ticker_entries(s, now_ns, &n);
	g_string_append_printf(out, "ticker node%" G_GINT64_FORMAT " now=%" G_GINT64_FORMAT " conversions=%zu",
			       s->cfg.node, now_ns, n);
	if (syncd_root_have_global(s->root))
		g_string_append_printf(out, " root=node%u", syncd_root_node(s->root));
	g_string_append(out, "\n");
	for (size_t i = 0; i < n; i++) {
		const sync_conv *c = &e[i].conv;
		sync_tval end = sync_tval_of(c->xmax);
		g_string_append_printf(out, "%s -> %s slope=%.15g", sync_clock_format(e[i].from, a, sizeof a),
				       sync_clock_format(e[i].to, b, sizeof b), c->slope);
		if (c->flags & SYNC_CONV_FIXED) {
			g_string_append_printf(out, " exact x0=%" G_GINT64_FORMAT " y0=%" G_GINT64_FORMAT "\n", c->x0, c->y0);
			continue;
		}
		g_string_append_printf(out, " n=%u rms=%.4g se_end=%.4g age=%.3fs%s\n", c->n, c->rms,
				       sqrt(sync_conv_var(c, end)), (double)(now_ns - c->updated_ns) * 1e-9,
				       c->flags & SYNC_CONV_LOWER ? " lower-envelope" : "");
	}
	g_free(e);
	return 0;
}

static int clocks_text(void *user, GString *out)
{
	syncd *s = user;
	syncd_pairs_describe_clocks(s->pairs, sync_now(SYNC_KIND_CPU), out);
	g_string_append_printf(out, "commands: %" G_GUINT64_FORMAT " served, %" G_GUINT64_FORMAT " refused\n",
			       s->commands, s->bad_commands);
	return 0;
}

static int rbs_text(void *user, GString *out)
{
	syncd *s = user;
	if (!s->rbs)
		g_string_append_printf(out, "rbs off ([rbs] enable = false); root node%u\n", syncd_root_node(s->root));
	else
		syncd_rbs_describe(s->rbs, sync_now(SYNC_KIND_CPU), out);
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
	s->ticker = dev_status_new("sync/ticker", &o, ctx, ticker_text, ticker_binary, s, err);
	if (!s->ticker)
		return FALSE;
	s->clocks = dev_status_new("sync/clocks", &o, ctx, clocks_text, NULL, s, err);
	if (!s->clocks)
		return FALSE;
	s->rbs_status = dev_status_new("sync/rbs", &o, ctx, rbs_text, NULL, s, err);
	if (!s->rbs_status)
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
	dev_status_free(s->clocks);
	dev_status_free(s->ticker);
	s->command = NULL;
	s->rbs_status = NULL;
	s->clocks = NULL;
	s->ticker = NULL;
}
