/* broker.c — the MQTT connection through libmosquitto (broker.h). */
#include "apps/mqtt/broker.h"

#include <errno.h>
#include <mosquitto.h>
#include <string.h>

G_DEFINE_QUARK(chorus - mqtt - broker - error - quark, mqtt_broker_error)

/* A connection that lasted this long resets the back-off, s. */
#define STABLE_S 10.0

typedef struct instance instance;

/* Shared by the broker and the events on their way to it: a broker freed
 * while events are still queued in the context leaves b NULL here. */
typedef struct {
	struct mqtt_broker *b;
} token;

struct mqtt_broker {
	mqtt_broker_cfg cfg; /* strings owned (copied) */
	GMainContext *ctx;
	mqtt_broker_ops ops;
	void *user;
	instance *cur;       /* the live libmosquitto instance, or NULL between two */
	guint gen;           /* generation of cur: events of older instances are ignored */
	GHashTable *mid_seq; /* mid -> seq of messages in flight */
	double backoff_s;
	gint64 connected_at_us;
	GSource *retry; /* the pending reconnection, or NULL */
	token *tok;     /* g_atomic_rc_box */
	mqtt_broker_state st;
};

struct instance {
	mqtt_broker *b;
	struct mosquitto *m;
	guint gen;
};

enum { EV_CONNECT,
       EV_DISCONNECT,
       EV_PUBLISH };

typedef struct {
	token *tok;
	guint gen;
	int type;
	int rc;  /* connect: CONNACK code; disconnect: reason */
	int mid; /* publish */
} event;

static void start_instance(mqtt_broker *b);
static gboolean on_event(gpointer data);

