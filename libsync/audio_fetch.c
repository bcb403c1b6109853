/* audio_fetch.c — fetch audio by time from audiod (audio_fetch.h). */
#include "libsync/audio_fetch.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/dev.h"

struct sync_audio {
	sync_audio_info_t info;
	GByteArray *data;
	uint32_t item_bytes; /* bytes per frame on the wire */
	int s24;             /* S24_3LE: widen to S32 */
	int opened, ended, err;
	char why[256];
};

/* The value of `key` in audiod's reply text ("first=F last=L ..."), copied
 * into buf; FALSE when absent. */
static gboolean reply_field(const char *reply, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = reply; p && *p;) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1, *e = strchr(v, ' ');
			size_t n = e ? (size_t)(e - v) : strlen(v);
			if (n >= len)
				n = len - 1;
			memcpy(buf, v, n);
			buf[n] = 0;
			return TRUE;
		}
		p = strchr(p, ' ');
	}
	return FALSE;
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	sync_audio *a = user;
	char *r = g_strndup(reply, len), b[64];
	a->opened = 1;
	a->item_bytes = item_size;
	a->info.first_frame = first;
	a->info.rate_hz = reply_field(r, "rate", b, sizeof b) ? (uint32_t)strtoul(b, NULL, 10) : 0;
	a->info.channels = reply_field(r, "channels", b, sizeof b) ? (uint32_t)strtoul(b, NULL, 10) : 0;
	g_strlcpy(a->info.format, reply_field(r, "format", b, sizeof b) ? b : "?", sizeof a->info.format);
	a->s24 = !strcmp(a->info.format, "S24_3LE");
	if (a->s24)
		g_strlcpy(a->info.format, "S32_LE", sizeof a->info.format);
	a->info.sample_bytes = a->info.channels ? (a->s24 ? 4 : item_size / a->info.channels) : 0;
	a->info.se_ns = reply_field(r, "se_ns", b, sizeof b) ? g_ascii_strtod(b, NULL) : NAN;
	char t0[64];
	if (reply_field(r, "t0", t0, sizeof t0) && strcmp(t0, "none") &&
	    reply_field(r, "t0_clock", a->info.t0_clock, sizeof a->info.t0_clock)) {
		/* t0 is "INT.ddd": the integer and the fraction apart, so ns
		 * near 2^62 keep their precision. */
		char *dot = strchr(t0, '.');
		a->info.t0_frac = dot ? g_ascii_strtod(dot, NULL) : 0;
		if (dot)
			*dot = 0;
		a->info.t0 = g_ascii_strtoll(t0, NULL, 10);
		if (t0[0] == '-' && a->info.t0_frac)
			a->info.t0_frac = -a->info.t0_frac;
		a->info.t0_se = reply_field(r, "t0_se", b, sizeof b) ? g_ascii_strtod(b, NULL) : NAN;
		a->info.period = reply_field(r, "period", b, sizeof b) ? g_ascii_strtod(b, NULL) : NAN;
		a->info.period_se = reply_field(r, "period_se", b, sizeof b) ? g_ascii_strtod(b, NULL) : NAN;
		a->info.has_t0 = 1;
	}
	g_free(r);
	if (!a->info.channels || !item_size || item_size % a->info.channels) {
		a->err = -EPROTO;
		g_snprintf(a->why, sizeof a->why, "audiod's reply is not usable (%u channels, %u bytes per frame)",
			   a->info.channels, item_size);
	}
}

