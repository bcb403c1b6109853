/* main.c — syncd: the node's time-conversion service (docs/architecture.md §2.8).
 *
 * Conversion, not correction: no clock is ever adjusted.  syncd keeps fitted
 * conversions between the node's clocks (realtime <-> cpu by sampling, and
 * whatever local services feed it, such as audiod's audio <-> cpu), defines
 * global time through the root node, and publishes everything on sync/ticker.
 */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>

#include "libdev/heap.h"
#include "libcfg/cfg.h"
#include "libsync/now.h"
#include "syncd/devices.h"
#include "syncd/rtcpu.h"
#include "syncd/rtstep.h"

static gboolean on_rtcpu(gpointer data)
{
	syncd *s = data;
	const char *why = NULL;
	rtcpu_sample r = rtcpu_sample_take((int)s->cfg.rtcpu_tries);
	uint32_t node = (uint32_t)s->cfg.node;
	if (syncd_pairs_observe(s->pairs, sync_clock_cpu(node), sync_clock_realtime(node), r.cpu_ns,
				r.realtime_ns, r.cpu_ns, &why) < 0) {
		/* realtime stepped backwards (NTP, date -s): a discontinuity. */
		g_message("realtime<->cpu: %s; starting the pair afresh", why);
		syncd_pairs_reset(s->pairs, sync_clock_cpu(node), sync_clock_realtime(node));
	}
	sync_conv fit;
	if (s->root && syncd_pairs_conv(s->pairs, sync_clock_cpu(node), sync_clock_realtime(node), &fit) == 0 &&
	    fit.n >= 4)
		syncd_root_set_realtime_fit(s->root, &fit);
	return G_SOURCE_CONTINUE;
}

/* The realtime clock was set (rtstep.h): its pair with cpu starts afresh,
 * the fit until now the last piece before a break, and a few samples at
 * once so that realtime converts again within milliseconds. */
static void on_realtime_step(void *data)
{
	syncd *s = data;
	uint32_t node = (uint32_t)s->cfg.node;
	g_message("realtime clock: set (a step; %" G_GUINT64_FORMAT " so far): the realtime<->cpu pair starts afresh, "
		  "its fit until now kept as the last piece before a break",
		  rtstep_count(s->rtstep));
	syncd_pairs_reset(s->pairs, sync_clock_cpu(node), sync_clock_realtime(node));
	for (int i = 0; i < 6; i++) {
		on_rtcpu(s);
		g_usleep(2000);
	}
}

/* This node's realtime clock against UTC (sync_utc_status), with the
 * configured error in place of the discipline's when one is given. */
static void read_utc(syncd *s)
{
	sync_utc u;
	if (sync_utc_status(&u) < 0)
		u.synced = 0;
	if (u.synced && s->cfg.utc_error_us > 0)
		u.est_error_ns = s->cfg.utc_error_us * 1e3;
	double was;
	gboolean had = syncd_root_utc(s->root, &was);
	if (had != (gboolean)u.synced)
		g_message("realtime clock: %s", u.synced ? "disciplined to UTC" : u.why ? u.why
											: "not disciplined");
	syncd_root_set_utc(s->root, &u);
}

/* Once a second: read the discipline and, on the root, steer global's
 * rate to UTC when a decision is due (steer.h: every [utc] interval_s,
 * more often while the timescale is young). */
static gboolean on_steer(gpointer data)
{
	syncd *s = data;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	uint32_t me = (uint32_t)s->cfg.node;
	read_utc(s);
	double est;
	sync_conv rt, utc;
	const sync_conv *use = NULL;
	if (syncd_root_utc(s->root, &est) &&
	    syncd_pairs_conv(s->pairs, sync_clock_cpu(me), sync_clock_realtime(me), &rt) == 0 && rt.n >= 4) {
		utc = syncd_steer_utc_conv(&rt, est);
		use = &utc;
	}
	syncd_steer_params p = {s->cfg.steer_interval_s, s->cfg.steer_tau_s, s->cfg.steer_max_slew_ppm};
	if (s->cfg.utc_steer && syncd_root_steer(s->root, use, &p, now_ns) < 0)
		g_warning("global time: the steering step at cpu %" G_GINT64_FORMAT " was refused", now_ns);
	return G_SOURCE_CONTINUE;
}

