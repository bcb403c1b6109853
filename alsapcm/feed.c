/* feed.c — the ALSA plugin's stream from audiod (see feed.h).
 *
 * Threads: the application's (ALSA's callbacks: start, stop, avail, read,
 * consume) and the feed's own, which runs a private GMainContext with the
 * libdev sensor client (feed.h says why).  The reader object is touched
 * only on the feed's thread (the application's side posts idle sources
 * there and waits for them); the buffer and the stream state are shared
 * under `lock`, and `cond` is broadcast on every change either side waits
 * for (room in the buffer, audiod's answer, a posted call done).
 */
#include "alsapcm/feed.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "audiod/request.h"
#include "libdev/dev.h"

struct chorus_feed {
	char device[64];
	GMainContext *ctx;
	GMainLoop *loop;
	GThread *thread;
	GMutex lock;
	GCond cond;
	int efd;              /* poll descriptor: readable while ready */
	gboolean signalled;   /* efd holds a count */
	dev_sensor_reader *r; /* feed thread only */
	/* the stream, under lock */
	uint8_t *buf;               /* cap frames of frame_bytes; position p at slot p % cap */
	size_t cap, frame_bytes;    /* frames, bytes */
	uint64_t pos, n;            /* buffered: stream positions [pos, pos + n) */
	size_t avail_min;           /* frames that make the descriptor readable */
	gboolean stopping;          /* the stream is being closed: callbacks drop everything */
	gboolean opened;            /* audiod accepted the request */
	int64_t first;              /* audiod's frame of position 0 */
	gboolean broken;            /* nothing more comes after the buffered frames */
	int refused;                /* audiod's errno when it refused the request (< 0), else 0 */
	int conn_err;               /* last connection failure before the answer (< 0), else 0 */
	char why[DEV_WHY_MAX + 64]; /* reason of the break or the refusal */
};

/* Keep the eventfd readable exactly while the PCM has news.  Lock held. */
static void update_ready(chorus_feed *f)
{
	gboolean ready = f->broken || f->n >= (f->avail_min ? f->avail_min : 1);
	uint64_t v = 1;
	if (ready && !f->signalled) {
		/* An eventfd write of 1 fails only on counter overflow, which a
		 * counter kept at 0 or 1 never reaches. */
		if (write(f->efd, &v, sizeof v) == sizeof v)
			f->signalled = TRUE;
	} else if (!ready && f->signalled) {
		if (read(f->efd, &v, sizeof v) == sizeof v || errno == EAGAIN)
			f->signalled = FALSE;
	}
}

/* Mark the stream broken with a reason (the first reason wins).  Lock held. */
static void set_broken(chorus_feed *f, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_broken(chorus_feed *f, const char *fmt, ...)
{
	if (f->broken)
		return;
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(f->why, sizeof f->why, fmt, ap);
	va_end(ap);
	f->broken = TRUE;
	update_ready(f);
	g_cond_broadcast(&f->cond);
}

/* ---- the sensor client's callbacks (feed thread) ------------------------ */

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	chorus_feed *f = user;
	g_mutex_lock(&f->lock);
	if (!f->stopping && !f->opened) {
		f->opened = TRUE;
		f->first = first;
		if (item_size != f->frame_bytes)
			set_broken(f, "%s serves %u-byte frames, the PCM was set up for %zu (did audiod restart with another format?)",
				   f->device, item_size, f->frame_bytes);
		g_cond_broadcast(&f->cond);
	}
	g_mutex_unlock(&f->lock);
}

static void on_data(void *user, int64_t first, const void *items, size_t count)
{
	chorus_feed *f = user;
	const uint8_t *p = items;
	g_mutex_lock(&f->lock);
	/* Wait for room rather than drop: audiod sends the next chunk only
	 * when this socket can take it, so holding back here is flow control,
	 * and the frames stay in audiod's ring meanwhile. */
	while (count > 0 && !f->stopping && !f->broken) {
		while (f->n == f->cap && !f->stopping)
			g_cond_wait(&f->cond, &f->lock);
		if (f->stopping)
			break;
		size_t room = f->cap - f->n, k = MIN(room, count);
		size_t slot = (size_t)((f->pos + f->n) % f->cap), run = MIN(k, f->cap - slot);
		memcpy(f->buf + slot * f->frame_bytes, p, run * f->frame_bytes);
		if (k > run)
			memcpy(f->buf, p + run * f->frame_bytes, (k - run) * f->frame_bytes);
		f->n += k;
		p += k * f->frame_bytes;
		count -= k;
		update_ready(f);
	}
	g_mutex_unlock(&f->lock);
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	chorus_feed *f = user;
	g_mutex_lock(&f->lock);
	if (!f->stopping)
		set_broken(f, "%s: frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were lost (an overrun in audiod, an audiod restart, or this client fell behind audiod's ring)",
			   f->device, from, to);
	g_mutex_unlock(&f->lock);
}

