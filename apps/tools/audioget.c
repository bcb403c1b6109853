/* audioget — fetch audio from audiod by time on any clock, or by frame range.
 *
 *   audioget --clock global --from 14:03:21.250 --to 14:03:23.000 -o call.wav
 *   audioget --clock node3:cpu --from 123456789000 --to 123458789000 -o x.flac
 *   audioget --first 480000 --last 528000 --channels 0,2 -o x.wav
 *   audioget --follow > stream.raw        (or --follow --wav | aplay)
 *
 * Times are integers in the clock's unit (ns; frames for audio clocks), or
 * for ns clocks that follow UTC (utc itself, global steered to it,
 * realtime) a time of day
 * HH:MM:SS[.frac] (today, UTC) or an ISO 8601 date-time.  The output format
 * follows the file's extension (.wav, .flac; libsndfile).  audioget prints the
 * frame range the request resolved to and the conversion's uncertainty.
 * When audiod no longer holds the range (it is older than the ring) or
 * audiod is down, and an archive directory is known (--archive, else
 * $CHORUS_ARCHIVE_DIR, else /var/lib/chorus/archive when it exists), the
 * range is read from chorus-archive's segments instead, with the same
 * reply (first frame's global time and its s.e.; "source=archive"), by
 * frames or by global time (docs/archive.md §4).
 * Exit status: 0 ok, 1 refused or failed, 2 usage.
 */
#include <errno.h>
#include <glib-unix.h>
#include <glib.h>
#include <math.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/serve.h"
#include "archive/store.h"
#include "audiod/request.h"
#include "libdev/dev.h"
#include "libdev/le.h"

typedef struct {
	GMainLoop *loop;
	const char *out;
	gboolean follow;
	gboolean wav; /* --follow: a streaming WAV header first */
	SNDFILE *sf;
	int channels, rate_hz, sample_bytes;
	char format[16];
	int64_t frames, gaps;
	gboolean opened, ended;
	char path[512]; /* the device socket, for messages */
	int rc;
	gboolean fallback; /* audiod does not hold the range or is down: try the archive */
	char why[512];     /* audiod's refusal or the connection error */
} getter;

/* A WAV header for a stream of unknown length: the RIFF and data sizes are
 * 0xFFFFFFFF, which players read as "until the end" (there is no seeking
 * back on a pipe to fill them in). */
static void write_stream_wav_header(getter *g)
{
	uint8_t h[44];
	int fl = !strcmp(g->format, "FLOAT_LE");
	uint32_t block = (uint32_t)(g->sample_bytes * g->channels);
	memcpy(h, "RIFF\xff\xff\xff\xffWAVEfmt ", 16);
	/* RIFF is little-endian whatever the host. */
	le_put32(h + 16, 16);
	le_put16(h + 20, fl ? 3 : 1);
	le_put16(h + 22, (uint16_t)g->channels);
	le_put32(h + 24, (uint32_t)g->rate_hz);
	le_put32(h + 28, (uint32_t)g->rate_hz * block);
	le_put16(h + 32, (uint16_t)block);
	le_put16(h + 34, (uint16_t)(8 * g->sample_bytes));
	memcpy(h + 36, "data\xff\xff\xff\xff", 8);
	if (fwrite(h, 1, sizeof h, stdout) != sizeof h)
		g->rc = 1;
}

/* The file states its own time (audiod's reply: the first frame's time on
 * the requested clock, else global, the frame period there, both with
 * their standard errors, in the clock's units): in the WAV's LIST/INFO
 * comment or the FLAC's Vorbis comment, and on standard error, so an event
 * inside the file can be timed without audiod's numbering. */
