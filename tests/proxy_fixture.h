/* proxy_fixture.h — a node for the remote device tests and benchmark:
 * demo devices served from a thread of this process (status, commands,
 * packet, sensor) and a chorus-proxy child exporting them on a free
 * loopback port, with the environment a remote client needs (CHORUS_NODES
 * listing node 3 at 127.0.0.1, CHORUS_PROXY_PORT, CHORUS_KEY_FILE).
 * Failures abort with g_error (the fixture is not the thing under test). */
#ifndef CHORUS_TESTS_PROXY_FIXTURE_H
#define CHORUS_TESTS_PROXY_FIXTURE_H

#include <glib.h>

#include "libdev/dev.h"

#define PFX_NODE 3

typedef struct {
	char *dir;    /* scratch directory: key, nodes, proxy.conf, proxy.log */
	char *bindir; /* where chorus-proxy and the tools are */
	char *key, *conf, *log;
	int port;
	GPid pid; /* the proxy, 0 when not running */
	GMainContext *ctx;
	GMainLoop *loop;
	GThread *th;
	dev_status *st;
	dev_command *ctl, *ro, *locked;
	dev_packet *pk;
	dev_sensor *sn;
	int value;       /* what demo/status shows ("value N") */
	int64_t sn_next; /* the sensor's next index (items are int16 = index) */
} pfx;

/* The bin directory beside a test binary (argv0 ".../tests/NAME" ->
 * ".../bin"; g_free it), or NULL after printing "NAME: SKIP (...)" when
 * chorus-proxy is not built there (the caller exits 77). */
char *pfx_bindir(const char *argv0, const char *name);

/* Serve the demo devices (demo/status, demo/ctl, demo/ro, demo/locked
 * (writes only for another uid), demo/events, demo/data) and start the proxy
 * with keepalive_ms (and `extra` lines appended to its [proxy] group). */
pfx *pfx_start(const char *bindir, int keepalive_ms, const char *extra);

/* Start / stop (SIGTERM, reaped; anything but a clean exit 0, such as a
 * sanitizer's report, aborts with the proxy's log) the proxy alone. */
void pfx_proxy_start(pfx *f);
void pfx_proxy_stop(pfx *f);

/* Stop (up FALSE) or start again demo/status, as its service would; call
 * it through pfx_call. */
void pfx_status_restart(pfx *f, gboolean up);

/* Run fn(data) on the services' thread and wait for it. */
void pfx_call(pfx *f, void (*fn)(pfx *f, void *data), void *data);

/* Stop the proxy and the services, remove the scratch directory. */
void pfx_stop(pfx *f);

/* Connect a raw TCP socket to the proxy; blocking fd, or -errno. */
int pfx_tcp(const pfx *f);

#endif
