/* devices.c — syncd's devices: sync/ticker, sync/clocks (status) and
 * sync/command (command). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "libsync/now.h"
#include "syncd/rbs.h"
#include "syncd/rbs_mesh.h"
#include "syncd/rtcpu.h"
#include "syncd/syncd.h"

void syncd_take_root(syncd *s, int64_t now)
{
	rtcpu_sample r = rtcpu_sample_take((int)s->cfg.rtcpu_tries);
	s->root = (uint32_t)s->cfg.node;
	s->global_cpu0 = r.cpu_ns;
	s->global_utc0 = r.realtime_ns;
	s->have_global = TRUE;
	s->last_notify = INT64_MIN; /* publish at once */
	g_message("global time: root node%u, UTC offset taken at cpu %" G_GINT64_FORMAT, s->root, r.cpu_ns);
}

sync_ticker_entry *syncd_ticker_entries(syncd *s, size_t *n)
{
	size_t k;
	sync_ticker_entry *e = syncd_pairs_entries(s->pairs, &k);
	GArray *a = g_array_sized_new(FALSE, FALSE, sizeof *e, (guint)k + 8);
	g_array_append_vals(a, e, (guint)k);
	g_free(e);
	if (s->have_global && s->root == s->cfg.node) {
		sync_ticker_entry g = {sync_clock_cpu(s->root), sync_clock_global(),
				       sync_conv_fixed(s->global_cpu0, s->global_utc0, 1.0)};
		g.conv.updated = s->global_cpu0;
		g_array_append_val(a, g);
	}
	if (s->rbs) {
		/* Local knowledge first; the network adds only pairs we lack. */
		GHashTable *have = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		for (guint i = 0; i < a->len; i++) {
			sync_ticker_entry *x = &g_array_index(a, sync_ticker_entry, i);
			g_hash_table_add(have, rbs_mesh_pair_key(x->from, x->to));
		}
		syncd_rbs_entries(s->rbs, a, have);
		g_hash_table_destroy(have);
	}
	*n = a->len;
	return (sync_ticker_entry *)(void *)g_array_free(a, FALSE);
}

static int ticker_binary(void *user, GByteArray *out)
{
	syncd *s = user;
	size_t n;
	sync_ticker_entry *e = syncd_ticker_entries(s, &n);
	sync_ticker_head h = {(uint32_t)s->cfg.node, s->have_global ? s->root : SYNC_TICKER_NO_ROOT,
			      sync_now(SYNC_KIND_CPU), n};
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
	int64_t now = sync_now(SYNC_KIND_CPU);
	sync_ticker_entry *e = syncd_ticker_entries(s, &n);
	g_string_append_printf(out, "ticker node%" G_GINT64_FORMAT " now=%" G_GINT64_FORMAT " conversions=%zu",
			       s->cfg.node, now, n);
	if (s->have_global)
		g_string_append_printf(out, " root=node%u", s->root);
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
				       sqrt(sync_conv_var(c, end)), (double)(now - c->updated) * 1e-9,
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
		g_string_append_printf(out, "rbs off ([rbs] enable = false); root node%u\n", s->root);
	else
		syncd_rbs_describe(s->rbs, sync_now(SYNC_KIND_CPU), out);
	return 0;
}

static int command_run(void *user, const dev_creds *who, const char *cmd, GString *reply)
{
	syncd *s = user;
	int64_t now = sync_now(SYNC_KIND_CPU);
	int rc = syncd_command(s, who, cmd, now, reply);
	if (rc < 0)
		g_info("sync/command from pid %d refused: %s: %s", who ? (int)who->pid : 0, cmd, reply->str);
	syncd_devices_flush(s, now);
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

void syncd_devices_flush(syncd *s, int64_t now)
{
	guint64 gen = syncd_pairs_generation(s->pairs) + s->net_gen;
	if (gen == s->notified_gen && s->last_notify != INT64_MIN)
		return;
	if (s->last_notify != INT64_MIN && now - s->last_notify < (int64_t)(s->cfg.ticker_interval * 1e9))
		return;
	s->last_notify = now;
	s->notified_gen = gen;
	dev_status_notify(s->ticker);
	dev_status_notify(s->clocks);
	dev_status_notify(s->rbs_status);
}

void syncd_devices_close(syncd *s)
{
	dev_command_free(s->command);
	dev_status_free(s->clocks);
	dev_status_free(s->ticker);
	s->command = NULL;
	s->clocks = NULL;
	s->ticker = NULL;
}
