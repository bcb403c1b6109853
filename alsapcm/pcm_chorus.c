/* pcm_chorus.c — ALSA PCM `type chorus`: any ALSA capture program reads
 * audiod's ring (docs/audiod.md "ALSA programs"), as one more client of
 * the sensor device audio/<k>/data beside every other.
 *
 *   arecord -D chorus:0 -f S16_LE -r 48000 -c 2 x.wav
 *   arecord -D chorus:DEV=0,START=-5 ...            (from 5 s before the start)
 *   arecord -D plug:chorus -f FLOAT_LE -r 44100 ... (ALSA converts)
 *
 * An ioplug (alsa-lib's external PCM SDK) that offers exactly what audiod
 * serves: its rate and sample format, 1 to all of its channels (c channels
 * are audiod's 0..c-1, or the `channels` list), so the samples are the
 * ring's bit for bit; `plug:` on top converts.  The frames come through
 * alsapcm/feed.h (a libdev sensor client on its own thread, flow-controlled
 * by a buffer of twice the PCM's buffer).  hw_ptr is the application
 * pointer plus the frames buffered, at most a buffer: a slow reader is
 * behind, never overrun, until it falls behind audiod's ring.
 *
 * Where a stream starts: the first start after snd_pcm_open starts at
 * `start_global_ns` (global time, ns), else `start` seconds from now on the
 * node's cpu clock (negative: the past, from audiod's history), else at
 * audiod's next frame; audiod resolves the time to a frame and refuses a
 * time before its ring (start then fails with its reason).  A break — a gap
 * in audiod's frames (its overrun, its restart, this client behind the
 * ring), audiod going away — is an xrun (-EPIPE) once the frames before it
 * are read; snd_pcm_prepare and a new start go on from audiod's next frame
 * (START applies to the first start only).
 *
 * ALSA configuration fields (alsapcm/chorus.conf defines pcm.chorus
 * with them as arguments; an empty value means "not given"):
 *   device K|NAME      audio/K/data, or a sensor device name (default 0)
 *   start S            seconds relative to the start, may be negative
 *   start_global_ns NS start at this global time instead
 *   channels LIST      audiod's channels to deliver, in order (0,2 or 0+2)
 * CHORUS_RUN and CHORUS_NODE choose the run directory as for every client
 * (docs/protocol.md "Names and paths").
 */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "alsapcm/feed.h"
#include "libdev/path.h"
#include "libdev/wire.h"
#include "libsync/now.h"

/* How long snd_pcm_open waits for audiod to say what it serves, and the
 * first start for audiod to accept the stream, ms: a local socket answers
 * in microseconds; this only bounds a hung audiod. */
#define PROBE_MS 3000

typedef struct {
	snd_pcm_ioplug_t io;
	char device[64];
	chorus_feed *feed;
	chorus_feed_info info;
	snd_pcm_format_t format;
	unsigned sample_bytes;
	char chan_list[256]; /* "channels" field as audiod's text (commas), or "" */
	unsigned n_list;     /* channels in chan_list */
	int have_start, have_global;
	double start_s;
	int64_t start_global_ns;
	int started_once; /* START applies to the first start only */
	snd_pcm_uframes_t boundary, avail_min;
	snd_pcm_uframes_t last_appl; /* io->appl_ptr when last seen */
	uint64_t pos;                /* io->appl_ptr unwrapped: stream position */
	int reported;                /* this break's reason was printed */
	uint8_t *scratch;            /* non-interleaved transfers */
	size_t scratch_frames;
} chorus_pcm;

/* io->appl_ptr as an unwrapped stream position. */
static uint64_t stream_pos(chorus_pcm *p)
{
	snd_pcm_uframes_t a = p->io.appl_ptr;
	snd_pcm_uframes_t d = a >= p->last_appl ? a - p->last_appl : p->boundary - p->last_appl + a;
	p->pos += d;
	p->last_appl = a;
	return p->pos;
}

