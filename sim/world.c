/* world.c — the simulated world's truth functions (see world.h). */
#include "sim/world.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim/rng.h"

typedef struct {
	double delay_s; /* s: propagation delay */
	double gain;    /* level (linear) / max(r, min_distance) */
} path;

typedef struct {
	const sim_node_cfg *cfg;
	path *paths; /* [mic * n_sources + source] */
} node_state;

typedef struct {
	const sim_source_cfg *cfg;
	dsp_wave *wave;
	double *calls_s; /* s since epoch, ascending */
	size_t n_calls;
	double length_s;
} source_state;

struct sim_world {
	const sim_scenario *sc;
	const sim_world_cfg *cfg;
	size_t n_nodes, n_sources;
	node_state *nodes;
	source_state *sources;
	double noise_rms; /* full scale */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Call times: the explicit list sorted, or a Poisson process on
 * [call_start, call_end) whose k-th gap is keyed (seed, source id, k). */
static void make_calls(const sim_world *w, source_state *s)
{
	const sim_source_cfg *c = s->cfg;
	if (c->call_times_s) {
		s->n_calls = c->n_call_times;
		s->calls_s = g_memdup2(c->call_times_s, c->n_call_times * sizeof(double));
		qsort(s->calls_s, s->n_calls, sizeof(double), cmp_double);
		return;
	}
	GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
	double t = c->call_start_s;
	for (uint64_t k = 0;; k++) {
		t += sim_rng_exp(w->cfg->seed, SIM_RNG_CALLS, (uint64_t)c->id, 0, k) / c->call_rate_hz;
		if (t >= c->call_end_s)
			break;
		g_array_append_val(a, t);
	}
	s->n_calls = a->len;
	s->calls_s = (double *)(void *)g_array_free(a, FALSE);
}

sim_world *sim_world_new(const sim_scenario *sc, GError **err)
{
	sim_world *w = g_new0(sim_world, 1);
	w->sc = sc;
	w->cfg = sim_scenario_world(sc);
	w->n_nodes = sim_scenario_n_nodes(sc);
	w->n_sources = sim_scenario_n_sources(sc);
	w->noise_rms = pow(10.0, w->cfg->noise_dbfs / 20.0);
	w->sources = g_new0(source_state, w->n_sources);
	for (size_t i = 0; i < w->n_sources; i++) {
		source_state *s = &w->sources[i];
		s->cfg = sim_scenario_source(sc, i);
		GError *e = NULL;
		s->wave = dsp_wave_new(&s->cfg->wave, w->cfg->sample_rate_hz, &e);
		if (!s->wave) {
			g_set_error(err, CFG_ERROR, EIO, "%s:%d: [source.%d] file: %s", sim_scenario_name(sc),
				    s->cfg->line, s->cfg->id, e->message);
			g_error_free(e);
			sim_world_free(w);
			return NULL;
		}
		s->length_s = dsp_wave_length_s(s->wave);
		make_calls(w, s);
	}
	w->nodes = g_new0(node_state, w->n_nodes);
	for (size_t i = 0; i < w->n_nodes; i++) {
		node_state *n = &w->nodes[i];
		n->cfg = sim_scenario_node(sc, i);
		n->paths = g_new0(path, n->cfg->n_mics * w->n_sources + 1);
		for (size_t m = 0; m < n->cfg->n_mics; m++)
			for (size_t j = 0; j < w->n_sources; j++) {
				const double *sp = w->sources[j].cfg->pos_m;
				double d2 = 0;
				for (int k = 0; k < 3; k++) {
					double dx = n->cfg->pos_m[k] + n->cfg->mics_m[m][k] - sp[k];
					d2 += dx * dx;
				}
				double r = sqrt(d2);
				path *p = &n->paths[m * w->n_sources + j];
				p->delay_s = r / w->cfg->speed_of_sound_m_s;
				p->gain = pow(10.0, w->sources[j].cfg->level_dbfs / 20.0) /
					  fmax(r, w->cfg->min_distance_m);
			}
	}
	return w;
}

void sim_world_free(sim_world *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->sources && i < w->n_sources; i++) {
		dsp_wave_free(w->sources[i].wave);
		g_free(w->sources[i].calls_s);
	}
	for (size_t i = 0; w->nodes && i < w->n_nodes; i++)
		g_free(w->nodes[i].paths);
	g_free(w->sources);
	g_free(w->nodes);
	g_free(w);
}

