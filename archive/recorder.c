/* recorder.c — one audiod device into the archive (see recorder.h). */
#include "archive/recorder.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "archive/durable.h"
#include "archive/recover.h"
#include "archive/segment.h"
#include "audiod/request.h"
#include "libdev/dev.h"
#include "libdev/ratelog.h"
#include "libsync/now.h"
#include "libsync/ticker_wire.h"

struct archive_recorder {
	archive_recorder_cfg c;
	GMainContext *ctx;
	char name[32];
	dev_sensor_reader *rd;
	archive_index head; /* format of the stream (times/gaps unused) */
	gboolean have_format, connected, fatal;
	int64_t resume; /* end of the newest archived segment, or -1 */
	int64_t run_ns; /* CLOCK_REALTIME when recording this numbering began */
	archive_segment *seg;
	GArray *pending_gaps; /* archive_gap, for the next segment */
	int64_t seg_frames;   /* frames per segment */
	int64_t next_time_frame;
	guint reopen_id;
	/* counters */
	guint64 frames, segments, gaps, gap_frames, errors, time_missing, flushes;
	guint64 write_gap_frames; /* of gap_frames: lost to failed writes (reason "write") */
	char last_error[256];
	int last_code; /* errno of the last error */
};

static void open_stream(archive_recorder *r, int64_t first, uint32_t flags);
static void add_gap(archive_recorder *r, int64_t from, int64_t to, const char *reason);
static void salvage(archive_recorder *r, const char *name, int64_t next);

static void note_error(archive_recorder *r, GError *e)
{
	r->errors++;
	r->last_code = e->domain == ARCHIVE_ERROR ? e->code : EIO;
	g_strlcpy(r->last_error, e->message, sizeof r->last_error);
	ratelog(G_LOG_LEVEL_WARNING, r->errors, "%s: %s", r->name, e->message);
	g_error_free(e);
	if (r->c.changed)
		r->c.changed(r->c.user);
}

/* Note the conversions of frame f to this node's cpu clock and to global
 * time in the open segment's index. */
static void add_time(archive_recorder *r, int64_t f)
{
	sync_clock_id a = sync_clock_audio(r->c.node, (uint16_t)r->c.device);
	sync_graph_result cpu, glob;
	char why[256];
	if (sync_client_convert(r->c.clocks, a, sync_clock_cpu(r->c.node), sync_tval_of(f), &cpu, why, sizeof why) < 0) {
		r->time_missing++;
		ratelog(G_LOG_LEVEL_DEBUG, r->time_missing, "%s: frame %" PRId64 " not placed on the cpu clock: %s", r->name,
			f, why);
		return;
	}
	archive_timept t = {.frame = f, .cpu_ns = cpu.value.i + (int64_t)llround(cpu.value.f), .cpu_se_ns = sqrt(cpu.var), .root = ARCHIVE_ROOT_UNKNOWN};
	if (sync_client_convert(r->c.clocks, a, sync_clock_global(), sync_tval_of(f), &glob, why, sizeof why) == 0) {
		/* Global is the root's timescale: a node cut off from the
		 * field may be its own root meanwhile, whose global is not the
		 * field's (archive_bridge replaces such points later). */
		uint32_t publisher, root;
		sync_client_info(r->c.clocks, &publisher, &root);
		t.root = root == SYNC_TICKER_NO_ROOT ? ARCHIVE_ROOT_UNKNOWN : root;
		t.has_global = 1;
		t.global_ns = glob.value.i + (int64_t)llround(glob.value.f);
		t.global_se_ns = sqrt(glob.var);
	}
	archive_segment_add_time(r->seg, &t);
	r->next_time_frame = f + (int64_t)(r->c.time_interval_s * r->head.rate_hz);
}

/* CLOCK_REALTIME of frame f: through syncd's conversions when it has
 * them, else now less the frames received after f. */
static int64_t wall_of(archive_recorder *r, int64_t f, int64_t end)
{
	sync_graph_result w;
	char why[128];
	if (sync_client_convert(r->c.clocks, sync_clock_audio(r->c.node, (uint16_t)r->c.device),
				sync_clock_realtime(r->c.node), sync_tval_of(f), &w, why, sizeof why) == 0)
		return w.value.i;
	return g_get_real_time() * 1000 - (int64_t)((double)(end - f) * 1e9 / r->head.rate_hz);
}

