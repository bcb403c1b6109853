/* scenario.c — scenario table, loading and semantic checks (see scenario.h). */
#include "sim/scenario.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <string.h>

static const char *const formats[] = {"S16_LE", "S32_LE", "FLOAT_LE", NULL};
static const char *const latencies[] = {"exponential", "normal", "uniform", "constant", NULL};
static const char *const waveforms[] = {"pulse_train", "chirp", "tone", "click", "file", NULL};
static const char *const sweeps[] = {"linear", "exponential", NULL};

#define NUM(n, d, lo, hi) {n, SIM_KEY_DOUBLE, d, lo, hi, NULL, 0}
#define INT(n, d, lo, hi) {n, SIM_KEY_INT, d, lo, hi, NULL, 0}
#define NOLIMIT 1, 0

static const sim_key_spec world_keys[] = {
	NUM("speed_of_sound", "343", 100, 2000),
	NUM("noise_dbfs", "-60", -200, 0),
	INT("seed", "1", 0, 9007199254740992.0),
	NUM("duration", "60", 0.001, 1e7),
	NUM("min_distance", "0.1", 0.001, 100),
	NUM("radio_range", "100", 0, 1e6),
	NUM("radio_loss", "0", 0, 1),
	INT("sample_rate", "48000", 8000, 192000),
	INT("period_frames", "480", 16, 65535),
	INT("buffer_periods", "4", 2, 1024),
	{"format", SIM_KEY_ENUM, "S16_LE", NOLIMIT, formats, 0},
	NUM("xrun_every", "0", 0, 1e7),
	{NULL},
};

static const sim_key_spec node_keys[] = {
	{"position", SIM_KEY_VEC3, NULL, -1e6, 1e6, NULL, 1},
	{"mics", SIM_KEY_VEC3_LIST, "0,0,0", -100, 100, NULL, 0},
	NUM("cpu_skew_ppm", "0", -1e4, 1e4),
	INT("cpu_offset_ns", "0", -4e18, 4e18),
	NUM("audio_skew_ppm", "0", -1e4, 1e4),
	{"irq_latency", SIM_KEY_ENUM, "exponential", NOLIMIT, latencies, 0},
	NUM("irq_latency_mean_us", "20", 0, 1e5),
	NUM("irq_latency_sd_us", "5", 0, 1e5),
	NUM("radio_jitter_ns", "1000", 0, 1e9),
	{NULL},
};

static const sim_key_spec source_keys[] = {
	{"position", SIM_KEY_VEC3, NULL, -1e6, 1e6, NULL, 1},
	NUM("level_dbfs", "-20", -200, 60),
	{"call_times", SIM_KEY_DOUBLE_LIST, NULL, 0, 1e7, NULL, 0},
	NUM("call_rate", NULL, 1e-6, 1e4),
	NUM("call_start", "0", 0, 1e7),
	NUM("call_end", NULL, 0, 1e7),
	{"waveform", SIM_KEY_ENUM, "pulse_train", NOLIMIT, waveforms, 0},
	NUM("carrier_hz", "2000", 1, 96000),
	NUM("pulse_ms", "4", 0.01, 1000),
	NUM("pulse_interval_ms", "25", 0.01, 10000),
	INT("pulses", "8", 1, 10000),
	NUM("freq_hz", "1000", 1, 96000),
	NUM("f0_hz", "1000", 1, 96000),
	NUM("f1_hz", "4000", 1, 96000),
	{"sweep", SIM_KEY_ENUM, "linear", NOLIMIT, sweeps, 0},
	NUM("length_ms", "200", 0.01, 1e6),
	NUM("taper_ms", "5", 0, 1e5),
	NUM("click_width_us", "50", 1, 1e5),
	{"file", SIM_KEY_STRING, NULL, NOLIMIT, NULL, 0},
	INT("file_channel", "0", 0, 1023),
	{NULL},
};

const sim_group_spec sim_scenario_table[] = {
	{"world", 0, world_keys},
	{"node", 1, node_keys},
	{"source", 1, source_keys},
	{NULL},
};

/* Which waveform-specific keys belong to which waveform (the others are
 * errors, so a typo'd waveform does not silently ignore its parameters). */