static void stamp_time(getter *g, const void *reply, size_t len)
{
	char *r = g_strndup(reply, len), c[64], t0[64], se[64], per[64], pse[64];
	if (audio_reply_field(r, "t0_clock", c, sizeof c) && audio_reply_field(r, "t0", t0, sizeof t0) &&
	    strcmp(t0, "none") && audio_reply_field(r, "t0_se", se, sizeof se) &&
	    audio_reply_field(r, "period", per, sizeof per) && audio_reply_field(r, "period_se", pse, sizeof pse)) {
		char *text = g_strdup_printf("chorus t0_clock=%s t0=%s t0_se=%s period=%s period_se=%s "
					     "(first frame's time and the frame period on that clock, with their standard errors)",
					     c, t0, se, per, pse);
		if (sf_set_string(g->sf, SF_STR_COMMENT, text) != 0) {
			fprintf(stderr, "audioget: %s: cannot store the time in the file: %s\n", g->out, sf_strerror(g->sf));
			g->rc = 1;
		}
		fprintf(stderr, "audioget: first frame at %s %s (s.e. %s), frame period %s (s.e. %s)\n", c, t0, se, per, pse);
		g_free(text);
	} else {
		fprintf(stderr, "audioget: audiod stated no time for the first frame (%s); the file carries none\n",
			audio_reply_field(r, "t0", t0, sizeof t0) ? t0 : "no t0");
	}
	g_free(r);
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	getter *g = user;
	char *r = g_strndup(reply, len), b[64];
	g->opened = TRUE;
	fprintf(stderr, "audioget: %s\n", r);
	g->rate_hz = atoi(audio_reply_field(r, "rate", b, sizeof b) ? b : "0");
	g->channels = atoi(audio_reply_field(r, "channels", b, sizeof b) ? b : "0");
	g_strlcpy(g->format, audio_reply_field(r, "format", b, sizeof b) ? b : "?", sizeof g->format);
	g->sample_bytes = g->channels ? (int)item_size / g->channels : 0;
	g_free(r);
	if (g->follow) {
		if (g->wav)
			write_stream_wav_header(g);
		return;
	}
	SF_INFO info = {.samplerate = g->rate_hz, .channels = g->channels};
	int major = g_str_has_suffix(g->out, ".flac") ? SF_FORMAT_FLAC : SF_FORMAT_WAV;
	int sub = !strcmp(g->format, "FLOAT_LE") ? SF_FORMAT_FLOAT
		  : g->sample_bytes == 4         ? SF_FORMAT_PCM_32
		  : g->sample_bytes == 3         ? SF_FORMAT_PCM_24
						 : SF_FORMAT_PCM_16;
	if (major == SF_FORMAT_FLAC && sub != SF_FORMAT_PCM_16)
		sub = SF_FORMAT_PCM_24; /* FLAC has no float or 32-bit samples */
	info.format = major | sub;
	g->sf = sf_open(g->out, SFM_WRITE, &info);
	if (!g->sf) {
		fprintf(stderr, "audioget: %s: %s\n", g->out, sf_strerror(NULL));
		g->rc = 1;
		g_main_loop_quit(g->loop);
		return;
	}
	stamp_time(g, reply, len);
}

/* S24_3LE frames to the file: libsndfile takes 24-bit samples as ints in
 * the top 24 bits, so each packed little-endian sample is widened, in
 * chunks.  Returns the frames written (n on success). */
static sf_count_t write_s24_3le(SNDFILE *sf, const void *items, size_t n, int channels)
{
	const uint8_t *p = items;
	int32_t buf[4096];
	size_t per = sizeof buf / sizeof buf[0] / (size_t)channels, done = 0;
	while (done < n) {
		size_t k = MIN(per, n - done);
		for (size_t i = 0; i < k * (size_t)channels; i++, p += 3)
			buf[i] = (int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24);
		sf_count_t w = sf_writef_int(sf, buf, (sf_count_t)k);
		if (w != (sf_count_t)k)
			return (sf_count_t)done + (w > 0 ? w : 0);
		done += k;
	}
	return (sf_count_t)n;
}

