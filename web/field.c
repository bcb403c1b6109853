/* field.c — every node's status devices and events through libdev's remote
 * names (field.h). */
#include "web/field.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/dev.h"
#include "web/parse.h"

const char *const web_field_status_devs[] = {"proxy/status", "sync/rbs", "sync/ticker", "audio/0/status",
					     "fft/0/status", "detect/status", "collab/status", NULL};
/* The service behind each status device, in the same order. */
static const char *const service_of[] = {"chorus-proxy", "syncd", "syncd", "audiod", "fft", "detect", "collab"};
#define NDEVS 7
enum { D_PROXY,
       D_RBS,
       D_TICKER,
       D_AUDIO,
       D_FFT,
       D_DETECT,
       D_COLLAB };

typedef struct node node;
typedef struct {
	node *n;
	int k;
} dev_ref;

struct node {
	web_field *f;
	uint32_t id;
	double pos[3];
	dev_status_reader *st[NDEVS];
	dev_ref ref[NDEVS];
	char *text[NDEVS];
	gboolean conn[NDEVS];
	dev_packet_sub *calls, *dets;
	gboolean dirty;
	int64_t xruns, xruns_changed_us; /* the last count and when it grew (monotonic) */
};

struct web_field {
	GPtrArray *nodes; /* node * */
	web_field_event_fn fn;
	void *user;
	GQueue calls; /* JsonNode * (objects), oldest first */
	GQueue dets;  /* JsonNode * */
	uint64_t next_call;
	guint64 n_calls, n_dets, n_bad;
	guint flush;
};

static void mark(node *n)
{
	n->dirty = TRUE;
}

static void on_status(void *user, int err, const char *data, size_t len)
{
	dev_ref *r = user;
	node *n = r->n;
	g_free(n->text[r->k]);
	n->text[r->k] = err < 0 ? g_strdup_printf("(error: %s)", data) : g_strndup(data, len);
	if (r->k == D_AUDIO) {
		int64_t x = web_kv_int(n->text[r->k], "xruns", "count", -1);
		if (x > n->xruns && n->xruns >= 0)
			n->xruns_changed_us = g_get_monotonic_time();
		n->xruns = x;
	}
	mark(n);
}

static void on_state(void *user, gboolean connected, int err)
{
	dev_ref *r = user;
	r->n->conn[r->k] = connected;
	if (!connected) {
		g_free(r->n->text[r->k]);
		r->n->text[r->k] = g_strdup_printf("(not connected: %s)", g_strerror(-err));
	}
	mark(r->n);
}

static void push(web_field *f, GQueue *q, JsonNode *j, guint keep)
{
	g_queue_push_tail(q, j);
	while (q->length > keep)
		json_node_unref(g_queue_pop_head(q));
}

static void on_call(void *user, const char *msg, size_t len, uint32_t dropped)
{
	node *n = user;
	web_field *f = n->f;
	JsonParser *p = json_parser_new();
	JsonNode *root = NULL;
	if (json_parser_load_from_data(p, msg, (gssize)len, NULL) && (root = json_parser_get_root(p)) &&
	    JSON_NODE_HOLDS_OBJECT(root) && json_object_has_member(json_node_get_object(root), "status")) {
		JsonNode *j = json_node_copy(root);
		JsonObject *o = json_node_get_object(j);
		json_object_set_int_member(o, "id", (gint64)++f->next_call);
		json_object_set_int_member(o, "received_ms", g_get_monotonic_time() / 1000);
		if (!json_object_has_member(o, "reporter"))
			json_object_set_int_member(o, "reporter", n->id);
		f->n_calls++;
		json_node_unref(web_call_superseded(&f->calls, o));
		push(f, &f->calls, json_node_ref(j), WEB_CALLS_KEPT);
		if (f->fn)
			f->fn(f->user, "call", j);
		json_node_unref(j);
	} else {
		f->n_bad++;
	}
	g_object_unref(p);
}