static void report_break(chorus_pcm *p, const char *why)
{
	if (!p->reported)
		SNDERR("chorus: %s", why && *why ? why : "the stream broke");
	p->reported = 1;
}

static snd_pcm_sframes_t cb_pointer(snd_pcm_ioplug_t *io)
{
	chorus_pcm *p = io->private_data;
	gboolean broken;
	const char *why;
	uint64_t pos = stream_pos(p);
	size_t avail = chorus_feed_avail(p->feed, pos, &broken, &why);
	if (!avail && broken) {
		report_break(p, why);
		return -EPIPE;
	}
	snd_pcm_uframes_t n = avail < io->buffer_size ? avail : io->buffer_size;
	return (snd_pcm_sframes_t)((io->appl_ptr + n) % p->boundary);
}

static int cb_start(snd_pcm_ioplug_t *io)
{
	chorus_pcm *p = io->private_data;
	GString *params = g_string_new(NULL);
	uint32_t flags = 0;
	if (p->n_list)
		g_string_append_printf(params, "channels=%s ", p->chan_list);
	else if (io->channels < p->info.channels) {
		g_string_append(params, "channels=0");
		for (unsigned c = 1; c < io->channels; c++)
			g_string_append_printf(params, ",%u", c);
		g_string_append_c(params, ' ');
	}
	int first_start = !p->started_once;
	char asked[96] = "the stream from audiod's next frame";
	if (first_start && p->have_global) {
		g_string_append_printf(params, "clock=global from=%" G_GINT64_FORMAT, p->start_global_ns);
		g_snprintf(asked, sizeof asked, "START_GLOBAL_NS=%" G_GINT64_FORMAT, p->start_global_ns);
	} else if (first_start && p->have_start) {
		int64_t t = sync_now(SYNC_KIND_CPU) + (int64_t)llround(p->start_s * 1e9);
		g_string_append_printf(params, "clock=cpu from=%" G_GINT64_FORMAT, t);
		g_snprintf(asked, sizeof asked, "START=%g s (cpu time %" G_GINT64_FORMAT " ns)", p->start_s, t);
	} else {
		flags = DEV_SENSOR_FROM_NEXT;
	}
	char why[512];
	p->pos = 0;
	p->last_appl = io->appl_ptr;
	p->reported = 0;
	size_t frame_bytes = (size_t)io->channels * p->sample_bytes;
	int rc = chorus_feed_start(p->feed, params->str, flags, 2 * io->buffer_size, frame_bytes,
				   first_start ? PROBE_MS : 0, NULL, why, sizeof why);
	g_string_free(params, TRUE);
	if (rc < 0) {
		SNDERR("chorus: %s: %s", asked, why);
		return rc;
	}
	p->started_once = 1;
	return 0;
}

static int cb_stop(snd_pcm_ioplug_t *io)
{
	chorus_pcm *p = io->private_data;
	chorus_feed_stop(p->feed);
	return 0;
}

static int cb_prepare(snd_pcm_ioplug_t *io)
{
	chorus_pcm *p = io->private_data;
	chorus_feed_stop(p->feed);
	p->pos = 0;
	p->last_appl = 0; /* ioplug's prepare resets appl_ptr */
	return 0;
}

/* Scatter n interleaved frames of `nch` channels into areas at offset. */
static void scatter(chorus_pcm *p, const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t offset, const uint8_t *src,
		    size_t n, unsigned nch)
{
	for (unsigned c = 0; c < nch; c++) {
		const snd_pcm_channel_area_t *a = &areas[c];
		uint8_t *base = (uint8_t *)a->addr + a->first / 8;
		size_t step = a->step / 8;
		for (size_t i = 0; i < n; i++)
			memcpy(base + (offset + i) * step, src + (i * nch + c) * p->sample_bytes, p->sample_bytes);
	}
}

