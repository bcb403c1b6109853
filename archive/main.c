/* main.c — chorus-archive: every frame of the chosen audiod devices kept on
 * disk in FLAC segments with their time, crash-safe, within a retention
 * policy (docs/archive.md). */
#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "libcfg/cfg.h"
#include "libdev/heap.h"
#include "archive/config.h"
#include "archive/durable.h"
#include "archive/recorder.h"
#include "archive/recover.h"
#include "archive/store.h"
#include "libdev/dev.h"
#include "libsync/now.h"

typedef struct {
	archive_config cfg;
	archive_store *store;
	archive_recorder *rec[ARCHIVE_MAX_DEVICES];
	sync_client *clocks;
	dev_status *status;
	archive_recovery recovery;
	char recovery_error[256];
	guint64 dropped, retention_errors;
	char retention_error[256];
	guint64 seen_errors;
	GMainLoop *loop;
	int rc;
} archive;

static void iso(int64_t wall_ns, char *buf, size_t len)
{
	GDateTime *t = g_date_time_new_from_unix_utc(wall_ns / 1000000000);
	char *s = t ? g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ") : NULL;
	g_strlcpy(buf, s ? s : "?", len);
	g_free(s);
	if (t)
		g_date_time_unref(t);
}

/* The free space kept: the configured reserve, and never less than two
 * segments' worth (the newest segment's size; one being written, one
 * being recovered or re-encoded), so the archive itself never runs the
 * disk full (another writer can). */
static int64_t reserve_bytes(const archive *a)
{
	int64_t r = (int64_t)(a->cfg.reserve_mb * 1e6);
	guint n = archive_store_count(a->store);
	if (n && 2 * archive_store_entry(a->store, n - 1)->bytes > r)
		r = 2 * archive_store_entry(a->store, n - 1)->bytes;
	return r;
}

static void enforce(archive *a)
{
	int dropped = 0;
	GError *e = NULL;
	if (!archive_store_enforce(a->store, g_get_real_time() * 1000, (int64_t)(a->cfg.max_age_s * 1e9),
				   (int64_t)(a->cfg.max_bytes_mb * 1e6), reserve_bytes(a), &dropped, &e)) {
		a->retention_errors++;
		g_strlcpy(a->retention_error, e->message, sizeof a->retention_error);
		g_warning("retention: %s", e->message);
		g_error_free(e);
	}
	if (dropped)
		g_debug("retention: dropped %d segment%s", dropped, dropped == 1 ? "" : "s");
	a->dropped += (guint64)dropped;
}

/* A segment closed or a recorder failed.  A failed write on a full disk
 * must make room: the oldest segment goes (never the newest, which is
 * being written); a sample format FLAC cannot keep stops the service. */
static void on_changed(void *user)
{
	archive *a = user;
	guint64 errs = 0;
	gboolean fatal = FALSE, full = FALSE;
	for (int k = 0; k < ARCHIVE_MAX_DEVICES; k++) {
		gboolean f = FALSE;
		if (!a->rec[k])
			continue;
		errs += archive_recorder_errors(a->rec[k], &f);
		fatal |= f;
		int code = archive_recorder_last_errno(a->rec[k]);
		full |= code == ENOSPC || code == EDQUOT;
	}
	/* A full disk (another writer filled it): drop the oldest until the
	 * reserve is free again, keeping the newest. */
	while (errs > a->seen_errors && full && archive_store_count(a->store) > 1) {
		int64_t fr = archive_store_free_bytes(a->store);
		if (fr >= reserve_bytes(a))
			break;
		GError *e = NULL;
		if (!archive_store_drop_oldest(a->store, &e)) {
			a->retention_errors++;
			g_strlcpy(a->retention_error, e->message, sizeof a->retention_error);
			g_error_free(e);
			break;
		}
		a->dropped++;
	}
	a->seen_errors = errs;
	enforce(a);
	if (a->status)
		dev_status_notify(a->status);
	if (fatal) {
		a->rc = 1;
		g_main_loop_quit(a->loop);
	}
}

