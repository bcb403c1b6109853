/* main.c — chorus-mqtt: the node's results to an MQTT broker (issue 18
 * item 3, docs/mqtt.md).
 *
 *   chorus-mqtt [-c /etc/chorus/mqtt.conf] [--host H] [--port P] [--print-config]
 *
 * Subscribes to detect/events and collab/events (libdev packet devices)
 * and publishes every detection and every located call as JSON
 * (payload.h), and the node's health every health_interval_s (health.h),
 * under <topic_prefix>/<field>/<node>/{detection,location,health}, with a
 * retained "1"/"0" on …/online (the last will).  Every message goes to the
 * disk queue first (queue.h) and leaves it only when the broker
 * acknowledged it: messages survive a broker that is down or restarts,
 * and chorus-mqtt's own restart, and are delivered in order (broker.h).
 * The state is on the status device mqtt/status.
 */
#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "apps/mqtt/broker.h"
#include "libdev/heap.h"
#include "archive/cursor.h"
#include "apps/mqtt/health.h"
#include "apps/mqtt/payload.h"
#include "apps/mqtt/queue.h"
#include "libcfg/cfg.h"
#include "libdev/dev.h"
#include "libdev/ratelog.h"
#include "libsync/client.h"
#include "libsync/now.h"

typedef struct {
	char *host;
	gint64 port, keepalive_s;
	char *field, *topic_prefix, *client_id;
	gint64 node;
	char *username, *password, *password_file;
	gboolean tls, tls_insecure;
	char *ca_file, *ca_path, *cert_file, *key_file, *tls_version;
	gint64 qos, inflight;
	double reconnect_min_s, reconnect_max_s;
	char *queue_dir;
	gint64 queue_max_messages, queue_max_bytes;
	double health_interval_s;
	gboolean detections, locations;
	char *detect_device, *collab_device, *health_devices;
} mqtt_cfg;

#define K(...) CFG_KEY(mqtt_cfg, __VA_ARGS__)
static const cfg_key keys[] = {
	K("host", CFG_STRING, "localhost", 1, 0, host, "broker host name or address"),
	K("port", CFG_INT, "1883", 1, 65535, port, "broker TCP port (8883 is usual with TLS)"),
	K("keepalive_s", CFG_INT, "30", 5, 3600, keepalive_s, "MQTT keepalive, s"),
	K("field", CFG_STRING, "field", 1, 0, field, "the field's name: topic level <prefix>/<field>/<node>/…"),
	K("topic_prefix", CFG_STRING, "chorus", 1, 0, topic_prefix, "first topic level"),
	K("node", CFG_INT, "-1", -1, 4294967295.0, node, "this node's number; -1 = $CHORUS_NODE, else the node syncd's ticker names"),
	K("client_id", CFG_STRING, "", 1, 0, client_id, "MQTT client id; empty = chorus-<field>-<node>"),
	K("username", CFG_STRING, "", 1, 0, username, "user name for the broker; empty = none"),
	K("password", CFG_STRING, "", 1, 0, password, "password (prefer password_file)"),
	K("password_file", CFG_STRING, "", 1, 0, password_file, "file whose first line is the password"),
	K("tls", CFG_BOOL, "false", 1, 0, tls, "connect with TLS (needs ca_file or ca_path)"),
	K("ca_file", CFG_STRING, "", 1, 0, ca_file, "PEM file of the CA certificates that sign the broker's"),
	K("ca_path", CFG_STRING, "", 1, 0, ca_path, "directory of hashed CA certificates (instead of ca_file)"),
	K("cert_file", CFG_STRING, "", 1, 0, cert_file, "client certificate (PEM) for brokers that require one"),
	K("key_file", CFG_STRING, "", 1, 0, key_file, "the client certificate's private key (PEM, unencrypted)"),
	K("tls_insecure", CFG_BOOL, "false", 1, 0, tls_insecure, "do not check the broker certificate's host name (testing only)"),
	K("tls_version", CFG_STRING, "", 1, 0, tls_version, "tlsv1.2 or tlsv1.3; empty = libmosquitto's default"),
	K("qos", CFG_INT, "1", 0, 2, qos, "MQTT QoS of every message (1: at least once; 2 is not exactly-once across reconnections, docs/mqtt.md)"),
	K("inflight", CFG_INT, "16", 1, 65535, inflight, "messages sent and not yet acknowledged at once"),
	K("reconnect_min_s", CFG_DOUBLE, "0.5", 0.05, 3600, reconnect_min_s, "first reconnection delay, s (doubles)"),
	K("reconnect_max_s", CFG_DOUBLE, "30", 0.05, 86400, reconnect_max_s, "longest reconnection delay, s"),
	K("queue_dir", CFG_STRING, "", 1, 0, queue_dir, "disk queue directory; empty = $STATE_DIRECTORY/queue (systemd) or RUN/mqtt-queue"),
	K("queue_max_messages", CFG_INT, "100000", 16, 100000000, queue_max_messages, "messages the queue holds before the oldest is dropped"),
	K("queue_max_bytes", CFG_INT, "67108864", 65536, 1099511627776.0, queue_max_bytes, "bytes (topics and payloads) the queue holds before the oldest is dropped"),
	K("health_interval_s", CFG_DOUBLE, "10", 0.05, 86400, health_interval_s, "seconds between health messages"),
	K("detections", CFG_BOOL, "true", 1, 0, detections, "publish detect's detections"),
	K("locations", CFG_BOOL, "true", 1, 0, locations, "publish collab's located calls"),
	K("detect_device", CFG_STRING, "detect/events", 1, 0, detect_device, "packet device of the detections"),
	K("collab_device", CFG_STRING, "collab/events", 1, 0, collab_device, "packet device of the located calls"),
	K("health_devices", CFG_STRING, "sync/clocks, audio/0/status, fft/0/status, detect/status, collab/status", 1, 0, health_devices, "status devices whose services the health message reports, comma-separated"),
	{NULL},
};
static const cfg_group table[] = {
	{.name = "mqtt", .keys = keys, .store = 1},
	{NULL},
};