static void on_det(void *user, const char *msg, size_t len, uint32_t dropped)
{
	node *n = user;
	web_field *f = n->f;
	JsonNode *j = web_det_json(msg, n->id);
	if (!j) {
		f->n_bad++;
		return;
	}
	f->n_dets++;
	push(f, &f->dets, json_node_ref(j), WEB_DETS_KEPT);
	if (f->fn)
		f->fn(f->user, "det", j);
	json_node_unref(j);
}

static gboolean on_flush(gpointer data)
{
	web_field *f = data;
	for (guint i = 0; i < f->nodes->len; i++) {
		node *n = g_ptr_array_index(f->nodes, i);
		if (!n->dirty)
			continue;
		n->dirty = FALSE;
		JsonNode *j = web_field_node_json(f, n->id, FALSE);
		if (f->fn)
			f->fn(f->user, "node", j);
		json_node_unref(j);
	}
	return G_SOURCE_CONTINUE;
}

static void node_free(gpointer data)
{
	node *n = data;
	for (int k = 0; k < NDEVS; k++) {
		dev_status_reader_free(n->st[k]);
		g_free(n->text[k]);
	}
	dev_packet_sub_free(n->calls);
	dev_packet_sub_free(n->dets);
	g_free(n);
}

web_field *web_field_new(const collab_nodes *nodes, web_field_event_fn fn, void *user)
{
	web_field *f = g_new0(web_field, 1);
	f->nodes = g_ptr_array_new_with_free_func(node_free);
	f->fn = fn;
	f->user = user;
	g_queue_init(&f->calls);
	g_queue_init(&f->dets);
	for (guint i = 0; i < nodes->nodes->len; i++) {
		const collab_node *c = &g_array_index(nodes->nodes, collab_node, i);
		node *n = g_new0(node, 1);
		n->f = f;
		n->id = c->id;
		memcpy(n->pos, c->pos_m, sizeof n->pos);
		n->xruns = -1;
		g_ptr_array_add(f->nodes, n);
		for (int k = 0; k < NDEVS; k++) {
			char name[DEV_PATH_MAX + 16];
			g_snprintf(name, sizeof name, "node%u:%s", n->id, web_field_status_devs[k]);
			n->ref[k] = (dev_ref){n, k};
			n->text[k] = g_strdup("(connecting)");
			GError *err = NULL;
			if (!(n->st[k] = dev_status_reader_new(name, FALSE, NULL, on_status, on_state, &n->ref[k], &err))) {
				g_warning("%s: %s", name, err->message);
				g_clear_error(&err);
			}
		}
		char cn[64], dn[64];
		g_snprintf(cn, sizeof cn, "node%u:collab/events", n->id);
		g_snprintf(dn, sizeof dn, "node%u:detect/events", n->id);
		GError *err = NULL;
		if (!(n->calls = dev_packet_sub_new(cn, NULL, 0, NULL, on_call, NULL, n, &err)) ||
		    !(n->dets = dev_packet_sub_new(dn, NULL, 0, NULL, on_det, NULL, n, &err))) {
			g_warning("node%u: %s", n->id, err->message);
			g_clear_error(&err);
		}
	}
	f->flush = g_timeout_add(500, on_flush, f);
	return f;
}

void web_field_free(web_field *f)
{
	if (!f)
		return;
	g_source_remove(f->flush);
	g_ptr_array_free(f->nodes, TRUE);
	g_queue_clear_full(&f->calls, (GDestroyNotify)json_node_unref);
	g_queue_clear_full(&f->dets, (GDestroyNotify)json_node_unref);
	g_free(f);
}

static node *find(const web_field *f, uint32_t id)
{
	for (guint i = 0; i < f->nodes->len; i++) {
		node *n = g_ptr_array_index(f->nodes, i);
		if (n->id == id)
			return n;
	}
	return NULL;
}

gboolean web_field_has(const web_field *f, uint32_t id)
{
	return find(f, id) != NULL;
}

/* up: every service answers and no xrun in the last 10 s; down: not even
 * the proxy answers; degraded otherwise. */
static const char *node_state(const node *n)
{
	int up = 0;
	for (int k = 0; k < NDEVS; k++)
		up += n->conn[k];
	if (!n->conn[D_PROXY])
		return "down";
	gboolean recent_xrun = n->xruns_changed_us && g_get_monotonic_time() - n->xruns_changed_us < 10 * G_USEC_PER_SEC;
	return up == NDEVS && !recent_xrun ? "up" : "degraded";
}

