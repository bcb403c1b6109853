/* device.c — one audio device's client-facing side (see device.h). */
#include "audiod/device.h"
#include "libdev/heap.h"
#include "audiod/device_timehist.h"
#include "audiod/devtime.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audiod/archived.h"
#include "audiod/numline.h"
#include "audiod/request.h"
#include "audiod/follow.h"
#include "audiod/ringserver.h"
#include "libdev/dev.h"
#include "libsync/now.h"
#include "timehist/timehist.h"

/* Observations forwarded to syncd: the earliest-looking (least latency)
 * observation of each batch of this many. */
#define FORWARD_BATCH 10

typedef struct {
	uint32_t nchan;                    /* channels sent */
	uint16_t chan[AUDIO_MAX_CHANNELS]; /* which, in order */
	uint8_t *tmp;                      /* whole frames read from the ring */
	size_t tmp_frames;
	audiod_archive *ar; /* frames older than the ring, from chorus-archive (or NULL) */
} client_ctx;

struct audio_dev {
	int k;
	uint32_t node;
	sync_clock_id audio_clock, cpu_clock;
	char name_data[32], name_status[32], name_ring[32], name_follow[32];
	stream *st;
	audio_ring *ring;
	uint32_t rate_hz, channels, sample_bytes, frame_bytes;
	snd_pcm_format_t format;
	timehist *th;
	int64_t floor_ns;   /* calibrated latency floor subtracted from every timestamp */
	double floor_sd_ns; /* its standard error: the pair's systematic term in syncd */
	double sent_sys_ns; /* systematic term last sent to syncd (send_pair) */
	sync_client *clocks;
	dev_sensor *data;
	dev_status *status;
	ringserver *rs;
	followserver *fs; /* audio/<k>/follow */
	dev_caller *sync;
	/* forwarding to syncd */
	GString *pending; /* "obs A B x y ..." being built */
	guint npending;
	int64_t best_frame, best_cpu; /* best of the current batch */
	double best_resid;
	guint batch;
	gboolean need_reset; /* a break to tell syncd about */
	guint64 forwarded, forward_failed;
	guint64 opens, refused;   /* sensor requests */
	gboolean fresh_numbering; /* frame 0 is this run's first frame (no continuation) */
	GMainContext *ctx;        /* where the devices live */
	gboolean changed;
	char *archive_dir;     /* chorus-archive's directory for older frames, or NULL */
	guint64 archive_opens; /* streams that began in the archive */
	numline *line;         /* the numbering line kept in the run directory */
	obslog *olog;          /* --obs-log, shared by the devices, or NULL */
};

/* status: "followers now= served= refused= notifies= failed=". */
static void follow_status(audio_dev *d, GString *out)
{
	unsigned now;
	uint64_t served, refused, notifies, failed;
	follow_set_counts(stream_followers(d->st), &now, &notifies, &failed);
	followserver_counts(d->fs, &served, &refused);
	g_string_append_printf(out, "followers now=%u served=%" G_GUINT64_FORMAT " refused=%" G_GUINT64_FORMAT " notifies=%" G_GUINT64_FORMAT " failed=%" G_GUINT64_FORMAT "\n",
			       now, (guint64)served, (guint64)refused, (guint64)notifies, (guint64)failed);
}

/* The error of this card's timestamps no observation reveals, ns: the
 * calibrated floor's standard error.  Uncalibrated ALSA timestamps
 * (latency_floor_sd_us 0) state the fit's residual RMS instead: they come
 * late by a wakeup or position-read delay whose least value the envelope
 * cannot see, and without a calibration nothing bounds it more tightly
 * (interrupt records have no such floor beyond the calibrated one).  With
 * it, the restarts' error of the frame index (below).  syncd states it on
 * every conversion of the pair (send_pair); time requests add it too. */
static double systematic_ns(audio_dev *d)
{
	stream_stats st;
	sync_conv c;
	stream_get_stats(d->st, &st);
	/* Every restart after an overrun placed the index within its own
	 * s.e. of real time (numbering.h start_se): the index carries their
	 * sum for as long as this numbering lasts. */
	double restarts_ns = sqrt(st.restart_var_frames2) * 1e9 / d->rate_hz;
	if (st.source == TSRC_ALSA && d->floor_sd_ns <= 0 && timehist_current(d->th, &c) == 0)
		return hypot(c.rms, restarts_ns);
	return hypot(d->floor_sd_ns, restarts_ns);
}

