/* health.c — the node's health message (health.h). */
#include "apps/mqtt/health.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/dev.h"
#include "libsync/clockid.h"

typedef struct {
	char *name;
	dev_status_reader *r;
	char *text;        /* the last state, or NULL */
	gint64 updated_us; /* monotonic time of the last state, 0 = none */
} watched;

struct mqtt_health {
	GPtrArray *w; /* watched * */
};

static void on_update(void *user, int err, const char *data, size_t len)
{
	watched *w = user;
	if (err < 0)
		return;
	g_free(w->text);
	w->text = g_strndup(data, len);
	w->updated_us = g_get_monotonic_time();
}

static void free_watched(gpointer p)
{
	watched *w = p;
	dev_status_reader_free(w->r);
	g_free(w->name);
	g_free(w->text);
	g_free(w);
}

mqtt_health *mqtt_health_new(const char *const *devices, GMainContext *ctx, GError **err)
{
	mqtt_health *h = g_new0(mqtt_health, 1);
	h->w = g_ptr_array_new_with_free_func(free_watched);
	for (const char *const *d = devices; d && *d; d++) {
		watched *w = g_new0(watched, 1);
		w->name = g_strdup(*d);
		g_ptr_array_add(h->w, w);
		w->r = dev_status_reader_new(*d, FALSE, ctx, on_update, NULL, w, err);
		if (!w->r) {
			mqtt_health_free(h);
			return NULL;
		}
	}
	return h;
}

void mqtt_health_free(mqtt_health *h)
{
	if (!h)
		return;
	g_ptr_array_unref(h->w);
	g_free(h);
}

/* audiod's "xruns count=N frames_lost=M" line (docs/audiod.md). */
static gboolean parse_xruns(const char *text, gint64 *count, gint64 *lost)
{
	const char *p = text ? strstr(text, "xruns count=") : NULL;
	if (!p)
		return FALSE;
	*count = g_ascii_strtoll(p + 12, NULL, 10);
	const char *q = strstr(p, "frames_lost=");
	*lost = q ? g_ascii_strtoll(q + 12, NULL, 10) : -1;
	return TRUE;
}

static void member_int(JsonBuilder *b, const char *name, gint64 v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, v);
}

char *mqtt_health_json(mqtt_health *h, const mqtt_envelope *env, sync_client *sc, int64_t now_ns,
		       const mqtt_queue_stats *q, const mqtt_broker_state *bs, size_t *len)
{
	JsonBuilder *b = json_builder_new();
	mqtt_payload_begin(b, env, "health");
	gint64 now_us = g_get_monotonic_time();
	json_builder_set_member_name(b, "services");
	json_builder_begin_object(b);
	for (guint i = 0; i < h->w->len; i++) {
		watched *w = h->w->pdata[i];
		json_builder_set_member_name(b, w->name);
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "up");
		json_builder_add_boolean_value(b, dev_status_reader_connected(w->r) && w->text);
		json_builder_set_member_name(b, "age_s");
		if (w->updated_us)
			json_builder_add_double_value(b, (double)(now_us - w->updated_us) / 1e6);
		else
			json_builder_add_null_value(b);
		json_builder_end_object(b);
	}
	json_builder_end_object(b);
	json_builder_set_member_name(b, "xruns");
	json_builder_begin_object(b);
	for (guint i = 0; i < h->w->len; i++) {
		watched *w = h->w->pdata[i];
		gint64 count, lost;
		if (!g_str_has_prefix(w->name, "audio/") || !parse_xruns(w->text, &count, &lost))
			continue;
		char *dev = g_strndup(w->name, strlen(w->name) - (g_str_has_suffix(w->name, "/status") ? 7 : 0));
		json_builder_set_member_name(b, dev);
		json_builder_begin_object(b);
		member_int(b, "count", count);
		member_int(b, "frames_lost", lost);
		json_builder_end_object(b);
		g_free(dev);
	}
	json_builder_end_object(b);
	json_builder_set_member_name(b, "sync");
	json_builder_begin_object(b);
	sync_graph_result r;
	char why[256] = "no sync client";
	int rc = sc ? sync_client_convert_at(sc, sync_clock_cpu(env->node), sync_clock_global(), sync_tval_of(now_ns),
					     now_ns, &r, why, sizeof why)
		    : -EAGAIN;
	json_builder_set_member_name(b, "ok");
	json_builder_add_boolean_value(b, rc == 0);
	if (rc == 0) {
		json_builder_set_member_name(b, "se_ns");
		json_builder_add_double_value(b, sqrt(r.var));
		member_int(b, "hops", r.hops);
	} else {
		json_builder_set_member_name(b, "why");
		json_builder_add_string_value(b, why);
	}
	json_builder_end_object(b);
	json_builder_set_member_name(b, "queue");
	json_builder_begin_object(b);
	member_int(b, "count", (gint64)q->count);
	member_int(b, "bytes", (gint64)q->bytes);
	member_int(b, "max_count", (gint64)q->max_count);
	member_int(b, "max_bytes", (gint64)q->max_bytes);
	member_int(b, "dropped_full", (gint64)q->dropped_full);
	member_int(b, "write_errors", (gint64)q->write_errors);
	json_builder_end_object(b);
	json_builder_set_member_name(b, "broker");
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "connected");
	json_builder_add_boolean_value(b, bs->connected);
	member_int(b, "connects", (gint64)bs->connects);
	member_int(b, "losses", (gint64)bs->losses);
	json_builder_end_object(b);
	json_builder_end_object(b);
	char *text = mqtt_payload_text(b, len);
	g_object_unref(b);
	return text;
}