static void append(sync_audio *a, const void *items, size_t n)
{
	if (!a->s24) {
		g_byte_array_append(a->data, items, (guint)(n * a->item_bytes));
		return;
	}
	const uint8_t *p = items;
	size_t samples = n * a->info.channels;
	for (size_t i = 0; i < samples; i++, p += 3) {
		uint32_t v = (uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24;
		g_byte_array_append(a->data, (const guint8 *)&v, 4);
	}
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	sync_audio *a = user;
	if (a->err)
		return;
	append(a, items, n);
	a->info.frames += (int64_t)n;
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	sync_audio *a = user;
	if (a->err || to <= from)
		return;
	size_t bytes = (size_t)(to - from) * a->info.channels * a->info.sample_bytes;
	guint old = a->data->len;
	g_byte_array_set_size(a->data, old + (guint)bytes);
	memset(a->data->data + old, 0, bytes);
	a->info.frames += to - from;
	a->info.gap_frames += to - from;
}

static void on_end(void *user, int64_t next)
{
	sync_audio *a = user;
	a->ended = 1;
}

static void on_error(void *user, int err, const char *msg)
{
	sync_audio *a = user;
	a->err = err < 0 ? err : -EIO;
	g_snprintf(a->why, sizeof a->why, "audiod refused: %s", msg);
}

static void on_state(void *user, gboolean up, int err)
{
	sync_audio *a = user;
	if (!up && !a->opened && !a->err) {
		a->err = err < 0 ? err : -ECONNREFUSED;
		g_snprintf(a->why, sizeof a->why, "audiod unreachable: %s", g_strerror(-a->err));
	}
}

static gboolean on_timeout(gpointer data)
{
	int *fired = data;
	*fired = 1;
	return G_SOURCE_REMOVE;
}

int sync_audio_fetch(uint32_t device, const char *clock, int64_t from, int64_t to, const char *channels, int timeout_ms,
		     sync_audio **out, char *why, size_t len)
{
	*out = NULL;
	if (!clock || to <= from || timeout_ms <= 0) {
		g_snprintf(why, len, "need a clock, from < to (got %lld, %lld) and a timeout > 0", (long long)from,
			   (long long)to);
		return -EINVAL;
	}
	sync_clock_id id;
	const char *r;
	if (sync_clock_parse(clock, 0, &id, &r) < 0) {
		g_snprintf(why, len, "clock \"%s\": %s", clock, r);
		return -EINVAL;
	}
	char name[32];
	g_snprintf(name, sizeof name, "audio/%u/data", device);
	GString *params = g_string_new(NULL);
	if (channels && *channels)
		g_string_append_printf(params, "channels=%s ", channels);
	g_string_append_printf(params, "clock=%s from=%lld to=%lld", clock, (long long)from, (long long)to);
	sync_audio *a = g_new0(sync_audio, 1);
	a->data = g_byte_array_new();
	a->info.se_ns = NAN;
	GMainContext *ctx = g_main_context_new();
	GError *err = NULL;
	dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, on_end, on_error, on_state};
	dev_sensor_reader *rd =
		dev_sensor_reader_new(name, 0, DEV_SENSOR_OPEN_END, 0, params->str, params->len, ctx, &ops, a, &err);
	g_string_free(params, TRUE);
	int rc = 0;
	if (!rd) {
		g_snprintf(why, len, "%s: %s", name, err->message);
		rc = err->code > 0 ? -err->code : -EINVAL;
		g_error_free(err);
	} else {
		int fired = 0;
		GSource *t = g_timeout_source_new((guint)timeout_ms);
		g_source_set_callback(t, on_timeout, &fired, NULL);
		g_source_attach(t, ctx);
		while (!a->ended && !a->err && !fired)
			g_main_context_iteration(ctx, TRUE);
		g_source_destroy(t);
		g_source_unref(t);
		dev_sensor_reader_free(rd);
		if (a->err) {
			rc = a->err;
			g_snprintf(why, len, "%s: %s", name, a->why);
		} else if (!a->ended) {
			rc = -ETIMEDOUT;
			g_snprintf(why, len, "%s: %lld frames after %d ms, the range not complete (is audiod capturing it yet?)",
				   name, (long long)a->info.frames, timeout_ms);
		}
	}
	g_main_context_unref(ctx);
	if (rc < 0) {
		sync_audio_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void sync_audio_info(const sync_audio *a, sync_audio_info_t *info)
{
	*info = a->info;
}

const void *sync_audio_data(const sync_audio *a, size_t *bytes)
{
	*bytes = a->data->len;
	return a->data->data;
}

void sync_audio_free(sync_audio *a)
{
	if (!a)
		return;
	g_byte_array_unref(a->data);
	g_free(a);
}