static const struct {
	const char *key;
	unsigned kinds; /* bit per dsp_wave_kind */
} wave_keys[] = {
	{"carrier_hz", 1u << DSP_WAVE_PULSE_TRAIN},
	{"pulse_ms", 1u << DSP_WAVE_PULSE_TRAIN},
	{"pulse_interval_ms", 1u << DSP_WAVE_PULSE_TRAIN},
	{"pulses", 1u << DSP_WAVE_PULSE_TRAIN},
	{"freq_hz", 1u << DSP_WAVE_TONE},
	{"f0_hz", 1u << DSP_WAVE_CHIRP},
	{"f1_hz", 1u << DSP_WAVE_CHIRP},
	{"sweep", 1u << DSP_WAVE_CHIRP},
	{"length_ms", 1u << DSP_WAVE_CHIRP | 1u << DSP_WAVE_TONE},
	{"taper_ms", 1u << DSP_WAVE_CHIRP | 1u << DSP_WAVE_TONE},
	{"click_width_us", 1u << DSP_WAVE_CLICK},
	{"file", 1u << DSP_WAVE_FILE},
	{"file_channel", 1u << DSP_WAVE_FILE},
};

struct sim_scenario {
	char *name;
	sim_world_cfg world;
	GArray *nodes;   /* sim_node_cfg */
	GArray *sources; /* sim_source_cfg */
	GPtrArray *strings; /* owned strings referenced by the configs */
};

static void load_world(sim_ini *ini, sim_world_cfg *w)
{
	const char *g = "world";
	w->speed_of_sound = sim_ini_double(ini, g, "speed_of_sound");
	w->noise_dbfs = sim_ini_double(ini, g, "noise_dbfs");
	w->seed = (uint64_t)sim_ini_int(ini, g, "seed");
	w->duration_s = sim_ini_double(ini, g, "duration");
	w->min_distance_m = sim_ini_double(ini, g, "min_distance");
	w->radio_range_m = sim_ini_double(ini, g, "radio_range");
	w->radio_loss = sim_ini_double(ini, g, "radio_loss");
	w->sample_rate = (unsigned)sim_ini_int(ini, g, "sample_rate");
	w->period_frames = (unsigned)sim_ini_int(ini, g, "period_frames");
	w->buffer_periods = (unsigned)sim_ini_int(ini, g, "buffer_periods");
	w->format = (sim_format)sim_ini_enum(ini, g, "format");
	w->xrun_every_s = sim_ini_double(ini, g, "xrun_every");
}

static void load_node(sim_ini *ini, const char *g, sim_node_cfg *n)
{
	size_t nm;
	n->id = (int)sim_ini_group_number(g);
	n->line = sim_ini_line(ini, g, NULL);
	if (n->id > SIM_MAX_NODE)
		sim_ini_fail(ini, g, NULL, "node number %d is above %d", n->id, SIM_MAX_NODE);
	sim_ini_vec3(ini, g, "position", n->pos);
	double *m = sim_ini_vec3_list(ini, g, "mics", &nm);
	if (nm > SIM_MAX_MICS) {
		sim_ini_fail(ini, g, "mics", "%zu microphones; at most %d", nm, SIM_MAX_MICS);
		nm = SIM_MAX_MICS;
	}
	n->n_mics = nm;
	memcpy(n->mics, m, nm * 3 * sizeof(double));
	g_free(m);
	n->cpu.skew_ppm = sim_ini_double(ini, g, "cpu_skew_ppm");
	n->cpu.offset_ns = sim_ini_int(ini, g, "cpu_offset_ns");
	n->audio_skew_ppm = sim_ini_double(ini, g, "audio_skew_ppm");
	n->latency = (sim_latency_dist)sim_ini_enum(ini, g, "irq_latency");
	n->latency_mean_ns = sim_ini_double(ini, g, "irq_latency_mean_us") * 1e3;
	n->latency_sd_ns = sim_ini_double(ini, g, "irq_latency_sd_us") * 1e3;
	n->radio_jitter_ns = sim_ini_double(ini, g, "radio_jitter_ns");
	if (n->latency == SIM_LAT_UNIFORM && n->latency_mean_ns < sqrt(3.0) * n->latency_sd_ns)
		sim_ini_fail(ini, g, sim_ini_has(ini, g, "irq_latency_sd_us") ? "irq_latency_sd_us" : "irq_latency",
			     "uniform latency needs mean >= sqrt(3) * sd (it spans mean ± sqrt(3) sd and cannot be negative)");
	if (sim_ini_has(ini, g, "irq_latency_sd_us") &&
	    (n->latency == SIM_LAT_EXPONENTIAL || n->latency == SIM_LAT_CONSTANT))
		sim_ini_fail(ini, g, "irq_latency_sd_us", "not used by irq_latency = %s",
			     latencies[n->latency]);
}