static void write_items(getter *g, const void *items, size_t n)
{
	if (g->follow) {
		if (fwrite(items, (size_t)(g->sample_bytes * g->channels), n, stdout) != n) {
			if (!g->rc)
				fprintf(stderr, "audioget: standard output: %s; %" G_GINT64_FORMAT " frames written before\n",
					g_strerror(errno), g->frames);
			g->rc = 1;
			g_main_loop_quit(g->loop);
		}
		return;
	}
	if (!g->sf)
		return;
	sf_count_t w;
	if (!strcmp(g->format, "FLOAT_LE"))
		w = sf_writef_float(g->sf, items, (sf_count_t)n);
	else if (g->sample_bytes == 4)
		w = sf_writef_int(g->sf, items, (sf_count_t)n);
	else if (g->sample_bytes == 3)
		w = write_s24_3le(g->sf, items, n, g->channels);
	else
		w = sf_writef_short(g->sf, items, (sf_count_t)n);
	if (w != (sf_count_t)n) {
		fprintf(stderr, "audioget: %s: %s\n", g->out, sf_strerror(g->sf));
		g->rc = 1;
		g_main_loop_quit(g->loop);
	}
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	getter *g = user;
	write_items(g, items, n);
	g->frames += (int64_t)n;
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	getter *g = user;
	/* A file keeps its time base: the lost frames become silence, and the
	 * gap is reported, never hidden. */
	fprintf(stderr, "audioget: gap: frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were lost; written as zeros\n",
		from, to);
	size_t bytes = (size_t)(g->sample_bytes * g->channels) * 4096;
	void *z = g_malloc0(bytes);
	for (int64_t left = to - from; left > 0; left -= 4096)
		write_items(g, z, (size_t)(left < 4096 ? left : 4096));
	g_free(z);
	g->gaps++;
}

static void on_end(void *user, int64_t next)
{
	getter *g = user;
	g->ended = TRUE;
	g_main_loop_quit(g->loop);
}

static void on_error(void *user, int err, const char *msg)
{
	getter *g = user;
	if (err == -ERANGE && !g->follow) {
		/* Older than the ring (or the history audiod kept): the
		 * archive may hold it. */
		g->fallback = TRUE;
		g_snprintf(g->why, sizeof g->why, "refused: %s", msg);
	} else {
		fprintf(stderr, "audioget: refused: %s\n", msg);
		g->rc = 1;
	}
	g_main_loop_quit(g->loop);
}

static void on_state(void *user, gboolean up, int err)
{
	getter *g = user;
	if (up)
		return;
	/* Following, wait for audiod to come (back); a one-shot fetch that
	 * never reached it fails instead of waiting forever. */
	if (g->follow || g->opened) {
		fprintf(stderr, "audioget: audiod unreachable (%s); retrying\n", g_strerror(-err));
		return;
	}
	g_snprintf(g->why, sizeof g->why, "audiod unreachable at %s: %s", g->path, g_strerror(-err));
	g->fallback = TRUE;
	g_main_loop_quit(g->loop);
}

static void ar_data(void *user, int64_t first, const void *frames, size_t n)
{
	on_data(user, first, frames, n);
}

static void ar_gap(void *user, int64_t from, int64_t to)
{
	on_gap(user, from, to);
}

static const archive_read_ops archive_ops = {NULL, ar_data, ar_gap};

/* Answer the request from the archive in dir: the same file, the same
 * reply.  Sets g->rc. */
