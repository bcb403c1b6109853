/* health.h — the node's health as chorus-mqtt publishes it every
 * health_interval_s (docs/mqtt.md "health"): which services are up (their
 * status devices, read through libdev's crashproof status readers),
 * audiod's xruns and lost frames per device, the standard error of the
 * node's cpu clock converted to global time now (libsync), and the queue's
 * and the connection's counters.
 * I/O: the status devices (subscriptions on the main context).
 */
#ifndef CHORUS_MQTT_HEALTH_H
#define CHORUS_MQTT_HEALTH_H

#include <glib.h>
#include <stddef.h>

#include "apps/mqtt/broker.h"
#include "apps/mqtt/payload.h"
#include "apps/mqtt/queue.h"
#include "libsync/client.h"

typedef struct mqtt_health mqtt_health;

/* Subscribe to the status devices named in `devices` (NULL-terminated;
 * "audio/0/status", "detect/status", …) on ctx.  NULL + *err for a bad
 * device name. */
mqtt_health *mqtt_health_new(const char *const *devices, GMainContext *ctx, GError **err);

/* Unsubscribe and free (NULL is fine). */
void mqtt_health_free(mqtt_health *h);

/* The health message: the envelope, then
 *   "services": {"<device>": {"up": bool, "age_s": s since its last state or null}, …},
 *   "xruns": {"audio/<k>": {"count": n, "frames_lost": n}, …} (from audiod's status),
 *   "sync": {"ok": true, "se_ns": s.e. of cpu -> global now, "hops": n} or
 *           {"ok": false, "why": libsync's reason},
 *   "queue": {"count", "bytes", "max_count", "max_bytes", "dropped_full", "write_errors"},
 *   "broker": {"connected", "connects", "losses"}.
 * `sc` may be NULL (no conversion).  `now_ns`: the node's cpu time.
 * Returns the text (g_free) and *len. */
char *mqtt_health_json(mqtt_health *h, const mqtt_envelope *env, sync_client *sc, int64_t now_ns,
		       const mqtt_queue_stats *q, const mqtt_broker_state *b, size_t *len);

#endif
