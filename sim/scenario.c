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

#define NUM(n, d, lo, hi) \
	{ \
		.name = n, .type = CFG_DOUBLE, .def = d, .min = lo, .max = hi \
	}
#define INT(n, d, lo, hi) \
	{ \
		.name = n, .type = CFG_INT, .def = d, .min = lo, .max = hi \
	}
#define ENUM(n, d, c) \
	{ \
		.name = n, .type = CFG_ENUM, .def = d, .min = 1, .max = 0, .choices = c \
	}

/* Keys renamed to carry their unit keep the old name as a deprecated alias. */
static const cfg_key world_keys[] = {
	{.name = "speed_of_sound_m_s", .type = CFG_DOUBLE, .def = "343", .min = 100, .max = 2000, .alias = "speed_of_sound"},
	NUM("noise_dbfs", "-60", -200, 0),
	INT("seed", "1", 0, 9007199254740992.0),
	{.name = "duration_s", .type = CFG_DOUBLE, .def = "60", .min = 0.001, .max = 1e7, .alias = "duration"},
	{.name = "min_distance_m", .type = CFG_DOUBLE, .def = "0.1", .min = 0.001, .max = 100, .alias = "min_distance"},
	{.name = "radio_range_m", .type = CFG_DOUBLE, .def = "100", .min = 0, .max = 1e6, .alias = "radio_range"},
	NUM("radio_loss", "0", 0, 1),
	{.name = "sample_rate_hz", .type = CFG_INT, .def = "48000", .min = 8000, .max = 192000, .alias = "sample_rate"},
	INT("period_frames", "480", 16, 65535),
	INT("buffer_periods", "4", 2, 1024),
	ENUM("format", "S16_LE", formats),
	{.name = "xrun_every_s", .type = CFG_DOUBLE, .def = "0", .min = 0, .max = 1e7, .alias = "xrun_every"},
	{NULL},
};

static const cfg_key node_keys[] = {
	{.name = "position_m", .type = CFG_VEC3, .min = -1e6, .max = 1e6, .flags = CFG_REQUIRED, .alias = "position"},
	{.name = "mics_m", .type = CFG_VEC3_LIST, .def = "0,0,0", .min = -100, .max = 100, .alias = "mics"},
	NUM("cpu_skew_ppm", "0", -1e4, 1e4),
	INT("cpu_offset_ns", "0", -4e18, 4e18),
	NUM("audio_skew_ppm", "0", -1e4, 1e4),
	ENUM("irq_latency", "exponential", latencies),
	NUM("irq_latency_mean_us", "20", 0, 1e5),
	NUM("irq_latency_sd_us", "5", 0, 1e5),
	NUM("radio_jitter_ns", "1000", 0, 1e9),
	{NULL},
};

static const cfg_key source_keys[] = {
	{.name = "position_m", .type = CFG_VEC3, .min = -1e6, .max = 1e6, .flags = CFG_REQUIRED, .alias = "position"},
	NUM("level_dbfs", "-20", -200, 60),
	{.name = "call_times_s", .type = CFG_DOUBLE_LIST, .min = 0, .max = 1e7, .alias = "call_times"},
	{.name = "call_rate_hz", .type = CFG_DOUBLE, .min = 1e-6, .max = 1e4, .alias = "call_rate"},
	{.name = "call_start_s", .type = CFG_DOUBLE, .def = "0", .min = 0, .max = 1e7, .alias = "call_start"},
	{.name = "call_end_s", .type = CFG_DOUBLE, .min = 0, .max = 1e7, .alias = "call_end"},
	ENUM("waveform", "pulse_train", waveforms),
	NUM("carrier_hz", "2000", 1, 96000),
	NUM("pulse_ms", "4", 0.01, 1000),
	NUM("pulse_interval_ms", "25", 0.01, 10000),
	INT("pulses", "8", 1, 10000),
	NUM("freq_hz", "1000", 1, 96000),
	NUM("f0_hz", "1000", 1, 96000),
	NUM("f1_hz", "4000", 1, 96000),
	ENUM("sweep", "linear", sweeps),
	NUM("length_ms", "200", 0.01, 1e6),
	NUM("taper_ms", "5", 0, 1e5),
	NUM("click_width_us", "50", 1, 1e5),
	{.name = "file", .type = CFG_STRING, .min = 1, .max = 0, .flags = CFG_NONEMPTY},
	INT("file_channel", "0", 0, 1023),
	{NULL},
};

