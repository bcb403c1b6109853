/* parse.c — the services' text forms, read for the view (parse.h). */
#include "web/parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start of the next line after p (NULL at the end). */
static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? nl + 1 : NULL;
}

/* key's value within [line, end): copied into buf. */
static const char *kv_in(const char *line, const char *end, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = line; p && p + kl < end; p++) {
		if ((p == line || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1, *e = v;
			while (e < end && *e != ' ' && *e != '\n')
				e++;
			g_strlcpy(buf, v, MIN(len, (size_t)(e - v) + 1));
			return buf;
		}
	}
	return NULL;
}

const char *web_kv(const char *text, const char *head, const char *key, char *buf, size_t len)
{
	for (const char *l = text; l && *l; l = next_line(l)) {
		const char *s = l;
		while (*s == ' ')
			s++;
		if (head && strncmp(s, head, strlen(head)))
			continue;
		const char *end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		const char *v = kv_in(l, end, key, buf, len);
		if (v || head)
			return v;
	}
	return NULL;
}

static gboolean to_int(const char *s, int64_t *out)
{
	if (!s || !*s)
		return FALSE;
	char *end = NULL;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (*end || errno)
		return FALSE;
	*out = x;
	return TRUE;
}

static gboolean to_double(const char *s, double *out)
{
	if (!s || !*s)
		return FALSE;
	char *end = NULL;
	double x = g_ascii_strtod(s, &end);
	if (end == s || !isfinite(x))
		return FALSE; /* JSON has no inf or NaN: the member is left out */
	*out = x;
	return TRUE;
}

int64_t web_kv_int(const char *text, const char *head, const char *key, int64_t def)
{
	char b[32];
	int64_t x;
	return to_int(web_kv(text, head, key, b, sizeof b), &x) ? x : def;
}

JsonNode *web_det_json(const char *line, uint32_t from)
{
	static const char *const ints[] = {"node", "dev", "seq", "global_ns", "cpu_ns", "rate", "template", NULL};
	static const char *const reals[] = {"global_se_ns", "onset_frame", "onset_se", "duration_s", "f_lo", "f_hi", "snr_db", NULL};
	const char *end = line + strlen(line);
	char b[64];
	int64_t x;
	if (!kv_in(line, end, "v", b, sizeof b) || !kv_in(line, end, "onset_frame", b, sizeof b) ||
	    !kv_in(line, end, "rate", b, sizeof b))
		return NULL;
	JsonObject *o = json_object_new();
	json_object_set_int_member(o, "node", from);
	for (int i = 0; ints[i]; i++)
		if (to_int(kv_in(line, end, ints[i], b, sizeof b), &x))
			json_object_set_int_member(o, ints[i], x);
	if (!json_object_has_member(o, "global_ns"))
		json_object_set_null_member(o, "global_ns");
	for (int i = 0; reals[i]; i++) {
		double d;
		if (to_double(kv_in(line, end, reals[i], b, sizeof b), &d))
			json_object_set_double_member(o, reals[i], d);
	}
	if (kv_in(line, end, "profile", b, sizeof b))
		json_object_set_string_member(o, "profile", b);
	if (kv_in(line, end, "call", b, sizeof b))
		json_object_set_string_member(o, "call", b);
	JsonNode *j = json_node_new(JSON_NODE_OBJECT);
	json_node_take_object(j, o);
	return j;
}

/* "  nodeK heard=… fit=rbs n=62 rms=1375.4ns …" lines of sync/rbs's peers. */
static void add_peers(JsonBuilder *b, const char *rbs)
{
	json_builder_set_member_name(b, "peers");
	json_builder_begin_array(b);
	for (const char *l = rbs; l && *l; l = next_line(l)) {
		unsigned k;
		char buf[32];
		const char *end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		if (sscanf(l, "  node%u heard=", &k) != 1 || !kv_in(l, end, "fit", buf, sizeof buf))
			continue;
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "node");
		json_builder_add_int_value(b, k);
		json_builder_set_member_name(b, "fit");
		json_builder_add_string_value(b, buf);
		int64_t n;
		double rms;
		if (to_int(kv_in(l, end, "n", buf, sizeof buf), &n)) {
			json_builder_set_member_name(b, "n");
			json_builder_add_int_value(b, n);
		}
		if (to_double(kv_in(l, end, "rms", buf, sizeof buf), &rms)) {
			json_builder_set_member_name(b, "rms_ns");
			json_builder_add_double_value(b, rms);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

/* "A -> B slope=… n=… rms=… se_end=… age=…s" lines of the ticker's text. */
static void add_conversions(JsonBuilder *b, const char *ticker)
{
	json_builder_set_member_name(b, "conversions");
	json_builder_begin_array(b);
	for (const char *l = ticker; l && *l; l = next_line(l)) {
		char from[64], to[64], buf[32];
		const char *end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		if (sscanf(l, "%63s -> %63s slope=", from, to) != 2)
			continue;
		json_builder_begin_object(b);
		json_builder_set_member_name(b, "from");
		json_builder_add_string_value(b, from);
		json_builder_set_member_name(b, "to");
		json_builder_add_string_value(b, to);
		gboolean exact = strstr(l, " exact ") != NULL && strstr(l, " exact ") < end;
		json_builder_set_member_name(b, "exact");
		json_builder_add_boolean_value(b, exact);
		double d;
		int64_t n;
		if (to_double(kv_in(l, end, "se_end", buf, sizeof buf), &d)) {
			json_builder_set_member_name(b, "se_ns");
			json_builder_add_double_value(b, d);
		}
		if (to_double(kv_in(l, end, "age", buf, sizeof buf), &d)) {
			json_builder_set_member_name(b, "age_s");
			json_builder_add_double_value(b, d);
		}
		if (to_int(kv_in(l, end, "n", buf, sizeof buf), &n)) {
			json_builder_set_member_name(b, "n");
			json_builder_add_int_value(b, n);
		}
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
}

void web_health_json(JsonBuilder *b, const char *audio, const char *rbs, const char *ticker)
{
	char buf[128];
	int64_t x = web_kv_int(audio, "xruns", "count", -1);
	if (x >= 0) {
		json_builder_set_member_name(b, "xruns");
		json_builder_add_int_value(b, x);
	}
	if (web_kv(audio, "tstamp", "source", buf, sizeof buf)) {
		json_builder_set_member_name(b, "tstamp");
		json_builder_add_string_value(b, buf);
	}
	if ((x = web_kv_int(audio, "format", "rate", -1)) > 0) {
		json_builder_set_member_name(b, "rate");
		json_builder_add_int_value(b, x);
	}
	unsigned root;
	const char *r = rbs ? strstr(rbs, "\nroot: node") : NULL;
	if (r && sscanf(r, "\nroot: node%u", &root) == 1) {
		json_builder_set_member_name(b, "root");
		json_builder_add_int_value(b, root);
	}
	add_peers(b, rbs);
	add_conversions(b, ticker);
}

JsonNode *web_call_superseded(GQueue *q, JsonObject *o)
{
	if (!json_object_has_member(o, "supersedes"))
		return NULL;
	gint64 rep = json_object_get_int_member_with_default(o, "reporter", -1),
	       sup = json_object_get_int_member_with_default(o, "supersedes", -1);
	for (GList *l = q->tail; l; l = l->prev) {
		JsonNode *n = l->data;
		JsonObject *c = JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
		if (c && json_object_get_int_member_with_default(c, "reporter", -2) == rep &&
		    json_object_get_int_member_with_default(c, "seq", -2) == sup) {
			g_queue_delete_link(q, l);
			return n;
		}
	}
	return NULL;
}