/* The audio timestamp a driver offers (capture_audio_tstamp), by name. */
static const char *audio_tstamp_name(int type)
{
	static const char *const names[] = {"compat", "default", "link", "link_absolute", "link_estimated",
					    "link_synchronized"};
	return type >= 0 && type < (int)G_N_ELEMENTS(names) ? names[type] : "none";
}

/* ---- sensor device ------------------------------------------------------ */

/* Indices held, with a safety margin at the old end: the capture thread may
 * overwrite the oldest frames at any moment, and a client reading there
 * would then fail instead of getting a clean gap. */
static void op_range(void *user, int64_t *oldest, int64_t *next)
{
	audio_dev *d = user;
	const audio_ring_hdr *h = audio_ring_header(d->ring);
	audio_ring_span(d->ring, oldest, next);
	if (*oldest > h->origin) /* the writer is overwriting the old end */
		*oldest += d->rate_hz / 4;
}

/* Whole frames [first, first + n) from the ring, or from the archive below
 * it (the sensor asks for those only where _below said so). */
static int read_frames(audio_dev *d, client_ctx *c, int64_t first, size_t n, void *buf)
{
	int64_t oldest, next;
	audio_ring_span(d->ring, &oldest, &next);
	if (c->ar && first < oldest)
		return audiod_archive_read(c->ar, first, n, buf);
	int rc = audio_ring_read(d->ring, first, n, buf, NULL);
	return rc == -ESTALE ? -ERANGE : rc;
}

static gboolean op_below(void *user, void *client, int64_t from, int64_t oldest, int64_t *to)
{
	client_ctx *c = client;
	if (!c || !c->ar) {
		*to = from;
		return FALSE;
	}
	return audiod_archive_below(c->ar, from, oldest, to);
}

static int op_read(void *user, void *client, int64_t first, size_t n, void *buf)
{
	audio_dev *d = user;
	client_ctx *c = client;
	if (!c->nchan)
		return read_frames(d, c, first, n, buf);
	if (c->tmp_frames < n) {
		c->tmp = g_realloc(c->tmp, n * d->frame_bytes);
		c->tmp_frames = n;
	}
	int rc = read_frames(d, c, first, n, c->tmp);
	if (rc < 0)
		return rc;
	uint8_t *out = buf;
	for (size_t f = 0; f < n; f++)
		for (uint32_t i = 0; i < c->nchan; i++) {
			memcpy(out, c->tmp + f * d->frame_bytes + c->chan[i] * d->sample_bytes, d->sample_bytes);
			out += d->sample_bytes;
		}
	return 0;
}

/* "open" or the number, in buf. */
static const char *fmt_end(char *buf, size_t len, int64_t v, int64_t open)
{
	if (v == open)
		return "open";
	g_snprintf(buf, len, "%" G_GINT64_FORMAT, v);
	return buf;
}

/* The first whole frame at or after fractional index f. */
static int64_t ceil_frame(sync_tval f)
{
	return f.f > 0 ? f.i + 1 : f.i;
}

/* The device's conversions (audiod/devtime.h). */
static devtime dev_time(audio_dev *d)
{
	return (devtime){d->th, d->clocks, d->audio_clock, d->cpu_clock, d->rate_hz, systematic_ns(d)};
}

/* The reply states its own time (devtime_append_first); when it cannot,
 * audiod logs why. */
static void append_first_time(audio_dev *d, sync_clock_id clock, int64_t first, GString *out)
{
	char why[320], cn[SYNC_CLOCK_NAME_MAX];
	devtime dt = dev_time(d);
	if (devtime_append_first(&dt, clock, first, out, why, sizeof why) < 0)
		g_message("audio/%d: no time on %s for frame %" G_GINT64_FORMAT ": %s", d->k,
			  sync_clock_format(clock, cn, sizeof cn), first, why);
}

/* The furthest ahead of the newest frame a requested range may begin, s. */
#define MAX_AHEAD_S 86400.0

