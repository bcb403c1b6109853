/* main.c — fft: streams audio/<k>/data through a short-time FFT (docs/architecture.md §6.2)
 * and publishes every frame on the packet device fft/<k>/frames (format in
 * frames.h) and the band energies on the status device fft/<k>/status.
 *
 *   fft [-c /etc/chorus/fft.conf] [-d K] [--size N] [--hop H] [--print-config]
 *
 * Plans are made once per stream format; FFTW wisdom is kept in a file
 * ([fft] wisdom, default RUN/fft-wisdom) so a restart plans instantly.  The
 * audio client is libdev's crashproof sensor reader: when audiod restarts
 * the stream resumes by itself (a lost stretch is a gap: the STFT restarts
 * after it, it never bridges it).
 */
#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "audiod/request.h"
#include "libdev/heap.h"
#include "apps/dsp/stft.h"
#include "apps/fft/frames.h"
#include "libcfg/cfg.h"
#include "libdev/dev.h"
#include "libsync/now.h"

#define MAX_BANDS 8
/* Samples converted and pushed at a time: a chunk after a stall (up to a
 * whole message of backlog) is taken in blocks, so neither the converted
 * copy nor the STFT's buffer (reserved for it at start) grows past BLOCK +
 * one frame. */
#define BLOCK 4096

typedef struct {
	gint64 device, channel, size, hop;
	int window;               /* dsp_window: rect, hann, hamming, blackman */
	int plan;                 /* dsp_plan_mode: estimate, measure */
	char *wisdom;             /* wisdom file; "" = RUN/fft-wisdom */
	char *bands_hz;           /* "lo-hi, lo-hi" Hz, reported on the status device */
	double status_interval_s; /* s */
	gint64 queue;             /* frames queued per subscriber before the oldest is dropped */
} fft_cfg;

#define K(...) CFG_KEY(fft_cfg, __VA_ARGS__)
#define R(...) CFG_KEY_RENAMED(fft_cfg, __VA_ARGS__)
#define E(...) CFG_KEY_ENUM(fft_cfg, __VA_ARGS__)
/* A key; R: a key renamed to carry its unit, the old name still accepted. */
/* In the order of dsp_window and dsp_plan_mode. */
static const char *const windows[] = {"rect", "hann", "hamming", "blackman", NULL};
static const char *const plans[] = {"estimate", "measure", NULL};
static const cfg_key keys[] = {
	K("device", CFG_INT, "0", 0, 15, device, "audio device index k: reads audio/<k>/data, publishes fft/<k>/…"),
	K("channel", CFG_INT, "0", 0, 63, channel, "channel of the device to transform"),
	K("size", CFG_INT, "1024", 16, 65536, size, "samples per frame"),
	K("hop", CFG_INT, "256", 1, 65536, hop, "samples between frame starts (<= size)"),
	E("window", "hann", windows, window, "window"),
	E("plan", "measure", plans, plan, "FFTW planning (measure: with wisdom cached)"),
	K("wisdom", CFG_STRING, "", 1, 0, wisdom, "FFTW wisdom cache file; empty = $CACHE_DIRECTORY/fftw-wisdom (systemd) or RUN/fft-wisdom"),
	R("bands_hz", "bands", CFG_STRING, "1000-3200, 2000-8000", 1, 0, bands_hz, "bands reported on fft/<k>/status, Hz: lo-hi, …"),
	R("status_interval_s", "status_interval", CFG_DOUBLE, "0.5", 0.05, 60, status_interval_s, "seconds between status notifications"),
	K("queue", CFG_INT, "1024", 16, 1 << 20, queue, "frames queued per subscriber before the oldest is dropped"),
	{NULL},
};
static const cfg_group table[] = {
	{.name = "fft", .keys = keys, .store = 1},
	{NULL},
};

typedef struct {
	fft_cfg cfg;
	dsp_window window;
	dsp_plan_mode plan;
	char *wisdom;
	int nbands;
	double band_hz[MAX_BANDS][2]; /* Hz */
	double band_acc[MAX_BANDS];   /* sum of band power since the last status */
	double band_last[MAX_BANDS];  /* mean band power over the last status interval */
	guint64 acc_frames;

	char name_data[32], name_frames[32], name_status[32];
	dev_sensor_reader *audio;
	dev_packet *frames;
	dev_status *status;
	dsp_stft *stft;
	double rate_hz;
	int sample_bytes; /* 2 S16, 4 S32 or FLOAT */
	gboolean is_float;
	float *x; /* converted samples: BLOCK of them (on_data) */
	float *P;
	uint8_t *msg;
	guint64 nframes, published, gaps, reopened;
	int64_t last_first;
	gboolean connected;
	char last_error[256];
} fftd;

