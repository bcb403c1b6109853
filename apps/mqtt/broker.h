/* broker.h — chorus-mqtt's connection to the MQTT broker (libmosquitto).
 *
 * Thread: libmosquitto's own network thread (mosquitto_loop_start), the
 * way libmosquitto is meant to be used without blocking the caller: a
 * connection attempt to an unreachable broker must not stall the main
 * context, which reads detect's and collab's packet devices (a slow
 * reader there loses events).  The thread only runs libmosquitto; its
 * callbacks post events to the main context (idle sources attached to it), and
 * every callback of this module runs there.
 *
 * One libmosquitto instance per connection: when a connection that was up
 * is lost, the instance is destroyed with whatever it had in flight and a
 * new one connects after a back-off (reconnect_min_s doubling to
 * reconnect_max_s, reset by a connection that lasted), so the caller's
 * disk queue alone decides what is sent again, and in which order
 * (docs/mqtt.md "Delivery").  QoS 1 (or as configured); TLS with a CA file
 * or directory, optionally a client certificate and key; username and
 * password; a retained last will on the `online` topic.
 * Errors: GError (MQTT_BROKER_ERROR, errno code) at set-up; the reasons of
 * refused connections and lost ones go to the ops and to mqtt_broker_state.
 */
#ifndef CHORUS_MQTT_BROKER_H
#define CHORUS_MQTT_BROKER_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define MQTT_BROKER_ERROR (mqtt_broker_error_quark())
GQuark mqtt_broker_error_quark(void);

typedef struct {
	const char *host;        /* broker host name or address */
	int port;                /* TCP port */
	int keepalive_s;         /* MQTT keepalive, s */
	const char *client_id;   /* MQTT client id */
	const char *username;    /* NULL or "": none */
	const char *password;    /* NULL: none */
	int tls;                 /* 1: TLS */
	const char *ca_file;     /* PEM CA certificates (TLS; one of ca_file, ca_path) */
	const char *ca_path;     /* directory of hashed CA certificates */
	const char *cert_file;   /* client certificate (PEM), NULL: none */
	const char *key_file;    /* its private key (PEM) */
	int tls_insecure;        /* 1: do not check the broker's host name */
	const char *tls_version; /* "tlsv1.2", "tlsv1.3" or NULL: libmosquitto's default */
	int qos;                 /* 0, 1 or 2 */
	int inflight;            /* messages in flight at once */
	double reconnect_min_s;  /* back-off, s */
	double reconnect_max_s;
	const char *will_topic; /* retained "0" there when the connection dies; "1" on connect */
} mqtt_broker_cfg;

typedef struct {
	/* Connected (CONNACK accepted): the caller may publish. */
	void (*connected)(void *user);
	/* The connection was lost or refused (`why`): nothing in flight will be
	 * acknowledged any more; the caller sends it again after the next
	 * connected(). */
	void (*disconnected)(void *user, const char *why);
	/* The broker acknowledged the message published with `seq`. */
	void (*acked)(void *user, guint64 seq);
} mqtt_broker_ops;

typedef struct mqtt_broker mqtt_broker;

typedef struct {
	gboolean connected;
	guint64 connects;       /* connections made */
	guint64 losses;         /* connections lost or refused */
	guint64 published;      /* PUBLISH handed to libmosquitto */
	guint64 acked;          /* acknowledged by the broker */
	guint64 publish_errors; /* mosquitto_publish refused */
	char last_error[256];   /* the last refusal or loss, "" if none */
} mqtt_broker_state;

/* Check cfg, set up libmosquitto and start connecting (asynchronously) on
 * ctx (NULL = default).  NULL + *err for a bad configuration (TLS files
 * libmosquitto refuses, an empty host, a port out of range). */
mqtt_broker *mqtt_broker_new(const mqtt_broker_cfg *cfg, GMainContext *ctx, const mqtt_broker_ops *ops, void *user,
			     GError **err);

/* Publish `len` bytes to `topic` with the configured QoS (retain as given);
 * acked(seq) follows the broker's acknowledgement (at once for QoS 0).
 * Returns 0, -ENOTCONN (not connected), -EBUSY (inflight messages already
 * out) or -EIO with libmosquitto's reason in why[wlen]. */
int mqtt_broker_publish(mqtt_broker *b, guint64 seq, const char *topic, const void *payload, size_t len, int retain,
			char *why, size_t wlen);

/* Messages published and not yet acknowledged. */
size_t mqtt_broker_in_flight(const mqtt_broker *b);

/* The state and counters. */
void mqtt_broker_state_get(const mqtt_broker *b, mqtt_broker_state *s);

/* Disconnect cleanly (the will is not sent: "0" is published first) and
 * free.  NULL is fine. */
void mqtt_broker_free(mqtt_broker *b);

#endif