static void on_end(void *user, int64_t next)
{
	chorus_feed *f = user;
	g_mutex_lock(&f->lock);
	if (!f->stopping)
		set_broken(f, "%s: the stream ended at frame %" G_GINT64_FORMAT, f->device, next);
	g_mutex_unlock(&f->lock);
}

static void on_error(void *user, int err, const char *msg)
{
	chorus_feed *f = user;
	g_mutex_lock(&f->lock);
	if (!f->stopping) {
		if (!f->opened)
			f->refused = err < 0 ? err : -EIO;
		set_broken(f, "%s refused the stream: %s", f->device, msg);
	}
	g_mutex_unlock(&f->lock);
}

static void on_state(void *user, gboolean connected, int err)
{
	chorus_feed *f = user;
	if (connected)
		return;
	g_mutex_lock(&f->lock);
	if (!f->stopping) {
		if (f->opened) {
			set_broken(f, "%s: audiod went away (%s)", f->device, g_strerror(-err));
		} else {
			f->conn_err = err < 0 ? err : -EIO;
			g_cond_broadcast(&f->cond);
		}
	}
	g_mutex_unlock(&f->lock);
}

static const dev_sensor_reader_ops reader_ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};

/* ---- calls posted to the feed thread ------------------------------------ */

typedef struct {
	chorus_feed *f;
	void (*fn)(chorus_feed *f, void *arg);
	void *arg;
	gboolean done;
} posted;

static gboolean run_posted(gpointer data)
{
	posted *c = data;
	c->fn(c->f, c->arg);
	g_mutex_lock(&c->f->lock);
	c->done = TRUE;
	g_cond_broadcast(&c->f->cond);
	g_mutex_unlock(&c->f->lock);
	return G_SOURCE_REMOVE;
}

/* Run fn on the feed thread and wait for it.  Called without the lock. */
static void run_on_thread(chorus_feed *f, void (*fn)(chorus_feed *f, void *arg), void *arg)
{
	posted c = {f, fn, arg, FALSE};
	GSource *s = g_idle_source_new();
	g_source_set_priority(s, G_PRIORITY_HIGH);
	g_source_set_callback(s, run_posted, &c, NULL);
	g_source_attach(s, f->ctx);
	g_source_unref(s);
	g_mutex_lock(&f->lock);
	while (!c.done)
		g_cond_wait(&f->cond, &f->lock);
	g_mutex_unlock(&f->lock);
}

typedef struct {
	const char *params;
	uint32_t flags;
	GError *err;
} open_args;

static void open_on_thread(chorus_feed *f, void *arg)
{
	open_args *a = arg;
	f->r = dev_sensor_reader_new(f->device, 0, DEV_SENSOR_OPEN_END, a->flags, a->params, strlen(a->params), f->ctx,
				     &reader_ops, f, &a->err);
}

static void close_on_thread(chorus_feed *f, void *arg)
{
	dev_sensor_reader_free(f->r);
	f->r = NULL;
}

static gpointer thread_main(gpointer data)
{
	chorus_feed *f = data;
	g_main_context_push_thread_default(f->ctx);
	g_main_loop_run(f->loop);
	g_main_context_pop_thread_default(f->ctx);
	return NULL;
}

/* ---- the application's side --------------------------------------------- */