static const char *window_name(dsp_window w)
{
	static const char *const n[] = {"rect", "hann", "hamming", "blackman"};
	return n[w];
}

static int parse_bands(fftd *f, GError **err)
{
	gchar **parts = g_strsplit(f->cfg.bands_hz, ",", -1);
	int rc = 0;
	f->nbands = 0;
	for (gchar **p = parts; *p; p++) {
		double lo, hi;
		char extra;
		g_strstrip(*p);
		if (!**p)
			continue;
		if (sscanf(*p, "%lf-%lf%c", &lo, &hi, &extra) != 2 || lo < 0 || hi <= lo || f->nbands == MAX_BANDS) {
			g_set_error(err, CFG_ERROR, EINVAL, "[fft] bands_hz: \"%s\" is not lo-hi in Hz (at most %d bands)", *p,
				    MAX_BANDS);
			rc = -EINVAL;
			break;
		}
		f->band_hz[f->nbands][0] = lo;
		f->band_hz[f->nbands][1] = hi;
		f->nbands++;
	}
	g_strfreev(parts);
	return rc;
}

static int status_text(void *user, GString *out)
{
	fftd *f = user;
	g_string_append_printf(out, "device %s channel=%" G_GINT64_FORMAT " connected=%s\n", f->name_data, f->cfg.channel,
			       f->connected ? "yes" : "no");
	g_string_append_printf(out, "stft rate=%.0f size=%" G_GINT64_FORMAT " hop=%" G_GINT64_FORMAT " window=%s wisdom=%s\n",
			       f->rate_hz, f->cfg.size, f->cfg.hop, window_name(f->window), f->wisdom);
	g_string_append_printf(out, "frames computed=%" G_GUINT64_FORMAT " published=%" G_GUINT64_FORMAT " last_first=%" G_GINT64_FORMAT " subscribers=%u gaps=%" G_GUINT64_FORMAT "\n",
			       f->nframes, f->published, f->last_first, dev_packet_subscribers(f->frames), f->gaps);
	for (int b = 0; b < f->nbands; b++) {
		double p = f->band_last[b];
		g_string_append_printf(out, "band %.0f-%.0f power=%.4g dbfs=%.1f\n", f->band_hz[b][0], f->band_hz[b][1], p,
				       p > 0 ? 10 * log10(p) : -INFINITY);
	}
	if (*f->last_error)
		g_string_append_printf(out, "error %s\n", f->last_error);
	dev_heap_usage_append(out);
	return 0;
}

static gboolean on_status_tick(gpointer data)
{
	fftd *f = data;
	for (int b = 0; b < f->nbands; b++) {
		f->band_last[b] = f->acc_frames ? f->band_acc[b] / (double)f->acc_frames : 0;
		f->band_acc[b] = 0;
	}
	f->acc_frames = 0;
	dev_status_notify(f->status);
	return G_SOURCE_CONTINUE;
}

static void publish(fftd *f, const dsp_frame *fr)
{
	const float *w = dsp_stft_window(f->stft);
	double ss = 0;
	for (int i = 0; i < fr->size; i++)
		ss += (double)w[i] * w[i];
	double scale = 1.0 / ((double)fr->size * ss);
	int last = fr->nbins - 1;
	for (int k = 0; k <= last; k++) {
		double m2 = (double)fr->X[k][0] * fr->X[k][0] + (double)fr->X[k][1] * fr->X[k][1];
		int single = k == 0 || (k == last && fr->size % 2 == 0);
		f->P[k] = (float)((single ? 1 : 2) * m2 * scale);
	}
	fft_frame_msg m = {.first = fr->first, .size = (uint32_t)fr->size, .hop = (uint32_t)f->cfg.hop, .nbins = (uint32_t)fr->nbins, .window = f->window, .rate_hz = f->rate_hz, .channel = (uint32_t)f->cfg.channel, .P = f->P};
	int n = fft_frame_encode(&m, f->msg, fft_frame_bytes(m.nbins));
	for (int b = 0; b < f->nbands; b++)
		f->band_acc[b] += fft_frame_band(&m, f->band_hz[b][0], f->band_hz[b][1]);
	f->acc_frames++;
	f->nframes++;
	f->last_first = fr->first;
	if (n > 0 && dev_packet_subscribers(f->frames) > 0 && dev_packet_send(f->frames, f->msg, (size_t)n) > 0)
		f->published++;
}