static int op_open(void *user, const dev_creds *who, dev_sensor_request *req, void **client, GByteArray *reply,
		   char *why, size_t wlen)
{
	audio_dev *d = user;
	audio_request r;
	GString *out = g_string_new(NULL), *arep = g_string_new(NULL);
	audiod_archive *ar = NULL;
	int64_t oldest, next;
	GError *perr = NULL;
	int rc = audio_request_parse(req->params, req->params_len, d->channels, d->node, &r, &perr);
	if (perr) {
		g_strlcpy(why, perr->message, wlen);
		g_error_free(perr);
	}
	d->opens++;
	if (rc < 0)
		goto refuse;
	op_range(d, &oldest, &next);
	gboolean resume = (req->flags & DEV_SENSOR_RESUME) != 0;
	if (r.by_time && !resume) {
		sync_tval f0, f1;
		double v0 = 0, v1 = 0;
		char cn[SYNC_CLOCK_NAME_MAX], tb[24], why1[256] = "";
		devtime dt = dev_time(d);
		int rc0 = devtime_to_frame(&dt, r.clock, r.from, &f0, &v0, why, wlen), rc1 = 0;
		req->first = rc0 == 0 ? ceil_frame(f0) : INT64_MIN;
		req->last = DEV_SENSOR_OPEN_END;
		if (r.to != INT64_MAX) {
			rc1 = devtime_to_frame(&dt, r.clock, r.to, &f1, &v1, why1, sizeof why1);
			req->last = rc1 == 0 ? ceil_frame(f1) : INT64_MIN;
		}
		/* Older than the ring (or than the history audiod kept): the
		 * archive places it in global time by its own records. */
		if ((rc0 < 0 || req->first < oldest) && d->archive_dir && sync_clock_equal(r.clock, sync_clock_global())) {
			GError *aerr = NULL;
			int64_t first = req->first, last = req->last == DEV_SENSOR_OPEN_END ? INT64_MAX : req->last;
			ar = audiod_archive_open(d->archive_dir, d->node, (uint32_t)d->k, snd_pcm_format_name(d->format),
						 d->frame_bytes, TRUE, r.from, r.to, &first, &last, arep, &aerr);
			if (ar) {
				req->first = first;
				req->last = last == INT64_MAX ? DEV_SENSOR_OPEN_END : last;
				rc0 = rc1 = 0;
			} else if (rc0 == 0) {
				/* Ring time, older than the ring: the archive's reason. */
				g_snprintf(why, wlen, "%s (the ring keeps %.1f s; the archive: %s)", "time older than the oldest frame held",
					   (double)audio_ring_header(d->ring)->capacity / d->rate_hz, aerr->message);
				rc0 = -ERANGE;
			}
			g_clear_error(&aerr);
		}
		if (rc0 == 0 && rc1 < 0)
			g_strlcpy(why, why1, wlen);
		if ((rc = rc0 < 0 ? rc0 : rc1) < 0 || req->last == INT64_MIN) {
			rc = rc < 0 ? rc : -ERANGE;
			goto refuse;
		}
		if (ar) {
			g_string_append_printf(out, " clock=%s from=%" G_GINT64_FORMAT " to=%s", sync_clock_format(r.clock, cn, sizeof cn),
					       r.from, fmt_end(tb, sizeof tb, r.to, INT64_MAX));
		} else {
			double se = sqrt(v0 > v1 ? v0 : v1);
			g_string_append_printf(out, " clock=%s from=%" G_GINT64_FORMAT " to=%s se_frames=%.4g se_ns=%.4g",
					       sync_clock_format(r.clock, cn, sizeof cn), r.from,
					       fmt_end(tb, sizeof tb, r.to, INT64_MAX), se, se * 1e9 / d->rate_hz);
		}
	}
	if (resume && req->first > next + (int64_t)d->rate_hz) {
		/* A stream resumed from another numbering (an audiod run that
		 * could not number on): its indices mean other instants here. */
		g_snprintf(why, wlen, "frame %" G_GINT64_FORMAT " belongs to an earlier run's numbering (this run is at %" G_GINT64_FORMAT "); open the stream again", req->first, next);
		rc = -ESTALE;
		goto refuse;
	}
	if (!ar && req->first < oldest && !resume && d->archive_dir) {
		/* By frames, older than the ring: from the archive. */
		GError *aerr = NULL;
		int64_t first = req->first, last = req->last == DEV_SENSOR_OPEN_END ? INT64_MAX : req->last;
		ar = audiod_archive_open(d->archive_dir, d->node, (uint32_t)d->k, snd_pcm_format_name(d->format),
					 d->frame_bytes, FALSE, 0, 0, &first, &last, arep, &aerr);
		if (!ar) {
			g_snprintf(why, wlen, "frame %" G_GINT64_FORMAT " is older than the oldest held, %" G_GINT64_FORMAT " (the ring keeps %.1f s), and the archive: %s",
				   req->first, oldest, (double)audio_ring_header(d->ring)->capacity / d->rate_hz, aerr->message);
			g_error_free(aerr);
			rc = -ERANGE;
			goto refuse;
		}
	}
	if (!ar && req->first < oldest && !resume) {
		g_snprintf(why, wlen, "frame %" G_GINT64_FORMAT " is older than the oldest held, %" G_GINT64_FORMAT " (the ring keeps %.1f s)", req->first, oldest,
			   (double)audio_ring_header(d->ring)->capacity / d->rate_hz);
		rc = -ERANGE;
		goto refuse;
	}
	if (req->last != DEV_SENSOR_OPEN_END && req->last <= req->first) {
		g_snprintf(why, wlen, "empty range [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", req->first, req->last);
		rc = -EINVAL;
		goto refuse;
	}
	if (!resume && (double)(req->first - next) > MAX_AHEAD_S * d->rate_hz) {
		/* A range that begins days ahead would hold the request (and
		 * the client) waiting for ever in practice: say so. */
		g_snprintf(why, wlen, "frame %" G_GINT64_FORMAT " begins %.3g s after the newest frame (%" G_GINT64_FORMAT "): more than %.0f s ahead",
			   req->first, (double)(req->first - next) / d->rate_hz, next, MAX_AHEAD_S);
		rc = -ERANGE;
		goto refuse;
	}
	if (ar) {
		g_string_append(out, arep->str); /* the first frame's time as the archive places it */
		d->archive_opens++;
	} else {
		append_first_time(d, r.by_time ? r.clock : sync_clock_global(), req->first, out);
	}
	g_string_free(arep, TRUE);
	client_ctx *c = g_new0(client_ctx, 1);
	c->ar = ar;
	c->nchan = r.nchan;
	memcpy(c->chan, r.chan, sizeof c->chan);
	req->item_size = (r.nchan ? r.nchan : d->channels) * d->sample_bytes;
	*client = c;
	GString *head = g_string_new(NULL);
	char lb[24];
	g_string_printf(head, "first=%" G_GINT64_FORMAT " last=%s rate=%u channels=%u format=%s", req->first,
			fmt_end(lb, sizeof lb, req->last, DEV_SENSOR_OPEN_END),
			d->rate_hz, r.nchan ? r.nchan : d->channels, snd_pcm_format_name(d->format));
	g_string_append(head, out->str);
	g_byte_array_append(reply, (const guint8 *)head->str, (guint)head->len);
	g_string_free(head, TRUE);
	g_string_free(out, TRUE);
	d->changed = TRUE;
	return 0;
refuse:
	d->refused++;
	audiod_archive_free(ar);
	g_string_free(arep, TRUE);
	g_string_free(out, TRUE);
	return rc;
}

