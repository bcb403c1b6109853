/* auth.h — chorus-web's access rule (docs/protocol.md "chorus-web"):
 * every request but none carries the field's token, the 64 hex digits of
 * HMAC-SHA256 under the network key of the text "chorus-web 1\n"
 * (`chorus-web --print-token`), as `Authorization: Bearer T`, a
 * `chorus_token=T` cookie (the page sets it when opened with ?token=T) or
 * a `token=T` query parameter (EventSource and download links).  Without a
 * key (insecure mode, loopback only) every request is let through.
 */
#ifndef CHORUS_WEB_AUTH_H
#define CHORUS_WEB_AUTH_H

#include <glib.h>
#include <libsoup/soup.h>
#include <stddef.h>
#include <stdint.h>

#define WEB_TOKEN_HEX 64

/* The token of key (klen bytes) into out (WEB_TOKEN_HEX + 1 bytes, NUL
 * terminated).  Pure. */
void web_token_derive(const uint8_t *key, size_t klen, char out[WEB_TOKEN_HEX + 1]);

/* Whether the request carries `token` (NULL: no key, always TRUE) in one of
 * the three places; *where (may be NULL) says which ("header", "cookie",
 * "query") or why not ("none", "wrong"). */
gboolean web_auth_ok(SoupServerMessage *msg, GHashTable *query, const char *token, const char **where);

/* Refuse: 401 with a JSON error saying what was missing or wrong. */
void web_auth_refuse(SoupServerMessage *msg, const char *where);

#endif
