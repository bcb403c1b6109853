/* web.h — the live view of a simulated field (issue 19): chorus-proxy on
 * every node and one chorus-web for the whole field, for chorus-sim --web
 * and chorus-demo --web.
 *
 * csim_web_proxy_app() writes OUT/proxy.conf (the run's network key, a
 * port base below the ephemeral range whose ports all bind at the call,
 * tried from our pid on so runs on one host do not collide; node N
 * listens on base + N) and returns the --app command line of the
 * proxies.  After csim_start(), csim_web_start() writes OUT/truth.json
 * (the scenario's sources: the world's truth, for display only, never
 * given to an estimator) and OUT/web.conf, starts chorus-web with its own
 * run directory and no CHORUS_NODE (a gateway, not a node: it reads the
 * nodes through their proxies), waits until it accepts connections and
 * prints the page's address with its token.  Its log is OUT/chorus-web.log.
 * Errors are GError at this edge (the launcher is a tool).
 */
#ifndef CHORUS_SIM_LAUNCH_WEB_H
#define CHORUS_SIM_LAUNCH_WEB_H

#include <glib.h>

#include "sim/launch/launch.h"

typedef struct csim_web csim_web;

/* Write OUT/proxy.conf; the proxies' app command line (g_free it) and
 * *base, or NULL + *err. */
char *csim_web_proxy_app(const char *out_dir, int *base, GError **err);

/* Start chorus-web from bin_dir on 127.0.0.1:port for s's nodes (proxies
 * on base + N).  NULL + *err (nothing left running). */
csim_web *csim_web_start(const csim *s, const char *out_dir, const char *bin_dir, int port, int base, GError **err);

/* The page's URL, with its token (owned by w). */
const char *csim_web_url(const csim_web *w);

/* The pid of chorus-web (for a bench's CPU count). */
GPid csim_web_pid(const csim_web *w);

/* Stop chorus-web (SIGTERM, then reap) and free.  NULL is fine. */
void csim_web_stop(csim_web *w);

#endif
