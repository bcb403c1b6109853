/* jsonl.c — a detection as one JSON object (see jsonl.h). */
#include "apps/detect/jsonl.h"

#include <json-glib/json-glib.h>

gchar *det_event_json(const det_event *e)
{
	JsonBuilder *b = json_builder_new();
	json_builder_begin_object(b);
#define INT(k, v) \
	do { \
		json_builder_set_member_name(b, k); \
		json_builder_add_int_value(b, v); \
	} while (0)
#define NUM(k, v) \
	do { \
		json_builder_set_member_name(b, k); \
		json_builder_add_double_value(b, v); \
	} while (0)
	INT("v", 1);
	INT("node", e->node);
	INT("dev", e->dev);
	INT("seq", (gint64)e->seq);
	json_builder_set_member_name(b, "profile");
	json_builder_add_string_value(b, e->profile[0] ? e->profile : "-");
	NUM("onset_frame", e->onset_frame);
	NUM("onset_se", e->onset_se);
	NUM("rate", e->rate_hz);
	INT("cpu_ns", e->cpu_ns);
	NUM("cpu_se_ns", e->cpu_se_ns);
	if (e->has_global) {
		INT("global_ns", e->global_ns);
		NUM("global_se_ns", e->global_se_ns);
	} else {
		json_builder_set_member_name(b, "global_ns");
		json_builder_add_string_value(b, "none");
	}
	NUM("duration_s", e->duration_s);
	NUM("f_lo", e->f_lo_hz);
	NUM("f_hi", e->f_hi_hz);
	NUM("snr_db", e->snr_db);
	NUM("enr_db", e->enr_db);
	INT("template", e->template_id);
#undef INT
#undef NUM
	json_builder_end_object(b);
	JsonNode *root = json_builder_get_root(b);
	JsonGenerator *g = json_generator_new();
	json_generator_set_root(g, root);
	gchar *s = json_generator_to_data(g, NULL);
	g_object_unref(g);
	json_node_unref(root);
	g_object_unref(b);
	return s;
}
