/* outages.c — a node's `down` windows applied to the simulation (outages.h). */
#include "sim/launch/outages.h"

#include <stdio.h>
#include <time.h>

#include "sim/launch/truth.h"

typedef struct {
	csim_outages *o;
	int node;
	gboolean up; /* what happens at this event */
	guint source;
} event;

struct csim_outages {
	csim *s;
	csim_outage_fn told;
	void *user;
	GPtrArray *events; /* event* */
	GHashTable *down;  /* node ids now stopped by us */
	int stops, starts, failed;
};

static int64_t host_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void apply(csim_outages *o, int node, gboolean up)
{
	if (up) {
		if (!g_hash_table_remove(o->down, GINT_TO_POINTER(node)))
			return;
		GError *e = NULL;
		if (!csim_node_start(o->s, node, &e)) {
			g_warning("outage: node%d could not be started again: %s", node, e ? e->message : "?");
			g_clear_error(&e);
			o->failed++;
		} else
			o->starts++;
	} else {
		if (g_hash_table_contains(o->down, GINT_TO_POINTER(node)))
			return;
		csim_node_stop(o->s, node);
		g_hash_table_add(o->down, GINT_TO_POINTER(node));
		o->stops++;
	}
	if (o->told)
		o->told(o->user, node, up);
}

static gboolean on_event(gpointer data)
{
	event *e = data;
	e->source = 0;
	apply(e->o, e->node, e->up);
	return G_SOURCE_REMOVE;
}

/* Schedule one event at world time t_s (s since the epoch). */
static void schedule(csim_outages *o, int node, gboolean up, double t_s, int64_t now_world_ns)
{
	int64_t at_ns = (int64_t)(t_s * 1e9);
	event *e = g_new0(event, 1);
	e->o = o;
	e->node = node;
	e->up = up;
	int64_t wait_ms = (at_ns - now_world_ns) / 1000000;
	e->source = g_timeout_add((guint)(wait_ms > 0 ? wait_ms : 0), on_event, e);
	g_ptr_array_add(o->events, e);
}

static void event_free(gpointer p)
{
	event *e = p;
	if (e->source)
		g_source_remove(e->source);
	g_free(e);
}

csim_outages *csim_outages_new(csim *s, csim_outage_fn told, void *user)
{
	const sim_scenario *sc = csim_scenario(s);
	size_t windows = 0;
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++)
		windows += sim_scenario_node(sc, i)->n_down;
	if (!windows)
		return NULL;
	csim_outages *o = g_new0(csim_outages, 1);
	o->s = s;
	o->told = told;
	o->user = user;
	o->events = g_ptr_array_new_with_free_func(event_free);
	o->down = g_hash_table_new(g_direct_hash, g_direct_equal);
	int64_t now = host_raw() - csim_epoch_ns(s);
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
		const sim_node_cfg *n = sim_scenario_node(sc, i);
		for (size_t k = 0; k < n->n_down; k++) {
			if (n->down[k].to_s * 1e9 <= (double)now)
				continue; /* already over */
			schedule(o, n->id, FALSE, n->down[k].from_s, now);
			schedule(o, n->id, TRUE, n->down[k].to_s, now);
		}
	}
	return o;
}

void csim_outages_free(csim_outages *o)
{
	if (!o)
		return;
	g_ptr_array_free(o->events, TRUE);
	g_hash_table_destroy(o->down);
	g_free(o);
}

void csim_outages_counts(const csim_outages *o, int *stops, int *starts, int *failed)
{
	*stops = o ? o->stops : 0;
	*starts = o ? o->starts : 0;
	*failed = o ? o->failed : 0;
}

void csim_outage_truth(void *truth, int node, gboolean up)
{
	csim_truth_set_down(truth, node, !up);
	if (up)
		csim_truth_audio_restarted(truth, node);
	fprintf(stderr, "chorus-sim: node%d %s\n", node, up ? "started again after its outage" : "down (its outage)");
}