static snd_pcm_sframes_t cb_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
				     snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
	chorus_pcm *p = io->private_data;
	uint64_t pos = stream_pos(p);
	chorus_feed_consume_to(p->feed, pos);
	unsigned nch = io->channels, bits = p->sample_bytes * 8;
	gboolean interleaved = TRUE;
	for (unsigned c = 0; c < nch; c++)
		if (areas[c].addr != areas[0].addr || areas[c].first != areas[0].first + c * bits ||
		    areas[c].step != nch * bits)
			interleaved = FALSE;
	size_t got;
	if (interleaved && areas[0].first % 8 == 0) {
		got = chorus_feed_read(p->feed, pos,
				       (uint8_t *)areas[0].addr + areas[0].first / 8 + offset * (size_t)nch * p->sample_bytes,
				       size);
	} else {
		if (p->scratch_frames < size) {
			uint8_t *s = realloc(p->scratch, size * (size_t)nch * p->sample_bytes);
			if (!s)
				return -ENOMEM;
			p->scratch = s;
			p->scratch_frames = size;
		}
		got = chorus_feed_read(p->feed, pos, p->scratch, size);
		scatter(p, areas, offset, p->scratch, got, nch);
	}
	if (!got) {
		gboolean broken;
		const char *why;
		chorus_feed_avail(p->feed, pos, &broken, &why);
		if (broken) {
			report_break(p, why);
			return -EPIPE;
		}
	}
	return (snd_pcm_sframes_t)got;
}

static int cb_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
	chorus_pcm *p = io->private_data;
	p->avail_min = io->period_size; /* ALSA's default until sw_params */
	chorus_feed_set_avail_min(p->feed, p->avail_min);
	return 0;
}

static int cb_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
	chorus_pcm *p = io->private_data;
	snd_pcm_uframes_t v;
	if (snd_pcm_sw_params_get_avail_min(params, &v) == 0) {
		p->avail_min = v ? v : 1;
		chorus_feed_set_avail_min(p->feed, p->avail_min);
	}
	if (snd_pcm_sw_params_get_boundary(params, &v) == 0 && v)
		p->boundary = v;
	return 0;
}

static int cb_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds, unsigned short *revents)
{
	chorus_pcm *p = io->private_data;
	gboolean broken;
	const char *why;
	size_t avail = chorus_feed_avail(p->feed, stream_pos(p), &broken, &why);
	if (!avail && broken) {
		/* ALSA turns POLLERR into -EPIPE only in the XRUN state, which it
		 * otherwise learns from the pointer callback. */
		report_break(p, why);
		snd_pcm_ioplug_set_state(io, SND_PCM_STATE_XRUN);
		*revents = POLLERR;
	} else if (io->state == SND_PCM_STATE_RUNNING && (avail >= p->avail_min || (broken && avail)))
		*revents = POLLIN;
	else
		*revents = 0;
	return 0;
}

static void plugin_free(chorus_pcm *p)
{
	chorus_feed_free(p->feed);
	free(p->scratch);
	free(p);
}

static int cb_close(snd_pcm_ioplug_t *io)
{
	plugin_free(io->private_data);
	return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
	.start = cb_start,
	.stop = cb_stop,
	.pointer = cb_pointer,
	.transfer = cb_transfer,
	.close = cb_close,
	.hw_params = cb_hw_params,
	.sw_params = cb_sw_params,
	.prepare = cb_prepare,
	.poll_revents = cb_poll_revents,
};

/* ---- configuration ------------------------------------------------------ */

typedef struct {
	char *device, *start, *start_global_ns, *channels;
} options;

static void options_free(options *o)
{
	free(o->device);
	free(o->start);
	free(o->start_global_ns);
	free(o->channels);
}