int chorus_feed_probe(const char *device, int timeout_ms, chorus_feed_info *info, char *why, size_t len)
{
	GError *err = NULL;
	dev_link *l = dev_link_open(device, timeout_ms, &err);
	if (!l) {
		int rc = -err->code;
		g_snprintf(why, len, "%s", err->message);
		g_error_free(err);
		return rc;
	}
	int rc;
	if (dev_link_pattern(l) != DEV_PATTERN_SENSOR) {
		g_snprintf(why, len, "%s is a %s device, not a sensor device", device, dev_pattern_name(dev_link_pattern(l)));
		dev_link_close(l);
		return -EPROTOTYPE;
	}
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_SENS_OPEN, 0, 1);
	dev_wire_i64(b, 0);
	dev_wire_i64(b, DEV_SENSOR_OPEN_END);
	dev_wire_u32(b, DEV_SENSOR_FROM_NEXT);
	dev_wire_u32(b, 0);
	dev_wire_end(b);
	rc = dev_link_send(l, b, timeout_ms);
	dev_msg m = {0};
	while (rc == 0) {
		rc = dev_link_recv(l, b, &m, timeout_ms);
		if (rc < 0 || m.id != 1)
			continue;
		if (m.type == DEV_MSG_ERROR) {
			g_snprintf(why, len, "%s refused: %.*s", device, (int)m.u.error.text_len, m.u.error.text);
			rc = m.u.error.err > 0 ? -m.u.error.err : -EIO;
			break;
		}
		if (m.type != DEV_MSG_SENS_OPENED)
			continue;
		char *r = g_strndup((const char *)m.u.opened.reply, m.u.opened.reply_len), v[32], c[32];
		if (!audio_reply_field(r, "rate", v, sizeof v) || !audio_reply_field(r, "channels", c, sizeof c) ||
		    !audio_reply_field(r, "format", info->format, sizeof info->format)) {
			g_snprintf(why, len, "%s: its reply \"%s\" lacks rate=, channels= or format=", device, r);
			rc = -EPROTO;
		} else {
			info->rate_hz = (unsigned)g_ascii_strtoull(v, NULL, 10);
			info->channels = (unsigned)g_ascii_strtoull(c, NULL, 10);
			info->item_size = m.u.opened.item_size;
			if (!info->rate_hz || !info->channels || info->item_size % info->channels) {
				g_snprintf(why, len, "%s: its reply \"%s\" (item size %u) makes no sense", device, r,
					   info->item_size);
				rc = -EPROTO;
			}
		}
		g_free(r);
		break;
	}
	if (rc == -ETIMEDOUT)
		g_snprintf(why, len, "%s: no answer to the stream request within %d ms", device, timeout_ms);
	else if (rc < 0 && rc != -EPROTO && m.type != DEV_MSG_ERROR)
		g_snprintf(why, len, "%s: %s", device, g_strerror(-rc));
	g_byte_array_free(b, TRUE);
	dev_link_close(l);
	return rc;
}

chorus_feed *chorus_feed_new(const char *device, GError **err)
{
	chorus_feed *f = g_new0(chorus_feed, 1);
	g_strlcpy(f->device, device, sizeof f->device);
	g_mutex_init(&f->lock);
	g_cond_init(&f->cond);
	f->first = INT64_MIN;
	f->avail_min = 1;
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->efd < 0) {
		g_set_error(err, DEV_ERROR, errno, "eventfd: %s", g_strerror(errno));
		g_mutex_clear(&f->lock);
		g_cond_clear(&f->cond);
		g_free(f);
		return NULL;
	}
	f->ctx = g_main_context_new();
	f->loop = g_main_loop_new(f->ctx, FALSE);
	f->thread = g_thread_try_new("chorus-pcm", thread_main, f, err);
	if (!f->thread) {
		g_main_loop_unref(f->loop);
		g_main_context_unref(f->ctx);
		close(f->efd);
		g_mutex_clear(&f->lock);
		g_cond_clear(&f->cond);
		g_free(f);
		return NULL;
	}
	return f;
}

int chorus_feed_fd(chorus_feed *f)
{
	return f->efd;
}

void chorus_feed_stop(chorus_feed *f)
{
	g_mutex_lock(&f->lock);
	f->stopping = TRUE;
	g_cond_broadcast(&f->cond); /* a data callback waiting for room gives up */
	g_mutex_unlock(&f->lock);
	run_on_thread(f, close_on_thread, NULL);
	g_mutex_lock(&f->lock);
	g_free(f->buf);
	f->buf = NULL;
	f->cap = 0;
	f->pos = f->n = 0;
	f->opened = FALSE;
	f->first = INT64_MIN;
	f->broken = FALSE;
	f->refused = f->conn_err = 0;
	f->why[0] = 0;
	update_ready(f);
	g_mutex_unlock(&f->lock);
}

