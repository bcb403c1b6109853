/* http.h — chorus-web's replies and request parameters (docs/protocol.md
 * "chorus-web"): JSON bodies, JSON errors that name the parameter and say
 * why, and the parsers every endpoint uses for its query parameters.
 * Pure but for libsoup's message; nothing here blocks.
 */
#ifndef CHORUS_WEB_HTTP_H
#define CHORUS_WEB_HTTP_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <stdint.h>

/* Reply `status` with the JSON text of `node` (taken: freed here);
 * Cache-Control no-store. */
void web_reply_json(SoupServerMessage *msg, guint status, JsonNode *node);

/* Reply `status` with {"error": why, "param": param} (param may be NULL:
 * the key is then absent), formatted like printf. */
void web_reply_error(SoupServerMessage *msg, guint status, const char *param, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* Reply 200 with `len` bytes of `type` (copied); `filename` non-NULL adds
 * Content-Disposition: attachment. */
void web_reply_bytes(SoupServerMessage *msg, const char *type, const void *data, size_t len, const char *filename);

/* Query parameter `key` as a decimal integer in [lo, hi].  Returns 1 with
 * *out, 0 when absent (*out = def), or -1 after replying 400 naming the
 * parameter and why (not a number, out of range). */
int web_param_int(SoupServerMessage *msg, GHashTable *query, const char *key, int64_t lo, int64_t hi, int64_t def,
		  int64_t *out);

/* Query parameter `key` as a string; NULL when absent. */
const char *web_param_str(GHashTable *query, const char *key);

/* Whether the request's method is GET or HEAD; otherwise replies 405 and
 * returns FALSE. */
gboolean web_require_get(SoupServerMessage *msg);

/* The JSON text of a node (not freed), without pretty-printing; g_free it. */
char *web_json_text(JsonNode *node);

#endif
