/* audio.c — audio by global time from a node, as WAV (audio.h). */
#include "web/audio.h"

#include <errno.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "audiod/request.h"
#include "libdev/dev.h"

struct web_audio {
	web_audio_info info;
	dev_sensor_reader *r;
	GByteArray *data;
	uint32_t item;
	guint timer, idle;
	int err;
	char why[384];
	web_audio_done_fn done;
	void *user;
};

/* --- WAV in memory (libsndfile's virtual I/O) ---------------------------- */
typedef struct {
	GByteArray *b;
	sf_count_t pos;
} membuf;

static sf_count_t m_len(void *u)
{
	return ((membuf *)u)->b->len;
}
static sf_count_t m_seek(sf_count_t off, int whence, void *u)
{
	membuf *m = u;
	sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off
								     : (sf_count_t)m->b->len + off;
	if (p < 0)
		return -1;
	m->pos = p;
	return p;
}
static sf_count_t m_read(void *ptr, sf_count_t n, void *u)
{
	membuf *m = u;
	sf_count_t avail = (sf_count_t)m->b->len - m->pos;
	if (n > avail)
		n = avail > 0 ? avail : 0;
	memcpy(ptr, m->b->data + m->pos, (size_t)n);
	m->pos += n;
	return n;
}
static sf_count_t m_write(const void *ptr, sf_count_t n, void *u)
{
	membuf *m = u;
	if ((sf_count_t)m->b->len < m->pos + n)
		g_byte_array_set_size(m->b, (guint)(m->pos + n));
	memcpy(m->b->data + m->pos, ptr, (size_t)n);
	m->pos += n;
	return n;
}
static sf_count_t m_tell(void *u)
{
	return ((membuf *)u)->pos;
}

GBytes *web_wav_encode(const void *data, int64_t frames, uint32_t channels, uint32_t rate_hz, const char *format,
		       const char *comment, const char **why)
{
	int sub, bytes;
	if (!strcmp(format, "S16_LE"))
		sub = SF_FORMAT_PCM_16, bytes = 2;
	else if (!strcmp(format, "S32_LE"))
		sub = SF_FORMAT_PCM_32, bytes = 4;
	else if (!strcmp(format, "FLOAT_LE"))
		sub = SF_FORMAT_FLOAT, bytes = 4;
	else if (!strcmp(format, "S24_3LE"))
		sub = SF_FORMAT_PCM_24, bytes = 3;
	else {
		*why = "audiod's sample format has no WAV equivalent here";
		return NULL;
	}
	SF_VIRTUAL_IO io = {m_len, m_seek, m_read, m_write, m_tell};
	membuf m = {g_byte_array_new(), 0};
	SF_INFO si = {.samplerate = (int)rate_hz, .channels = (int)channels, .format = SF_FORMAT_WAV | sub};
	SNDFILE *sf = sf_open_virtual(&io, SFM_WRITE, &si, &m);
	if (!sf) {
		*why = sf_strerror(NULL);
		g_byte_array_free(m.b, TRUE);
		return NULL;
	}
	sf_count_t n = (sf_count_t)frames * channels * bytes;
	gboolean ok = (!comment || sf_set_string(sf, SF_STR_COMMENT, comment) == 0) && sf_write_raw(sf, data, n) == n;
	if (!ok)
		*why = sf_strerror(sf);
	if (sf_close(sf) != 0 && ok) {
		ok = FALSE;
		*why = "libsndfile could not finish the file";
	}
	if (!ok) {
		g_byte_array_free(m.b, TRUE);
		return NULL;
	}
	return g_byte_array_free_to_bytes(m.b);
}

/* --- the fetch ------------------------------------------------------------ */
static void finish(web_audio *a)
{
	GBytes *wav = NULL;
	if (!a->err) {
		web_audio_info *i = &a->info;
		char *comment = g_strdup_printf("chorus node=%u t0_clock=global t0=%s t0_se=%s period=%s period_se=%s "
						"first_frame=%" G_GINT64_FORMAT " gap_frames=%" G_GINT64_FORMAT
						" (first frame's global time and the frame period, ns, with their standard errors)",
						i->node, *i->t0 ? i->t0 : "none", *i->t0_se ? i->t0_se : "none",
						*i->period ? i->period : "none", *i->period_se ? i->period_se : "none",
						i->first_frame, i->gap_frames);
		const char *why = NULL;
		i->frames = a->item ? a->data->len / a->item : 0;
		wav = web_wav_encode(a->data->data, i->frames, i->channels, i->rate_hz, i->format, comment, &why);
		g_free(comment);
		if (!wav) {
			a->err = -EIO;
			g_strlcpy(a->why, why, sizeof a->why);
		}
	}
	web_audio_done_fn done = a->done;
	void *user = a->user;
	int err = a->err;
	char why[sizeof a->why];
	g_strlcpy(why, a->why, sizeof why);
	web_audio_info info = a->info;
	web_audio_cancel(a);
	done(user, err, why, wav, &info);
	if (wav)
		g_bytes_unref(wav);
}