static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	fftd *f = user;
	char *r = g_strndup(reply, len), b[64];
	double rate_hz = audio_reply_field(r, "rate", b, sizeof b) ? g_ascii_strtod(b, NULL) : 0;
	const char *fmt = audio_reply_field(r, "format", b, sizeof b) ? b : "?";
	f->is_float = !strcmp(fmt, "FLOAT_LE");
	f->sample_bytes = (int)item_size;
	g_free(r);
	if (!(rate_hz > 0) || (item_size != 2 && item_size != 4)) {
		g_snprintf(f->last_error, sizeof f->last_error, "audio stream not usable (rate %.0f, %u bytes per frame)",
			   rate_hz, item_size);
		g_warning("%s", f->last_error);
		return;
	}
	if (f->stft && rate_hz == f->rate_hz && dsp_stft_next_index(f->stft) == first)
		return; /* a resumed stream that lost nothing */
	if (f->stft && rate_hz == f->rate_hz) {
		dsp_stft_reset(f->stft, first);
		f->reopened++;
		return;
	}
	dsp_stft_free(f->stft);
	f->rate_hz = rate_hz;
	dsp_stft_params p;
	dsp_stft_params_default(&p);
	p.size = (int)f->cfg.size;
	p.hop = (int)f->cfg.hop;
	p.window = f->window;
	p.rate_hz = rate_hz;
	p.plan = f->plan;
	p.wisdom = f->wisdom;
	const char *why;
	f->stft = dsp_stft_new(&p, first, &why);
	if (!f->stft || dsp_stft_reserve(f->stft, BLOCK) < 0) {
		g_snprintf(f->last_error, sizeof f->last_error, "STFT: %s", f->stft ? "out of memory" : why);
		g_warning("%s", f->last_error);
		dsp_stft_free(f->stft);
		f->stft = NULL;
		return;
	}
	if (!f->x)
		f->x = g_new(float, BLOCK);
	g_message("%s: %.0f Hz %s, frames of %d every %d (%s window)", f->name_data, rate_hz, f->is_float ? "float" : "int",
		  p.size, p.hop, window_name(f->window));
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	fftd *f = user;
	if (!f->stft)
		return;
	if (first != dsp_stft_next_index(f->stft))
		dsp_stft_reset(f->stft, first);
	const char *p = items;
	for (size_t done = 0; done < n;) {
		size_t m = MIN(n - done, (size_t)BLOCK);
		/* Full scale is 1.0 whatever the sample format. */
		if (f->is_float) {
			memcpy(f->x, p, m * sizeof(float));
		} else if (f->sample_bytes == 2) {
			const int16_t *s = (const int16_t *)p;
			for (size_t i = 0; i < m; i++)
				f->x[i] = (float)(s[i] / 32768.0);
		} else {
			const int32_t *s = (const int32_t *)p;
			for (size_t i = 0; i < m; i++)
				f->x[i] = (float)(s[i] / 2147483648.0);
		}
		if (dsp_stft_push(f->stft, f->x, m) < 0)
			return;
		dsp_frame fr;
		while (dsp_stft_next(f->stft, &fr) == 1)
			publish(f, &fr);
		done += m;
		p += m * (size_t)f->sample_bytes;
	}
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	fftd *f = user;
	f->gaps++;
	if (f->stft)
		dsp_stft_reset(f->stft, to);
}

static void on_error(void *user, int err, const char *msg)
{
	fftd *f = user;
	g_snprintf(f->last_error, sizeof f->last_error, "%s refused the stream: %s", f->name_data, msg);
	g_warning("%s", f->last_error);
}

static void on_state(void *user, gboolean up, int err)
{
	fftd *f = user;
	f->connected = up;
	if (!up)
		g_message("%s unreachable (%s); the reader reconnects by itself", f->name_data, g_strerror(-err));
}

