/* parse.h — reading the services' text forms for the view (pure): a
 * key=value on a status device's line, detect's event line, and a node's
 * health (audio/0/status, sync/rbs, sync/ticker; docs/protocol.md) as JSON.
 * Unknown or missing fields are left out, never guessed.
 */
#ifndef CHORUS_WEB_PARSE_H
#define CHORUS_WEB_PARSE_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

/* The value of `key` ("key=VALUE", up to a blank) on the first line of
 * `text` that starts with `head` (after leading blanks; NULL: any line),
 * copied into buf.  NULL when there is none. */
const char *web_kv(const char *text, const char *head, const char *key, char *buf, size_t len);

/* The same as a decimal integer; def when absent or not a number. */
int64_t web_kv_int(const char *text, const char *head, const char *key, int64_t def);

/* A detect/events line as a JSON object (node, dev, seq, global_ns,
 * global_se_ns, cpu_ns, onset_frame, rate, duration_s, f_lo, f_hi, snr_db,
 * template; global_ns null when "none"), or NULL when a required key
 * (v, node, onset_frame, rate) is missing.  `from` is the node whose device
 * sent it, used when the line names none. */
JsonNode *web_det_json(const char *line, uint32_t from);

/* A collab result that supersedes an earlier one of its reporter (its
 * "supersedes": the seq of a call it answered untested, late arrivals
 * completing it since) replaces it: the latest call in q (JsonNode *
 * objects) with that reporter and seq leaves q and is returned (unref
 * it), else NULL (o supersedes nothing, or nothing kept). */
JsonNode *web_call_superseded(GQueue *q, JsonObject *o);

/* Add a node's health members to the object being built: "xruns",
 * "tstamp", "rate", "root", "peers" [{node, fit, n, rms_ns}] and
 * "conversions" [{from, to, se_ns, age_s, n, exact}]; any text may be NULL. */
void web_health_json(JsonBuilder *b, const char *audio, const char *rbs, const char *ticker);

#endif
