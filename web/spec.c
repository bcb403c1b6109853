/* spec.c — spectrogram columns of a node's audio with FFTW (spec.h). */
#include "web/spec.h"

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audiod/request.h"
#include "libdev/dev.h"

struct web_spec {
	uint32_t node;
	web_spec_fn fn;
	void *user;
	dev_sensor_reader *r;
	uint32_t rate, item;
	char format[16];
	float win[WEB_SPEC_SIZE], buf[WEB_SPEC_SIZE], *in;
	fftwf_complex *out;
	fftwf_plan plan;
	guint fill;        /* samples in buf */
	int64_t buf_first; /* frame index of buf[0] */
	uint8_t *cols;     /* ring of WEB_SPEC_KEEP columns */
	int64_t col_first[WEB_SPEC_KEEP];
	guint64 ncols; /* columns computed */
	guint64 sent;  /* columns handed to fn */
	guint timer;
};

void web_spec_quantise(const float *power, uint8_t *out)
{
	for (int b = 0; b < WEB_SPEC_BINS; b++) {
		float p = fmaxf(power[2 * b], power[2 * b + 1]);
		double db = 10 * log10(p + 1e-30);
		double q = (db - WEB_SPEC_FLOOR_DB) * 255.0 / -WEB_SPEC_FLOOR_DB;
		out[b] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255
						       : lrint(q));
	}
}

static void column(web_spec *s)
{
	for (int i = 0; i < WEB_SPEC_SIZE; i++)
		s->in[i] = s->buf[i] * s->win[i];
	fftwf_execute(s->plan);
	float power[WEB_SPEC_SIZE / 2 + 1];
	/* one-sided power of a Hann-windowed full-scale sine is 0 dBFS */
	double norm = 4.0 / ((double)WEB_SPEC_SIZE * WEB_SPEC_SIZE * 0.25);
	for (int k = 0; k <= WEB_SPEC_SIZE / 2; k++)
		power[k] = (float)((s->out[k][0] * s->out[k][0] + s->out[k][1] * s->out[k][1]) * norm);
	guint slot = (guint)(s->ncols % WEB_SPEC_KEEP);
	web_spec_quantise(power, s->cols + (size_t)slot * WEB_SPEC_BINS);
	s->col_first[slot] = s->buf_first;
	s->ncols++;
	memmove(s->buf, s->buf + WEB_SPEC_HOP, (WEB_SPEC_SIZE - WEB_SPEC_HOP) * sizeof(float));
	s->fill -= WEB_SPEC_HOP;
	s->buf_first += WEB_SPEC_HOP;
}

static float sample(const web_spec *s, const uint8_t *p)
{
	if (!strcmp(s->format, "S16_LE"))
		return (int16_t)(p[0] | p[1] << 8) / 32768.0f;
	if (!strcmp(s->format, "FLOAT_LE")) {
		float f;
		memcpy(&f, p, 4);
		return f;
	}
	if (!strcmp(s->format, "S24_3LE"))
		return (int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24) / 2147483648.0f;
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24) / 2147483648.0f;
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item, const void *reply, size_t len)
{
	web_spec *s = user;
	char *r = g_strndup(reply, len), b[32];
	s->rate = (uint32_t)atoi(audio_reply_field(r, "rate", b, sizeof b) ? b : "0");
	g_strlcpy(s->format, audio_reply_field(r, "format", b, sizeof b) ? b : "S16_LE", sizeof s->format);
	s->item = item;
	s->fill = 0;
	s->buf_first = first;
	g_free(r);
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	web_spec *s = user;
	if (!s->item)
		return;
	if (first != s->buf_first + s->fill) { /* a gap or a resume: start a new frame */
		s->fill = 0;
		s->buf_first = first;
	}
	const uint8_t *p = items;
	for (size_t i = 0; i < n; i++, p += s->item) {
		s->buf[s->fill++] = sample(s, p);
		if (s->fill == WEB_SPEC_SIZE)
			column(s);
	}
}