typedef struct {
	const char *device;
	const char *kind;   /* "detections" or "locations" */
	const char *cursor; /* its cursor file in the queue directory (archive/cursor.h) */
	dev_packet_sub *sub;
	guint64 received, malformed, dropped;
	guint64 cursor_errors; /* cursor saves that failed */
	uint64_t boot0, next0; /* the cursor it started from */
	gboolean connected;
} input;

typedef struct {
	mqtt_cfg cfg;
	uint32_t node;
	char *client_id, *password, *queue_dir;
	char topic[3][256]; /* detection, location, health */
	char online[256];
	mqtt_queue *q;
	mqtt_broker *b;
	mqtt_health *health;
	sync_client *sync;
	dev_status *status;
	input in[2];
	guint64 published[3];
	GSource *retry;
	char last_error[400];
} mqttd;

enum { T_DETECTION,
       T_LOCATION,
       T_HEALTH };

static void set_error(mqttd *d, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_error(mqttd *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(d->last_error, sizeof d->last_error, fmt, ap);
	va_end(ap);
	if (d->status)
		dev_status_notify(d->status);
}

static void pump(mqttd *d);

static gboolean on_retry(gpointer data)
{
	mqttd *d = data;
	g_source_unref(d->retry);
	d->retry = NULL;
	pump(d);
	return G_SOURCE_REMOVE;
}

/* Send the oldest unsent messages while the window has room. */
static void pump(mqttd *d)
{
	mqtt_broker_state bs;
	mqtt_broker_state_get(d->b, &bs);
	while (bs.connected && mqtt_broker_in_flight(d->b) < (size_t)d->cfg.inflight) {
		char *topic, why[300];
		void *payload;
		size_t len;
		GError *err = NULL;
		guint64 seq = mqtt_queue_next_unsent(d->q, &topic, &payload, &len, &err);
		if (!seq) {
			if (err) {
				set_error(d, "queue: %s (message dropped)", err->message);
				g_warning("%s", d->last_error);
				g_error_free(err);
				continue;
			}
			break;
		}
		int rc = mqtt_broker_publish(d->b, seq, topic, payload, len, FALSE, why, sizeof why);
		if (rc == -ENOTCONN) {
			mqtt_queue_unsend(d->q, seq); /* the connection just went: disconnected() follows */
		} else if (rc < 0) {
			mqtt_queue_unsend(d->q, seq);
			set_error(d, "publish mseq %" G_GUINT64_FORMAT ": %s", seq, why);
			ratelog(G_LOG_LEVEL_WARNING, bs.publish_errors + 1, "%s", d->last_error);
			if (!d->retry) { /* try again in a second rather than spin */
				d->retry = g_timeout_source_new(1000);
				g_source_set_callback(d->retry, on_retry, d, NULL);
				g_source_attach(d->retry, NULL);
			}
		} else {
			for (int t = 0; t < 3; t++)
				if (!strcmp(topic, d->topic[t]))
					d->published[t]++;
		}
		g_free(topic);
		g_free(payload);
		if (rc < 0)
			break;
	}
	dev_status_notify(d->status);
}

/* Queue one message built by `make` with the next sequence number.
 * FALSE when it could not be queued (lost, and said so). */
static gboolean enqueue(mqttd *d, int t, char *payload, size_t len)
{
	GError *err = NULL;
	gboolean ok = mqtt_queue_push(d->q, d->topic[t], payload, len, &err) != 0;
	if (!ok) {
		set_error(d, "queue: %s (message lost)", err->message);
		g_warning("%s", d->last_error);
		g_error_free(err);
	}
	g_free(payload);
	pump(d);
	return ok;
}

static mqtt_envelope envelope(const mqttd *d)
{
	mqtt_envelope e = {.field = d->cfg.field, .node = d->node, .mseq = mqtt_queue_peek_seq(d->q)};
	return e;
}

static mqttd *the; /* the one daemon, for the packet callbacks' second half */

/* After message (boot, seq) of `in` is queued (or skipped): the cursor on
 * disk moves past it. */
static void save_cursor(mqttd *d, input *in, uint64_t boot, uint64_t seq)
{
	GError *err = NULL;
	if (!archive_cursor_save(d->queue_dir, in->cursor, boot, seq + 1, &err)) {
		in->cursor_errors++;
		set_error(d, "%s: cursor not saved (a restart repeats what came since): %s", in->device, err->message);
		ratelog(G_LOG_LEVEL_WARNING, in->cursor_errors, "%s", d->last_error);
		g_error_free(err);
	}
}

static void on_packet(void *user, const char *msg, size_t len, uint32_t dropped, uint64_t boot, uint64_t seq)
{
	input *in = user;
	mqttd *d = the;
	in->received++;
	if (dropped) {
		in->dropped += dropped;
		set_error(d, "%s: %u messages dropped by the service (chorus-mqtt too slow)", in->device, dropped);
		g_warning("%s", d->last_error);
	}
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == 0))
		len--;
	mqtt_envelope env = envelope(d);
	char why[256];
	size_t n;
	int t = in == &d->in[0] ? T_DETECTION : T_LOCATION;
	char *p = t == T_DETECTION ? mqtt_payload_detection(&env, msg, len, &n, why, sizeof why)
				   : mqtt_payload_location(&env, msg, len, &n, why, sizeof why);
	if (!p) {
		in->malformed++;
		set_error(d, "%s: malformed message skipped: %s", in->device, why);
		ratelog(G_LOG_LEVEL_WARNING, in->malformed, "%s", d->last_error);
		save_cursor(d, in, boot, seq);
		return;
	}
	/* A message that could not be queued keeps the cursor before it: a
	 * restart tries it again (and repeats any queued after it). */
	if (enqueue(d, t, p, n))
		save_cursor(d, in, boot, seq);
}