static void op_close(void *user, void *client)
{
	audio_dev *d = user;
	client_ctx *c = client;
	audiod_archive_free(c->ar);
	g_free(c->tmp);
	g_free(c);
	d->changed = TRUE;
}

static const dev_sensor_ops sensor_ops = {op_range, op_read, op_open, op_close, op_below};

/* ---- feeding syncd ------------------------------------------------------- */

static void on_forwarded(void *user, int err, int status, const char *data, size_t len)
{
	audio_dev *d = user;
	if (err < 0 || status < 0) {
		d->forward_failed++;
		g_warning("audio/%d: syncd refused observations: %s", d->k, err < 0 ? g_strerror(-err) : data);
	}
}

static void send_sync(audio_dev *d, const char *cmd)
{
	if (dev_caller_call(d->sync, cmd, strlen(cmd), on_forwarded, d) < 0)
		d->forward_failed++;
}

/* How syncd fits the pair: x = frame, y = cpu time (interrupt latency
 * only makes y late), with the systematic term it states on every
 * conversion. */
static void send_pair(audio_dev *d)
{
	char a[SYNC_CLOCK_NAME_MAX], c[SYNC_CLOCK_NAME_MAX], cmd[200];
	d->sent_sys_ns = systematic_ns(d);
	g_snprintf(cmd, sizeof cmd, "pair %s %s lower %.17g %.6g", sync_clock_format(d->audio_clock, a, sizeof a),
		   sync_clock_format(d->cpu_clock, c, sizeof c), 1e9 / d->rate_hz, d->sent_sys_ns);
	send_sync(d, cmd);
}