const cfg_group sim_scenario_table[] = {
	{.name = "world", .keys = world_keys, .unique = 1},
	{.name = "node", .numbered = 1, .keys = node_keys, .unique = 1},
	{.name = "source", .numbered = 1, .keys = source_keys, .unique = 1},
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
	GArray *nodes;      /* sim_node_cfg */
	GArray *sources;    /* sim_source_cfg */
	GPtrArray *strings; /* owned strings referenced by the configs */
};

static void load_world(cfg_file *ini, sim_world_cfg *w)
{
	const char *g = "world";
	w->speed_of_sound_m_s = cfg_file_double(ini, g, "speed_of_sound_m_s");
	w->noise_dbfs = cfg_file_double(ini, g, "noise_dbfs");
	w->seed = (uint64_t)cfg_file_int(ini, g, "seed");
	w->duration_s = cfg_file_double(ini, g, "duration_s");
	w->min_distance_m = cfg_file_double(ini, g, "min_distance_m");
	w->radio_range_m = cfg_file_double(ini, g, "radio_range_m");
	w->radio_loss = cfg_file_double(ini, g, "radio_loss");
	w->sample_rate_hz = (unsigned)cfg_file_int(ini, g, "sample_rate_hz");
	w->period_frames = (unsigned)cfg_file_int(ini, g, "period_frames");
	w->buffer_periods = (unsigned)cfg_file_int(ini, g, "buffer_periods");
	w->format = (sim_format)cfg_file_enum(ini, g, "format");
	w->xrun_every_s = cfg_file_double(ini, g, "xrun_every_s");
}

static void load_node(cfg_file *ini, const char *g, sim_node_cfg *n)
{
	size_t nm;
	n->id = (int)cfg_group_number(g);
	n->line = cfg_file_line(ini, g, NULL);
	if (n->id > SIM_MAX_NODE)
		cfg_file_fail(ini, g, NULL, "node number %d is above %d", n->id, SIM_MAX_NODE);
	cfg_file_vec3(ini, g, "position_m", n->pos_m);
	double *m = cfg_file_vec3_list(ini, g, "mics_m", &nm);
	if (nm > SIM_MAX_MICS) {
		cfg_file_fail(ini, g, "mics_m", "%zu microphones; at most %d", nm, SIM_MAX_MICS);
		nm = SIM_MAX_MICS;
	}
	n->n_mics = nm;
	memcpy(n->mics_m, m, nm * 3 * sizeof(double));
	g_free(m);
	n->cpu.skew_ppm = cfg_file_double(ini, g, "cpu_skew_ppm");
	n->cpu.offset_ns = cfg_file_int(ini, g, "cpu_offset_ns");
	n->audio_skew_ppm = cfg_file_double(ini, g, "audio_skew_ppm");
	n->latency = (sim_latency_dist)cfg_file_enum(ini, g, "irq_latency");
	n->latency_mean_ns = cfg_file_double(ini, g, "irq_latency_mean_us") * 1e3;
	n->latency_sd_ns = cfg_file_double(ini, g, "irq_latency_sd_us") * 1e3;
	n->radio_jitter_ns = cfg_file_double(ini, g, "radio_jitter_ns");
	if (n->latency == SIM_LAT_UNIFORM && n->latency_mean_ns < sqrt(3.0) * n->latency_sd_ns)
		cfg_file_fail(ini, g, cfg_file_has(ini, g, "irq_latency_sd_us") ? "irq_latency_sd_us" : "irq_latency",
			      "uniform latency needs mean >= sqrt(3) * sd (it spans mean ± sqrt(3) sd and cannot be negative)");
	if (cfg_file_has(ini, g, "irq_latency_sd_us") &&
	    (n->latency == SIM_LAT_EXPONENTIAL || n->latency == SIM_LAT_CONSTANT))
		cfg_file_fail(ini, g, "irq_latency_sd_us", "not used by irq_latency = %s",
			      latencies[n->latency]);
}

