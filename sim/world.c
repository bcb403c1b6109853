/* world.c — the simulated world's truth functions (see world.h). */
#include "sim/world.h"

#include <complex.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sim/acoustics.h"
#include "sim/rng.h"

/* One propagation path from a source (or one of its images) to one mic:
 * spreading amp = level / max(r, min_distance), delay, and the filter of
 * everything frequency-dependent along it (reflections, air absorption). */
typedef struct {
	double amp;     /* static sources: level / max(r, min_distance) */
	double delay_s; /* static sources: s */
	int n_taps;     /* 1 (a plain gain, taps[0]) or odd <= SIM_FIR_TAPS, centred */
	double taps[SIM_FIR_TAPS];
} path;

typedef struct {
	const sim_node_cfg *cfg;
	sync_simclock cpu;       /* cfg->cpu with the epoch of sim_world_set_epoch() */
	size_t mic_base;         /* index of its first mic among all the world's mics */
	path *paths;             /* static sources: [(mic * n_sources + source) * n_images + image] */
	double *dmin_s, *dmax_s; /* [mic * n_sources + source]: delay range over the images */
} node_state;

typedef struct {
	const sim_source_cfg *cfg;
	dsp_wave **waves; /* per call; every entry the same wave without variation */
	int shared_wave;
	double *calls_s; /* s since epoch, ascending */
	double *len_s;   /* per call */
	size_t n_calls;
	double max_len_s;
	double level;     /* linear peak amplitude at 1 m */
	path *call_paths; /* moving: [(k * n_mics_all + mic) * n_images + image], amp and delay unused */
} source_state;