static int parse_options(snd_config_t *conf, options *o)
{
	snd_config_iterator_t i, next;
	snd_config_for_each(i, next, conf)
	{
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *id;
		char **slot = NULL;
		if (snd_config_get_id(n, &id) < 0)
			continue;
		if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint"))
			continue;
		if (!strcmp(id, "device"))
			slot = &o->device;
		else if (!strcmp(id, "start"))
			slot = &o->start;
		else if (!strcmp(id, "start_global_ns"))
			slot = &o->start_global_ns;
		else if (!strcmp(id, "channels"))
			slot = &o->channels;
		if (!slot) {
			SNDERR("chorus: unknown field '%s' (known: device start start_global_ns channels)", id);
			return -EINVAL;
		}
		free(*slot);
		*slot = NULL;
		if (snd_config_get_ascii(n, slot) < 0) {
			SNDERR("chorus: field '%s' must be a string or a number", id);
			return -EINVAL;
		}
		if (!**slot) {
			free(*slot);
			*slot = NULL;
		}
	}
	return 0;
}

/* The options into *p (before the device is asked anything). */
static int setup(chorus_pcm *p, const options *o)
{
	const char *d = o->device ? o->device : "0", *why;
	char *end;
	errno = 0;
	long k = strtol(d, &end, 10);
	if (end != d && !*end && !errno) {
		if (k < 0 || k > 99) {
			SNDERR("chorus: device '%s' is not an audio device number 0..99", d);
			return -EINVAL;
		}
		g_snprintf(p->device, sizeof p->device, "audio/%ld/data", k);
	} else if (dev_name_check(d, &why) < 0 || strlen(d) >= sizeof p->device) {
		SNDERR("chorus: device '%s' is neither a number nor a device name: %s", d,
		       strlen(d) >= sizeof p->device ? "too long" : why);
		return -EINVAL;
	} else
		g_strlcpy(p->device, d, sizeof p->device);
	if (o->start) {
		errno = 0;
		p->start_s = strtod(o->start, &end);
		if (end == o->start || *end || errno || !isfinite(p->start_s) || fabs(p->start_s) > 86400) {
			SNDERR("chorus: start '%s' is not a number of seconds in [-86400, 86400]", o->start);
			return -EINVAL;
		}
		p->have_start = 1;
	}
	if (o->start_global_ns) {
		errno = 0;
		long long v = strtoll(o->start_global_ns, &end, 10);
		if (end == o->start_global_ns || *end || errno) {
			SNDERR("chorus: start_global_ns '%s' is not an integer number of ns", o->start_global_ns);
			return -EINVAL;
		}
		p->start_global_ns = v;
		p->have_global = 1;
	}
	if (p->have_start && p->have_global) {
		SNDERR("chorus: give start or start_global_ns, not both");
		return -EINVAL;
	}
	return 0;
}

/* The channels list ("0,2" or "0+2") against the device's channel count. */
static int parse_channels(chorus_pcm *p, const char *text)
{
	gchar **v = g_strsplit_set(text, ",+ ", -1);
	GString *s = g_string_new(NULL);
	int rc = 0;
	p->n_list = 0;
	for (gchar **c = v; *c; c++) {
		if (!**c)
			continue;
		char *end;
		errno = 0;
		unsigned long ch = strtoul(*c, &end, 10);
		if (end == *c || *end || errno || ch >= p->info.channels) {
			SNDERR("chorus: channels '%s': '%s' is not a channel of %s (0..%u)", text, *c, p->device,
			       p->info.channels - 1);
			rc = -EINVAL;
			break;
		}
		g_string_append_printf(s, "%s%lu", p->n_list ? "," : "", ch);
		p->n_list++;
	}
	if (!rc && !p->n_list) {
		SNDERR("chorus: channels '%s' names no channel", text);
		rc = -EINVAL;
	}
	if (!rc && s->len >= sizeof p->chan_list) {
		SNDERR("chorus: channels '%s' is too long", text);
		rc = -EINVAL;
	}
	if (!rc)
		g_strlcpy(p->chan_list, s->str, sizeof p->chan_list);
	g_string_free(s, TRUE);
	g_strfreev(v);
	return rc;
}

