/* jsonl.c — a detection as one JSON object (see jsonl.h). */
#include "apps/detect/jsonl.h"

#include <math.h>

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
	/* Numbers as the event text writes them (event.c), so that the line
	 * and the event on detect/events hold the same values. */
	char t[G_ASCII_DTOSTR_BUF_SIZE];
	/* JSON has no infinity or NaN: an unknown number is null. */
#define NUM(k, v, fmt) \
	do { \
		json_builder_set_member_name(b, k); \
		if (isfinite(v)) \
			json_builder_add_double_value(b, g_ascii_strtod(g_ascii_formatd(t, sizeof t, fmt, v), NULL)); \
		else \
			json_builder_add_null_value(b); \
	} while (0)
	INT("v", 1);
	INT("node", e->node);
	INT("dev", e->dev);
	INT("seq", (gint64)e->seq);
	json_builder_set_member_name(b, "profile");
	json_builder_add_string_value(b, e->profile[0] ? e->profile : "-");
	NUM("onset_frame", e->onset_frame, "%.4f");
	NUM("onset_se", e->onset_se, "%.4g");
	NUM("onset_crb_se", e->onset_crb_se > 0 ? e->onset_crb_se : e->onset_se, "%.4g");
	NUM("rate", e->rate_hz, "%.6g");
	/* No cpu time (the clock conversion refused): cpu_ns and cpu_se_ns null. */
	if (isfinite(e->cpu_se_ns)) {
		INT("cpu_ns", e->cpu_ns);
	} else {
		json_builder_set_member_name(b, "cpu_ns");
		json_builder_add_null_value(b);
	}
	NUM("cpu_se_ns", e->cpu_se_ns, "%.4g");
	if (e->has_global) {
		INT("global_ns", e->global_ns);
		NUM("global_se_ns", e->global_se_ns, "%.4g");
	} else {
		json_builder_set_member_name(b, "global_ns");
		json_builder_add_string_value(b, "none");
	}
	NUM("duration_s", e->duration_s, "%.4f");
	NUM("f_lo", e->f_lo_hz, "%.0f");
	NUM("f_hi", e->f_hi_hz, "%.0f");
	NUM("snr_db", e->snr_db, "%.1f");
	NUM("enr_db", e->enr_db, "%.1f");
	INT("template", e->template_id);
	if (e->call[0]) {
		json_builder_set_member_name(b, "call");
		json_builder_add_string_value(b, e->call);
	}
	if (e->n_alt > 0) {
		json_builder_set_member_name(b, "onset_alt");
		json_builder_begin_array(b);
		for (int i = 0; i < e->n_alt && i < DET_EVENT_ALT; i++)
			json_builder_add_double_value(b, g_ascii_strtod(g_ascii_formatd(t, sizeof t, "%.2f", e->onset_alt[i]), NULL));
		json_builder_end_array(b);
	}
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