const sim_scenario *sim_world_scenario(const sim_world *w)
{
	return w->sc;
}

static const node_state *find(const sim_world *w, int node)
{
	for (size_t i = 0; i < w->n_nodes; i++)
		if (w->nodes[i].cfg->id == node)
			return &w->nodes[i];
	return NULL;
}

const sim_node_cfg *sim_world_node(const sim_world *w, int node)
{
	const node_state *n = find(w, node);
	return n ? n->cfg : NULL;
}

int sim_world_n_mics(const sim_world *w, int node)
{
	const node_state *n = find(w, node);
	return n ? (int)n->cfg->n_mics : -ENOENT;
}

static const path *get_path(const sim_world *w, int node, int mic, size_t source)
{
	const node_state *n = find(w, node);
	if (!n || mic < 0 || (size_t)mic >= n->cfg->n_mics || source >= w->n_sources)
		return NULL;
	return &n->paths[(size_t)mic * w->n_sources + source];
}

double sim_world_delay_s(const sim_world *w, int node, int mic, size_t source)
{
	const path *p = get_path(w, node, mic, source);
	return p ? p->delay_s : NAN;
}

double sim_world_gain(const sim_world *w, int node, int mic, size_t source)
{
	const path *p = get_path(w, node, mic, source);
	return p ? p->gain : NAN;
}

double sim_world_arrival_s(const sim_world *w, int node, int mic, size_t source, size_t k)
{
	const path *p = get_path(w, node, mic, source);
	double t = sim_world_call_time_s(w, source, k);
	return p ? t + p->delay_s : NAN;
}

gboolean sim_world_call_pos(const sim_world *w, size_t source, size_t k, double pos_m[3])
{
	if (source >= w->n_sources || k >= w->sources[source].n_calls)
		return FALSE;
	memcpy(pos_m, w->sources[source].cfg->pos_m, 3 * sizeof(double));
	return TRUE;
}

size_t sim_world_n_calls(const sim_world *w, size_t source)
{
	return source < w->n_sources ? w->sources[source].n_calls : 0;
}

double sim_world_call_time_s(const sim_world *w, size_t source, size_t k)
{
	if (source >= w->n_sources || k >= w->sources[source].n_calls)
		return NAN;
	return w->sources[source].calls_s[k];
}

/* Sum of the calls of source s sounding at emission time te. */
static double source_at(const source_state *s, double te)
{
	/* Last call starting at or before te, then back while still sounding. */
	size_t lo = 0, hi = s->n_calls;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->calls_s[mid] <= te)
			lo = mid + 1;
		else
			hi = mid;
	}
	double v = 0;
	for (size_t k = lo; k-- > 0 && te - s->calls_s[k] < s->length_s;)
		v += dsp_wave_eval(s->wave, te - s->calls_s[k]);
	return v;
}

static double pressure(const sim_world *w, const node_state *n, int mic, double t_s)
{
	double v = 0;
	const path *p = &n->paths[(size_t)mic * w->n_sources];
	for (size_t j = 0; j < w->n_sources; j++)
		v += p[j].gain * source_at(&w->sources[j], t_s - p[j].delay_s);
	return v;
}

double sim_world_pressure(const sim_world *w, int node, int mic, double t_s)
{
	const node_state *n = find(w, node);
	if (!n || mic < 0 || (size_t)mic >= n->cfg->n_mics)
		return 0;
	return pressure(w, n, mic, t_s);
}