static void close_segment(archive_recorder *r, int64_t end)
{
	if (!r->seg)
		return;
	archive_segment *s = r->seg;
	if (archive_segment_frames(s) > 0)
		add_time(r, archive_segment_next(s) - 1);
	r->seg = NULL;
	char name[ARCHIVE_NAME_MAX];
	g_strlcpy(name, archive_segment_name(s), sizeof name);
	/* Copy the index before the close frees it, for the store. */
	const archive_index *x = archive_segment_index(s);
	archive_index *copy = archive_index_new();
	GArray *t = copy->times, *g = copy->gaps;
	*copy = *x;
	copy->times = t;
	copy->gaps = g;
	g_array_append_vals(t, x->times->data, x->times->len);
	g_array_append_vals(g, x->gaps->data, x->gaps->len);
	copy->frames = archive_segment_frames(s);
	copy->closed = 1;
	copy->wall_end_ns = wall_of(r, archive_segment_next(s), end);
	GError *e = NULL;
	if (copy->frames == 0) {
		archive_segment_abandon(s); /* nothing written: recovery removes it */
	} else if (!archive_segment_close(s, copy->wall_end_ns, &e)) {
		note_error(r, e);
		salvage(r, name, copy->first + copy->frames);
	} else if (!archive_store_add(r->c.store, name, copy, &e)) {
		note_error(r, e);
	} else {
		r->segments++;
		if (r->c.changed)
			r->c.changed(r->c.user);
	}
	archive_index_free(copy);
}

static gboolean open_segment(archive_recorder *r, int64_t first, int64_t end)
{
	archive_index *h = archive_index_new();
	GArray *t = h->times, *g = h->gaps;
	*h = r->head;
	h->times = t;
	h->gaps = g;
	h->first = first;
	h->run_ns = r->run_ns;
	h->wall_ns = wall_of(r, first, end);
	g_array_append_vals(g, r->pending_gaps->data, r->pending_gaps->len);
	GError *e = NULL;
	r->seg = archive_segment_open(r->c.dir, h, r->c.flac_level, &e);
	archive_index_free(h);
	if (!r->seg) {
		note_error(r, e);
		return FALSE;
	}
	g_array_set_size(r->pending_gaps, 0);
	add_time(r, first);
	return TRUE;
}

/* Close what reached the disk of segment `name` (abandoned after a failed
 * write or close; note_error has made room: the daemon drops the oldest
 * segments) the way a restart would, put it in the store, and name the
 * frames it lost up to `next` as a write gap. */
static void salvage(archive_recorder *r, const char *name, int64_t next)
{
	archive_recovery rec = {0};
	GError *e = NULL;
	if (!archive_recover_segment(r->c.dir, name, r->c.flac_level, &rec, &e)) {
		note_error(r, e);
		return;
	}
	g_autofree char *idx = g_strdup_printf("%s/%s.idx", r->c.dir, name);
	if (rec.recovered) {
		archive_index *x = archive_index_new();
		char *text = NULL, why[256];
		size_t len;
		if (archive_read_file(idx, &text, &len, &e) && archive_index_parse(text, len, 0, x, why, sizeof why) == 0 &&
		    archive_store_add(r->c.store, name, x, &e))
			r->segments++;
		else if (e)
			note_error(r, e);
		g_free(text);
		if (x->first + x->frames < next)
			add_gap(r, x->first + x->frames, next, "write");
		archive_index_free(x);
	}
}

/* Stop writing the open segment after a failure and salvage it. */
static void abandon(archive_recorder *r)
{
	char name[ARCHIVE_NAME_MAX];
	g_strlcpy(name, archive_segment_name(r->seg), sizeof name);
	int64_t next = archive_segment_next(r->seg);
	archive_segment_abandon(r->seg);
	r->seg = NULL;
	salvage(r, name, next);
}