/* Check a file source's file now, so its error carries the key's line. */
static void check_file(cfg_file *ini, const char *g, sim_source_cfg *s)
{
	SF_INFO info;
	memset(&info, 0, sizeof info);
	SNDFILE *sf = sf_open(s->wave.file, SFM_READ, &info);
	if (!sf) {
		cfg_file_fail(ini, g, "file", "cannot open '%s': %s", s->wave.file, sf_strerror(NULL));
		return;
	}
	if (s->wave.file_channel >= info.channels)
		cfg_file_fail(ini, g, "file_channel", "'%s' has %d channel(s); channels count from 0",
			      s->wave.file, info.channels);
	sf_close(sf);
}

static void load_source(sim_scenario *sc, cfg_file *ini, const char *g, const char *base_dir,
			sim_source_cfg *s)
{
	const sim_world_cfg *w = &sc->world;
	s->id = (int)cfg_group_number(g);
	s->line = cfg_file_line(ini, g, NULL);
	cfg_file_vec3(ini, g, "position_m", s->pos_m);
	s->level_dbfs = cfg_file_double(ini, g, "level_dbfs");
	int has_times = cfg_file_has(ini, g, "call_times_s"), has_rate = cfg_file_has(ini, g, "call_rate_hz");
	if (has_times && has_rate)
		cfg_file_fail(ini, g, "call_rate_hz", "give either call_times_s or call_rate_hz, not both");
	else if (!has_times && !has_rate)
		cfg_file_fail(ini, g, NULL, "give call_times_s (a list of s) or call_rate_hz (calls per s)");
	if (has_times) {
		s->call_times_s = cfg_file_double_list(ini, g, "call_times_s", &s->n_call_times);
		g_ptr_array_add(sc->strings, s->call_times_s);
	} else if (has_rate) {
		s->call_rate_hz = cfg_file_double(ini, g, "call_rate_hz");
	}
	s->call_start_s = cfg_file_double(ini, g, "call_start_s");
	s->call_end_s = cfg_file_has(ini, g, "call_end_s") ? cfg_file_double(ini, g, "call_end_s") : w->duration_s;
	if (has_times && (cfg_file_has(ini, g, "call_start_s") || cfg_file_has(ini, g, "call_end_s")))
		cfg_file_fail(ini, g, cfg_file_has(ini, g, "call_start_s") ? "call_start_s" : "call_end_s",
			      "only used with call_rate_hz");
	if (has_rate && s->call_end_s <= s->call_start_s)
		cfg_file_fail(ini, g, "call_end_s", "must be after call_start_s (%g s)", s->call_start_s);

	dsp_wave_params *p = &s->wave;
	p->kind = (dsp_wave_kind)cfg_file_enum(ini, g, "waveform");
	for (size_t i = 0; i < G_N_ELEMENTS(wave_keys); i++)
		if (cfg_file_has(ini, g, wave_keys[i].key) && !(wave_keys[i].kinds & (1u << p->kind)))
			cfg_file_fail(ini, g, wave_keys[i].key, "not used by waveform = %s", waveforms[p->kind]);
	p->carrier_hz = cfg_file_double(ini, g, "carrier_hz");
	p->pulse_ms = cfg_file_double(ini, g, "pulse_ms");
	p->pulse_interval_ms = cfg_file_double(ini, g, "pulse_interval_ms");
	p->pulses = (int)cfg_file_int(ini, g, "pulses");
	p->freq_hz = cfg_file_double(ini, g, "freq_hz");
	p->f0_hz = cfg_file_double(ini, g, "f0_hz");
	p->f1_hz = cfg_file_double(ini, g, "f1_hz");
	p->sweep = (dsp_sweep)cfg_file_enum(ini, g, "sweep");
	p->length_ms = cfg_file_double(ini, g, "length_ms");
	p->taper_ms = cfg_file_double(ini, g, "taper_ms");
	p->click_width_us = cfg_file_double(ini, g, "click_width_us");
	p->file_channel = (int)cfg_file_int(ini, g, "file_channel");

	double nyq = w->sample_rate_hz / 2.0;
	const char *fkey = p->kind == DSP_WAVE_PULSE_TRAIN ? "carrier_hz" : p->kind == DSP_WAVE_TONE ? "freq_hz"
												     : NULL;
	if (fkey && cfg_file_double(ini, g, fkey) >= nyq)
		cfg_file_fail(ini, g, fkey, "%g Hz is not below the Nyquist frequency %g Hz of [world] sample_rate_hz",
			      cfg_file_double(ini, g, fkey), nyq);
	if (p->kind == DSP_WAVE_CHIRP && (p->f0_hz >= nyq || p->f1_hz >= nyq))
		cfg_file_fail(ini, g, p->f0_hz >= nyq ? "f0_hz" : "f1_hz",
			      "not below the Nyquist frequency %g Hz of [world] sample_rate_hz", nyq);
	if (p->kind == DSP_WAVE_PULSE_TRAIN && p->pulse_ms > p->pulse_interval_ms)
		cfg_file_fail(ini, g, "pulse_ms", "pulses (%g ms) overlap: longer than pulse_interval_ms (%g ms)",
			      p->pulse_ms, p->pulse_interval_ms);
	if (p->kind == DSP_WAVE_FILE) {
		char *f = cfg_file_has(ini, g, "file") ? cfg_file_string(ini, g, "file") : NULL;
		if (!f) {
			cfg_file_fail(ini, g, "waveform", "waveform = file needs the key file");
			return;
		}
		char *path = g_path_is_absolute(f) || !base_dir ? g_strdup(f) : g_build_filename(base_dir, f, NULL);
		g_free(f);
		g_ptr_array_add(sc->strings, path);
		p->file = path;
		check_file(ini, g, s);
	}
}

