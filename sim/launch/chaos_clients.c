/* chaos_clients.c — every client reconnected by itself (chaos_clients.h). */
#include "sim/launch/chaos_clients.h"

#include <stdlib.h>
#include <string.h>

#include "sim/launch/nodeenv.h"
#include "sim/scenario.h"

typedef struct {
	const char *prog;    /* program name as chorus-sim runs it */
	const char *dev;     /* its status device */
	const char *linked;  /* text present while it is connected */
	const char *counter; /* "key=" of a count that grows while data flows */
} client_spec;

static const client_spec specs[] = {
	{"audiod", "audio/0/status", "syncd connected", "forwarded="},
	{"fft", "fft/0/status", "connected=yes", "frames computed="},
	{"detect", "detect/status", "clocks ready", "frames received="},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* Node's status device dev as text; NULL when it does not answer. */
static char *read_status(const csim *s, int node, const char *dev)
{
	GByteArray *b = g_byte_array_new();
	if (csim_node_status_read(csim_run_dir(s), node, dev, b) != 0) {
		g_byte_array_free(b, TRUE);
		return NULL;
	}
	return (char *)g_byte_array_free(b, FALSE);
}

/* The count after key in text; -1 when absent. */
static long long counter_of(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

typedef struct {
	int node;
	const client_spec *spec;
	long long first;
} probe;

/* Iterate the default main context for secs seconds. */
static void run_for(double secs)
{
	gint64 end = g_get_monotonic_time() + (gint64)(secs * G_USEC_PER_SEC);
	while (g_get_monotonic_time() < end) {
		g_main_context_iteration(NULL, FALSE);
		g_usleep(10000);
	}
}

int csim_chaos_clients_check(csim *s, GString *out)
{
	const sim_scenario *sc = csim_scenario(s);
	run_for(CSIM_CLIENTS_SETTLE_S);
	GArray *probes = g_array_new(FALSE, FALSE, sizeof(probe));
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++)
		for (size_t k = 0; k < N_SPECS; k++) {
			int node = sim_scenario_node(sc, i)->id;
			if (csim_pid(s, node, specs[k].prog) <= 0)
				continue;
			char *t = read_status(s, node, specs[k].dev);
			probe p = {node, &specs[k], counter_of(t, specs[k].counter)};
			g_array_append_val(probes, p);
			g_free(t);
		}
	run_for(CSIM_CLIENTS_GAP_S); /* data flows meanwhile (the loop serves the simulation) */
	int failures = 0;
	for (guint i = 0; i < probes->len; i++) {
		const probe *p = &g_array_index(probes, probe, i);
		char *t = read_status(s, p->node, p->spec->dev);
		long long now = counter_of(t, p->spec->counter);
		const char *why = !t                            ? "its status does not answer"
				  : !strstr(t, p->spec->linked) ? "not connected"
				  : now <= p->first             ? "connected, but nothing flowed"
								: NULL;
		if (why) {
			failures++;
			g_string_append_printf(out, "chaos: node%d %s did not reconnect by itself: %s (%s %lld -> %lld over %.0f s; want \"%s\")\n",
					       p->node, p->spec->prog, why, p->spec->counter, p->first, now, CSIM_CLIENTS_GAP_S,
					       p->spec->linked);
		}
		g_free(t);
	}
	g_string_append_printf(out, "chaos: clients: %u checked after the faults, %d did not reconnect by themselves\n",
			       probes->len, failures);
	g_array_free(probes, TRUE);
	return failures;
}