static void add_gap(archive_recorder *r, int64_t from, int64_t to, const char *reason)
{
	archive_gap g = {.from = from, .to = to};
	g_strlcpy(g.reason, reason, sizeof g.reason);
	g_array_append_val(r->pending_gaps, g);
	r->gaps++;
	r->gap_frames += (guint64)(to - from);
	if (!strcmp(reason, "write"))
		r->write_gap_frames += (guint64)(to - from);
	g_message("%s: frames [%" PRId64 ", %" PRId64 ") are not in the archive (%s)", r->name, from, to, reason);
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	archive_recorder *r = user;
	char *t = g_strndup(reply, len), b[32];
	r->head.rate_hz = (uint32_t)atoi(audio_reply_field(t, "rate", b, sizeof b) ? b : "0");
	r->head.channels = (uint32_t)atoi(audio_reply_field(t, "channels", b, sizeof b) ? b : "0");
	g_strlcpy(r->head.format, audio_reply_field(t, "format", b, sizeof b) ? b : "?", sizeof r->head.format);
	g_free(t);
	if (!archive_sample_bytes(r->head.format) || !r->head.rate_hz || !r->head.channels ||
	    item_size != archive_sample_bytes(r->head.format) * r->head.channels) {
		GError *e = g_error_new(ARCHIVE_ERROR, EINVAL,
					"%s serves %s (%u channels, %u bytes a frame): FLAC keeps S16_LE and S24_3LE bit-exact, nothing else",
					r->name, r->head.format, r->head.channels, item_size);
		r->fatal = TRUE;
		note_error(r, e);
		return;
	}
	r->have_format = TRUE;
	r->seg_frames = (int64_t)llround(r->c.segment_s * r->head.rate_hz);
	g_message("%s: recording from frame %" PRId64 " (%u Hz, %u channels, %s)", r->name, first, r->head.rate_hz,
		  r->head.channels, r->head.format);
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	archive_recorder *r = user;
	if (!r->have_format)
		return;
	size_t fb = archive_sample_bytes(r->head.format) * r->head.channels;
	const char *p = items;
	int64_t end = first + (int64_t)n;
	if (r->resume >= 0 && first > r->resume && !r->seg && !r->pending_gaps->len)
		add_gap(r, r->resume, first, "restart");
	r->resume = -1;
	while (n) {
		if (r->seg && archive_segment_next(r->seg) != first)
			close_segment(r, end); /* never expected: gaps come as GAP */
		if (!r->seg && !open_segment(r, first, end))
			return; /* counted: these frames are lost */
		int64_t room = r->seg_frames - archive_segment_frames(r->seg);
		size_t k = (size_t)MIN((int64_t)n, room);
		GError *e = NULL;
		if (!archive_segment_write(r->seg, p, k, &e)) {
			note_error(r, e);
			/* The FLAC stream is broken: what reached the file is the
			 * recovery's; the rest of this chunk is a gap. */
			abandon(r);
			add_gap(r, first, end, "write");
			return;
		}
		r->frames += k;
		p += k * fb;
		first += (int64_t)k;
		n -= k;
		if (archive_segment_frames(r->seg) >= r->seg_frames)
			close_segment(r, end);
	}
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	archive_recorder *r = user;
	close_segment(r, to);
	const char *reason = "stream";
	if (r->resume >= 0 && from <= r->resume) {
		/* The ring no longer held what came after the archive's end. */
		from = r->resume;
		reason = "restart";
	} else if (r->resume == -2) {
		/* The first open ever: the ring's start is no loss. */
		r->resume = -1;
		return;
	}
	r->resume = -1;
	if (to > from)
		add_gap(r, from, to, reason);
}

static gboolean reopen(gpointer data)
{
	archive_recorder *r = data;
	r->reopen_id = 0;
	open_stream(r, 0, DEV_SENSOR_FROM_NEXT);
	return G_SOURCE_REMOVE;
}

static void on_end(void *user, int64_t next)
{
	archive_recorder *r = user;
	close_segment(r, next);
}

static void on_error(void *user, int err, const char *msg)
{
	archive_recorder *r = user;
	/* audiod refused (an earlier run's numbering, …): start again from
	 * its next frame, the frames' names carry their wall time. */
	g_warning("%s: %s; opening again from audiod's next frame", r->name, msg);
	close_segment(r, 0);
	r->resume = -1;
	r->run_ns = g_get_real_time() * 1000; /* another numbering: another run */
	if (!r->reopen_id)
		r->reopen_id = g_timeout_add(1000, reopen, r);
}

static void on_state(void *user, gboolean up, int err)
{
	archive_recorder *r = user;
	r->connected = up;
	if (!up) {
		/* Flush what came: audiod's outage becomes a GAP on resume. */
		archive_recorder_tick(r);
	}
}

