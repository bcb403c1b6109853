/* main.c — chorus-web: the field's live view in a browser (issue 19 item 2;
 * docs/protocol.md "chorus-web", chorus-web(8)).
 *
 *   chorus-web [-c /etc/chorus/web.conf] [--port P] [--bind ADDR]
 *              [--nodes FILE] [--key-file FILE] [--truth FILE]
 *              [--print-config] [--print-token]
 *
 * Serves HTTP (libsoup 3) on one GLib main loop: the page and its static
 * files, a JSON API and server-sent events.  Everything it shows comes from
 * the nodes' devices through remote device access (libdev "nodeN:NAME",
 * each node's chorus-proxy): status devices, collab/events, detect/events
 * and audio/0/data.  Every request needs the token derived from the
 * field's network key (auth.h).  In simulation chorus-sim --web starts it
 * with the run's nodes file and key, and the world's sources as --truth.
 */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "libcfg/cfg.h"
#include "libdev/netkey.h"
#include "libdev/common.h"
#include "libdev/remote.h"
#include "web/server.h"

#define K(...) CFG_KEY(web_cfg, __VA_ARGS__)
static const cfg_key keys[] = {
	K("bind", CFG_STRING, "127.0.0.1", 1, 0, bind, "listening address (IPv4 or IPv6 literal; 0.0.0.0 or :: = every interface)"),
	K("port", CFG_INT, "7480", 1, 65535, port, "TCP port of the HTTP server"),
	K("key_file", CFG_STRING, DEV_REMOTE_KEY_DEFAULT, 1, 0, key_file,
	  "the field's network key: the proxies' key, and the view's token is derived from it"),
	K("insecure", CFG_BOOL, "false", 1, 0, insecure, "true: serve without a key and without a token (loopback bind only)"),
	K("nodes", CFG_STRING, DEV_REMOTE_NODES_DEFAULT, 1, 0, nodes, "the nodes file (ID X Y Z [ADDRESS]): the nodes shown and how to reach them"),
	K("proxy_port", CFG_INT, "7402", 1, 65535, proxy_port, "the nodes' chorus-proxy port ($CHORUS_PROXY_PORT)"),
	K("assets", CFG_STRING, "", 1, 0, assets, "directory of the page's files; empty = PREFIX/share/chorus/web (or the source tree's web/static)"),
	K("truth", CFG_STRING, "", 1, 0, truth, "a simulation's truth (JSON, chorus-sim --web writes it) to show; empty = none"),
	K("queue_bytes", CFG_INT, "1048576", 4096, 1073741824, queue_bytes, "bytes queued to one live client before its events are dropped"),
	K("spec_linger_s", CFG_DOUBLE, "10", 0, 3600, spec_linger_s, "seconds a spectrogram keeps streaming after its last viewer"),
	K("fetch_timeout_s", CFG_DOUBLE, "8", 0.1, 600, fetch_timeout_s, "time a node has to answer an audio or device read, s"),
	{NULL},
};
static const cfg_group table[] = {
	{.name = "web", .keys = keys, .store = 1},
	{NULL},
};

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* The key and token, the security rule, the nodes and libdev's
 * environment.  FALSE + *err. */
static gboolean derive(web *w, GError **err)
{
	uint8_t *key = NULL;
	size_t klen = 0;
	gboolean loopback = dev_netkey_is_loopback(w->cfg.bind) || !strcmp(w->cfg.bind, "::1");
	if (!w->cfg.insecure) {
		if (!dev_netkey_load("web", w->cfg.key_file, &key, &klen, err))
			return FALSE;
		web_token_derive(key, klen, w->token);
		w->keyed = TRUE;
		g_free(key);
		g_setenv("CHORUS_KEY_FILE", w->cfg.key_file, TRUE);
	} else if (!loopback) {
		g_set_error(err, DEV_ERROR, EPERM,
			    "[web] insecure = true serves without a token: bind a loopback address, not %s", w->cfg.bind);
		return FALSE;
	}
	if (!(w->nodes = collab_nodes_load(w->cfg.nodes, err)))
		return FALSE;
	if (!w->nodes->nodes->len) {
		g_set_error(err, DEV_ERROR, EINVAL, "[web] nodes %s lists no node", w->cfg.nodes);
		return FALSE;
	}
	g_setenv("CHORUS_NODES", w->cfg.nodes, TRUE);
	char port[16];
	g_snprintf(port, sizeof port, "%d", (int)w->cfg.proxy_port);
	g_setenv("CHORUS_PROXY_PORT", port, TRUE);
	/* every device name is explicitly remote: never this machine's by accident */
	g_unsetenv("CHORUS_REMOTE");
	if (!(w->assets = web_assets_find(w->cfg.assets))) {
		g_set_error(err, DEV_ERROR, ENOENT, "[web] assets: no directory with index.html (%s)",
			    *w->cfg.assets ? w->cfg.assets : "looked beside the program: ../share/chorus/web, ../../web/static");
		return FALSE;
	}
	return TRUE;
}