static int set_constraints(chorus_pcm *p)
{
	static const unsigned access[] = {
		SND_PCM_ACCESS_RW_INTERLEAVED,
		SND_PCM_ACCESS_RW_NONINTERLEAVED,
		SND_PCM_ACCESS_MMAP_INTERLEAVED,
		SND_PCM_ACCESS_MMAP_NONINTERLEAVED,
	};
	unsigned format = (unsigned)p->format;
	unsigned lo = p->n_list ? p->n_list : 1, hi = p->n_list ? p->n_list : p->info.channels;
	int rc;
	if ((rc = snd_pcm_ioplug_set_param_list(&p->io, SND_PCM_IOPLUG_HW_ACCESS, 4, access)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_list(&p->io, SND_PCM_IOPLUG_HW_FORMAT, 1, &format)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_CHANNELS, lo, hi)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_RATE, p->info.rate_hz, p->info.rate_hz)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1u << 22)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&p->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128, 1u << 26)) < 0)
		return rc;
	return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(chorus)
{
	options o;
	int rc;
	char why[512];
	const char *w;
	(void)root;
	memset(&o, 0, sizeof o);
	if (stream != SND_PCM_STREAM_CAPTURE) {
		SNDERR("chorus: capture only (it reads audiod's ring)");
		return -EINVAL;
	}
	chorus_pcm *p = calloc(1, sizeof *p);
	if (!p)
		return -ENOMEM;
	p->boundary = (snd_pcm_uframes_t)LONG_MAX; /* until sw_params gives the real one */
	if ((rc = parse_options(conf, &o)) < 0 || (rc = setup(p, &o)) < 0)
		goto fail;
	if (sync_now_init(&w) < 0) {
		SNDERR("chorus: %s", w);
		rc = -EINVAL;
		goto fail;
	}
	if ((rc = chorus_feed_probe(p->device, PROBE_MS, &p->info, why, sizeof why)) < 0) {
		SNDERR("chorus: %s", why);
		goto fail;
	}
	p->format = snd_pcm_format_value(p->info.format);
	p->sample_bytes = p->info.item_size / p->info.channels;
	if (p->format == SND_PCM_FORMAT_UNKNOWN ||
	    (unsigned)snd_pcm_format_physical_width(p->format) != 8 * p->sample_bytes) {
		SNDERR("chorus: %s serves format %s in %u-byte samples, which ALSA does not know so", p->device,
		       p->info.format, p->sample_bytes);
		rc = -EINVAL;
		goto fail;
	}
	if (o.channels && (rc = parse_channels(p, o.channels)) < 0)
		goto fail;
	GError *err = NULL;
	p->feed = chorus_feed_new(p->device, &err);
	if (!p->feed) {
		SNDERR("chorus: %s", err->message);
		g_error_free(err);
		rc = -ENOMEM;
		goto fail;
	}
	p->io.version = SND_PCM_IOPLUG_VERSION;
	p->io.name = "chorus: audiod's ring";
	p->io.callback = &callbacks;
	p->io.private_data = p;
	p->io.poll_fd = chorus_feed_fd(p->feed);
	p->io.poll_events = POLLIN;
	p->io.mmap_rw = 0;
	p->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA | SND_PCM_IOPLUG_FLAG_MONOTONIC;
	if ((rc = snd_pcm_ioplug_create(&p->io, name, stream, mode)) < 0)
		goto fail;
	if ((rc = set_constraints(p)) < 0) {
		snd_pcm_ioplug_delete(&p->io); /* calls cb_close, which frees p */
		options_free(&o);
		return rc;
	}
	options_free(&o);
	*pcmp = p->io.pcm;
	return 0;
fail:
	options_free(&o);
	plugin_free(p);
	return rc;
}

SND_PCM_PLUGIN_SYMBOL(chorus);