static void open_stream(archive_recorder *r, int64_t first, uint32_t flags)
{
	dev_sensor_reader_free(r->rd);
	dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};
	GError *e = NULL;
	r->rd = dev_sensor_reader_new(r->name, first, DEV_SENSOR_OPEN_END, flags, NULL, 0, r->ctx, &ops, r, &e);
	if (!r->rd)
		note_error(r, e);
}

archive_recorder *archive_recorder_new(const archive_recorder_cfg *c, GMainContext *ctx, GError **err)
{
	archive_recorder *r = g_new0(archive_recorder, 1);
	r->c = *c;
	r->ctx = ctx;
	r->pending_gaps = g_array_new(FALSE, FALSE, sizeof(archive_gap));
	r->head.node = c->node;
	r->head.device = c->device;
	g_snprintf(r->name, sizeof r->name, "audio/%u/data", c->device);
	/* Resume after the newest segment of this device. */
	r->resume = -2;
	r->run_ns = g_get_real_time() * 1000;
	for (guint i = archive_store_count(c->store); i-- > 0;) {
		const archive_entry *en = archive_store_entry(c->store, i);
		if (en->x->node == c->node && en->x->device == c->device) {
			r->resume = en->x->first + en->x->frames;
			r->run_ns = en->x->run_ns;
			break;
		}
	}
	dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};
	r->rd = dev_sensor_reader_new(r->name, r->resume >= 0 ? r->resume : 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_RESUME, NULL,
				      0, ctx, &ops, r, err);
	if (!r->rd) {
		g_array_free(r->pending_gaps, TRUE);
		g_free(r);
		return NULL;
	}
	return r;
}

void archive_recorder_tick(archive_recorder *r)
{
	if (!r->seg)
		return;
	if (archive_segment_next(r->seg) > r->next_time_frame)
		add_time(r, archive_segment_next(r->seg) - 1);
	GError *e = NULL;
	if (!archive_segment_flush(r->seg, &e)) {
		note_error(r, e);
		abandon(r);
	} else {
		r->flushes++;
	}
}

void archive_recorder_status(const archive_recorder *r, GString *out)
{
	g_string_append_printf(out, "device %s state=%s", r->name,
			       r->fatal ? "failed" : r->seg ? "recording"
					     : r->connected ? "waiting"
							    : "disconnected");
	if (r->have_format)
		g_string_append_printf(out, " rate=%u channels=%u format=%s", r->head.rate_hz, r->head.channels, r->head.format);
	if (r->seg)
		g_string_append_printf(out, " open=%s open_frames=%" PRId64 " next=%" PRId64, archive_segment_name(r->seg),
				       archive_segment_frames(r->seg), archive_segment_next(r->seg));
	g_string_append_printf(out,
			       "\n  written frames=%" PRIu64 " segments=%" PRIu64 " gaps=%" PRIu64 " gap_frames=%" PRIu64 " write_gap_frames=%" PRIu64
			       " flushes=%" PRIu64 " errors=%" PRIu64 " times_missing=%" PRIu64 "%s%s%s\n",
			       r->frames, r->segments, r->gaps, r->gap_frames, r->write_gap_frames, r->flushes, r->errors, r->time_missing,
			       r->errors ? " last_error=\"" : "", r->errors ? r->last_error : "", r->errors ? "\"" : "");
}

guint64 archive_recorder_errors(const archive_recorder *r, gboolean *fatal)
{
	*fatal = r->fatal;
	return r->errors;
}

int archive_recorder_last_errno(const archive_recorder *r)
{
	return r->last_code;
}

gboolean archive_recorder_stop(archive_recorder *r, GError **err)
{
	dev_sensor_reader_free(r->rd);
	if (r->reopen_id)
		g_source_remove(r->reopen_id);
	guint64 before = r->errors;
	int64_t end = r->seg ? archive_segment_next(r->seg) : 0;
	close_segment(r, end);
	gboolean ok = r->errors == before;
	if (!ok)
		g_set_error(err, ARCHIVE_ERROR, EIO, "%s: closing the last segment: %s", r->name, r->last_error);
	g_array_free(r->pending_gaps, TRUE);
	g_free(r);
	return ok;
}