int chorus_feed_start(chorus_feed *f, const char *params, uint32_t flags, size_t cap_frames, size_t frame_bytes,
		      int wait_ms, int64_t *first, char *why, size_t len)
{
	chorus_feed_stop(f);
	if (!cap_frames || !frame_bytes || cap_frames > SIZE_MAX / frame_bytes) {
		g_snprintf(why, len, "no buffer of %zu frames of %zu bytes", cap_frames, frame_bytes);
		return -ENOMEM;
	}
	uint8_t *buf = g_try_malloc(cap_frames * frame_bytes);
	if (!buf) {
		g_snprintf(why, len, "no memory for %zu frames of %zu bytes", cap_frames, frame_bytes);
		return -ENOMEM;
	}
	g_mutex_lock(&f->lock);
	f->buf = buf;
	f->cap = cap_frames;
	f->frame_bytes = frame_bytes;
	f->stopping = FALSE;
	g_mutex_unlock(&f->lock);
	open_args a = {params ? params : "", flags, NULL};
	run_on_thread(f, open_on_thread, &a);
	if (!f->r) {
		int rc = a.err ? -a.err->code : -EINVAL;
		g_snprintf(why, len, "%s", a.err ? a.err->message : "cannot open the stream");
		g_clear_error(&a.err);
		return rc ? rc : -EINVAL;
	}
	if (wait_ms <= 0)
		return 0;
	int rc = 0;
	gint64 end = g_get_monotonic_time() + (gint64)wait_ms * 1000;
	g_mutex_lock(&f->lock);
	while (!f->opened && !f->refused && !f->conn_err)
		if (!g_cond_wait_until(&f->cond, &f->lock, end))
			break;
	if (f->opened) {
		if (first)
			*first = f->first;
	} else if (f->refused) {
		rc = f->refused;
		g_snprintf(why, len, "%s", f->why);
	} else if (f->conn_err) {
		char path[DEV_PATH_MAX];
		const char *pw;
		rc = f->conn_err;
		if (dev_path(f->device, path, sizeof path, &pw) < 0)
			g_strlcpy(path, f->device, sizeof path);
		g_snprintf(why, len, "%s: audiod unreachable at %s: %s", f->device, path, g_strerror(-rc));
	} else {
		rc = -ETIMEDOUT;
		g_snprintf(why, len, "%s: audiod did not answer the stream request within %d ms", f->device, wait_ms);
	}
	g_mutex_unlock(&f->lock);
	if (rc < 0)
		chorus_feed_stop(f);
	return rc;
}

/* Drop the frames before stream position pos.  Lock held. */
static void consume_locked(chorus_feed *f, uint64_t pos)
{
	if (pos <= f->pos)
		return;
	uint64_t d = MIN(pos - f->pos, f->n);
	f->pos += d;
	f->n -= d;
	if (d) {
		update_ready(f);
		g_cond_broadcast(&f->cond);
	}
}

void chorus_feed_consume_to(chorus_feed *f, uint64_t pos)
{
	g_mutex_lock(&f->lock);
	consume_locked(f, pos);
	g_mutex_unlock(&f->lock);
}

size_t chorus_feed_avail(chorus_feed *f, uint64_t pos, gboolean *broken, const char **why)
{
	g_mutex_lock(&f->lock);
	consume_locked(f, pos);
	size_t n = pos >= f->pos && pos - f->pos <= f->n ? (size_t)(f->n - (pos - f->pos)) : 0;
	*broken = f->broken;
	if (why)
		*why = f->why;
	g_mutex_unlock(&f->lock);
	return n;
}

size_t chorus_feed_read(chorus_feed *f, uint64_t pos, void *dst, size_t n)
{
	uint8_t *out = dst;
	g_mutex_lock(&f->lock);
	size_t have = pos >= f->pos && pos - f->pos <= f->n ? (size_t)(f->n - (pos - f->pos)) : 0, k = MIN(n, have);
	size_t slot = f->cap ? (size_t)(pos % f->cap) : 0, run = MIN(k, f->cap - slot);
	if (k) {
		memcpy(out, f->buf + slot * f->frame_bytes, run * f->frame_bytes);
		if (k > run)
			memcpy(out + run * f->frame_bytes, f->buf, (k - run) * f->frame_bytes);
	}
	g_mutex_unlock(&f->lock);
	return k;
}

int64_t chorus_feed_first(chorus_feed *f)
{
	g_mutex_lock(&f->lock);
	int64_t v = f->first;
	g_mutex_unlock(&f->lock);
	return v;
}

void chorus_feed_set_avail_min(chorus_feed *f, size_t frames)
{
	g_mutex_lock(&f->lock);
	f->avail_min = frames ? frames : 1;
	update_ready(f);
	g_mutex_unlock(&f->lock);
}

void chorus_feed_free(chorus_feed *f)
{
	if (!f)
		return;
	chorus_feed_stop(f);
	g_main_loop_quit(f->loop);
	g_thread_join(f->thread);
	g_main_loop_unref(f->loop);
	g_main_context_unref(f->ctx);
	close(f->efd);
	g_mutex_clear(&f->lock);
	g_cond_clear(&f->cond);
	g_free(f);
}
