/* queue.h — chorus-mqtt's outgoing messages, kept on disk until the broker
 * acknowledged them (docs/mqtt.md "Queue").
 *
 * A directory holds one file per message, named by its sequence number
 * (`%016llx.msg`: the topic, a NUL, the payload), written to a temporary
 * name, fsync'ed and renamed, so a crash leaves every message whole or
 * absent, and the directory is fsync'ed after each rename or removal.
 * Sequence numbers rise by one per message and never repeat, also across
 * restarts (the file `next` records the next one whenever the queue
 * drains; otherwise the highest file does).  The queue is bounded by a
 * message count and a byte total: a push beyond either drops the oldest
 * message that is not in flight, and counts it (the status device says
 * so).  Messages leave in order: mqtt_queue_next_unsent() hands out the
 * oldest not yet sent; acknowledged ones are removed once everything
 * before them is acknowledged too.
 * I/O: the directory only.  Errors: GError (MQTT_QUEUE_ERROR, errno code)
 * naming the file.
 */
#ifndef CHORUS_MQTT_QUEUE_H
#define CHORUS_MQTT_QUEUE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define MQTT_QUEUE_ERROR (mqtt_queue_error_quark())
GQuark mqtt_queue_error_quark(void);

typedef struct mqtt_queue mqtt_queue;

typedef struct {
	guint64 pushed;       /* messages accepted since start */
	guint64 acked;        /* removed after the broker's acknowledgement */
	guint64 dropped_full; /* dropped because the queue was full (oldest first) */
	guint64 write_errors; /* pushes refused because the file could not be written */
	size_t count;         /* messages held now */
	size_t bytes;         /* their topic + payload bytes */
	size_t in_flight;     /* of those, sent and not yet acknowledged */
	size_t max_count;     /* the bounds */
	size_t max_bytes;
	guint64 next_seq; /* sequence number of the next push */
} mqtt_queue_stats;

/* Open (creating it, mode 0700) the queue directory `dir`, bounded by
 * max_count messages and max_bytes bytes.  Messages left by an earlier run
 * are taken back, oldest first; stale temporary files are removed.
 * Returns the queue, or NULL with *err (cannot create or read dir, a
 * message file that cannot be read). */
mqtt_queue *mqtt_queue_open(const char *dir, size_t max_count, size_t max_bytes, GError **err);

/* Free q (NULL is fine); what is on disk stays. */
void mqtt_queue_free(mqtt_queue *q);

/* The sequence number the next push will get (for the payload to carry it). */
guint64 mqtt_queue_peek_seq(const mqtt_queue *q);

/* Append a message (copied to disk before returning); it gets
 * mqtt_queue_peek_seq().  Returns its sequence number, or 0 with *err when
 * it could not be written (nothing was added; counted in write_errors)
 * or it alone exceeds max_bytes (EMSGSIZE). */
guint64 mqtt_queue_push(mqtt_queue *q, const char *topic, const void *payload, size_t len, GError **err);

/* The oldest message not yet sent: marks it in flight and returns its
 * sequence number with *topic and *payload newly allocated (g_free both),
 * or 0 when every message is in flight (or none is held) — or on a read
 * error (the message is then dropped, counted and reported in *err). */
guint64 mqtt_queue_next_unsent(mqtt_queue *q, char **topic, void **payload, size_t *len, GError **err);

/* The broker acknowledged message `seq`: it is removed (with every
 * acknowledged message before it).  Returns 0, -ENOENT (not held or not in
 * flight), or -EIO with *err (the file could not be removed). */
int mqtt_queue_ack(mqtt_queue *q, guint64 seq, GError **err);

/* Message `seq`, just handed out by mqtt_queue_next_unsent(), could not be
 * sent: it is unsent again (the next to be handed out).  Returns 0 or
 * -ENOENT (not in flight). */
int mqtt_queue_unsend(mqtt_queue *q, guint64 seq);

/* The connection was lost: every in-flight message is unsent again and
 * will be handed out again, in order. */
void mqtt_queue_unsend_all(mqtt_queue *q);

/* Counters and sizes. */
void mqtt_queue_stats_get(const mqtt_queue *q, mqtt_queue_stats *s);

#endif