static gboolean on_tick(gpointer data)
{
	syncd *s = data;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	guint gone = syncd_pairs_expire(s->pairs, now_ns);
	if (gone)
		g_message("%u pair%s expired (no observation for %.0f s)", gone, gone == 1 ? "" : "s", s->cfg.expire_s);
	if (s->rbs)
		syncd_rbs_tick(s->rbs, now_ns);
	history_file_tick(s->hfile, s->pairs, syncd_rbs_core(s->rbs), now_ns);
	syncd_devices_flush(s, now_ns);
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char *conf = NULL;
	gint64 node = -1;
	gboolean verbose = FALSE;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/syncd.conf)", "FILE"},
		{"node", 'n', 0, G_OPTION_ARG_INT64, &node, "this node's number (overrides the file)", "N"},
		{"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "log debug messages", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("syncd", "- chorus time-conversion service", entries, NULL, syncd_config_describe, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	if (verbose)
		g_setenv("G_MESSAGES_DEBUG", "all", TRUE);

	const char *why = NULL;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "syncd: %s\n", why);
		return 2;
	}
	syncd s = {0};
	if (!syncd_config_load(&s.cfg, conf ? conf : "/etc/chorus/syncd.conf", conf != NULL, &err)) {
		fprintf(stderr, "syncd: %s\n", err->message);
		return 2;
	}
	if (node >= 0)
		s.cfg.node = node;
	/* A window under 64 measures its wander on halves too short to resolve
	 * a slow ramp: beyond its data it states too little (bench/aging,
	 * docs/clocks.md §5). */
	if (s.cfg.window < 64 || s.cfg.rbs_window < 64)
		g_warning("[fit] window = %" G_GINT64_FORMAT ", [rbs] window = %" G_GINT64_FORMAT ": a window under 64 observations understates the error of "
			  "conversions carried beyond its data while temperatures move (bench/aging: RMS z 2.8 at 60 s "
			  "with 32); 64 is the default",
			  s.cfg.window, s.cfg.rbs_window);
	syncd_pairs_cfg pc = {
		.window = (uint32_t)s.cfg.window,
		.reject_k = s.cfg.reject_k,
		.wander = s.cfg.wander_ppm * 1e-6,
		.max_span_ns = (int64_t)(s.cfg.max_span_s * 1e9),
		.expire_ns = (int64_t)(s.cfg.expire_s * 1e9),
		.history_pieces = (uint32_t)s.cfg.history_pieces,
		.history_ns = (int64_t)(s.cfg.history_s * 1e9),
		.history_every_ns = (int64_t)(s.cfg.history_every_s * 1e9),
	};
	s.pairs = syncd_pairs_new(&pc);
	s.last_notify_ns = INT64_MIN;
	uint32_t me = (uint32_t)s.cfg.node;
	/* The pieces of history from before a restart, before any pair is
	 * configured or fed (history_file.h). */
	s.hfile = history_file_new(s.cfg.history_file, me);
	history_file_set_interval(s.hfile, (int64_t)(s.cfg.history_write_s * 1e9));
	history_file_load(s.hfile);
	history_file_restore_pairs(s.hfile, s.pairs, sync_now(SYNC_KIND_CPU));
	syncd_pairs_register(s.pairs, sync_clock_cpu(me), "syncd", getpid(), 0);
	syncd_pairs_register(s.pairs, sync_clock_realtime(me), "syncd", getpid(), 0);
	syncd_pairs_configure(s.pairs, sync_clock_cpu(me), sync_clock_realtime(me), SYNC_FIT_MEAN, 1.0, &why);
	s.root = syncd_root_new(me, s.cfg.root, (int)s.cfg.rtcpu_tries, sync_now(SYNC_KIND_CPU), syncd_devices_notify(&s));

	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	if (!syncd_devices_open(&s, NULL, &err)) {
		fprintf(stderr, "syncd: %s\n", err->message);
		return 1;
	}
	/* Steps of the realtime clock (a simulated one never steps). */
	if (sync_now_simulated()) {
		g_strlcpy(s.rtstep_off, "the clocks are simulated", sizeof s.rtstep_off);
	} else if (!(s.rtstep = rtstep_new(on_realtime_step, &s, &err))) {
		g_snprintf(s.rtstep_off, sizeof s.rtstep_off, "%s", err->message);
		g_warning("realtime clock: its steps will not be noticed: %s", err->message);
		g_clear_error(&err);
	}
	/* A few samples at once, so realtime converts from the start. */
	for (int i = 0; i < 6; i++) {
		on_rtcpu(&s);
		g_usleep(2000);
	}
	if (s.cfg.rbs && !(s.rbs = syncd_rbs_new(&s.cfg, s.pairs, s.root, syncd_devices_notify(&s), NULL, &err))) {
		fprintf(stderr, "syncd: %s\n", err->message);
		syncd_devices_close(&s);
		return 1;
	}
	history_file_restore_rbs(s.hfile, syncd_rbs_core(s.rbs), sync_now(SYNC_KIND_CPU));
	if (!s.cfg.rbs && g_getenv("CHORUS_RX_FILTER") && *g_getenv("CHORUS_RX_FILTER"))
		g_message("CHORUS_RX_FILTER is ignored: RBS is off ([rbs] enable = false)");
	g_timeout_add((guint)(s.cfg.rtcpu_interval_s * 1000), on_rtcpu, &s);
	read_utc(&s);
	g_timeout_add(1000, on_steer, &s);
	g_timeout_add((guint)(s.cfg.ticker_interval_s * 1000 / 2 + 1), on_tick, &s);
	g_unix_signal_add(SIGINT, on_signal, loop);
	g_unix_signal_add(SIGTERM, on_signal, loop);
	g_message("node%u ready%s", me, sync_now_simulated() ? " (simulated clock)" : "");
	sd_notify(0, "READY=1\nSTATUS=serving sync/ticker");
	g_main_loop_run(loop);
	sd_notify(0, "STOPPING=1");
	history_file_save_final(s.hfile, s.pairs, syncd_rbs_core(s.rbs));
	history_file_free(s.hfile);
	rtstep_free(s.rtstep);
	syncd_rbs_free(s.rbs);
	syncd_devices_close(&s);
	syncd_root_free(s.root);
	syncd_pairs_free(s.pairs);
	syncd_config_clear(&s.cfg);
	g_main_loop_unref(loop);
	g_free(conf);
	return 0;
}
