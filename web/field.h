/* field.h — what chorus-web knows of the field, read through remote device
 * access (libdev names "nodeN:NAME", docs/protocol.md "Remote devices"):
 * per node of the nodes file its status devices (web_field_status_devs),
 * and, from every node's collab/events and detect/events, the localized
 * calls and the detections.  Callbacks tell the server what changed; the
 * node states are batched (at most one `node` event per node per 0.5 s).
 */
#ifndef CHORUS_WEB_FIELD_H
#define CHORUS_WEB_FIELD_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

#include "apps/collab/nodes.h"

typedef struct web_field web_field;

/* Calls and detections kept (the newest). */
#define WEB_CALLS_KEPT 500
#define WEB_DETS_KEPT 2000

/* What changed: event "node" (JSON of web_field_node_json), "call" (one
 * call, web_field_calls_json's element) or "det" (one detection). */
typedef void (*web_field_event_fn)(void *user, const char *event, JsonNode *data);

/* Start reading every node of `nodes` (kept by the caller).  Never fails:
 * a node that cannot be reached is shown down and retried (libdev). */
web_field *web_field_new(const collab_nodes *nodes, web_field_event_fn fn, void *user);

void web_field_free(web_field *f);

/* The status devices read from every node, NULL-terminated. */
extern const char *const web_field_status_devs[];

/* Whether node `id` is in the field. */
gboolean web_field_has(const web_field *f, uint32_t id);

/* Every node: id, position, state (up|degraded|down), services and the
 * parsed health (xruns, timestamp source, sync: root, peers' fits,
 * conversions with se_end). */
JsonNode *web_field_nodes_json(const web_field *f);

/* One node, with the text of each status device as well; NULL when unknown. */
JsonNode *web_field_node_json(const web_field *f, uint32_t id, gboolean texts);

/* Calls newer than `since_id` (0: all kept), oldest first; each is
 * collab's result object with "id" (this server's number), "received_ms"
 * (server monotonic) and "reporter". */
JsonNode *web_field_calls_json(const web_field *f, uint64_t since_id);

/* One call by id (a new reference), or NULL. */
JsonNode *web_field_call(const web_field *f, uint64_t id);

/* Detections with a global time in [from_ns, to_ns) of node (any node
 * when node < 0), oldest first. */
JsonNode *web_field_dets_json(const web_field *f, int64_t node, int64_t from_ns, int64_t to_ns);

/* Counters: calls and detections received, malformed messages. */
void web_field_counts(const web_field *f, guint64 *calls, guint64 *dets, guint64 *bad);

#endif