static gboolean listen_on(web *w, GError **err)
{
	GInetAddress *ia = g_inet_address_new_from_string(w->cfg.bind);
	if (!ia) {
		g_set_error(err, DEV_ERROR, EINVAL, "[web] bind \"%s\" is not an IPv4 or IPv6 address", w->cfg.bind);
		return FALSE;
	}
	GSocketAddress *sa = g_inet_socket_address_new(ia, (guint16)w->cfg.port);
	g_object_unref(ia);
	gboolean ok = soup_server_listen(w->soup, sa, 0, err);
	g_object_unref(sa);
	return ok;
}

int main(int argc, char **argv)
{
	char *conf = NULL, *bind = NULL, *nodes = NULL, *key_file = NULL, *truth = NULL, *assets = NULL;
	gint64 port = 0;
	gboolean print_token = FALSE;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/web.conf)", "FILE"},
		{"port", 'p', 0, G_OPTION_ARG_INT64, &port, "TCP port ([web] port)", "PORT"},
		{"bind", 'b', 0, G_OPTION_ARG_STRING, &bind, "listening address ([web] bind)", "ADDR"},
		{"nodes", 'n', 0, G_OPTION_ARG_FILENAME, &nodes, "the nodes file ([web] nodes)", "FILE"},
		{"key-file", 'k', 0, G_OPTION_ARG_FILENAME, &key_file, "the network key ([web] key_file)", "FILE"},
		{"truth", 0, 0, G_OPTION_ARG_FILENAME, &truth, "a simulation's truth to show ([web] truth)", "FILE"},
		{"assets", 0, 0, G_OPTION_ARG_FILENAME, &assets, "the page's files ([web] assets)", "DIR"},
		{"print-token", 0, 0, G_OPTION_ARG_NONE, &print_token, "print the token the view requires and exit", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("chorus-web", "- the field's live view in a browser", entries, table, NULL, TRUE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	static web w;
	const char *path = conf ? conf : "/etc/chorus/web.conf";
	if (!cfg_defaults(table, &w.cfg, &err) || !cfg_load(path, conf == NULL, table, &w.cfg, &err)) {
		fprintf(stderr, "chorus-web: %s\n", err->message);
		return 2;
	}
	if (port > 0 && port < 65536)
		w.cfg.port = port;
	else if (port) {
		fprintf(stderr, "chorus-web: --port %" G_GINT64_FORMAT ": expected 1..65535\n", port);
		return 2;
	}
	char **over[] = {&bind, &nodes, &key_file, &truth, &assets};
	char **field[] = {&w.cfg.bind, &w.cfg.nodes, &w.cfg.key_file, &w.cfg.truth, &w.cfg.assets};
	for (size_t i = 0; i < G_N_ELEMENTS(over); i++)
		if (*over[i]) {
			g_free(*field[i]);
			*field[i] = *over[i];
		}
	if (print_token) {
		uint8_t *key = NULL;
		size_t klen = 0;
		if (!dev_netkey_load("web", w.cfg.key_file, &key, &klen, &err)) {
			fprintf(stderr, "chorus-web: %s\n", err->message);
			return 2;
		}
		web_token_derive(key, klen, w.token);
		g_free(key);
		cfg_clear(table, &w.cfg);
		g_free(conf);
		/* Written and flushed here: the caller reads it from a pipe. */
		if (puts(w.token) < 0 || fflush(stdout) != 0) {
			fprintf(stderr, "chorus-web: writing the token: %s\n", g_strerror(errno));
			return 1;
		}
		return 0;
	}
	if (!derive(&w, &err)) {
		fprintf(stderr, "chorus-web: %s\n", err->message);
		return 2;
	}
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	g_unix_signal_add(SIGINT, on_signal, loop);
	g_unix_signal_add(SIGTERM, on_signal, loop);
	w.soup = soup_server_new("server-header", "chorus-web/1 ", NULL);
	web_handlers_add(&w);
	if (!listen_on(&w, &err)) {
		fprintf(stderr, "chorus-web: %s port %d: %s\n", w.cfg.bind, (int)w.cfg.port, err->message);
		return 2;
	}
	g_message("serving %u nodes of %s on http://%s:%d/ (%s), page from %s", w.nodes->nodes->len, w.cfg.nodes, w.cfg.bind,
		  (int)w.cfg.port, w.keyed ? "open it with ?token= from chorus-web --print-token" : "WITHOUT A TOKEN (insecure)",
		  w.assets);
	sd_notify(0, "READY=1\nSTATUS=serving");
	g_main_loop_run(loop);
	sd_notify(0, "STOPPING=1");
	soup_server_disconnect(w.soup);
	web_live_free(w.live);
	if (w.specs)
		g_hash_table_destroy(w.specs);
	web_field_free(w.field);
	g_object_unref(w.soup);
	collab_nodes_free(w.nodes);
	g_main_loop_unref(loop);
	g_free(w.assets);
	cfg_clear(table, &w.cfg);
	g_free(conf);
	return 0;
}