/* syncd (re)appeared: tell it about our clock and how to fit it. */
static void on_sync_state(void *user, gboolean connected, int err)
{
	audio_dev *d = user;
	char a[SYNC_CLOCK_NAME_MAX], c[SYNC_CLOCK_NAME_MAX], cmd[160];
	if (!connected)
		return;
	sync_clock_format(d->audio_clock, a, sizeof a);
	sync_clock_format(d->cpu_clock, c, sizeof c);
	g_snprintf(cmd, sizeof cmd, "register %s audiod", a);
	send_sync(d, cmd);
	send_pair(d);
	if (d->fresh_numbering) {
		/* This run numbers frames afresh: whatever syncd still holds
		 * for the pair belongs to another numbering. */
		g_snprintf(cmd, sizeof cmd, "reset %s %s", a, c);
		send_sync(d, cmd);
		d->fresh_numbering = FALSE;
	}
}

static void forward_flush(audio_dev *d)
{
	if (!d->npending)
		return;
	/* The systematic term follows the fit (ALSA: its residual): restate
	 * it when it moved by a tenth. */
	double sys = systematic_ns(d);
	if (dev_caller_connected(d->sync) && fabs(sys - d->sent_sys_ns) > 0.1 * d->sent_sys_ns + 1.0)
		send_pair(d);
	if (dev_caller_connected(d->sync))
		send_sync(d, d->pending->str);
	d->forwarded += d->npending;
	d->npending = 0;
	g_string_truncate(d->pending, 0);
}

/* Keep the least-latency observation of every FORWARD_BATCH. */
static void forward_obs(audio_dev *d, int64_t frame, int64_t cpu)
{
	sync_tval y;
	double var;
	char why[8];
	double resid = 0;
	if (timehist_convert(d->th, sync_tval_of(frame), &y, &var, why, sizeof why) == 0)
		resid = sync_tval_diff(y, cpu) * -1.0; /* cpu - predicted: latency */
	if (d->batch == 0 || resid < d->best_resid) {
		d->best_resid = resid;
		d->best_frame = frame;
		d->best_cpu = cpu;
	}
	if (++d->batch < FORWARD_BATCH)
		return;
	d->batch = 0;
	if (!d->npending) {
		char a[SYNC_CLOCK_NAME_MAX], c[SYNC_CLOCK_NAME_MAX];
		g_string_printf(d->pending, "obs %s %s", sync_clock_format(d->audio_clock, a, sizeof a),
				sync_clock_format(d->cpu_clock, c, sizeof c));
	}
	g_string_append_printf(d->pending, " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, d->best_frame, d->best_cpu);
	if (++d->npending >= 5)
		forward_flush(d);
}

/* ---- events from the capture thread -------------------------------------- */

/* The data device appears with the first frames, once the numbering is
 * settled (a run that numbers on from an earlier one knows its first index
 * only at its first interrupts): a client never sees indices change. */
static void open_data(audio_dev *d)
{
	GError *err = NULL;
	dev_options o;
	dev_options_init(&o);
	o.chunk_bytes = 65536;
	d->data = dev_sensor_new(d->name_data, &o, d->ctx, d->frame_bytes, &sensor_ops, d, &err);
	if (!d->data) {
		g_warning("audio/%d: %s", d->k, err->message);
		g_error_free(err);
	}
}

gboolean audio_dev_ready(audio_dev *d)
{
	return d->data != NULL;
}

static void on_stream(void *user, const stream_event *ev)
{
	audio_dev *d = user;
	char why[256];
	if (!d->data) {
		int64_t oldest, next;
		audio_ring_span(d->ring, &oldest, &next);
		if (next > oldest)
			open_data(d);
	}
	if (ev->brk) {
		/* The frames from the run's first on convert with its fit,
		 * also those before its first period interrupt. */
		timehist_break_at(d->th, ev->brk_from);
		forward_flush(d);
		d->batch = 0;
		if (dev_caller_connected(d->sync)) {
			char a[SYNC_CLOCK_NAME_MAX], c[SYNC_CLOCK_NAME_MAX], cmd[120];
			/* from=: the run's fits hold from its first frame, not
			 * from its first interrupt (syncd_pairs_reset_from). */
			g_snprintf(cmd, sizeof cmd, "reset %s %s from=%" G_GINT64_FORMAT, sync_clock_format(d->audio_clock, a, sizeof a),
				   sync_clock_format(d->cpu_clock, c, sizeof c), ev->brk_from);
			send_sync(d, cmd);
		}
		d->changed = TRUE;
	}
	if (ev->gap_to > ev->gap_from && d->data) {
		dev_sensor_gap(d->data, ev->gap_from, ev->gap_to);
		g_message("audio/%d: overrun, frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") lost", d->k,
			  ev->gap_from, ev->gap_to);
	}
	for (uint32_t i = 0; i < ev->nobs; i++) {
		/* The calibrated floor: the part of the delay no envelope sees. */
		int64_t cpu = ev->obs[i].cpu_ns - d->floor_ns;
		int rc = timehist_add(d->th, ev->obs[i].frame, cpu, why, sizeof why);
		if (rc < 0) {
			g_debug("audio/%d: observation refused: %s", d->k, why);
			continue;
		}
		if (rc == 1)
			g_message("audio/%d: timestamps jumped: new timehist segment", d->k);
		obslog_add(d->olog, d->k, timehist_segment(d->th), ev->obs[i].frame, cpu, ev->obs[i].cpu_ns);
		forward_obs(d, ev->obs[i].frame, cpu);
	}
	if (d->data)
		dev_sensor_advance(d->data, ev->next);
}

