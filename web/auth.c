/* auth.c — the token derived from the network key, and its check (auth.h). */
#include "web/auth.h"

#include <string.h>

#include "libdev/netkey.h"
#include "web/http.h"

static const char token_text[] = "chorus-web 1\n";

void web_token_derive(const uint8_t *key, size_t klen, char out[WEB_TOKEN_HEX + 1])
{
	char *m = dev_netkey_mac_hex(key, klen, token_text, strlen(token_text));
	g_strlcpy(out, m, WEB_TOKEN_HEX + 1);
	g_free(m);
}

static gboolean same(const char *token, const char *given)
{
	return given && strlen(given) == WEB_TOKEN_HEX && dev_netkey_same(token, given, WEB_TOKEN_HEX, TRUE);
}

/* The value of cookie `name` in a Cookie header, copied into buf. */
static const char *cookie_value(const char *header, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);
	for (const char *p = header; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		if (l > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			g_strlcpy(buf, p + nl + 1, MIN(len, l - nl));
			return buf;
		}
		p = end;
	}
	return NULL;
}

gboolean web_auth_ok(SoupServerMessage *msg, GHashTable *query, const char *token, const char **where)
{
	const char *w = "none";
	gboolean ok = token == NULL, given = FALSE;
	SoupMessageHeaders *h = soup_server_message_get_request_headers(msg);
	const char *a = soup_message_headers_get_one(h, "Authorization");
	if (!ok && a && g_str_has_prefix(a, "Bearer ")) {
		given = TRUE;
		if ((ok = same(token, a + 7)))
			w = "header";
	}
	char buf[WEB_TOKEN_HEX + 8];
	const char *c = soup_message_headers_get_one(h, "Cookie");
	const char *cv = c ? cookie_value(c, "chorus_token", buf, sizeof buf) : NULL;
	if (!ok && cv) {
		given = TRUE;
		if ((ok = same(token, cv)))
			w = "cookie";
	}
	const char *q = query ? g_hash_table_lookup(query, "token") : NULL;
	if (!ok && q) {
		given = TRUE;
		if ((ok = same(token, q)))
			w = "query";
	}
	if (!ok && given)
		w = "wrong";
	if (where)
		*where = ok && !token ? "open" : w;
	return ok;
}

void web_auth_refuse(SoupServerMessage *msg, const char *where)
{
	soup_message_headers_replace(soup_server_message_get_response_headers(msg), "WWW-Authenticate",
				     "Bearer realm=\"chorus\"");
	if (where && !strcmp(where, "wrong"))
		web_reply_error(msg, SOUP_STATUS_UNAUTHORIZED, "token",
				"wrong token: not the one derived from this field's network key (chorus-web --print-token)");
	else
		web_reply_error(msg, SOUP_STATUS_UNAUTHORIZED, "token",
				"no token: this view needs the field's token (Authorization: Bearer, the chorus_token "
				"cookie or ?token=; chorus-web --print-token prints it)");
}