struct sim_world {
	const sim_scenario *sc;
	const sim_world_cfg *cfg;
	size_t n_nodes, n_sources, n_mics_all;
	node_state *nodes;
	source_state *sources;
	double noise_rms;   /* full scale */
	sim_background *bg; /* [world] background, or NULL */
	double fs_hz;       /* the world's rate: FIR taps are 1/fs apart */
	sim_image *images;
	size_t n_images;
	double span_s; /* half the longest filter, s */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Call times: the explicit list sorted, or a Poisson process on
 * [call_start, call_end) whose k-th gap is keyed (seed, source id, k).
 * The Poisson times are provisional until space_calls() knows each call's
 * length. */
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

/* Factor 1 + V g, g a standard normal keyed (seed, source, parameter, call),
 * truncated to [1 - 3V, 1 + 3V]. */
static double vary(const sim_world *w, const source_state *s, int param, size_t k)
{
	double g = sim_rng_gauss(w->cfg->seed, SIM_RNG_VARIATION, (uint64_t)s->cfg->id, (uint64_t)param, k);
	return 1.0 + s->cfg->variation * fmax(-3.0, fmin(3.0, g));
}

/* The parameters of call k: the source's, each drawn afresh with relative
 * sd `variation` (docs/scenario.md, "Call variation"). */
static dsp_wave_params call_params(const sim_world *w, const source_state *s, size_t k)
{
	dsp_wave_params p = s->cfg->wave;
	double top = 0.45 * w->fs_hz;
	p.carrier_hz = fmin(top, p.carrier_hz * vary(w, s, 0, k));
	p.freq_hz = fmin(top, p.freq_hz * vary(w, s, 0, k));
	p.f0_hz = fmin(top, p.f0_hz * vary(w, s, 0, k));
	p.f1_hz = fmin(top, p.f1_hz * vary(w, s, 5, k));
	p.pulse_interval_ms *= vary(w, s, 1, k);
	p.pulse_ms = fmin(p.pulse_ms * vary(w, s, 2, k), p.pulse_interval_ms);
	p.pulses = (int)fmax(1.0, lround(p.pulses * vary(w, s, 3, k)));
	p.length_ms *= vary(w, s, 4, k);
	p.click_width_us *= vary(w, s, 4, k);
	return p;
}

static gboolean make_waves(const sim_world *w, source_state *s, GError **err)
{
	s->waves = g_new0(dsp_wave *, s->n_calls ? s->n_calls : 1);
	s->len_s = g_new0(double, s->n_calls ? s->n_calls : 1);
	s->shared_wave = s->cfg->variation == 0 || s->cfg->wave.kind == DSP_WAVE_FILE;
	for (size_t k = 0; k < (s->shared_wave ? 1 : s->n_calls); k++) {
		dsp_wave_params p = s->shared_wave ? s->cfg->wave : call_params(w, s, k);
		GError *e = NULL;
		s->waves[k] = dsp_wave_new(&p, w->cfg->sample_rate_hz, &e);
		if (!s->waves[k]) {
			g_set_error(err, CFG_ERROR, EIO, "%s:%d: [source.%d] file: %s", sim_scenario_name(w->sc),
				    s->cfg->line, s->cfg->id, e->message);
			g_error_free(e);
			return FALSE;
		}
	}
	for (size_t k = 0; k < s->n_calls; k++) {
		if (s->shared_wave)
			s->waves[k] = s->waves[0];
		s->len_s[k] = dsp_wave_length_s(s->waves[k]);
		s->max_len_s = fmax(s->max_len_s, s->len_s[k]);
	}
	return TRUE;
}

/* A Poisson source never calls again before its call has ended and
 * call_gap_s has passed (an animal cannot overlap itself): the k-th gap is
 * max(e_k / rate, len_{k-1} + call_gap_s), e_k the same keyed exponential
 * as make_calls' (so a schedule without such conflicts is unchanged).
 * Calls pushed past call_end_s are dropped with their waves. */
static void space_calls(source_state *s, const sim_world *w)
{
	const sim_source_cfg *c = s->cfg;
	if (c->call_times_s)
		return;
	double t = c->call_start_s;
	size_t n = 0;
	for (size_t k = 0; k < s->n_calls; k++) {
		double e = sim_rng_exp(w->cfg->seed, SIM_RNG_CALLS, (uint64_t)c->id, 0, k) / c->call_rate_hz;
		if (k)
			e = fmax(e, s->len_s[k - 1] + c->call_gap_s);
		t += e;
		if (t >= c->call_end_s)
			break;
		s->calls_s[n++] = t;
	}
	if (!s->shared_wave)
		for (size_t k = n; k < s->n_calls; k++)
			dsp_wave_free(s->waves[k]);
	s->n_calls = n;
	s->max_len_s = 0;
	for (size_t k = 0; k < n; k++)
		s->max_len_s = fmax(s->max_len_s, s->len_s[k]);
}

/* Position of source s at emission time t_s (m): its place, or linear
 * between the waypoints of its path (held before the first and after the
 * last). */
static void source_pos(const source_state *s, double t_s, double out[3])
{
	const sim_source_cfg *c = s->cfg;
	if (!c->path) {
		memcpy(out, c->pos_m, 3 * sizeof(double));
		return;
	}
	const double *wp = c->path;
	size_t n = c->n_path, i = 0;
	if (n == 1 || t_s <= wp[3]) {
		memcpy(out, wp, 3 * sizeof(double));
		return;
	}
	if (t_s >= wp[4 * (n - 1) + 3]) {
		memcpy(out, &wp[4 * (n - 1)], 3 * sizeof(double));
		return;
	}
	while (i + 2 < n && wp[4 * (i + 1) + 3] <= t_s)
		i++;
	const double *a = &wp[4 * i], *b = &wp[4 * (i + 1)];
	double f = (t_s - a[3]) / (b[3] - a[3]);
	for (int k = 0; k < 3; k++)
		out[k] = a[k] + f * (b[k] - a[k]);
}

/* What a path does to each frequency besides delay and spreading. */
typedef struct {
	const sim_world_cfg *cfg;
	double r_m;       /* path length */
	double cos_theta; /* ground image: incidence from the normal */
	int ground_image; /* 1: reflected by the ground plane */
	double beta;      /* room walls: product of pressure reflection factors */
} path_spec;

static double complex path_response(double f_hz, const void *data)
{
	const path_spec *p = data;
	const sim_world_cfg *c = p->cfg;
	double complex H = p->beta;
	if (p->ground_image) {
		switch (c->ground) {
		case SIM_GROUND_HARD:
			break;
		case SIM_GROUND_FIXED:
			H *= c->ground_reflection;
			break;
		case SIM_GROUND_GRASS:
		case SIM_GROUND_SNOW:
			H *= sim_reflection(sim_ground_impedance(f_hz, c->ground == SIM_GROUND_GRASS ? SIM_SIGMA_GRASS
												     : SIM_SIGMA_SNOW),
					    p->cos_theta);
			break;
		case SIM_GROUND_NONE:
			break;
		}
	}
	if (c->air_absorption)
		H *= pow(10.0, -sim_air_absorption_db_m(f_hz, c->temperature_c, c->humidity_pct) * p->r_m / 20.0);
	return H;
}

/* Mic position (m) of mic m of node n. */
static void mic_pos(const sim_node_cfg *n, size_t m, double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = n->pos_m[k] + n->mics_m[m][k];
}

/* Straight path from point a to point b: length, and the travel time with
 * the world's wind. */
static double travel(const sim_world *w, const double a[3], const double b[3], double *r_out)
{
	double u[3], r = 0;
	for (int k = 0; k < 3; k++) {
		u[k] = b[k] - a[k];
		r += u[k] * u[k];
	}
	r = sqrt(r);
	for (int k = 0; r > 0 && k < 3; k++)
		u[k] /= r;
	if (r_out)
		*r_out = r;
	return sim_travel_time_s(r, u, w->cfg->speed_of_sound_m_s, w->cfg->wind_m_s);
}

/* Fill the filter of the path from source position src by image im to mic
 * position at (the taps, and amp/delay for a source that stays). */
static void design_path(const sim_world *w, const source_state *s, size_t im, const double src[3],
			const double at[3], path *p)
{
	double img[3], r;
	sim_image_position(&w->images[im], w->cfg->room_m, src, img);
	p->delay_s = travel(w, img, at, &r);
	p->amp = s->level / fmax(r, w->cfg->min_distance_m);
	path_spec ps = {.cfg = w->cfg, .r_m = r, .beta = w->images[im].beta};
	ps.ground_image = !w->cfg->room && w->images[im].p[2];
	ps.cos_theta = r > 0 ? fabs(img[2] - at[2]) / r : 1.0;
	double complex d0 = path_response(0.0, &ps);
	double flat = 0;
	for (int m = 1; m <= 64; m++)
		flat = fmax(flat, cabs(path_response(m * w->fs_hz / 128, &ps) - d0));
	if (flat <= 1e-4 * fmax(cabs(d0), 1e-300)) {
		p->n_taps = 1;
		p->taps[0] = creal(d0);
		return;
	}
	/* The shortest filter that fits within 2 % from 500 Hz up (air
	 * absorption: 31 taps; a porous ground near grazing: up to 127). */
	for (p->n_taps = 31;; p->n_taps = 2 * p->n_taps + 1)
		if (sim_fir_design(path_response, &ps, w->fs_hz, p->n_taps, 500.0, p->taps) <= 0.02 ||
		    p->n_taps == SIM_FIR_TAPS)
			break;
}

/* The images the world's boundaries make: the source alone (free field),
 * it and its mirror in the ground z = 0, or the room's up to max_order. */
static void make_images(sim_world *w)
{
	const sim_world_cfg *c = w->cfg;
	if (c->room) {
		w->n_images = sim_room_images(c->room_max_order, c->room_absorption, NULL, 0);
		w->images = g_new0(sim_image, w->n_images);
		sim_room_images(c->room_max_order, c->room_absorption, w->images, w->n_images);
		return;
	}
	w->n_images = c->ground == SIM_GROUND_NONE ? 1 : 2;
	w->images = g_new0(sim_image, w->n_images);
	w->images[0].beta = 1.0;
	if (w->n_images == 2) {
		w->images[1].beta = 1.0;
		w->images[1].p[2] = 1;
		w->images[1].order = 1;
		w->images[1].hits[4] = 1;
	}
}

static void make_paths(sim_world *w)
{
	for (size_t i = 0; i < w->n_nodes; i++) {
		node_state *n = &w->nodes[i];
		size_t nm = n->cfg->n_mics, ns = w->n_sources;
		n->paths = g_new0(path, nm * ns * w->n_images + 1);
		n->dmin_s = g_new0(double, nm *ns + 1);
		n->dmax_s = g_new0(double, nm *ns + 1);
		for (size_t m = 0; m < nm; m++) {
			double at[3];
			mic_pos(n->cfg, m, at);
			for (size_t j = 0; j < ns; j++) {
				const source_state *s = &w->sources[j];
				n->dmin_s[m * ns + j] = INFINITY;
				n->dmax_s[m * ns + j] = -INFINITY;
				for (size_t im = 0; im < w->n_images; im++) {
					path *p = &n->paths[(m * ns + j) * w->n_images + im];
					design_path(w, s, im, s->cfg->pos_m, at, p);
					n->dmin_s[m * ns + j] = fmin(n->dmin_s[m * ns + j], p->delay_s);
					n->dmax_s[m * ns + j] = fmax(n->dmax_s[m * ns + j], p->delay_s);
				}
			}
		}
	}
	/* A moving source's filters are designed per call, where it was when
	 * the call began. */
	for (size_t j = 0; j < w->n_sources; j++) {
		source_state *s = &w->sources[j];
		if (!s->cfg->path)
			continue;
		s->call_paths = g_new0(path, s->n_calls * w->n_mics_all * w->n_images + 1);
		for (size_t k = 0; k < s->n_calls; k++) {
			double src[3];
			source_pos(s, s->calls_s[k], src);
			for (size_t i = 0; i < w->n_nodes; i++)
				for (size_t m = 0; m < w->nodes[i].cfg->n_mics; m++) {
					double at[3];
					mic_pos(w->nodes[i].cfg, m, at);
					size_t g = w->nodes[i].mic_base + m;
					for (size_t im = 0; im < w->n_images; im++)
						design_path(w, s, im, src, at,
							    &s->call_paths[(k * w->n_mics_all + g) * w->n_images + im]);
				}
		}
	}
}

sim_world *sim_world_new(const sim_scenario *sc, GError **err)
{
	sim_world *w = g_new0(sim_world, 1);
	w->sc = sc;
	w->cfg = sim_scenario_world(sc);
	w->fs_hz = w->cfg->sample_rate_hz;
	w->span_s = (SIM_FIR_TAPS / 2) / w->fs_hz;
	w->n_nodes = sim_scenario_n_nodes(sc);
	w->n_sources = sim_scenario_n_sources(sc);
	w->noise_rms = pow(10.0, w->cfg->noise_dbfs / 20.0);
	w->sources = g_new0(source_state, w->n_sources);
	for (size_t i = 0; i < w->n_sources; i++) {
		source_state *s = &w->sources[i];
		s->cfg = sim_scenario_source(sc, i);
		s->level = pow(10.0, s->cfg->level_dbfs / 20.0);
		make_calls(w, s);
		if (!make_waves(w, s, err)) {
			sim_world_free(w);
			return NULL;
		}
		space_calls(s, w);
	}
	w->nodes = g_new0(node_state, w->n_nodes);
	for (size_t i = 0; i < w->n_nodes; i++) {
		w->nodes[i].cfg = sim_scenario_node(sc, i);
		w->nodes[i].cpu = w->nodes[i].cfg->cpu;
		w->nodes[i].mic_base = w->n_mics_all;
		w->n_mics_all += w->nodes[i].cfg->n_mics;
	}
	make_images(w);
	make_paths(w);
	if (w->cfg->background != SIM_BG_NONE) {
		const char *why = NULL;
		w->bg = sim_background_new(w->cfg->background, w->cfg->background_dbfs, w->cfg->seed, w->fs_hz, &why);
		if (!w->bg) {
			g_set_error(err, CFG_ERROR, EINVAL, "%s: [world] background: %s", sim_scenario_name(sc), why);
			sim_world_free(w);
			return NULL;
		}
	}
	return w;
}

void sim_world_free(sim_world *w)
{
	if (!w)
		return;
	for (size_t i = 0; w->sources && i < w->n_sources; i++) {
		source_state *s = &w->sources[i];
		for (size_t k = 0; s->waves && k < (s->shared_wave ? 1 : s->n_calls); k++)
			dsp_wave_free(s->waves[k]);
		g_free(s->waves);
		g_free(s->len_s);
		g_free(s->calls_s);
		g_free(s->call_paths);
	}
	for (size_t i = 0; w->nodes && i < w->n_nodes; i++) {
		g_free(w->nodes[i].paths);
		g_free(w->nodes[i].dmin_s);
		g_free(w->nodes[i].dmax_s);
	}
	g_free(w->images);
	sim_background_free(w->bg);
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

/* The direct path (image 0) of source i to mic m; for a moving source, from
 * its first waypoint. */
static const path *get_path(const sim_world *w, int node, int mic, size_t source)
{
	const node_state *n = find(w, node);
	if (!n || mic < 0 || (size_t)mic >= n->cfg->n_mics || source >= w->n_sources)
		return NULL;
	return &n->paths[((size_t)mic * w->n_sources + source) * w->n_images];
}

double sim_world_delay_s(const sim_world *w, int node, int mic, size_t source)
{
	const path *p = get_path(w, node, mic, source);
	return p ? p->delay_s : NAN;
}

double sim_world_gain(const sim_world *w, int node, int mic, size_t source)
{
	const path *p = get_path(w, node, mic, source);
	return p ? p->amp : NAN;
}

double sim_world_arrival_s(const sim_world *w, int node, int mic, size_t source, size_t k)
{
	const path *p = get_path(w, node, mic, source);
	double t = sim_world_call_time_s(w, source, k);
	if (!p || !isfinite(t))
		return NAN;
	const source_state *s = &w->sources[source];
	if (!s->cfg->path)
		return t + p->delay_s;
	double src[3], at[3];
	source_pos(s, t, src);
	mic_pos(find(w, node)->cfg, (size_t)mic, at);
	return t + travel(w, src, at, NULL);
}

gboolean sim_world_call_pos(const sim_world *w, size_t source, size_t k, double pos_m[3])
{
	if (source >= w->n_sources || k >= w->sources[source].n_calls)
		return FALSE;
	source_pos(&w->sources[source], w->sources[source].calls_s[k], pos_m);
	return TRUE;
}

size_t sim_world_n_images(const sim_world *w)
{
	return w->n_images;
}

double sim_world_path_delay_s(const sim_world *w, int node, int mic, size_t source, size_t image)
{
	const path *p = get_path(w, node, mic, source);
	return p && image < w->n_images ? p[image].delay_s : NAN;
}

double complex sim_world_path_response(const sim_world *w, int node, int mic, size_t source, size_t image,
				       double f_hz)
{
	const path *p = get_path(w, node, mic, source);
	if (!p || image >= w->n_images)
		return NAN;
	p += image;
	return p->amp * (p->n_taps == 1 ? p->taps[0] : sim_fir_response(p->taps, p->n_taps, w->fs_hz, f_hz));
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

double sim_world_call_length_s(const sim_world *w, size_t source, size_t k)
{
	if (source >= w->n_sources || k >= w->sources[source].n_calls)
		return NAN;
	return w->sources[source].len_s[k];
}

gboolean sim_world_call_params(const sim_world *w, size_t source, size_t k, dsp_wave_params *out)
{
	if (source >= w->n_sources || k >= w->sources[source].n_calls)
		return FALSE;
	const source_state *s = &w->sources[source];
	*out = s->shared_wave ? s->cfg->wave : call_params(w, s, k);
	return TRUE;
}

/* Calls of s that may sound at an emission time in [lo, hi]: indices
 * [*ka, return). */
static size_t calls_between(const source_state *s, double lo, double hi, size_t *ka)
{
	size_t a = 0, b = s->n_calls;
	while (a < b) { /* first call starting after hi */
		size_t mid = (a + b) / 2;
		if (s->calls_s[mid] <= hi)
			a = mid + 1;
		else
			b = mid;
	}
	size_t k = a;
	while (k > 0 && s->calls_s[k - 1] + s->max_len_s > lo)
		k--;
	*ka = k;
	return a;
}

/* Call k of s heard through path filter p at emission time te. */
static double through(const sim_world *w, const source_state *s, size_t k, double te, const path *p)
{
	double tau0 = te - s->calls_s[k];
	if (p->n_taps == 1)
		return p->taps[0] * dsp_wave_eval(s->waves[k], tau0);
	const int c = p->n_taps / 2;
	double v = 0;
	for (int i = 0; i < p->n_taps; i++) {
		double tau = tau0 - (i - c) / w->fs_hz;
		if (tau >= 0 && tau < s->len_s[k])
			v += p->taps[i] * dsp_wave_eval(s->waves[k], tau);
	}
	return v;
}

/* Emission time along image im of a moving source for sound reaching `at`
 * at t (the retarded time: te + travel(pos(te)) = t, by fixed-point
 * iteration, which contracts by the source's Mach number); *r the path
 * length then. */
static double emission_time(const sim_world *w, const source_state *s, size_t im, const double at[3], double t,
			    double *r)
{
	double te = t, src[3], img[3];
	for (int it = 0; it < 12; it++) {
		source_pos(s, te, src);
		sim_image_position(&w->images[im], w->cfg->room_m, src, img);
		double nt = t - travel(w, img, at, r);
		gboolean done = fabs(nt - te) < 1e-13;
		te = nt;
		if (done)
			break;
	}
	return te;
}

static double static_source(const sim_world *w, const node_state *n, int mic, size_t j, double t_s)
{
	const source_state *s = &w->sources[j];
	size_t q = (size_t)mic * w->n_sources + j, ka;
	size_t kb = calls_between(s, t_s - n->dmax_s[q] - w->span_s, t_s - n->dmin_s[q] + w->span_s, &ka);
	if (ka >= kb)
		return 0;
	double v = 0;
	const path *p = &n->paths[q * w->n_images];
	for (size_t im = 0; im < w->n_images; im++) {
		double te = t_s - p[im].delay_s, acc = 0;
		for (size_t k = ka; k < kb; k++)
			acc += through(w, s, k, te, &p[im]);
		v += p[im].amp * acc;
	}
	return v;
}

static double moving_source(const sim_world *w, const node_state *n, int mic, size_t j, double t_s)
{
	const source_state *s = &w->sources[j];
	size_t g = n->mic_base + (size_t)mic;
	double at[3], v = 0;
	mic_pos(n->cfg, (size_t)mic, at);
	for (size_t im = 0; im < w->n_images; im++) {
		double r, te = emission_time(w, s, im, at, t_s, &r), acc = 0;
		size_t ka, kb = calls_between(s, te - w->span_s, te + w->span_s, &ka);
		for (size_t k = ka; k < kb; k++)
			acc += through(w, s, k, te, &s->call_paths[(k * w->n_mics_all + g) * w->n_images + im]);
		v += s->level / fmax(r, w->cfg->min_distance_m) * acc;
	}
	return v;
}

static double pressure(const sim_world *w, const node_state *n, int mic, double t_s)
{
	double v = 0;
	for (size_t j = 0; j < w->n_sources; j++)
		if (w->sources[j].n_calls)
			v += w->sources[j].cfg->path ? moving_source(w, n, mic, j, t_s) : static_source(w, n, mic, j, t_s);
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

/* The card's phase in nominal seconds at true time t (s since the epoch). */
static double card_phase_s(const node_state *n, double t_s)
{
	return t_s * (1.0 + n->cfg->audio_skew_ppm * 1e-6) + sync_wander_phase_ns(&n->cfg->audio_wander, t_s) * 1e-9;
}

/* True time (ns since the epoch) of the card's phase `nominal_ns` (the
 * frame number times the nominal period): exact for a constant rate, then
 * corrected for the wander (its rate is far below 1: each step gains digits). */
static long double card_time_ns(const node_state *n, long double nominal_ns)
{
	long double r = 1.0L + (long double)n->cfg->audio_skew_ppm * 1e-6L;
	long double t = nominal_ns / r;
	if (!sync_wander_active(&n->cfg->audio_wander))
		return t;
	for (int i = 0; i < 4; i++)
		t = (nominal_ns - (long double)sync_wander_phase_ns(&n->cfg->audio_wander, (double)(t * 1e-9L))) / r;
	return t;
}

double sim_world_sample(const sim_world *w, int node, int mic, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	if (!n || mic < 0 || (size_t)mic >= n->cfg->n_mics)
		return 0;
	double t = (double)(card_time_ns(n, (long double)frame * 1e9L / rate_hz) * 1e-9L);
	double v = pressure(w, n, mic, t) + sim_world_noise(w, node, mic, frame);
	/* The background is a sound field: keyed by the world-rate sample at
	 * the frame's true time, whatever rate the card runs at. */
	if (w->bg)
		v += sim_background_sample(w->bg, node, mic, (int64_t)floor(t * w->fs_hz));
	return v;
}

double sim_world_frame_time_s(const sim_world *w, int node, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	return n ? (double)(card_time_ns(n, (long double)frame * 1e9L / rate_hz) * 1e-9L) : NAN;
}

int64_t sim_world_frame_time_ns(const sim_world *w, int node, double rate_hz, int64_t frame)
{
	const node_state *n = find(w, node);
	if (!n)
		return INT64_MIN;
	/* long double: 64-bit mantissa keeps the ns exact for years of frames. */
	return (int64_t)llroundl(card_time_ns(n, (long double)frame * 1e9L / (long double)rate_hz));
}

double sim_world_frame_at(const sim_world *w, int node, double rate_hz, double t_s)
{
	const node_state *n = find(w, node);
	return n ? card_phase_s(n, t_s) * rate_hz : NAN;
}

int64_t sim_world_first_frame_at(const sim_world *w, int node, double rate_hz, int64_t ns)
{
	const node_state *n = find(w, node);
	if (!n)
		return INT64_MIN;
	long double r = (long double)rate_hz * (1.0L + (long double)n->cfg->audio_skew_ppm * 1e-6L);
	long double wander = (long double)sync_wander_phase_ns(&n->cfg->audio_wander, (double)ns * 1e-9) * rate_hz / 1e9L;
	int64_t f = (int64_t)ceill((long double)ns * r / 1e9L + wander);
	/* Make it exact against the rounded frame times used everywhere else. */
	while (sim_world_frame_time_ns(w, node, rate_hz, f) < ns)
		f++;
	while (sim_world_frame_time_ns(w, node, rate_hz, f - 1) >= ns)
		f--;
	return f;
}

void sim_world_set_epoch(sim_world *w, int64_t epoch_ns)
{
	for (size_t i = 0; i < w->n_nodes; i++)
		w->nodes[i].cpu.epoch_ns = epoch_ns;
}

int64_t sim_world_node_cpu_at(const sim_world *w, int node, int64_t true_ns)
{
	const node_state *n = find(w, node);
	return n ? sync_simclock_apply(&n->cpu, true_ns) : INT64_MIN;
}

int64_t sim_world_true_at_node_cpu(const sim_world *w, int node, int64_t cpu_ns)
{
	const node_state *n = find(w, node);
	return n ? sync_simclock_invert(&n->cpu, cpu_ns) : INT64_MIN;
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
	case SIM_LAT_MIXTURE: {
		/* One draw picks the component, an independent one its delay. */
		double u = sim_rng_unit(sim_rng_hash(seed, SIM_RNG_LATENCY, a, 1, k));
		double mean = u < c->latency_mix_fraction ? c->latency_mix_mean_ns : c->latency_mean_ns;
		lat = mean * sim_rng_exp(seed, SIM_RNG_LATENCY, a, 0, k);
		break;
	}
	}
	int64_t ns = (int64_t)llround(c->latency_floor_ns + fmax(lat, 0));
	return cap_ns >= 0 && ns > cap_ns ? cap_ns : ns;
}