static void set_error(mqtt_broker *b, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_error(mqtt_broker *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(b->st.last_error, sizeof b->st.last_error, fmt, ap);
	va_end(ap);
}

/* --- the network thread: post everything to the main context ------------- */

static void free_event(gpointer data)
{
	event *e = data;
	g_atomic_rc_box_release(e->tok);
	g_free(e);
}

static void post(instance *in, int type, int rc, int mid)
{
	event *e = g_new0(event, 1);
	e->tok = g_atomic_rc_box_acquire(in->b->tok);
	e->gen = in->gen;
	e->type = type;
	e->rc = rc;
	e->mid = mid;
	/* An idle source, never g_main_context_invoke: that runs the function
	 * right here, in this thread, whenever no thread owns the context
	 * (before the main loop runs). */
	GSource *s = g_idle_source_new();
	g_source_set_priority(s, G_PRIORITY_DEFAULT);
	g_source_set_callback(s, on_event, e, free_event);
	g_source_attach(s, in->b->ctx);
	g_source_unref(s);
}

static void on_connect(struct mosquitto *m, void *obj, int rc)
{
	post(obj, EV_CONNECT, rc, 0);
}

static void on_disconnect(struct mosquitto *m, void *obj, int rc)
{
	/* Stop libmosquitto's own reconnecting: the main context makes a new
	 * instance, so what this one had in flight is not sent behind the
	 * caller's back (broker.h). */
	mosquitto_disconnect(m);
	post(obj, EV_DISCONNECT, rc, 0);
}

static void on_publish(struct mosquitto *m, void *obj, int mid)
{
	post(obj, EV_PUBLISH, 0, mid);
}

/* --- the main context ------------------------------------------------------ */

static void stop_instance(mqtt_broker *b, gboolean clean)
{
	instance *in = b->cur;
	if (!in)
		return;
	b->cur = NULL;
	b->gen++;
	if (clean)
		mosquitto_disconnect(in->m);
	/* The thread ends by itself: on_disconnect stopped its reconnecting,
	 * or the disconnect above did. */
	mosquitto_loop_stop(in->m, false);
	mosquitto_destroy(in->m);
	g_free(in);
	g_hash_table_remove_all(b->mid_seq);
}

static gboolean on_retry(gpointer data)
{
	mqtt_broker *b = data;
	g_source_unref(b->retry);
	b->retry = NULL;
	start_instance(b);
	return G_SOURCE_REMOVE;
}

static void schedule_retry(mqtt_broker *b)
{
	if (b->retry)
		return;
	if (b->connected_at_us && (g_get_monotonic_time() - b->connected_at_us) / 1e6 > STABLE_S)
		b->backoff_s = b->cfg.reconnect_min_s;
	b->connected_at_us = 0;
	b->retry = g_timeout_source_new((guint)(b->backoff_s * 1000));
	g_source_set_callback(b->retry, on_retry, b, NULL);
	g_source_attach(b->retry, b->ctx);
	b->backoff_s = MIN(b->backoff_s * 2, b->cfg.reconnect_max_s);
}

static void lost(mqtt_broker *b, const char *why)
{
	gboolean was = b->st.connected;
	b->st.connected = FALSE;
	b->st.losses++;
	set_error(b, "%s", why);
	stop_instance(b, FALSE);
	if (was)
		g_message("broker %s:%d: connection lost: %s", b->cfg.host, b->cfg.port, why);
	else
		g_debug("broker %s:%d: %s", b->cfg.host, b->cfg.port, why);
	if (b->ops.disconnected)
		b->ops.disconnected(b->user, why);
	schedule_retry(b);
}

static gboolean on_event(gpointer data)
{
	event *e = data;
	mqtt_broker *b = e->tok->b;
	if (!b || e->gen != b->gen || !b->cur)
		return G_SOURCE_REMOVE; /* from an instance already torn down */
	char why[200];
	switch (e->type) {
	case EV_CONNECT:
		if (e->rc) {
			g_snprintf(why, sizeof why, "connection refused: %s", mosquitto_connack_string(e->rc));
			lost(b, why);
			break;
		}
		b->st.connected = TRUE;
		b->st.connects++;
		b->connected_at_us = g_get_monotonic_time();
		g_message("broker %s:%d: connected", b->cfg.host, b->cfg.port);
		if (b->cfg.will_topic) {
			int mid;
			mosquitto_publish(b->cur->m, &mid, b->cfg.will_topic, 1, "1", 1, true);
		}
		if (b->ops.connected)
			b->ops.connected(b->user);
		break;
	case EV_DISCONNECT:
		g_snprintf(why, sizeof why, "disconnected: %s", e->rc ? mosquitto_strerror(e->rc) : "by request");
		lost(b, why);
		break;
	case EV_PUBLISH: {
		gpointer seq;
		if (g_hash_table_steal_extended(b->mid_seq, GINT_TO_POINTER(e->mid), NULL, &seq)) {
			b->st.acked++;
			if (b->ops.acked)
				b->ops.acked(b->user, *(guint64 *)seq);
			g_free(seq);
		}
		break;
	}
	}
	return G_SOURCE_REMOVE;
}

static int configure(mqtt_broker *b, struct mosquitto *m, char *why, size_t wlen)
{
	const mqtt_broker_cfg *c = &b->cfg;
	int rc = mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
	if (!rc && c->username && *c->username)
		rc = mosquitto_username_pw_set(m, c->username, c->password);
	if (rc) {
		g_snprintf(why, wlen, "username: %s", mosquitto_strerror(rc));
		return rc;
	}
	if (c->tls) {
		rc = mosquitto_tls_set(m, c->ca_file, c->ca_path, c->cert_file, c->key_file, NULL);
		if (rc) {
			g_snprintf(why, wlen, "tls (ca_file %s, ca_path %s, cert_file %s, key_file %s): %s",
				   c->ca_file ? c->ca_file : "-", c->ca_path ? c->ca_path : "-",
				   c->cert_file ? c->cert_file : "-", c->key_file ? c->key_file : "-",
				   rc == MOSQ_ERR_ERRNO ? g_strerror(errno) : mosquitto_strerror(rc));
			return rc;
		}
		rc = mosquitto_tls_opts_set(m, 1, c->tls_version, NULL);
		if (!rc)
			rc = mosquitto_tls_insecure_set(m, c->tls_insecure);
		if (rc) {
			g_snprintf(why, wlen, "tls options (version %s): %s", c->tls_version ? c->tls_version : "default",
				   mosquitto_strerror(rc));
			return rc;
		}
	}
	if (c->will_topic) {
		rc = mosquitto_will_set(m, c->will_topic, 1, "0", 1, true);
		if (rc) {
			g_snprintf(why, wlen, "will on %s: %s", c->will_topic, mosquitto_strerror(rc));
			return rc;
		}
	}
	mosquitto_max_inflight_messages_set(m, (unsigned)c->inflight);
	/* libmosquitto reconnects by itself only until the first CONNACK (the
	 * instance is replaced after a loss): pace those tries like ours. */
	mosquitto_reconnect_delay_set(m, (unsigned)MAX(1, c->reconnect_min_s), (unsigned)MAX(1, c->reconnect_max_s), true);
	mosquitto_connect_callback_set(m, on_connect);
	mosquitto_disconnect_callback_set(m, on_disconnect);
	mosquitto_publish_callback_set(m, on_publish);
	return 0;
}

static void start_instance(mqtt_broker *b)
{
	char why[400];
	instance *in = g_new0(instance, 1);
	in->b = b;
	in->gen = ++b->gen;
	in->m = mosquitto_new(b->cfg.client_id, true, in);
	if (!in->m) {
		g_free(in);
		set_error(b, "mosquitto_new: %s", g_strerror(errno));
		schedule_retry(b);
		return;
	}
	int rc = configure(b, in->m, why, sizeof why);
	if (!rc)
		rc = mosquitto_connect_async(in->m, b->cfg.host, b->cfg.port, b->cfg.keepalive_s);
	if (rc) {
		if (!*why || rc == MOSQ_ERR_ERRNO)
			g_snprintf(why, sizeof why, "connect to %s:%d: %s", b->cfg.host, b->cfg.port,
				   rc == MOSQ_ERR_ERRNO ? g_strerror(errno) : mosquitto_strerror(rc));
		b->cur = in;
		lost(b, why);
		return;
	}
	b->cur = in;
	rc = mosquitto_loop_start(in->m);
	if (rc) {
		g_snprintf(why, sizeof why, "mosquitto_loop_start: %s", mosquitto_strerror(rc));
		lost(b, why);
	}
}

mqtt_broker *mqtt_broker_new(const mqtt_broker_cfg *cfg, GMainContext *ctx, const mqtt_broker_ops *ops, void *user,
			     GError **err)
{
	if (!cfg->host || !*cfg->host || cfg->port < 1 || cfg->port > 65535 || cfg->qos < 0 || cfg->qos > 2 ||
	    cfg->inflight < 1) {
		g_set_error(err, MQTT_BROKER_ERROR, EINVAL, "broker \"%s\" port %d qos %d inflight %d: not usable",
			    cfg->host ? cfg->host : "", cfg->port, cfg->qos, cfg->inflight);
		return NULL;
	}
	if (cfg->tls && !(cfg->ca_file && *cfg->ca_file) && !(cfg->ca_path && *cfg->ca_path)) {
		g_set_error(err, MQTT_BROKER_ERROR, EINVAL, "tls needs ca_file or ca_path");
		return NULL;
	}
	if (!!(cfg->cert_file && *cfg->cert_file) != !!(cfg->key_file && *cfg->key_file)) {
		g_set_error(err, MQTT_BROKER_ERROR, EINVAL, "cert_file and key_file go together");
		return NULL;
	}
	static gsize once;
	if (g_once_init_enter(&once)) {
		mosquitto_lib_init();
		g_once_init_leave(&once, 1);
	}
	mqtt_broker *b = g_new0(mqtt_broker, 1);
	b->cfg = *cfg;
#define DUP(f) b->cfg.f = (cfg->f && *cfg->f) ? g_strdup(cfg->f) : NULL
	DUP(host);
	DUP(client_id);
	DUP(username);
	DUP(ca_file);
	DUP(ca_path);
	DUP(cert_file);
	DUP(key_file);
	DUP(tls_version);
	DUP(will_topic);
#undef DUP
	b->cfg.password = cfg->password ? g_strdup(cfg->password) : NULL;
	b->ctx = ctx ? g_main_context_ref(ctx) : g_main_context_ref(g_main_context_default());
	if (ops)
		b->ops = *ops;
	b->user = user;
	b->tok = g_atomic_rc_box_new0(token);
	b->tok->b = b;
	b->mid_seq = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	b->backoff_s = cfg->reconnect_min_s;
	/* A configuration libmosquitto refuses (TLS files) is an error now, not
	 * a retry loop. */
	struct mosquitto *probe = mosquitto_new(b->cfg.client_id, true, NULL);
	char why[400] = "";
	int rc = probe ? configure(b, probe, why, sizeof why) : MOSQ_ERR_NOMEM;
	mosquitto_destroy(probe);
	if (rc) {
		g_set_error(err, MQTT_BROKER_ERROR, EINVAL, "%s", *why ? why : mosquitto_strerror(rc));
		mqtt_broker_free(b);
		return NULL;
	}
	start_instance(b);
	return b;
}

int mqtt_broker_publish(mqtt_broker *b, guint64 seq, const char *topic, const void *payload, size_t len, int retain,
			char *why, size_t wlen)
{
	if (!b->cur || !b->st.connected) {
		g_snprintf(why, wlen, "not connected");
		return -ENOTCONN;
	}
	if (g_hash_table_size(b->mid_seq) >= (guint)b->cfg.inflight) {
		g_snprintf(why, wlen, "%d messages in flight", b->cfg.inflight);
		return -EBUSY;
	}
	int mid = 0;
	int rc = mosquitto_publish(b->cur->m, &mid, topic, (int)len, payload, b->cfg.qos, retain);
	if (rc == MOSQ_ERR_NO_CONN) {
		/* The network thread saw the loss; its event is on its way. */
		g_snprintf(why, wlen, "not connected");
		return -ENOTCONN;
	}
	if (rc) {
		b->st.publish_errors++;
		g_snprintf(why, wlen, "%s: %s", topic, rc == MOSQ_ERR_ERRNO ? g_strerror(errno) : mosquitto_strerror(rc));
		return -EIO;
	}
	/* The acknowledgement is posted to this context and handled after
	 * this returns, so the mid is known by then. */
	g_hash_table_insert(b->mid_seq, GINT_TO_POINTER(mid), g_memdup2(&seq, sizeof seq));
	b->st.published++;
	return 0;
}

size_t mqtt_broker_in_flight(const mqtt_broker *b)
{
	return g_hash_table_size(b->mid_seq);
}

void mqtt_broker_state_get(const mqtt_broker *b, mqtt_broker_state *s)
{
	*s = b->st;
}

void mqtt_broker_free(mqtt_broker *b)
{
	if (!b)
		return;
	if (b->cur && b->st.connected && b->cfg.will_topic) {
		int mid;
		mosquitto_publish(b->cur->m, &mid, b->cfg.will_topic, 1, "0", 1, true);
	}
	stop_instance(b, TRUE);
	if (b->retry) {
		g_source_destroy(b->retry);
		g_source_unref(b->retry);
	}
	b->tok->b = NULL;
	g_atomic_rc_box_release(b->tok);
	g_hash_table_destroy(b->mid_seq);
	g_main_context_unref(b->ctx);
	g_free((char *)b->cfg.host);
	g_free((char *)b->cfg.client_id);
	g_free((char *)b->cfg.username);
	g_free((char *)b->cfg.password);
	g_free((char *)b->cfg.ca_file);
	g_free((char *)b->cfg.ca_path);
	g_free((char *)b->cfg.cert_file);
	g_free((char *)b->cfg.key_file);
	g_free((char *)b->cfg.tls_version);
	g_free((char *)b->cfg.will_topic);
	g_free(b);
}