/* Check a file source's file now, so its error carries the key's line. */
static void check_file(sim_ini *ini, const char *g, sim_source_cfg *s)
{
	SF_INFO info;
	memset(&info, 0, sizeof info);
	SNDFILE *sf = sf_open(s->wave.file, SFM_READ, &info);
	if (!sf) {
		sim_ini_fail(ini, g, "file", "cannot open '%s': %s", s->wave.file, sf_strerror(NULL));
		return;
	}
	if (s->wave.file_channel >= info.channels)
		sim_ini_fail(ini, g, "file_channel", "'%s' has %d channel(s); channels count from 0",
			     s->wave.file, info.channels);
	sf_close(sf);
}

static void load_source(sim_scenario *sc, sim_ini *ini, const char *g, const char *base_dir,
			sim_source_cfg *s)
{
	const sim_world_cfg *w = &sc->world;
	s->id = (int)sim_ini_group_number(g);
	s->line = sim_ini_line(ini, g, NULL);
	sim_ini_vec3(ini, g, "position", s->pos);
	s->level_dbfs = sim_ini_double(ini, g, "level_dbfs");
	int has_times = sim_ini_has(ini, g, "call_times"), has_rate = sim_ini_has(ini, g, "call_rate");
	if (has_times && has_rate)
		sim_ini_fail(ini, g, "call_rate", "give either call_times or call_rate, not both");
	else if (!has_times && !has_rate)
		sim_ini_fail(ini, g, NULL, "give call_times (a list of s) or call_rate (calls per s)");
	if (has_times) {
		s->call_times_s = sim_ini_double_list(ini, g, "call_times", &s->n_call_times);
		g_ptr_array_add(sc->strings, s->call_times_s);
	} else if (has_rate) {
		s->call_rate_hz = sim_ini_double(ini, g, "call_rate");
	}
	s->call_start_s = sim_ini_double(ini, g, "call_start");
	s->call_end_s = sim_ini_has(ini, g, "call_end") ? sim_ini_double(ini, g, "call_end") : w->duration_s;
	if (has_times && (sim_ini_has(ini, g, "call_start") || sim_ini_has(ini, g, "call_end")))
		sim_ini_fail(ini, g, sim_ini_has(ini, g, "call_start") ? "call_start" : "call_end",
			     "only used with call_rate");
	if (has_rate && s->call_end_s <= s->call_start_s)
		sim_ini_fail(ini, g, "call_end", "must be after call_start (%g s)", s->call_start_s);

	dsp_wave_params *p = &s->wave;
	p->kind = (dsp_wave_kind)sim_ini_enum(ini, g, "waveform");
	for (size_t i = 0; i < G_N_ELEMENTS(wave_keys); i++)
		if (sim_ini_has(ini, g, wave_keys[i].key) && !(wave_keys[i].kinds & (1u << p->kind)))
			sim_ini_fail(ini, g, wave_keys[i].key, "not used by waveform = %s", waveforms[p->kind]);
	p->carrier_hz = sim_ini_double(ini, g, "carrier_hz");
	p->pulse_ms = sim_ini_double(ini, g, "pulse_ms");
	p->pulse_interval_ms = sim_ini_double(ini, g, "pulse_interval_ms");
	p->pulses = (int)sim_ini_int(ini, g, "pulses");
	p->freq_hz = sim_ini_double(ini, g, "freq_hz");
	p->f0_hz = sim_ini_double(ini, g, "f0_hz");
	p->f1_hz = sim_ini_double(ini, g, "f1_hz");
	p->sweep = (dsp_sweep)sim_ini_enum(ini, g, "sweep");
	p->length_ms = sim_ini_double(ini, g, "length_ms");
	p->taper_ms = sim_ini_double(ini, g, "taper_ms");
	p->click_width_us = sim_ini_double(ini, g, "click_width_us");
	p->file_channel = (int)sim_ini_int(ini, g, "file_channel");

	double nyq = w->sample_rate / 2.0;
	const char *fkey = p->kind == DSP_WAVE_PULSE_TRAIN ? "carrier_hz" : p->kind == DSP_WAVE_TONE ? "freq_hz" : NULL;
	if (fkey && sim_ini_double(ini, g, fkey) >= nyq)
		sim_ini_fail(ini, g, fkey, "%g Hz is not below the Nyquist frequency %g Hz of [world] sample_rate",
			     sim_ini_double(ini, g, fkey), nyq);
	if (p->kind == DSP_WAVE_CHIRP && (p->f0_hz >= nyq || p->f1_hz >= nyq))
		sim_ini_fail(ini, g, p->f0_hz >= nyq ? "f0_hz" : "f1_hz",
			     "not below the Nyquist frequency %g Hz of [world] sample_rate", nyq);
	if (p->kind == DSP_WAVE_PULSE_TRAIN && p->pulse_ms > p->pulse_interval_ms)
		sim_ini_fail(ini, g, "pulse_ms", "pulses (%g ms) overlap: longer than pulse_interval_ms (%g ms)",
			     p->pulse_ms, p->pulse_interval_ms);
	if (p->kind == DSP_WAVE_FILE) {
		char *f = sim_ini_has(ini, g, "file") ? sim_ini_string(ini, g, "file") : NULL;
		if (!f) {
			sim_ini_fail(ini, g, "waveform", "waveform = file needs the key file");
			return;
		}
		char *path = g_path_is_absolute(f) || !base_dir ? g_strdup(f) : g_build_filename(base_dir, f, NULL);
		g_free(f);
		g_ptr_array_add(sc->strings, path);
		p->file = path;
		check_file(ini, g, s);
	}
}