double sim_world_noise(const sim_world *w, int node, int mic, int64_t frame)
{
	if (w->noise_rms == 0)
		return 0;
	return w->noise_rms * sim_rng_gauss(w->cfg->seed, SIM_RNG_NOISE, (uint64_t)node, (uint64_t)mic,
					    (uint64_t)frame);
}

static double rate_of(const node_state *n, double rate)
{
	return rate * (1.0 + n->cfg->audio_skew_ppm * 1e-6);
}

double sim_world_sample(const sim_world *w, int node, int mic, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	if (!n || mic < 0 || (size_t)mic >= n->cfg->n_mics)
		return 0;
	double t = (double)frame / rate_of(n, rate_hz);
	return pressure(w, n, mic, t) + sim_world_noise(w, node, mic, frame);
}

double sim_world_frame_time_s(const sim_world *w, int node, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	return n ? (double)frame / rate_of(n, rate_hz) : NAN;
}

int64_t sim_world_frame_time_ns(const sim_world *w, int node, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	if (!n)
		return INT64_MIN;
	/* long double: 64-bit mantissa keeps the ns exact for years of frames. */
	long double r = (long double)rate_hz * (1.0L + (long double)n->cfg->audio_skew_ppm * 1e-6L);
	return (int64_t)llroundl((long double)frame * 1e9L / r);
}

double sim_world_frame_at(const sim_world *w, int node, double rate_hz, double t_s)
{
	const node_state *n = find(w, node);
	return n ? t_s * rate_of(n, rate_hz) : NAN;
}

int64_t sim_world_first_frame_at(const sim_world *w, int node, double rate_hz, int64_t ns)
{
	const node_state *n = find(w, node);
	if (!n)
		return INT64_MIN;
	long double r = (long double)rate_hz * (1.0L + (long double)n->cfg->audio_skew_ppm * 1e-6L);
	int64_t f = (int64_t)ceill((long double)ns * r / 1e9L);
	/* Make it exact against the rounded frame times used everywhere else. */
	while (sim_world_frame_time_ns(w, node, rate_hz, f) < ns)
		f++;
	while (sim_world_frame_time_ns(w, node, rate_hz, f - 1) >= ns)
		f--;
	return f;
}

int64_t sim_world_node_cpu_at(const sim_world *w, int node, int64_t true_ns)
{
	const node_state *n = find(w, node);
	return n ? sync_simclock_apply(&n->cfg->cpu, true_ns) : INT64_MIN;
}

int64_t sim_world_true_at_node_cpu(const sim_world *w, int node, int64_t cpu_ns)
{
	const node_state *n = find(w, node);
	return n ? sync_simclock_invert(&n->cfg->cpu, cpu_ns) : INT64_MIN;
}

int64_t sim_world_irq_latency_ns(const sim_world *w, int node, int64_t frame_end, int64_t cap_ns)
{
	const node_state *n = find(w, node);
	if (!n)
		return 0;
	const sim_node_cfg *c = n->cfg;
	uint64_t seed = w->cfg->seed, a = (uint64_t)node, k = (uint64_t)frame_end;
	double lat = c->latency_mean_ns;
	switch (c->latency) {
	case SIM_LAT_EXPONENTIAL:
		lat = c->latency_mean_ns * sim_rng_exp(seed, SIM_RNG_LATENCY, a, 0, k);
		break;
	case SIM_LAT_NORMAL:
		lat = c->latency_mean_ns + c->latency_sd_ns * sim_rng_gauss(seed, SIM_RNG_LATENCY, a, 0, k);
		break;
	case SIM_LAT_UNIFORM: {
		double u = sim_rng_unit(sim_rng_hash(seed, SIM_RNG_LATENCY, a, 0, k));
		lat = c->latency_mean_ns + sqrt(3.0) * c->latency_sd_ns * (2 * u - 1);
		break;
	}
	case SIM_LAT_CONSTANT:
		break;
	}
	int64_t ns = (int64_t)llround(fmax(lat, 0));
	return cap_ns >= 0 && ns > cap_ns ? cap_ns : ns;
}