/* ---- status ------------------------------------------------------------- */

static int status_text(void *user, GString *out)
{
	audio_dev *d = user;
	stream_stats st;
	const capture_cfg *p = stream_params(d->st);
	int64_t oldest, next;
	sync_conv c;
	stream_get_stats(d->st, &st);
	audio_ring_span(d->ring, &oldest, &next);
	g_string_append_printf(out, "device audio/%d pcm=%s node%u\n", d->k, p->pcm, d->node);
	g_string_append_printf(out, "format rate=%u channels=%u format=%s period=%lu buffer=%lu\n", p->rate_hz,
			       p->channels, snd_pcm_format_name(p->format), (unsigned long)p->period,
			       (unsigned long)p->buffer);
	g_string_append_printf(out, "frames captured=%" G_GUINT64_FORMAT " ring=[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") seconds=%.1f\n", st.frames, oldest, next, (double)(next - oldest) / d->rate_hz);
	g_string_append_printf(out, "xruns count=%" G_GUINT64_FORMAT " gaps=%" G_GUINT64_FORMAT " frames_lost=%" G_GUINT64_FORMAT " restart_se_frames=%.3f index_se_frames=%.3f\n",
			       st.xruns, st.gaps, st.frames_lost, st.restart_se_frames, sqrt(st.restart_var_frames2));
	g_string_append_printf(out, "clients streams=%u bulk=%" G_GUINT64_FORMAT " requests=%" G_GUINT64_FORMAT " refused=%" G_GUINT64_FORMAT "\n", d->data ? dev_sensor_readers(d->data) : 0,
			       ringserver_served(d->rs), d->opens, d->refused);
	follow_status(d, out);
	if (d->archive_dir)
		g_string_append_printf(out, "archive %s streams_from_archive=%" G_GUINT64_FORMAT "\n", d->archive_dir,
				       d->archive_opens);
	g_string_append_printf(out, "tstamp source=%s%s%s records=%" G_GUINT64_FORMAT " lost=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT " behind=%" G_GUINT64_FORMAT " updated=%" G_GUINT64_FORMAT " floor_us=%.3f floor_sd_us=%.3f systematic_us=%.3f audio_tstamp=%s\n", tsrc_name(st.source), *st.source_path ? " path=" : "",
			       st.source_path, st.records, st.records_lost, st.malformed, st.behind, st.updated, (double)d->floor_ns * 1e-3,
			       d->floor_sd_ns * 1e-3, systematic_ns(d) * 1e-3, audio_tstamp_name(st.audio_type));
	obslog_status(d->olog, out);
	if (timehist_current(d->th, &c) == 0)
		g_string_append_printf(out, "fit ns_per_frame=%.9f rate=%.6f rate_se_ppm=%.4f residual_ns=%.1f n=%u segment=%u\n",
				       c.slope, 1e9 / c.slope, sqrt(c.var_s) / c.slope * 1e6, c.rms, c.n,
				       timehist_segment(d->th));
	else
		g_string_append_printf(out, "fit none yet segment=%u\n", timehist_segment(d->th));
	g_string_append_printf(out, "latency_us p50=%.1f p99=%.1f max=%.1f n=%" G_GUINT64_FORMAT " wakeups=%" G_GUINT64_FORMAT " rt=%s max_ago_s=%.1f max_records=%u\n",
			       st.lat_p50_ns * 1e-3, st.lat_p99_ns * 1e-3, st.lat_max_ns * 1e-3, st.lat_n, st.wakeups,
			       st.rt ? "SCHED_FIFO" : "no",
			       st.lat_n ? (double)(sync_now(SYNC_KIND_CPU) - st.lat_max_at_ns) * 1e-9 : 0.0,
			       st.lat_max_records);
	g_string_append_printf(out, "path_us commit=%.1f/%.1f dispatch=%.1f/%.1f send=%.1f/%.1f notify=%.1f/%.1f (p50/p99 over 2 s: wakeup->queued->handled->sent; wakeup->followers woken)\n",
			       st.commit_p50_ns * 1e-3, st.commit_p99_ns * 1e-3, st.dispatch_p50_ns * 1e-3,
			       st.dispatch_p99_ns * 1e-3, st.send_p50_ns * 1e-3, st.send_p99_ns * 1e-3,
			       st.notify_p50_ns * 1e-3, st.notify_p99_ns * 1e-3);
	if (st.updated)
		g_string_append_printf(out, "bracket_us p50=%.1f p99=%.1f max=%.1f\n", st.bracket_p50_ns * 1e-3,
				       st.bracket_p99_ns * 1e-3, st.bracket_max_ns * 1e-3);
	g_string_append_printf(out, "syncd %s forwarded=%" G_GUINT64_FORMAT " failed=%" G_GUINT64_FORMAT "\n",
			       dev_caller_connected(d->sync) ? "connected" : "away", d->forwarded, d->forward_failed);
	dev_heap_usage_append(out);
	return 0;
}

