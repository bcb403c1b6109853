/* simradio.c — range, loss and receive jitter in simulation (see simradio.h). */
#include "syncd/simradio.h"

#include <math.h>
#include <stdlib.h>

#include "sim/scenario.h"

struct simradio {
	sim_scenario *sc;
	const sim_node_cfg *self;
	double range_m, loss;
	double jitter_ns;  /* sd, 0 when the path is real (netns) */
	GRand *rng;
	guint64 dropped_range, dropped_loss;
};

simradio *simradio_new(uint32_t self, GError **err)
{
	const char *clock = getenv("CHORUS_SIM_CLOCK"), *path = getenv("CHORUS_SCENARIO");
	if (!clock || !*clock || !path || !*path)
		return NULL;
	sim_scenario *sc = sim_scenario_load(path, err);
	if (!sc)
		return NULL;
	const sim_node_cfg *n = sim_scenario_find_node(sc, (int)self);
	if (!n) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "%s: no [node.%u] for this node's radio", path, self);
		sim_scenario_free(sc);
		return NULL;
	}
	simradio *r = g_new0(simradio, 1);
	r->sc = sc;
	r->self = n;
	r->range_m = sim_scenario_world(sc)->radio_range_m;
	r->loss = sim_scenario_world(sc)->radio_loss;
	const char *netns = getenv("CHORUS_SIM_NETNS");
	r->jitter_ns = netns && *netns && *netns != '0' ? 0.0 : n->radio_jitter_ns;
	/* Independent draws per process; the scenario seed keeps runs comparable. */
	r->rng = g_rand_new_with_seed((guint32)(sim_scenario_world(sc)->seed * 2654435761u) ^ self ^ (guint32)getpid());
	return r;
}

void simradio_free(simradio *r)
{
	if (!r)
		return;
	g_rand_free(r->rng);
	sim_scenario_free(r->sc);
	g_free(r);
}

gboolean simradio_delivers(simradio *r, uint32_t sender)
{
	const sim_node_cfg *s = sim_scenario_find_node(r->sc, (int)sender);
	if (!s) {
		r->dropped_range++;
		return FALSE;
	}
	double d2 = 0;
	for (int i = 0; i < 3; i++)
		d2 += (s->pos[i] - r->self->pos[i]) * (s->pos[i] - r->self->pos[i]);
	if (sqrt(d2) > r->range_m) {
		r->dropped_range++;
		return FALSE;
	}
	if (r->loss > 0 && g_rand_double(r->rng) < r->loss) {
		r->dropped_loss++;
		return FALSE;
	}
	return TRUE;
}

int64_t simradio_jitter_ns(simradio *r)
{
	if (r->jitter_ns <= 0)
		return 0;
	/* Box-Muller on GRand: one Gaussian draw. */
	double u1 = g_rand_double(r->rng), u2 = g_rand_double(r->rng);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return (int64_t)llround(r->jitter_ns * sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2));
}

void simradio_describe(const simradio *r, GString *out)
{
	g_string_append_printf(out,
			       "simulated radio: scenario %s range=%.1fm loss=%.3f jitter=%.0fns dropped: %" G_GUINT64_FORMAT
			       " out of range, %" G_GUINT64_FORMAT " lost\n",
			       sim_scenario_name(r->sc), r->range_m, r->loss, r->jitter_ns, r->dropped_range,
			       r->dropped_loss);
}