static void from_archive(getter *g, const char *dir, const archive_request *q)
{
	GError *err = NULL;
	archive_store *s = archive_store_open(dir, FALSE, &err);
	archive_answer a;
	if (!s || !archive_resolve(s, q, &a, &err)) {
		fprintf(stderr, "audioget: %s; the archive: %s\n", g->why, err->message);
		g_error_free(err);
		archive_store_free(s);
		g->rc = 1;
		return;
	}
	fprintf(stderr, "audioget: %s; reading the archive %s\n", g->why, dir);
	unsigned fb = archive_sample_bytes(a.x->format) * a.x->channels;
	on_opened(g, a.first, a.last, fb, a.reply, strlen(a.reply));
	if (g->rc)
		goto out;
	if (archive_store_read(s, q->node, q->device, a.first, a.last, &archive_ops, g, &err) < 0) {
		fprintf(stderr, "audioget: %s\n", err->message);
		g_error_free(err);
		g->rc = 1;
		goto out;
	}
	g->ended = TRUE;
out:
	archive_store_free(s);
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char *clock = NULL, *from = NULL, *to = NULL, *channels = NULL, *out = NULL, *archive_dir = NULL;
	gint64 node = -1, device = 0, first = INT64_MIN, last = INT64_MIN; /* INT64_MIN: not given */
	gboolean follow = FALSE, wav = FALSE;
	GOptionEntry entries[] = {
		{"node", 'N', 0, G_OPTION_ARG_INT64, &node, "node to ask: through its chorus-proxy when the nodes file lists it, else a simulated node here (CHORUS_NODE)", "N"},
		{"device", 'd', 0, G_OPTION_ARG_INT64, &device, "audio device index (default 0)", "K"},
		{"clock", 'c', 0, G_OPTION_ARG_STRING, &clock, "clock of --from/--to (global, utc, cpu, node3:cpu, …)", "CLOCK"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &from, "start time on CLOCK", "T0"},
		{"to", 0, 0, G_OPTION_ARG_STRING, &to, "end time on CLOCK (exclusive)", "T1"},
		{"first", 0, 0, G_OPTION_ARG_INT64, &first, "first frame (instead of times)", "F"},
		{"last", 0, 0, G_OPTION_ARG_INT64, &last, "one past the last frame", "F"},
		{"channels", 0, 0, G_OPTION_ARG_STRING, &channels, "channels to keep, e.g. 0,2", "LIST"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "output file (.wav or .flac)", "FILE"},
		{"archive", 'A', 0, G_OPTION_ARG_FILENAME, &archive_dir, "chorus-archive's directory, read when audiod no longer holds the range (default $CHORUS_ARCHIVE_DIR or /var/lib/chorus/archive)", "DIR"},
		{"follow", 0, 0, G_OPTION_ARG_NONE, &follow, "stream raw interleaved samples to stdout from now on", NULL},
		{"wav", 0, 0, G_OPTION_ARG_NONE, &wav, "with --follow: a WAV stream (header first) instead of raw", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("- fetch audio from audiod by time or frames");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "audioget: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	if (!follow && !out) {
		fprintf(stderr, "audioget: say where to write (-o FILE.wav) or --follow\n");
		return 2;
	}
	if (out && !g_str_has_suffix(out, ".wav") && !g_str_has_suffix(out, ".flac")) {
		fprintf(stderr, "audioget: -o %s: audioget writes .wav or .flac files (the name says which)\n", out);
		return 2;
	}
	if (clock && (first != INT64_MIN || last != INT64_MIN)) {
		fprintf(stderr, "audioget: give either --clock with --from/--to or --first/--last, not both\n");
		return 2;
	}
	if (!clock && (from || to)) {
		fprintf(stderr, "audioget: --from/--to need --clock (global, cpu, node3:cpu, …)\n");
		return 2;
	}
	if ((first != INT64_MIN && first < 0) || (last != INT64_MIN && last < 0)) {
		fprintf(stderr, "audioget: --first/--last: frame indices are 0 or more\n");
		return 2;
	}
	if (first == INT64_MIN)
		first = -1;
	if (last == INT64_MIN)
		last = -1;
	if (!follow && first >= 0 && last < 0) {
		fprintf(stderr, "audioget: a file needs --last with --first (or use --follow)\n");
		return 2;
	}
	if (!follow && !clock && first < 0) {
		fprintf(stderr, "audioget: give --clock with --from/--to, or --first/--last\n");
		return 2;
	}
	if (node >= 0 && node <= UINT32_MAX) /* remote through its chorus-proxy when the nodes file lists it */
		dev_remote_use_node((uint32_t)node);
	archive_request aq = {.device = (uint32_t)device, .first = first, .last = last};
	const char *envnode = g_getenv("CHORUS_NODE");
	aq.node = (uint32_t)(node >= 0 ? node : envnode && *envnode ? atoll(envnode)
								    : 0);
	GString *params = g_string_new(NULL);
	if (channels)
		g_string_append_printf(params, "channels=%s ", channels);
	if (clock) {
		int64_t t0, t1;
		if (!from || archive_parse_time(from, &t0) < 0 || (to && archive_parse_time(to, &t1) < 0)) {
			fprintf(stderr, "audioget: --from/--to must be integers in the clock's unit, HH:MM:SS.frac or ISO 8601\n");
			return 2;
		}
		g_string_append_printf(params, "clock=%s from=%" G_GINT64_FORMAT, clock, t0);
		aq.by_time = !strcmp(clock, "global");
		aq.from_ns = t0;
		aq.to_ns = to ? t1 : INT64_MAX;
		if (to)
			g_string_append_printf(params, " to=%" G_GINT64_FORMAT, t1);
		else if (!follow) {
			fprintf(stderr, "audioget: a file needs --to\n");
			return 2;
		}
	}
	getter g = {.loop = g_main_loop_new(NULL, FALSE), .out = out, .follow = follow, .wav = wav};
	char name[32];
	g_snprintf(name, sizeof name, "audio/%" G_GINT64_FORMAT "/data", device);
	const char *why;
	dev_remote_target rt;
	gboolean remote = dev_remote_parse(name, &rt, &why) == 1;
	if (remote)
		g_strlcpy(g.path, rt.label, sizeof g.path);
	else if (dev_path(name, g.path, sizeof g.path, &why) < 0)
		g_strlcpy(g.path, name, sizeof g.path);
	dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};
	uint32_t flags = (first < 0 && !clock) ? DEV_SENSOR_FROM_NEXT : 0;
	dev_sensor_reader *r = dev_sensor_reader_new(name, first < 0 ? 0 : first, last < 0 ? DEV_SENSOR_OPEN_END : last,
						     flags, params->str, params->len, NULL, &ops, &g, &err);
	if (!r) {
		fprintf(stderr, "audioget: %s\n", err->message);
		return 2;
	}
	g_unix_signal_add(SIGINT, on_signal, g.loop);
	g_unix_signal_add(SIGTERM, on_signal, g.loop);
	g_main_loop_run(g.loop);
	dev_sensor_reader_free(r);
	if (g.fallback) {
		const char *env = g_getenv("CHORUS_ARCHIVE_DIR");
		const char *dir = archive_dir ? archive_dir : env && *env ? env
									  : "/var/lib/chorus/archive";
		if (remote && !archive_dir) {
			fprintf(stderr, "audioget: %s; the archive is on node %u: run audioget there, or give -A\n", g.why, rt.node);
			g.rc = 1;
		} else if (channels) {
			fprintf(stderr, "audioget: %s; the archive keeps every channel: ask without --channels\n", g.why);
			g.rc = 1;
		} else if (clock && !aq.by_time) {
			fprintf(stderr, "audioget: %s; the archive answers by frames or by --clock global, not %s\n", g.why, clock);
			g.rc = 1;
		} else if (!archive_dir && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
			fprintf(stderr, "audioget: %s (no archive at %s)\n", g.why, dir);
			g.rc = 1;
		} else {
			from_archive(&g, dir, &aq);
		}
	}
	if (g.sf && sf_close(g.sf) != 0) {
		fprintf(stderr, "audioget: %s: closing failed\n", out);
		g.rc = 1;
	}
	if (g.follow && fflush(stdout) != 0 && !g.rc) {
		/* The last frames sat in stdio's buffer. */
		fprintf(stderr, "audioget: standard output: %s\n", g_strerror(errno));
		g.rc = 1;
	}
	if (!g.rc && !g.follow && !g.ended) {
		/* Interrupted: the file holds less than the range asked for. */
		fprintf(stderr, "audioget: interrupted after %" G_GINT64_FORMAT " frames; %s is incomplete\n", g.frames,
			out);
		g.rc = 1;
	}
	if (!g.rc)
		fprintf(stderr, "audioget: %" G_GINT64_FORMAT " frames%s%s, %" G_GINT64_FORMAT " gap%s\n", g.frames,
			out ? " to " : "", out ? out : "", g.gaps, g.gaps == 1 ? "" : "s");
	g_string_free(params, TRUE);
	g_main_loop_unref(g.loop);
	g_free(clock);
	g_free(from);
	g_free(to);
	g_free(channels);
	g_free(out);
	g_free(archive_dir);
	return g.rc;
}
