/* main.c — audiod: ALSA capture into a multi-client ring, every sample mapped
 * to the node's cpu clock (docs/architecture.md §4). */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <systemd/sd-daemon.h>

#include "libdev/heap.h"
#include "libcfg/cfg.h"
#include "audiod/config.h"
#include "audiod/device.h"
#include "libsync/now.h"

typedef struct {
	audiod_config cfg;
	audio_dev *dev[AUDIOD_MAX_DEVICES];
	sync_client *clocks;
} audiod;

static gboolean on_status(gpointer data)
{
	audiod *a = data;
	for (int k = 0; k < AUDIOD_MAX_DEVICES; k++)
		if (a->dev[k])
			audio_dev_tick(a->dev[k]);
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* The order of [device.K] tstamp's choices (audiod/config.c). */
G_STATIC_ASSERT(TSRC_AUTO == 0 && TSRC_KPATCH == 1 && TSRC_ALSA == 2 && TSRC_SIM == 3);

int main(int argc, char **argv)
{
	char *conf = NULL, *pcm = NULL, *format = NULL, *tstamp = NULL, *obs_log = NULL;
	gint64 node = -1, rate_hz = 0, channels = 0, period = 0;
	gboolean verbose = FALSE;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/audiod.conf)", "FILE"},
		{"node", 'n', 0, G_OPTION_ARG_INT64, &node, "this node's number", "N"},
		{"pcm", 'D', 0, G_OPTION_ARG_STRING, &pcm, "ALSA PCM of device 0", "NAME"},
		{"rate", 'r', 0, G_OPTION_ARG_INT64, &rate_hz, "sample rate of device 0", "HZ"},
		{"channels", 'C', 0, G_OPTION_ARG_INT64, &channels, "channels of device 0", "N"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "sample format of device 0 (S16_LE, S32_LE, FLOAT_LE, S24_3LE)", "FMT"},
		{"period", 'p', 0, G_OPTION_ARG_INT64, &period, "period of device 0, frames", "FRAMES"},
		{"tstamp", 't', 0, G_OPTION_ARG_STRING, &tstamp, "timestamp source of device 0 (auto, kpatch, alsa, sim)", "SRC"},
		{"obs-log", 0, 0, G_OPTION_ARG_FILENAME, &obs_log, "write every timestamp observation to FILE (diagnostics; audiod(8))", "FILE"},
		{"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "log debug messages", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("audiod", "- chorus audio capture service", entries, NULL, audiod_config_describe, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	if (verbose)
		g_setenv("G_MESSAGES_DEBUG", "all", TRUE);
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "audiod: %s\n", why);
		return 2;
	}
	audiod a = {0};
	if (!audiod_config_load(&a.cfg, conf ? conf : "/etc/chorus/audiod.conf", conf != NULL, &err)) {
		fprintf(stderr, "audiod: %s\n", err->message);
		return 2;
	}
	/* Command-line overrides of device 0. */
	audiod_device_config *d0 = &a.cfg.dev[0];
	if (node >= 0)
		a.cfg.node = node;
	if (pcm) {
		g_free(d0->pcm);
		d0->pcm = g_strdup(pcm);
	}
	if ((format && !audiod_config_set(&a.cfg, "device.0", "format", format, "--format: ", &err)) ||
	    (tstamp && !audiod_config_set(&a.cfg, "device.0", "tstamp", tstamp, "--tstamp: ", &err))) {
		fprintf(stderr, "audiod: %s\n", err->message);
		return 2;
	}
	if (rate_hz > 0)
		d0->rate_hz = rate_hz;
	if (channels > 0)
		d0->channels = channels;
	if (period > 0)
		d0->period = period;
	if (a.cfg.lock_memory && mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		g_warning("cannot lock memory (%s); capture may page", g_strerror(errno));

	obslog *olog = NULL;
	if (obs_log && !(olog = obslog_open(obs_log, &err))) {
		fprintf(stderr, "audiod: %s\n", err->message);
		g_error_free(err);
		audiod_config_clear(&a.cfg);
		g_free(conf);
		g_free(pcm);
		g_free(format);
		g_free(tstamp);
		g_free(obs_log);
		return 2;
	}
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	a.clocks = sync_client_new(NULL, NULL, NULL, NULL, &err);
	if (!a.clocks) {
		fprintf(stderr, "audiod: %s\n", err->message);
		return 1;
	}
	/* syncd may still hold this node's audio conversions from an earlier
	 * run of audiod (for numbering on); give its ticker a moment. */
	sync_client_wait(a.clocks, 1000);
	int ndev = 0, rc = 0;
	/* The archive behind the ring: as configured, else where chorus-archive
	 * keeps it by default (as audioget looks). */
	const char *archive_dir = a.cfg.archive_dir;
	if (!*archive_dir)
		archive_dir = g_getenv("CHORUS_ARCHIVE_DIR") && *g_getenv("CHORUS_ARCHIVE_DIR")
				      ? g_getenv("CHORUS_ARCHIVE_DIR")
			      : g_file_test("/var/lib/chorus/archive", G_FILE_TEST_IS_DIR) ? "/var/lib/chorus/archive"
											   : NULL;
	else if (!strcmp(archive_dir, "none"))
		archive_dir = NULL;
	for (int k = 0; k < AUDIOD_MAX_DEVICES; k++) {
		audiod_device_config *dc = &a.cfg.dev[k];
		if (!dc->pcm || !*dc->pcm)
			continue;
		stream_cfg sc = {0};
		sc.cap.pcm = dc->pcm;
		sc.cap.rate_hz = (unsigned)dc->rate_hz;
		sc.cap.channels = (unsigned)dc->channels;
		sc.cap.period = (snd_pcm_uframes_t)dc->period;
		sc.cap.buffer = (snd_pcm_uframes_t)(dc->period * dc->periods);
		sc.ring_s = dc->ring_s;
		sc.sidechannel = dc->sidechannel && *dc->sidechannel ? dc->sidechannel : NULL;
		sc.rt_priority = (int)a.cfg.rt_priority;
		sc.floor_ns = dc->latency_floor_us * 1e3;
		sc.floor_sd_ns = dc->latency_floor_sd_us * 1e3;
		/* Both are engine enums (audiod/config.c): the file's value was
		 * one of the choices. */
		static const snd_pcm_format_t formats[] = {
			[AUDIOD_FMT_S16_LE] = SND_PCM_FORMAT_S16_LE,
			[AUDIOD_FMT_S32_LE] = SND_PCM_FORMAT_S32_LE,
			[AUDIOD_FMT_FLOAT_LE] = SND_PCM_FORMAT_FLOAT_LE,
			/* Packed 24-bit, what many USB cards offer natively. */
			[AUDIOD_FMT_S24_3LE] = SND_PCM_FORMAT_S24_3LE,
		};
		sc.cap.format = formats[dc->format];
		sc.tstamp = (tsrc_kind)dc->tstamp;
		a.dev[k] = audio_dev_new(k, &sc, (uint32_t)a.cfg.node, NULL, a.clocks, &err);
		if (a.dev[k]) {
			audio_dev_set_archive(a.dev[k], archive_dir);
			audio_dev_set_obslog(a.dev[k], olog);
		}
		if (!a.dev[k] || !audio_dev_start(a.dev[k], &err)) {
			fprintf(stderr, "audiod: %s\n", err->message);
			rc = 1;
			break;
		}
		ndev++;
	}
	if (!rc && !ndev) {
		fprintf(stderr, "audiod: no device configured (set [device.0] pcm or --pcm)\n");
		rc = 2;
	}
	/* Ready when every device serves data (its first frames arrived), so a
	 * client started after the notification finds the device. */
	gint64 limit = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
	for (gboolean all = FALSE; !rc && !all && g_get_monotonic_time() < limit;) {
		g_main_context_iteration(NULL, TRUE);
		all = TRUE;
		for (int k = 0; k < AUDIOD_MAX_DEVICES; k++)
			if (a.dev[k] && !audio_dev_ready(a.dev[k]))
				all = FALSE;
	}
	if (!rc) {
		g_timeout_add((guint)(a.cfg.status_interval_s * 1000), on_status, &a);
		g_unix_signal_add(SIGINT, on_signal, loop);
		g_unix_signal_add(SIGTERM, on_signal, loop);
		g_message("node%" G_GINT64_FORMAT ": capturing %d device%s%s", a.cfg.node, ndev, ndev == 1 ? "" : "s",
			  sync_now_simulated() ? " (simulated clock)" : "");
		sd_notify(0, "READY=1\nSTATUS=capturing");
		g_main_loop_run(loop);
		sd_notify(0, "STOPPING=1");
	}
	for (int k = 0; k < AUDIOD_MAX_DEVICES; k++)
		audio_dev_free(a.dev[k]);
	sync_client_free(a.clocks);
	if (obslog_close(olog) < 0 && !rc)
		rc = 1; /* the diagnostics asked for are incomplete */
	audiod_config_clear(&a.cfg);
	g_main_loop_unref(loop);
	g_free(conf);
	g_free(pcm);
	g_free(format);
	g_free(tstamp);
	g_free(obs_log);
	return rc;
}