static void on_error(void *user, int err, const char *msg)
{
	web_spec *s = user;
	g_warning("node%u:audio/0/data (spectrogram): %s", s->node, msg);
}

JsonNode *web_spec_json(const web_spec *s, guint max)
{
	guint64 held = MIN(s->ncols, (guint64)WEB_SPEC_KEEP), n = MIN(held, (guint64)max);
	guint64 from = s->ncols - n;
	uint8_t *d = g_malloc(n * WEB_SPEC_BINS + 1);
	for (guint64 c = 0; c < n; c++)
		memcpy(d + c * WEB_SPEC_BINS, s->cols + ((from + c) % WEB_SPEC_KEEP) * WEB_SPEC_BINS, WEB_SPEC_BINS);
	char *b64 = g_base64_encode(d, n * WEB_SPEC_BINS);
	g_free(d);
	JsonObject *o = json_object_new();
	json_object_set_int_member(o, "node", s->node);
	json_object_set_int_member(o, "rate", s->rate);
	json_object_set_int_member(o, "size", WEB_SPEC_SIZE);
	json_object_set_int_member(o, "hop", WEB_SPEC_HOP);
	json_object_set_int_member(o, "bins", WEB_SPEC_BINS);
	json_object_set_double_member(o, "floor_db", WEB_SPEC_FLOOR_DB);
	json_object_set_int_member(o, "column", (gint64)from);
	if (n)
		json_object_set_int_member(o, "first_frame", s->col_first[from % WEB_SPEC_KEEP]);
	else
		json_object_set_null_member(o, "first_frame");
	json_object_set_int_member(o, "columns", (gint64)n);
	json_object_set_string_member(o, "data", b64);
	g_free(b64);
	JsonNode *j = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j, o);
	return j;
}

static gboolean on_tick(gpointer data)
{
	web_spec *s = data;
	if (s->ncols > s->sent && s->fn) {
		guint n = (guint)MIN(s->ncols - s->sent, (guint64)WEB_SPEC_KEEP);
		JsonNode *j = web_spec_json(s, n);
		s->fn(s->user, s->node, j);
		json_node_unref(j);
	}
	s->sent = s->ncols;
	return G_SOURCE_CONTINUE;
}

web_spec *web_spec_new(uint32_t node, web_spec_fn fn, void *user)
{
	web_spec *s = g_new0(web_spec, 1);
	s->node = node;
	s->fn = fn;
	s->user = user;
	s->cols = g_malloc0((size_t)WEB_SPEC_KEEP * WEB_SPEC_BINS);
	s->in = fftwf_alloc_real(WEB_SPEC_SIZE);
	s->out = fftwf_alloc_complex(WEB_SPEC_SIZE / 2 + 1);
	s->plan = fftwf_plan_dft_r2c_1d(WEB_SPEC_SIZE, s->in, s->out, FFTW_ESTIMATE);
	for (int i = 0; i < WEB_SPEC_SIZE; i++)
		s->win[i] = (float)(0.5 - 0.5 * cos(2 * M_PI * i / WEB_SPEC_SIZE));
	char name[64];
	g_snprintf(name, sizeof name, "node%u:audio/0/data", node);
	static const dev_sensor_reader_ops ops = {.opened = on_opened, .data = on_data, .error = on_error};
	GError *e = NULL;
	s->r = dev_sensor_reader_new(name, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, "channels=0", 10, NULL, &ops, s, &e);
	if (!s->r) {
		g_warning("%s: %s", name, e->message);
		g_error_free(e);
	}
	s->timer = g_timeout_add(250, on_tick, s);
	return s;
}

void web_spec_free(web_spec *s)
{
	if (!s)
		return;
	dev_sensor_reader_free(s->r);
	g_source_remove(s->timer);
	fftwf_destroy_plan(s->plan);
	fftwf_free(s->in);
	fftwf_free(s->out);
	g_free(s->cols);
	g_free(s);
}

guint64 web_spec_columns(const web_spec *s)
{
	return s->ncols;
}