static void add_services(JsonBuilder *b, const node *n)
{
	json_builder_set_member_name(b, "services");
	json_builder_begin_object(b);
	for (int k = 0; k < NDEVS; k++) {
		if (k == D_TICKER)
			continue;
		json_builder_set_member_name(b, service_of[k]);
		json_builder_add_boolean_value(b, n->conn[k]);
	}
	json_builder_end_object(b);
}

JsonNode *web_field_node_json(const web_field *f, uint32_t id, gboolean texts)
{
	const node *n = find(f, id);
	if (!n)
		return NULL;
	JsonBuilder *b = json_builder_new();
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "id");
	json_builder_add_int_value(b, n->id);
	json_builder_set_member_name(b, "pos");
	json_builder_begin_array(b);
	for (int i = 0; i < 3; i++)
		json_builder_add_double_value(b, n->pos[i]);
	json_builder_end_array(b);
	json_builder_set_member_name(b, "state");
	json_builder_add_string_value(b, node_state(n));
	add_services(b, n);
	web_health_json(b, n->text[D_AUDIO], n->text[D_RBS], n->text[D_TICKER]);
	if (texts) {
		json_builder_set_member_name(b, "devices");
		json_builder_begin_object(b);
		for (int k = 0; k < NDEVS; k++) {
			json_builder_set_member_name(b, web_field_status_devs[k]);
			json_builder_add_string_value(b, n->text[k]);
		}
		json_builder_end_object(b);
	}
	json_builder_end_object(b);
	JsonNode *j = json_builder_get_root(b);
	g_object_unref(b);
	return j;
}

JsonNode *web_field_nodes_json(const web_field *f)
{
	JsonArray *a = json_array_new();
	for (guint i = 0; i < f->nodes->len; i++) {
		node *n = g_ptr_array_index(f->nodes, i);
		json_array_add_element(a, web_field_node_json(f, n->id, FALSE));
	}
	JsonNode *j = json_node_new(JSON_NODE_ARRAY);
	json_node_take_array(j, a);
	return j;
}

JsonNode *web_field_calls_json(const web_field *f, uint64_t since_id)
{
	JsonArray *a = json_array_new();
	for (GList *l = f->calls.head; l; l = l->next) {
		JsonNode *c = l->data;
		if ((uint64_t)json_object_get_int_member(json_node_get_object(c), "id") > since_id)
			json_array_add_element(a, json_node_ref(c));
	}
	JsonNode *j = json_node_new(JSON_NODE_ARRAY);
	json_node_take_array(j, a);
	return j;
}

JsonNode *web_field_call(const web_field *f, uint64_t id)
{
	for (GList *l = f->calls.head; l; l = l->next) {
		JsonNode *c = l->data;
		if ((uint64_t)json_object_get_int_member(json_node_get_object(c), "id") == id)
			return json_node_ref(c);
	}
	return NULL;
}

JsonNode *web_field_dets_json(const web_field *f, int64_t node_id, int64_t from_ns, int64_t to_ns)
{
	JsonArray *a = json_array_new();
	for (GList *l = f->dets.head; l; l = l->next) {
		JsonObject *o = json_node_get_object(l->data);
		if (node_id >= 0 && json_object_get_int_member(o, "node") != node_id)
			continue;
		JsonNode *g = json_object_get_member(o, "global_ns");
		if (!g || JSON_NODE_TYPE(g) != JSON_NODE_VALUE)
			continue;
		int64_t t = json_node_get_int(g);
		if (t >= from_ns && t < to_ns)
			json_array_add_element(a, json_node_ref(l->data));
	}
	JsonNode *j = json_node_new(JSON_NODE_ARRAY);
	json_node_take_array(j, a);
	return j;
}

void web_field_counts(const web_field *f, guint64 *calls, guint64 *dets, guint64 *bad)
{
	*calls = f->n_calls;
	*dets = f->n_dets;
	*bad = f->n_bad;
}