static void on_input_state(void *user, gboolean up, int err)
{
	input *in = user;
	in->connected = up;
	if (the && the->status)
		dev_status_notify(the->status);
}

static gboolean on_health(gpointer data)
{
	mqttd *d = data;
	mqtt_queue_stats qs;
	mqtt_broker_state bs;
	mqtt_queue_stats_get(d->q, &qs);
	mqtt_broker_state_get(d->b, &bs);
	mqtt_envelope env = envelope(d);
	size_t n;
	char *p = mqtt_health_json(d->health, &env, d->sync, sync_now(SYNC_KIND_CPU), &qs, &bs, &n);
	enqueue(d, T_HEALTH, p, n);
	return G_SOURCE_CONTINUE;
}

static void on_connected(void *user)
{
	mqttd *d = user;
	sd_notify(0, "STATUS=connected to the broker");
	pump(d);
}

static void on_disconnected(void *user, const char *why)
{
	mqttd *d = user;
	/* Whatever was in flight is sent again, in order, on the next
	 * connection (docs/mqtt.md "Delivery"). */
	mqtt_queue_unsend_all(d->q);
	set_error(d, "broker %s:%" G_GINT64_FORMAT ": %s", d->cfg.host, d->cfg.port, why);
	sd_notify(0, "STATUS=broker unreachable; queueing on disk");
}