static sim_scenario *build(sim_ini *ini, const char *base_dir, GError **err)
{
	sim_scenario *sc = g_new0(sim_scenario, 1);
	sc->name = g_strdup(sim_ini_name(ini));
	sc->nodes = g_array_new(FALSE, TRUE, sizeof(sim_node_cfg));
	sc->sources = g_array_new(FALSE, TRUE, sizeof(sim_source_cfg));
	sc->strings = g_ptr_array_new_with_free_func(g_free);

	load_world(ini, &sc->world);
	for (const char *const *g = sim_ini_groups(ini, "node"); *g; g++) {
		sim_node_cfg n;
		memset(&n, 0, sizeof n);
		load_node(ini, *g, &n);
		if (sim_scenario_find_node(sc, n.id))
			sim_ini_fail(ini, *g, NULL, "node %d is already defined (leading zeros do not make a new number)", n.id);
		g_array_append_val(sc->nodes, n);
	}
	if (sc->nodes->len == 0)
		sim_ini_fail(ini, "world", NULL, "the scenario has no [node.N] group");
	for (const char *const *g = sim_ini_groups(ini, "source"); *g; g++) {
		sim_source_cfg s;
		memset(&s, 0, sizeof s);
		load_source(sc, ini, *g, base_dir, &s);
		for (guint i = 0; i < sc->sources->len; i++)
			if (g_array_index(sc->sources, sim_source_cfg, i).id == s.id)
				sim_ini_fail(ini, *g, NULL, "source %d is already defined", s.id);
		g_array_append_val(sc->sources, s);
	}
	if (sim_ini_check(ini, err) < 0) {
		sim_scenario_free(sc);
		return NULL;
	}
	return sc;
}

sim_scenario *sim_scenario_load_data(const char *name, const char *text, const char *base_dir,
				     GError **err)
{
	sim_ini *ini = sim_ini_load_data(name, text, sim_scenario_table, err);
	if (!ini)
		return NULL;
	sim_scenario *sc = build(ini, base_dir, err);
	sim_ini_free(ini);
	return sc;
}

sim_scenario *sim_scenario_load(const char *path, GError **err)
{
	sim_ini *ini = sim_ini_load_file(path, sim_scenario_table, err);
	if (!ini)
		return NULL;
	char *dir = g_path_get_dirname(path);
	sim_scenario *sc = build(ini, dir, err);
	g_free(dir);
	sim_ini_free(ini);
	return sc;
}

void sim_scenario_free(sim_scenario *sc)
{
	if (!sc)
		return;
	g_free(sc->name);
	g_array_free(sc->nodes, TRUE);
	g_array_free(sc->sources, TRUE);
	g_ptr_array_free(sc->strings, TRUE);
	g_free(sc);
}

const char *sim_scenario_name(const sim_scenario *sc)
{
	return sc->name;
}

const sim_world_cfg *sim_scenario_world(const sim_scenario *sc)
{
	return &sc->world;
}

size_t sim_scenario_n_nodes(const sim_scenario *sc)
{
	return sc->nodes->len;
}

const sim_node_cfg *sim_scenario_node(const sim_scenario *sc, size_t i)
{
	return i < sc->nodes->len ? &g_array_index(sc->nodes, sim_node_cfg, i) : NULL;
}

const sim_node_cfg *sim_scenario_find_node(const sim_scenario *sc, int id)
{
	for (guint i = 0; i < sc->nodes->len; i++)
		if (g_array_index(sc->nodes, sim_node_cfg, i).id == id)
			return &g_array_index(sc->nodes, sim_node_cfg, i);
	return NULL;
}

size_t sim_scenario_n_sources(const sim_scenario *sc)
{
	return sc->sources->len;
}

const sim_source_cfg *sim_scenario_source(const sim_scenario *sc, size_t i)
{
	return i < sc->sources->len ? &g_array_index(sc->sources, sim_source_cfg, i) : NULL;
}