void audio_dev_tick(audio_dev *d)
{
	/* Counters move every period: readers get a fresh view at this rate. */
	dev_status_notify(d->status);
	d->changed = FALSE;
	int64_t oldest, next;
	audio_ring_span(d->ring, &oldest, &next);
	numline_save(d->line, sync_now(SYNC_KIND_CPU), next, d->th);
}

/* ---- life cycle ------------------------------------------------------------ */

/* Number frames on from an earlier run of this device when syncd still
 * holds its audio<k> <-> cpu conversion precisely enough (a restart of
 * audiod, not of the node): clients that resume a stream, or that hold
 * frame indices, then keep meaning the same instants.  Otherwise frame 0 is
 * this run's first frame. */
static void continue_numbering(audio_dev *d)
{
	char why[256];
	sync_graph_result r = {0};
	int64_t cpu[NUMLINE_POINTS], frame[NUMLINE_POINTS];
	d->fresh_numbering = TRUE;
	int64_t now = sync_now(SYNC_KIND_CPU);
	if (!d->clocks || !sync_client_ready(d->clocks)) {
		/* syncd does not answer (stopped, restarting): the line the
		 * last run of this device kept in the run directory. */
		if (numline_load(d->line, now, cpu, frame) &&
		    stream_continue_numbering(d->st, cpu, frame, NUMLINE_POINTS) == 0) {
			g_message("audio/%d: numbering on from the earlier run's own line (syncd had none)", d->k);
			d->fresh_numbering = FALSE;
		}
		return;
	}
	if (sync_client_convert(d->clocks, d->cpu_clock, d->audio_clock, sync_tval_of(now), &r, why, sizeof why) < 0 ||
	    r.hops != 1 || sqrt(r.var) > 0.25) {
		/* syncd holds no precise line (it restarted too, or its pair
		 * is young): this device's own, if the last run of this boot,
		 * clock and world kept one; else number afresh (the usual case:
		 * no earlier run).  A fresh numbering while other nodes hold
		 * the old pair is what chaos found converting 67 s off
		 * (check-arm64's VM: both of these cases). */
		if (numline_load(d->line, now, cpu, frame) &&
		    stream_continue_numbering(d->st, cpu, frame, NUMLINE_POINTS) == 0) {
			g_message("audio/%d: numbering on from the earlier run's own line (syncd's %s)", d->k,
				  r.hops ? "was not precise enough" : "had none");
			d->fresh_numbering = FALSE;
		} else if (r.hops == 1)
			g_message("audio/%d: not numbering on from the earlier run (±%.2g frames)", d->k, sqrt(r.var));
		return;
	}
	/* Points on the earlier line at whole frames (cpu times in ns lose
	 * nothing when rounded), over the last two seconds. */
	for (int i = 0; i < NUMLINE_POINTS; i++) {
		frame[i] = r.value.i - (int64_t)(NUMLINE_POINTS - 1 - i) * d->rate_hz / 4;
		sync_graph_result c;
		if (sync_client_convert(d->clocks, d->audio_clock, d->cpu_clock, sync_tval_of(frame[i]), &c, why,
					sizeof why) < 0)
			return;
		cpu[i] = c.value.i + (int64_t)llround(c.value.f);
	}
	if (stream_continue_numbering(d->st, cpu, frame, NUMLINE_POINTS) == 0)
		d->fresh_numbering = FALSE;
}