static void on_acked(void *user, guint64 seq)
{
	mqttd *d = user;
	GError *err = NULL;
	if (mqtt_queue_ack(d->q, seq, &err) == -EIO) {
		set_error(d, "queue: %s", err->message);
		g_warning("%s", d->last_error);
		g_error_free(err);
	}
	pump(d);
}

static int status_text(void *user, GString *out)
{
	mqttd *d = user;
	mqtt_queue_stats qs;
	mqtt_broker_state bs;
	mqtt_queue_stats_get(d->q, &qs);
	mqtt_broker_state_get(d->b, &bs);
	g_string_append_printf(out, "broker %s:%" G_GINT64_FORMAT " tls=%s user=%s client_id=%s qos=%" G_GINT64_FORMAT "\n",
			       d->cfg.host, d->cfg.port, d->cfg.tls ? (*d->cfg.cert_file ? "client-cert" : "yes") : "no",
			       *d->cfg.username ? d->cfg.username : "-", d->client_id, d->cfg.qos);
	g_string_append_printf(out, "connection connected=%s connects=%" G_GUINT64_FORMAT " losses=%" G_GUINT64_FORMAT "%s%s\n",
			       bs.connected ? "yes" : "no", bs.connects, bs.losses, *bs.last_error ? " last=" : "",
			       bs.last_error);
	g_string_append_printf(out, "queue dir=%s count=%zu bytes=%zu max_count=%zu max_bytes=%zu in_flight=%zu next_mseq=%" G_GUINT64_FORMAT "\n",
			       d->queue_dir, qs.count, qs.bytes, qs.max_count, qs.max_bytes, qs.in_flight, qs.next_seq);
	g_string_append_printf(out, "queue pushed=%" G_GUINT64_FORMAT " acked=%" G_GUINT64_FORMAT " dropped_full=%" G_GUINT64_FORMAT " write_errors=%" G_GUINT64_FORMAT "\n",
			       qs.pushed, qs.acked, qs.dropped_full, qs.write_errors);
	g_string_append_printf(out, "published detection=%" G_GUINT64_FORMAT " location=%" G_GUINT64_FORMAT " health=%" G_GUINT64_FORMAT " acked=%" G_GUINT64_FORMAT " errors=%" G_GUINT64_FORMAT "\n",
			       d->published[0], d->published[1], d->published[2], bs.acked, bs.publish_errors);
	for (int i = 0; i < 2; i++)
		if (d->in[i].sub) {
			uint64_t boot, next;
			dev_packet_sub_cursor(d->in[i].sub, &boot, &next);
			g_string_append_printf(out, "input %s connected=%s received=%" G_GUINT64_FORMAT " malformed=%" G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT " cursor=%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " cursor_errors=%" G_GUINT64_FORMAT "\n",
					       d->in[i].device, d->in[i].connected ? "yes" : "no", d->in[i].received,
					       d->in[i].malformed, d->in[i].dropped, boot, next, d->in[i].cursor_errors);
		}
	g_string_append_printf(out, "topics %s %s %s %s\n", d->topic[0], d->topic[1], d->topic[2], d->online);
	if (*d->last_error)
		g_string_append_printf(out, "error %s\n", d->last_error);
	dev_heap_usage_append(out);
	return 0;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

/* The node: the configured one, $CHORUS_NODE, or syncd's (waiting up to
 * 10 s for its ticker).  -1 when none is known. */
static gint64 find_node(mqttd *d)
{
	if (d->cfg.node >= 0)
		return d->cfg.node;
	const char *e = g_getenv("CHORUS_NODE");
	if (e && *e)
		return g_ascii_strtoll(e, NULL, 10);
	if (sync_client_wait(d->sync, 10000) < 0)
		return -1;
	uint32_t node, root;
	sync_client_info(d->sync, &node, &root);
	return node;
}

/* Derived settings and checks across keys; FALSE with *err. */
static gboolean derive(mqttd *d, const char *conf, GError **err)
{
	mqtt_cfg *c = &d->cfg;
	if (*c->password_file) {
		char *text = NULL;
		if (!g_file_get_contents(c->password_file, &text, NULL, err))
			return FALSE;
		char *nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		d->password = text;
	} else if (*c->password) {
		d->password = g_strdup(c->password);
	}
	if (c->reconnect_max_s < c->reconnect_min_s) {
		g_set_error(err, CFG_ERROR, EINVAL, "%s: [mqtt] reconnect_max_s (%g) is below reconnect_min_s (%g)", conf,
			    c->reconnect_max_s, c->reconnect_min_s);
		return FALSE;
	}
	for (const char *p = c->field; *p; p++)
		if (*p == '/' || *p == '+' || *p == '#') {
			g_set_error(err, CFG_ERROR, EINVAL, "%s: [mqtt] field: \"%s\" holds '%c', which MQTT topics reserve",
				    conf, c->field, *p);
			return FALSE;
		}
	return TRUE;
}

int main(int argc, char **argv)
{
	char *conf = NULL, *host = NULL;
	gint64 port = 0;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/mqtt.conf)", "FILE"},
		{"host", 0, 0, G_OPTION_ARG_STRING, &host, "broker host ([mqtt] host)", "HOST"},
		{"port", 0, 0, G_OPTION_ARG_INT64, &port, "broker port ([mqtt] port)", "PORT"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("chorus-mqtt", "- chorus results to an MQTT broker", entries, table, NULL, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "chorus-mqtt: %s\n", why);
		return 2;
	}
	static mqttd d;
	the = &d;
	const char *path = conf ? conf : "/etc/chorus/mqtt.conf";
	if (!cfg_defaults(table, &d.cfg, &err) || !cfg_load(path, conf == NULL, table, &d.cfg, &err) ||
	    (host && !cfg_set(table, &d.cfg, "mqtt", "host", host, "--host: ", &err))) {
		fprintf(stderr, "chorus-mqtt: %s\n", err->message);
		return 2;
	}
	if (port > 0)
		d.cfg.port = port;
	if (!derive(&d, path, &err)) {
		fprintf(stderr, "chorus-mqtt: %s\n", err->message);
		return 2;
	}
	d.sync = sync_client_new(NULL, NULL, NULL, NULL, &err);
	if (!d.sync) {
		fprintf(stderr, "chorus-mqtt: %s\n", err->message);
		return 2;
	}
	gint64 node = find_node(&d);
	if (node < 0) {
		fprintf(stderr, "chorus-mqtt: no node number: set [mqtt] node or CHORUS_NODE, or start syncd\n");
		return 2;
	}
	d.node = (uint32_t)node;
	d.client_id = *d.cfg.client_id ? g_strdup(d.cfg.client_id) : g_strdup_printf("chorus-%s-%u", d.cfg.field, d.node);
	const char *names[3] = {"detection", "location", "health"};
	for (int t = 0; t < 3; t++)
		g_snprintf(d.topic[t], sizeof d.topic[t], "%s/%s/%u/%s", d.cfg.topic_prefix, d.cfg.field, d.node, names[t]);
	g_snprintf(d.online, sizeof d.online, "%s/%s/%u/online", d.cfg.topic_prefix, d.cfg.field, d.node);
	if (*d.cfg.queue_dir) {
		d.queue_dir = g_strdup(d.cfg.queue_dir);
	} else if (g_getenv("STATE_DIRECTORY") && *g_getenv("STATE_DIRECTORY")) {
		gchar **dirs = g_strsplit(g_getenv("STATE_DIRECTORY"), ":", 2);
		d.queue_dir = g_build_filename(dirs[0], "queue", NULL);
		g_strfreev(dirs);
	} else {
		char run[DEV_PATH_MAX];
		if (dev_run_dir(run, sizeof run, &why) < 0) {
			fprintf(stderr, "chorus-mqtt: %s\n", why);
			return 2;
		}
		d.queue_dir = g_build_filename(run, "mqtt-queue", NULL);
	}
	d.q = mqtt_queue_open(d.queue_dir, (size_t)d.cfg.queue_max_messages, (size_t)d.cfg.queue_max_bytes, &err);
	if (!d.q) {
		fprintf(stderr, "chorus-mqtt: %s\n", err->message);
		return 2;
	}
	mqtt_queue_stats qs;
	mqtt_queue_stats_get(d.q, &qs);
	if (qs.count)
		g_message("queue %s: %zu messages from before, sent first (mseq from %" G_GUINT64_FORMAT ")", d.queue_dir,
			  qs.count, qs.next_seq - qs.count);
	gchar **devs = g_strsplit(d.cfg.health_devices, ",", -1);
	for (gchar **p = devs; *p; p++)
		g_strstrip(*p);
	d.health = mqtt_health_new((const char *const *)devs, NULL, &err);
	g_strfreev(devs);
	mqtt_broker_cfg bc = {
		.host = d.cfg.host,
		.port = (int)d.cfg.port,
		.keepalive_s = (int)d.cfg.keepalive_s,
		.client_id = d.client_id,
		.username = d.cfg.username,
		.password = d.password,
		.tls = d.cfg.tls,
		.ca_file = d.cfg.ca_file,
		.ca_path = d.cfg.ca_path,
		.cert_file = d.cfg.cert_file,
		.key_file = d.cfg.key_file,
		.tls_insecure = d.cfg.tls_insecure,
		.tls_version = d.cfg.tls_version,
		.qos = (int)d.cfg.qos,
		.inflight = (int)d.cfg.inflight,
		.reconnect_min_s = d.cfg.reconnect_min_s,
		.reconnect_max_s = d.cfg.reconnect_max_s,
		.will_topic = d.online,
	};
	mqtt_broker_ops ops = {on_connected, on_disconnected, on_acked};
	if (d.health)
		d.status = dev_status_new("mqtt/status", NULL, NULL, status_text, NULL, &d, &err);
	if (d.status)
		d.b = mqtt_broker_new(&bc, NULL, &ops, &d, &err);
	if (!d.b) {
		fprintf(stderr, "chorus-mqtt: %s\n", err->message);
		return 2;
	}
	d.in[0].device = d.cfg.detect_device;
	d.in[1].device = d.cfg.collab_device;
	d.in[0].kind = "detections";
	d.in[1].kind = "locations";
	d.in[0].cursor = "cursor.detections";
	d.in[1].cursor = "cursor.locations";
	gboolean want[2] = {d.cfg.detections, d.cfg.locations};
	for (int i = 0; i < 2; i++) {
		if (!want[i])
			continue;
		/* Resume after the last message the previous run queued: what
		 * the service's history still holds of the time chorus-mqtt was
		 * down comes first (libdev/packet.h "History"). */
		input *in = &d.in[i];
		if (!archive_cursor_load(d.queue_dir, in->cursor, &in->boot0, &in->next0, &err)) {
			g_warning("%s: %s; starting with new %s only", in->device, err->message, in->kind);
			g_clear_error(&err);
		} else if (in->boot0) {
			g_message("%s: resuming after message %" G_GUINT64_FORMAT " of instance %" G_GUINT64_FORMAT, in->device,
				  in->next0 - 1, in->boot0);
		}
		d.in[i].sub = dev_packet_sub_new_from(in->device, NULL, 0, in->boot0, in->next0, NULL, on_packet, on_input_state,
						      in, &err);
		if (!d.in[i].sub) {
			fprintf(stderr, "chorus-mqtt: %s\n", err->message);
			return 2;
		}
	}
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	g_timeout_add((guint)(d.cfg.health_interval_s * 1000), on_health, &d);
	g_unix_signal_add(SIGINT, on_signal, loop);
	g_unix_signal_add(SIGTERM, on_signal, loop);
	g_message("publishing to %s:%" G_GINT64_FORMAT " under %s/%s/%u, queue %s", d.cfg.host, d.cfg.port,
		  d.cfg.topic_prefix, d.cfg.field, d.node, d.queue_dir);
	sd_notify(0, "READY=1\nSTATUS=publishing");
	g_main_loop_run(loop);
	sd_notify(0, "STOPPING=1");
	for (int i = 0; i < 2; i++)
		dev_packet_sub_free(d.in[i].sub);
	mqtt_queue_stats_get(d.q, &qs);
	g_message("stopped: received detections=%" G_GUINT64_FORMAT " locations=%" G_GUINT64_FORMAT
		  " malformed=%" G_GUINT64_FORMAT "; queued=%zu left on disk for the next start",
		  d.in[0].received, d.in[1].received, d.in[0].malformed + d.in[1].malformed, qs.count);
	mqtt_broker_free(d.b);
	if (d.retry) {
		g_source_destroy(d.retry);
		g_source_unref(d.retry);
	}
	dev_status_free(d.status);
	mqtt_health_free(d.health);
	mqtt_queue_free(d.q);
	sync_client_free(d.sync);
	cfg_clear(table, &d.cfg);
	g_free(d.client_id);
	g_free(d.password);
	g_free(d.queue_dir);
	g_free(conf);
	g_free(host);
	g_main_loop_unref(loop);
	return 0;
}