static sim_scenario *build(cfg_file *ini, const char *base_dir, GError **err)
{
	sim_scenario *sc = g_new0(sim_scenario, 1);
	sc->name = g_strdup(cfg_file_name(ini));
	sc->nodes = g_array_new(FALSE, TRUE, sizeof(sim_node_cfg));
	sc->sources = g_array_new(FALSE, TRUE, sizeof(sim_source_cfg));
	sc->strings = g_ptr_array_new_with_free_func(g_free);

	load_world(ini, &sc->world);
	for (const char *const *g = cfg_file_groups(ini, "node"); *g; g++) {
		sim_node_cfg n;
		memset(&n, 0, sizeof n);
		load_node(ini, *g, &n);
		if (sim_scenario_find_node(sc, n.id))
			cfg_file_fail(ini, *g, NULL, "node %d is already defined (leading zeros do not make a new number)", n.id);
		g_array_append_val(sc->nodes, n);
	}
	if (sc->nodes->len == 0)
		cfg_file_fail(ini, "world", NULL, "the scenario has no [node.N] group");
	for (const char *const *g = cfg_file_groups(ini, "source"); *g; g++) {
		sim_source_cfg s;
		memset(&s, 0, sizeof s);
		load_source(sc, ini, *g, base_dir, &s);
		for (guint i = 0; i < sc->sources->len; i++)
			if (g_array_index(sc->sources, sim_source_cfg, i).id == s.id)
				cfg_file_fail(ini, *g, NULL, "source %d is already defined", s.id);
		g_array_append_val(sc->sources, s);
	}
	if (!cfg_file_check(ini, err)) {
		sim_scenario_free(sc);
		return NULL;
	}
	return sc;
}

sim_scenario *sim_scenario_load_data(const char *name, const char *text, const char *base_dir,
				     GError **err)
{
	cfg_file *ini = cfg_file_load_data(name, text, sim_scenario_table, err);
	if (!ini)
		return NULL;
	sim_scenario *sc = build(ini, base_dir, err);
	cfg_file_free(ini);
	return sc;
}

sim_scenario *sim_scenario_load(const char *path, GError **err)
{
	cfg_file *ini = cfg_file_load(path, sim_scenario_table, err);
	if (!ini)
		return NULL;
	char *dir = g_path_get_dirname(path);
	sim_scenario *sc = build(ini, dir, err);
	g_free(dir);
	cfg_file_free(ini);
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