static int status_text(void *user, GString *out)
{
	archive *a = user;
	guint n = archive_store_count(a->store);
	g_string_append_printf(out, "archive dir=%s node=%" G_GINT64_FORMAT " segment_s=%g flush_s=%g flac_level=%" G_GINT64_FORMAT "\n",
			       a->cfg.dir, a->cfg.node, a->cfg.segment_s, a->cfg.flush_s, a->cfg.flac_level);
	char from[32] = "none", to[32] = "none";
	if (n) {
		iso(archive_store_entry(a->store, 0)->x->wall_ns, from, sizeof from);
		iso(archive_store_entry(a->store, n - 1)->x->wall_end_ns, to, sizeof to);
	}
	int64_t kept_frames = 0;
	for (guint i = 0; i < n; i++)
		kept_frames += archive_store_entry(a->store, i)->x->frames;
	g_string_append_printf(out, "kept segments=%u bytes=%" PRId64 " frames=%" PRId64 " from=%s to=%s free_bytes=%" PRId64 " bad_indices=%d%s%s%s\n",
			       n, archive_store_bytes(a->store), kept_frames, from, to, archive_store_free_bytes(a->store),
			       archive_store_bad(a->store), archive_store_bad(a->store) ? " bad=\"" : "",
			       archive_store_bad_why(a->store), archive_store_bad(a->store) ? "\"" : "");
	if (n)
		g_string_append_printf(out, "range oldest=%s newest=%s\n", archive_store_entry(a->store, 0)->name,
				       archive_store_entry(a->store, n - 1)->name);
	g_string_append_printf(out, "retention max_age_s=%g max_bytes=%.0f reserve_bytes=%.0f dropped=%" PRIu64 " unlink_errors=%" PRIu64 "%s%s%s\n",
			       a->cfg.max_age_s, a->cfg.max_bytes_mb * 1e6, a->cfg.reserve_mb * 1e6, a->dropped,
			       a->retention_errors, a->retention_errors ? " last_error=\"" : "", a->retention_error,
			       a->retention_errors ? "\"" : "");
	g_string_append_printf(out, "recovery recovered=%d frames=%" PRId64 " removed=%d failed=%d elapsed_ms=%.1f%s%s%s\n",
			       a->recovery.recovered, a->recovery.frames, a->recovery.removed, a->recovery.failed,
			       a->recovery.elapsed_s * 1e3, a->recovery.failed ? " error=\"" : "", a->recovery_error,
			       a->recovery.failed ? "\"" : "");
	for (int k = 0; k < ARCHIVE_MAX_DEVICES; k++)
		if (a->rec[k])
			archive_recorder_status(a->rec[k], out);
	dev_heap_usage_append(out);
	return 0;
}

static gboolean on_flush(gpointer data)
{
	archive *a = data;
	for (int k = 0; k < ARCHIVE_MAX_DEVICES; k++)
		if (a->rec[k])
			archive_recorder_tick(a->rec[k]);
	on_changed(a);
	return G_SOURCE_CONTINUE;
}

