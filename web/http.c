/* http.c — JSON replies, JSON errors and query parameters (http.h). */
#include "web/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *web_json_text(JsonNode *node)
{
	JsonGenerator *g = json_generator_new();
	json_generator_set_root(g, node);
	char *t = json_generator_to_data(g, NULL);
	g_object_unref(g);
	return t;
}

void web_reply_json(SoupServerMessage *msg, guint status, JsonNode *node)
{
	char *t = web_json_text(node);
	json_node_unref(node);
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Cache-Control", "no-store");
	soup_server_message_set_status(msg, status, NULL);
	soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_TAKE, t, strlen(t));
}

void web_reply_error(SoupServerMessage *msg, guint status, const char *param, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	JsonBuilder *b = json_builder_new();
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "error");
	json_builder_add_string_value(b, why);
	if (param) {
		json_builder_set_member_name(b, "param");
		json_builder_add_string_value(b, param);
	}
	json_builder_set_member_name(b, "status");
	json_builder_add_int_value(b, status);
	json_builder_end_object(b);
	web_reply_json(msg, status, json_builder_get_root(b));
	g_object_unref(b);
	g_free(why);
}

void web_reply_bytes(SoupServerMessage *msg, const char *type, const void *data, size_t len, const char *filename)
{
	SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
	soup_message_headers_replace(h, "Cache-Control", "no-store");
	if (filename) {
		char *cd = g_strdup_printf("attachment; filename=\"%s\"", filename);
		soup_message_headers_replace(h, "Content-Disposition", cd);
		g_free(cd);
	}
	soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
	soup_server_message_set_response(msg, type, SOUP_MEMORY_COPY, data, len);
}

const char *web_param_str(GHashTable *query, const char *key)
{
	return query ? g_hash_table_lookup(query, key) : NULL;
}

int web_param_int(SoupServerMessage *msg, GHashTable *query, const char *key, int64_t lo, int64_t hi, int64_t def,
		  int64_t *out)
{
	const char *v = web_param_str(query, key);
	*out = def;
	if (!v)
		return 0;
	char *end = NULL;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*v || end == v || *end || errno == ERANGE) {
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, key, "%s=\"%.40s\": not a decimal integer", key, v);
		return -1;
	}
	if (x < lo || x > hi) {
		web_reply_error(msg, SOUP_STATUS_BAD_REQUEST, key,
				"%s=%lld: out of range %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, key, x, lo, hi);
		return -1;
	}
	*out = x;
	return 1;
}

gboolean web_require_get(SoupServerMessage *msg)
{
	const char *m = soup_server_message_get_method(msg);
	if (m == SOUP_METHOD_GET || m == SOUP_METHOD_HEAD)
		return TRUE;
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow", "GET, HEAD");
	web_reply_error(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL, "method %s: only GET and HEAD are served", m);
	return FALSE;
}
