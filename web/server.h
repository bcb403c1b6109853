/* server.h — chorus-web's shared state and its handlers (docs/protocol.md
 * "chorus-web", chorus-web(8)).  One process, one GLib main loop: libsoup
 * serves HTTP on it, libdev reads the nodes on it, nothing blocks it (the
 * one blocking libdev call, a device listing, runs in a GTask thread).
 */
#ifndef CHORUS_WEB_SERVER_H
#define CHORUS_WEB_SERVER_H

#include <glib.h>
#include <libsoup/soup.h>

#include "apps/collab/nodes.h"
#include "web/auth.h"
#include "web/field.h"
#include "web/live.h"
#include "web/spec.h"

typedef struct {
	char *bind;             /* listening address */
	gint64 port;            /* TCP port */
	char *key_file;         /* the field's network key */
	gboolean insecure;      /* serve without a key (loopback only) */
	char *nodes;            /* the nodes file */
	gint64 proxy_port;      /* the nodes' chorus-proxy port */
	char *assets;           /* static files; "" = beside the program */
	char *truth;            /* a simulation's truth (JSON) to show; "" = none */
	gint64 queue_bytes;     /* per live client */
	double spec_linger_s;   /* spectrogram kept streaming after its last viewer */
	double fetch_timeout_s; /* audio and device reads */
} web_cfg;

typedef struct {
	web_cfg cfg;
	char token[WEB_TOKEN_HEX + 1];
	gboolean keyed; /* token is required */
	char *assets;   /* resolved directory */
	collab_nodes *nodes;
	web_field *field;
	web_live *live;
	GHashTable *specs; /* node (GUINT_TO_POINTER) -> web_spec_slot * */
	SoupServer *soup;
	guint fetching; /* audio fetches in flight (at most WEB_FETCHES_MAX) */
	guint64 requests, refused, bad, busy;
} web;

/* Audio fetches served at once; more are answered 503 (each holds up to a
 * minute of audio in memory until it is sent). */
#define WEB_FETCHES_MAX 8

/* Register every handler on w->soup. */
void web_handlers_add(web *w);

/* Check the token; on refusal reply 401, count and return FALSE. */
gboolean web_authorized(web *w, SoupServerMessage *msg, GHashTable *query);

/* A handler's head: the token (web_authorized), then GET or HEAD only
 * (405 otherwise).  FALSE after replying. */
gboolean web_admit(web *w, SoupServerMessage *msg, GHashTable *query);

/* The node parameter `key` of a request: 1 with *id for a node of the
 * field, else -1 after replying 400 (malformed) or 404 (not in the field). */
int web_param_node(web *w, SoupServerMessage *msg, GHashTable *query, const char *key, uint32_t *id);

/* Spectrogram streams: one more or one fewer viewer of node's (started on
 * the first, stopped spec_linger_s after the last); the stream or NULL. */
web_spec *web_spec_want(web *w, uint32_t node);
void web_spec_release(web *w, uint32_t node);

/* The handlers, by file: api.c (state and live), media.c (audio and
 * clips), browse.c (device browser), assets.c (page and static files). */
void web_api_add(web *w);
void web_media_add(web *w);
void web_browse_add(web *w);
void web_assets_add(web *w);

/* The directory of the static files: dir when set, else beside the
 * program (PREFIX/share/chorus/web for PREFIX/bin/chorus-web, the source
 * tree's web/static for build/bin/chorus-web).  g_free it; NULL when none
 * is found. */
char *web_assets_find(const char *dir);

#endif
