/* payload.c — detection and location messages as JSON (payload.h). */
#include "apps/mqtt/payload.h"

#include <math.h>
#include <string.h>

#include "apps/detect/event.h"

void mqtt_payload_begin(JsonBuilder *b, const mqtt_envelope *env, const char *kind)
{
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "v");
	json_builder_add_int_value(b, 1);
	json_builder_set_member_name(b, "kind");
	json_builder_add_string_value(b, kind);
	json_builder_set_member_name(b, "field");
	json_builder_add_string_value(b, env->field);
	json_builder_set_member_name(b, "node");
	json_builder_add_int_value(b, env->node);
	json_builder_set_member_name(b, "mseq");
	json_builder_add_int_value(b, (gint64)env->mseq);
}

char *mqtt_payload_text(JsonBuilder *b, size_t *len)
{
	JsonNode *root = json_builder_get_root(b);
	JsonGenerator *g = json_generator_new();
	json_generator_set_root(g, root);
	gsize n;
	char *text = json_generator_to_data(g, &n);
	g_object_unref(g);
	json_node_unref(root);
	*len = n;
	return text;
}

/* A double member; non-finite numbers are null (JSON has no NaN). */
static void add_double(JsonBuilder *b, const char *name, double v)
{
	json_builder_set_member_name(b, name);
	if (isfinite(v))
		json_builder_add_double_value(b, v);
	else
		json_builder_add_null_value(b);
}

static void add_int(JsonBuilder *b, const char *name, gint64 v)
{
	json_builder_set_member_name(b, name);
	json_builder_add_int_value(b, v);
}

char *mqtt_payload_detection(const mqtt_envelope *env, const char *line, size_t len, size_t *out_len, char *why,
			     size_t wlen)
{
	det_event e;
	if (det_event_parse(line, len, &e, why, wlen) < 0)
		return NULL;
	JsonBuilder *b = json_builder_new();
	mqtt_payload_begin(b, env, "detection");
	add_int(b, "detect_node", e.node);
	add_int(b, "dev", e.dev);
	add_int(b, "seq", (gint64)e.seq);
	json_builder_set_member_name(b, "profile");
	json_builder_add_string_value(b, e.profile);
	add_double(b, "onset_frame", e.onset_frame);
	add_double(b, "onset_se_frames", e.onset_se);
	add_double(b, "rate_hz", e.rate_hz);
	add_int(b, "cpu_ns", e.cpu_ns);
	add_double(b, "cpu_se_ns", e.cpu_se_ns);
	json_builder_set_member_name(b, "global_ns");
	if (e.has_global)
		json_builder_add_int_value(b, e.global_ns);
	else
		json_builder_add_null_value(b);
	add_double(b, "global_se_ns", e.has_global ? e.global_se_ns : NAN);
	add_double(b, "duration_s", e.duration_s);
	add_double(b, "f_lo_hz", e.f_lo_hz);
	add_double(b, "f_hi_hz", e.f_hi_hz);
	add_double(b, "snr_db", e.snr_db);
	add_double(b, "enr_db", e.enr_db);
	add_int(b, "template", e.template_id);
	if (e.call[0]) {
		json_builder_set_member_name(b, "call");
		json_builder_add_string_value(b, e.call);
	}
	json_builder_end_object(b);
	char *text = mqtt_payload_text(b, out_len);
	g_object_unref(b);
	return text;
}

char *mqtt_payload_location(const mqtt_envelope *env, const char *json, size_t len, size_t *out_len, char *why,
			    size_t wlen)
{
	JsonParser *p = json_parser_new();
	GError *err = NULL;
	char *text = NULL;
	if (!json_parser_load_from_data(p, json, (gssize)len, &err)) {
		g_snprintf(why, wlen, "not JSON: %s", err->message);
		g_error_free(err);
	} else if (!json_parser_get_root(p) || !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
		g_snprintf(why, wlen, "not a JSON object");
	} else if (!json_object_has_member(json_node_get_object(json_parser_get_root(p)), "v")) {
		g_snprintf(why, wlen, "no \"v\" member (not a collab result)");
	} else {
		JsonBuilder *b = json_builder_new();
		mqtt_payload_begin(b, env, "location");
		json_builder_set_member_name(b, "result");
		json_builder_add_value(b, json_node_copy(json_parser_get_root(p)));
		json_builder_end_object(b);
		text = mqtt_payload_text(b, out_len);
		g_object_unref(b);
	}
	g_object_unref(p);
	return text;
}