audio_dev *audio_dev_new(int k, const stream_cfg *cfg, uint32_t node, GMainContext *ctx, sync_client *clocks,
			 GError **err)
{
	audio_dev *d = g_new0(audio_dev, 1);
	GError *e = NULL;
	const char *why = NULL;
	d->k = k;
	d->node = node;
	d->floor_ns = (int64_t)llround(cfg->floor_ns);
	d->floor_sd_ns = cfg->floor_sd_ns;
	d->clocks = clocks;
	d->audio_clock = sync_clock_audio(node, (uint16_t)k);
	d->cpu_clock = sync_clock_cpu(node);
	d->pending = g_string_new(NULL);
	g_snprintf(d->name_data, sizeof d->name_data, "audio/%d/data", k);
	g_snprintf(d->name_status, sizeof d->name_status, "audio/%d/status", k);
	g_snprintf(d->name_ring, sizeof d->name_ring, "audio/%d/ring", k);
	g_snprintf(d->name_follow, sizeof d->name_follow, "audio/%d/follow", k);
	int rc = stream_open(cfg, ctx, on_stream, d, &d->st, &e);
	if (rc < 0) {
		g_set_error(err, DEV_ERROR, -rc, "audio/%d: %s", k, e->message);
		g_error_free(e);
		goto fail;
	}
	const capture_cfg *p = stream_params(d->st);
	d->ring = stream_ring(d->st);
	d->rate_hz = p->rate_hz;
	d->channels = p->channels;
	d->format = p->format;
	d->sample_bytes = (uint32_t)snd_pcm_format_physical_width(p->format) / 8;
	d->frame_bytes = d->sample_bytes * d->channels;
	d->line = numline_new(k, d->rate_hz);

	timehist_params tp;
	audiod_timehist_params(&tp, d->rate_hz, audio_ring_header(d->ring)->capacity);
	if (!(d->th = timehist_new(&tp, &why))) {
		g_set_error(err, DEV_ERROR, EINVAL, "audio/%d: timehist: %s", k, why);
		goto fail;
	}
	dev_options o;
	dev_options_init(&o);
	o.chunk_bytes = 65536;
	d->ctx = ctx;
	if (!(d->status = dev_status_new(d->name_status, &o, ctx, status_text, NULL, d, err)))
		goto fail;
	if (!(d->rs = ringserver_new(d->name_ring, 0660, d->ring, ctx, err)) ||
	    !(d->fs = followserver_new(d->name_follow, 0660, d->ring, stream_followers(d->st), ctx, err)))
		goto fail;
	continue_numbering(d);
	if (!(d->sync = dev_caller_new("sync/command", DEV_PATTERN_COMMAND, ctx, on_sync_state, d, err)))
		goto fail;
	return d;
fail:
	audio_dev_free(d);
	return NULL;
}

gboolean audio_dev_start(audio_dev *d, GError **err)
{
	GError *e = NULL;
	int rc = stream_start(d->st, &e);
	if (rc < 0) {
		g_set_error(err, DEV_ERROR, -rc, "audio/%d: %s", d->k, e->message);
		g_error_free(e);
	}
	return rc == 0;
}

void audio_dev_free(audio_dev *d)
{
	if (!d)
		return;
	followserver_free(d->fs); /* its members leave the stream's set before their eventfds close */
	stream_free(d->st);       /* then: no more events */
	dev_caller_free(d->sync);
	ringserver_free(d->rs);
	dev_status_free(d->status);
	dev_sensor_free(d->data);
	timehist_free(d->th);
	numline_free(d->line);
	g_string_free(d->pending, TRUE);
	g_free(d->archive_dir);
	g_free(d);
}

void audio_dev_set_obslog(audio_dev *d, obslog *l)
{
	d->olog = l;
	if (l) {
		const capture_cfg *p = stream_params(d->st);
		char *t = g_strdup_printf("pcm=%s rate=%u period=%lu floor_ns=%" G_GINT64_FORMAT, p->pcm, p->rate_hz,
					  (unsigned long)p->period, d->floor_ns);
		obslog_note(l, d->k, t);
		g_free(t);
	}
}

void audio_dev_set_archive(audio_dev *d, const char *dir)
{
	g_free(d->archive_dir);
	d->archive_dir = dir && *dir ? g_strdup(dir) : NULL;
}