static void on_end(void *user, int64_t next)
{
	fftd *f = user;
	g_snprintf(f->last_error, sizeof f->last_error, "%s ended the stream at %" G_GINT64_FORMAT, f->name_data, next);
	g_warning("%s", f->last_error);
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* The values derived from f->cfg (window, plan, bands) and the checks across
 * keys; 0, or -EINVAL with *err. */
static int derive_cfg(fftd *f, GError **err)
{
	f->window = (dsp_window)f->cfg.window;
	f->plan = (dsp_plan_mode)f->cfg.plan;
	if (f->cfg.hop > f->cfg.size) {
		g_set_error(err, CFG_ERROR, EINVAL, "[fft] hop (%" G_GINT64_FORMAT ") must not exceed size (%" G_GINT64_FORMAT ")",
			    f->cfg.hop, f->cfg.size);
		return -EINVAL;
	}
	return parse_bands(f, err);
}

int main(int argc, char **argv)
{
	char *conf = NULL;
	gint64 device = -1, size = 0, hop = 0;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/fft.conf)", "FILE"},
		{"device", 'd', 0, G_OPTION_ARG_INT64, &device, "audio device index", "K"},
		{"size", 0, 0, G_OPTION_ARG_INT64, &size, "samples per frame", "N"},
		{"hop", 0, 0, G_OPTION_ARG_INT64, &hop, "samples between frames", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("fft", "- chorus short-time FFT service", entries, table, NULL, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "fft: %s\n", why);
		return 2;
	}
	fftd f = {0};
	f.last_first = -1;
	if (!cfg_defaults(table, &f.cfg, &err) ||
	    !cfg_load(conf ? conf : "/etc/chorus/fft.conf", conf == NULL, table, &f.cfg, &err)) {
		fprintf(stderr, "fft: %s\n", err->message);
		return 2;
	}
	if (device >= 0)
		f.cfg.device = device;
	if (size > 0)
		f.cfg.size = size;
	if (hop > 0)
		f.cfg.hop = hop;
	if (derive_cfg(&f, &err) < 0) {
		fprintf(stderr, "fft: %s: %s\n", conf ? conf : "/etc/chorus/fft.conf", err->message);
		return 2;
	}
	if (*f.cfg.wisdom) {
		f.wisdom = g_strdup(f.cfg.wisdom);
	} else if (g_getenv("CACHE_DIRECTORY") && *g_getenv("CACHE_DIRECTORY")) {
		/* systemd's CacheDirectory= (a list; the first): survives reboots */
		gchar **dirs = g_strsplit(g_getenv("CACHE_DIRECTORY"), ":", 2);
		f.wisdom = g_build_filename(dirs[0], "fftw-wisdom", NULL);
		g_strfreev(dirs);
	} else {
		char run[DEV_PATH_MAX];
		if (dev_run_dir(run, sizeof run, &why) < 0) {
			fprintf(stderr, "fft: %s\n", why);
			return 2;
		}
		g_mkdir_with_parents(run, 0755);
		f.wisdom = g_build_filename(run, "fft-wisdom", NULL);
	}
	g_snprintf(f.name_data, sizeof f.name_data, "audio/%" G_GINT64_FORMAT "/data", f.cfg.device);
	g_snprintf(f.name_frames, sizeof f.name_frames, "fft/%" G_GINT64_FORMAT "/frames", f.cfg.device);
	g_snprintf(f.name_status, sizeof f.name_status, "fft/%" G_GINT64_FORMAT "/status", f.cfg.device);
	f.P = g_new0(float, f.cfg.size / 2 + 1);
	f.msg = g_malloc(fft_frame_bytes((uint32_t)(f.cfg.size / 2 + 1)));

	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	dev_options o;
	dev_options_init(&o);
	o.queue_limit = (size_t)f.cfg.queue;
	o.overflow = DEV_OVERFLOW_DROP_OLDEST; /* a slow reader loses frames, and is told so */
	dev_packet_ops pops = {0};
	f.frames = dev_packet_new(f.name_frames, &o, NULL, &pops, &f, &err);
	if (f.frames)
		f.status = dev_status_new(f.name_status, NULL, NULL, status_text, NULL, &f, &err);
	char params[32];
	g_snprintf(params, sizeof params, "channels=%" G_GINT64_FORMAT, f.cfg.channel);
	dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};
	if (f.status)
		f.audio = dev_sensor_reader_new(f.name_data, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, params,
						strlen(params), NULL, &ops, &f, &err);
	int rc = 0;
	if (!f.audio) {
		fprintf(stderr, "fft: %s\n", err->message);
		rc = 1;
	} else {
		g_timeout_add((guint)(f.cfg.status_interval_s * 1000), on_status_tick, &f);
		g_unix_signal_add(SIGINT, on_signal, loop);
		g_unix_signal_add(SIGTERM, on_signal, loop);
		sd_notify(0, "READY=1\nSTATUS=publishing fft frames");
		g_main_loop_run(loop);
		sd_notify(0, "STOPPING=1");
	}
	dev_sensor_reader_free(f.audio);
	dev_status_free(f.status);
	dev_packet_free(f.frames);
	dsp_stft_free(f.stft);
	cfg_clear(table, &f.cfg);
	g_free(f.wisdom);
	g_free(f.x);
	g_free(f.P);
	g_free(f.msg);
	g_free(conf);
	g_main_loop_unref(loop);
	return rc;
}