static gboolean on_status(gpointer data)
{
	archive *a = data;
	dev_status_notify(a->status);
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char *conf = NULL, *dir = NULL;
	gint64 node = -1;
	double segment_s = 0, flush_s = 0;
	gboolean verbose = FALSE;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/chorus-archive.conf)", "FILE"},
		{"node", 'n', 0, G_OPTION_ARG_INT64, &node, "this node's number", "N"},
		{"dir", 'd', 0, G_OPTION_ARG_FILENAME, &dir, "segment directory ([archive] dir)", "DIR"},
		{"segment", 's', 0, G_OPTION_ARG_DOUBLE, &segment_s, "audio per segment, s ([archive] segment_s)", "S"},
		{"flush", 'F', 0, G_OPTION_ARG_DOUBLE, &flush_s, "flush horizon, s ([archive] flush_s)", "S"},
		{"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "log debug messages", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("chorus-archive", "- keep every frame of audiod's devices on disk", entries, NULL, archive_config_describe, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	if (verbose)
		g_setenv("G_MESSAGES_DEBUG", "all", TRUE);
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "chorus-archive: %s\n", why);
		return 2;
	}
	archive a = {0};
	char num[64];
	if (!archive_config_load(&a.cfg, conf ? conf : "/etc/chorus/chorus-archive.conf", conf != NULL, &err) ||
	    (dir && !archive_config_set(&a.cfg, "archive", "dir", dir, "--dir: ", &err)) ||
	    (segment_s > 0 && (g_ascii_dtostr(num, sizeof num, segment_s), !archive_config_set(&a.cfg, "archive", "segment_s", num, "--segment: ", &err))) ||
	    (flush_s > 0 && (g_ascii_dtostr(num, sizeof num, flush_s), !archive_config_set(&a.cfg, "archive", "flush_s", num, "--flush: ", &err)))) {
		fprintf(stderr, "chorus-archive: %s\n", err->message);
		return 2;
	}
	if (node >= 0)
		a.cfg.node = node;
	if (a.cfg.flush_s > a.cfg.segment_s) {
		fprintf(stderr, "chorus-archive: the flush horizon (%g s) must not exceed the segment (%g s)\n", a.cfg.flush_s,
			a.cfg.segment_s);
		return 2;
	}
	if (g_mkdir_with_parents(a.cfg.dir, 0755) < 0) {
		fprintf(stderr, "chorus-archive: %s: cannot create: %s\n", a.cfg.dir, g_strerror(errno));
		return 1;
	}
	/* Close what a crash left open before anything new is written. */
	if (!archive_recover(a.cfg.dir, (int)a.cfg.flac_level, &a.recovery, &err)) {
		g_warning("recovery: %s", err->message);
		g_strlcpy(a.recovery_error, err->message, sizeof a.recovery_error);
		g_clear_error(&err);
	}
	if (a.recovery.recovered || a.recovery.removed)
		g_message("recovery: closed %d segment%s (%" PRId64 " frames), removed %d empty, in %.1f ms",
			  a.recovery.recovered, a.recovery.recovered == 1 ? "" : "s", a.recovery.frames, a.recovery.removed,
			  a.recovery.elapsed_s * 1e3);
	a.store = archive_store_open(a.cfg.dir, TRUE, &err);
	if (!a.store) {
		fprintf(stderr, "chorus-archive: %s\n", err->message);
		return 1;
	}
	a.loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	a.clocks = sync_client_new(NULL, NULL, NULL, NULL, &err);
	if (!a.clocks) {
		fprintf(stderr, "chorus-archive: %s\n", err->message);
		return 1;
	}
	a.status = dev_status_new("archive/status", NULL, NULL, status_text, NULL, &a, &err);
	if (!a.status) {
		fprintf(stderr, "chorus-archive: %s\n", err->message);
		return 1;
	}
	int ndev = 0;
	for (int k = 0; k < ARCHIVE_MAX_DEVICES; k++) {
		if (!a.cfg.dev[k].record)
			continue;
		archive_recorder_cfg rc = {
			.dir = a.cfg.dir,
			.node = (uint32_t)a.cfg.node,
			.device = (uint32_t)k,
			.segment_s = a.cfg.segment_s,
			.flac_level = (int)a.cfg.flac_level,
			.time_interval_s = a.cfg.time_interval_s,
			.clocks = a.clocks,
			.store = a.store,
			.changed = on_changed,
			.user = &a,
		};
		a.rec[k] = archive_recorder_new(&rc, NULL, &err);
		if (!a.rec[k]) {
			fprintf(stderr, "chorus-archive: %s\n", err->message);
			return 1;
		}
		ndev++;
	}
	if (!ndev) {
		fprintf(stderr, "chorus-archive: no device to record (set [device.K] record = true)\n");
		return 2;
	}
	enforce(&a);
	/* A flush every half horizon: a frame waits at most that for the
	 * tick, plus the FLAC encoder's current block, before it is durable. */
	g_timeout_add((guint)(a.cfg.flush_s * 500), on_flush, &a);
	g_timeout_add((guint)(a.cfg.status_interval_s * 1000), on_status, &a);
	g_unix_signal_add(SIGINT, on_signal, a.loop);
	g_unix_signal_add(SIGTERM, on_signal, a.loop);
	g_message("node%" G_GINT64_FORMAT ": archiving %d device%s into %s", a.cfg.node, ndev, ndev == 1 ? "" : "s",
		  a.cfg.dir);
	sd_notify(0, "READY=1\nSTATUS=archiving");
	g_main_loop_run(a.loop);
	sd_notify(0, "STOPPING=1");
	for (int k = 0; k < ARCHIVE_MAX_DEVICES; k++) {
		gboolean fatal = FALSE;
		if (!a.rec[k])
			continue;
		if (archive_recorder_errors(a.rec[k], &fatal) > 0)
			a.rc = 1; /* frames were lost: say so in the exit status */
		if (!archive_recorder_stop(a.rec[k], &err)) {
			g_warning("%s", err->message);
			g_clear_error(&err);
			a.rc = 1;
		}
	}
	dev_status_free(a.status);
	sync_client_free(a.clocks);
	archive_store_free(a.store);
	archive_config_clear(&a.cfg);
	g_main_loop_unref(a.loop);
	g_free(conf);
	g_free(dir);
	return a.rc;
}
