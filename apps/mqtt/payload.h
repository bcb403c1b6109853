/* payload.h — the JSON chorus-mqtt publishes for detections and located
 * calls (docs/mqtt.md "Messages"), built with json-glib.
 *
 * Every message is one JSON object with the envelope
 *   {"v":1,"kind":"detection"|"location"|"health","field":F,"node":N,"mseq":M,…}
 * where mseq is the message's sequence number in the node's queue: it rises
 * by one per message across every topic, so a subscriber sees a gap or a
 * repeat at once.  Times in ns are JSON integers (exact; a reader that
 * takes numbers as doubles loses the last bits of global ns).
 * Pure (no I/O); malformed input is refused with a reason.
 */
#ifndef CHORUS_MQTT_PAYLOAD_H
#define CHORUS_MQTT_PAYLOAD_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	const char *field; /* the field's name (topic level and envelope) */
	uint32_t node;     /* this node */
	guint64 mseq;      /* the queue's sequence number for this message */
} mqtt_envelope;

/* Start an object with the envelope of `kind` on b (the caller adds
 * members and ends the object).  Pure. */
void mqtt_payload_begin(JsonBuilder *b, const mqtt_envelope *env, const char *kind);

/* The builder's root as compact JSON text (g_free it).  Pure. */
char *mqtt_payload_text(JsonBuilder *b, size_t *len);

/* A detect/events line (docs/protocol.md "detect/events", len bytes) as a
 * detection message: the event's fields with their units in their names,
 * global_ns null when the event has none.  Returns the text (g_free) and
 * *len, or NULL with the reason in why[wlen] (the codec's: a missing or
 * malformed key). */
char *mqtt_payload_detection(const mqtt_envelope *env, const char *line, size_t len, size_t *out_len, char *why,
			     size_t wlen);

/* A collab/events object (docs/protocol.md "collab/events") as a location
 * message: the envelope with collab's object, unchanged, under "result".
 * Returns the text (g_free) and *out_len, or NULL with the reason (not
 * JSON, not an object, no "v") in why[wlen]. */
char *mqtt_payload_location(const mqtt_envelope *env, const char *json, size_t len, size_t *out_len, char *why,
			    size_t wlen);

#endif
