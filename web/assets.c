/* assets.c — the page and its static files (HTML, JS, CSS; no build step),
 * and JSON 404s for unknown API paths.  GET / with ?token=T sets the
 * chorus_token cookie (HttpOnly, SameSite=Strict) so the page's own
 * requests, its EventSource and its download links carry the token. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "web/http.h"
#include "web/server.h"

static const struct {
	const char *ext, *type;
} types[] = {
	{".html", "text/html; charset=utf-8"},
	{".js", "text/javascript; charset=utf-8"},
	{".css", "text/css; charset=utf-8"},
	{".svg", "image/svg+xml"},
	{".png", "image/png"},
	{".txt", "text/plain; charset=utf-8"},
};

static const char *type_of(const char *path)
{
	for (size_t i = 0; i < G_N_ELEMENTS(types); i++)
		if (g_str_has_suffix(path, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

char *web_assets_find(const char *dir)
{
	if (dir && *dir)
		return g_file_test(dir, G_FILE_TEST_IS_DIR) ? g_strdup(dir) : NULL;
	char *exe = g_file_read_link("/proc/self/exe", NULL);
	if (!exe)
		return NULL;
	char *bin = g_path_get_dirname(exe), *top = g_path_get_dirname(bin);
	/* PREFIX/bin -> PREFIX/share/chorus/web; build/bin -> the source tree's web/static */
	char *cands[] = {g_build_filename(top, "share", "chorus", "web", NULL), g_build_filename(top, "..", "web", "static", NULL),
			 NULL};
	char *found = NULL;
	for (int i = 0; cands[i]; i++) {
		char *index = g_build_filename(cands[i], "index.html", NULL);
		if (!found && g_file_test(index, G_FILE_TEST_IS_REGULAR))
			found = g_canonicalize_filename(cands[i], NULL);
		g_free(index);
		g_free(cands[i]);
	}
	g_free(exe);
	g_free(bin);
	g_free(top);
	return found;
}

static void serve_file(web *w, SoupServerMessage *msg, const char *rel)
{
	char *p = g_build_filename(w->assets, rel, NULL), *data = NULL;
	gsize n = 0;
	if (!g_file_get_contents(p, &data, &n, NULL)) {
		web_reply_error(msg, SOUP_STATUS_NOT_FOUND, NULL, "%s: no such file", rel);
	} else {
		soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Cache-Control", "no-cache");
		soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
		soup_server_message_set_response(msg, type_of(rel), SOUP_MEMORY_TAKE, data, n);
	}
	g_free(p);
}

/* A static file's name: components of [A-Za-z0-9_.-], none starting with '.'. */
static gboolean safe(const char *rel)
{
	if (!*rel || strlen(rel) > 200)
		return FALSE;
	for (const char *c = rel; *c; c++) {
		if ((c == rel || c[-1] == '/') && (*c == '.' || *c == '/'))
			return FALSE;
		if (!g_ascii_isalnum(*c) && !strchr("_.-/", *c))
			return FALSE;
	}
	return TRUE;
}

static void h_root(SoupServer *s, SoupServerMessage *msg, const char *path, GHashTable *query, gpointer data)
{
	web *w = data;
	if (g_str_has_prefix(path, "/api/") || !strcmp(path, "/api")) {
		if (web_authorized(w, msg, query))
			web_reply_error(msg, SOUP_STATUS_NOT_FOUND, NULL, "%.80s: no such endpoint (docs/protocol.md \"chorus-web\")",
					path);
		return;
	}
	if (!web_admit(w, msg, query))
		return;
	const char *rel = !strcmp(path, "/") ? "index.html" : path + 1;
	if (!safe(rel)) {
		web_reply_error(msg, SOUP_STATUS_NOT_FOUND, NULL, "%.80s: no such file", path);
		return;
	}
	const char *q = query ? g_hash_table_lookup(query, "token") : NULL;
	if (!strcmp(rel, "index.html") && q && w->keyed) {
		char *c = g_strdup_printf("chorus_token=%s; Path=/; HttpOnly; SameSite=Strict", w->token);
		soup_message_headers_append(soup_server_message_get_response_headers(msg), "Set-Cookie", c);
		g_free(c);
	}
	serve_file(w, msg, rel);
}

void web_assets_add(web *w)
{
	soup_server_add_handler(w->soup, NULL, h_root, w, NULL);
}