static gboolean on_finish(gpointer data)
{
	web_audio *a = data;
	a->idle = 0;
	finish(a);
	return G_SOURCE_REMOVE;
}

/* End the fetch from the loop (never inside a reader callback: finish frees it). */
static void end_with(web_audio *a, int err, const char *why)
{
	if (a->idle)
		return;
	if (err && !a->err) {
		a->err = err;
		g_strlcpy(a->why, why, sizeof a->why);
	}
	a->idle = g_idle_add(on_finish, a);
}

static gboolean on_timeout(gpointer data)
{
	web_audio *a = data;
	a->timer = 0;
	char why[sizeof a->why];
	g_snprintf(why, sizeof why, "node%u:audio/0/data: no complete answer in time%s%s", a->info.node,
		   *a->why ? ": " : "", a->why);
	end_with(a, -ETIMEDOUT, why);
	return G_SOURCE_REMOVE;
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item, const void *reply, size_t len)
{
	web_audio *a = user;
	char *r = g_strndup(reply, len), b[40];
	web_audio_info *i = &a->info;
	i->first_frame = first;
	i->rate_hz = (uint32_t)atoi(audio_reply_field(r, "rate", b, sizeof b) ? b : "0");
	i->channels = (uint32_t)atoi(audio_reply_field(r, "channels", b, sizeof b) ? b : "0");
	g_strlcpy(i->format, audio_reply_field(r, "format", b, sizeof b) ? b : "?", sizeof i->format);
	audio_reply_field(r, "t0", i->t0, sizeof i->t0);
	audio_reply_field(r, "t0_se", i->t0_se, sizeof i->t0_se);
	audio_reply_field(r, "period", i->period, sizeof i->period);
	audio_reply_field(r, "period_se", i->period_se, sizeof i->period_se);
	a->item = item;
	g_free(r);
	if (!i->channels || item % i->channels)
		end_with(a, -EPROTO, "audiod's reply has no usable channel count");
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	web_audio *a = user;
	g_byte_array_append(a->data, items, (guint)(n * a->item));
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	web_audio *a = user;
	size_t add = (size_t)(to - from) * a->item;
	if (to <= from || a->data->len + add > 64u << 20)
		return;
	g_byte_array_set_size(a->data, a->data->len + (guint)add);
	memset(a->data->data + a->data->len - add, 0, add);
	a->info.gap_frames += to - from;
}

static void on_end(void *user, int64_t next)
{
	end_with(user, 0, "");
}

static void on_error(void *user, int err, const char *msg)
{
	web_audio *a = user;
	char why[sizeof a->why];
	g_snprintf(why, sizeof why, "node%u:audio/0/data: %s", a->info.node, msg);
	end_with(a, err, why);
}

static void on_state(void *user, gboolean up, int err)
{
	web_audio *a = user;
	if (!up && err)
		g_snprintf(a->why, sizeof a->why, "%s", g_strerror(-err));
}

web_audio *web_audio_fetch(uint32_t node, int64_t from_ns, int64_t to_ns, int timeout_ms, web_audio_done_fn done,
			   void *user)
{
	web_audio *a = g_new0(web_audio, 1);
	a->info.node = node;
	a->done = done;
	a->user = user;
	a->data = g_byte_array_new();
	char name[64], params[128];
	g_snprintf(name, sizeof name, "node%u:audio/0/data", node);
	g_snprintf(params, sizeof params, "clock=global from=%" G_GINT64_FORMAT " to=%" G_GINT64_FORMAT, from_ns, to_ns);
	static const dev_sensor_reader_ops ops = {
		.opened = on_opened,
		.data = on_data,
		.gap = on_gap,
		.end = on_end,
		.error = on_error,
		.state = on_state};
	GError *e = NULL;
	a->r = dev_sensor_reader_new(name, 0, DEV_SENSOR_OPEN_END, 0, params, strlen(params), NULL, &ops, a, &e);
	if (!a->r) {
		end_with(a, -EINVAL, e->message);
		g_error_free(e);
		return a;
	}
	a->timer = g_timeout_add((guint)timeout_ms, on_timeout, a);
	return a;
}

void web_audio_cancel(web_audio *a)
{
	if (!a)
		return;
	dev_sensor_reader_free(a->r);
	if (a->timer)
		g_source_remove(a->timer);
	if (a->idle)
		g_source_remove(a->idle);
	g_byte_array_free(a->data, TRUE);
	g_free(a);
}
