/* scenario.c — scenario table, loading and semantic checks (see scenario.h). */
#include "sim/scenario.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <string.h>

#include "sim/acoustics.h"
#include "sim/rng.h"
#include "sim/scenario_int.h"

static const char *const formats[] = {"S16_LE", "S32_LE", "FLOAT_LE", NULL};
static const char *const waveforms[] = {"pulse_train", "chirp", "tone", "click", "file", NULL};
static const char *const sweeps[] = {"linear", "exponential", NULL};
static const char *const grounds[] = {"none", "hard", "grass", "snow", NULL};
static const char *const backgrounds[] = {"none", "white", "pink", "wind", NULL};

/* Keys renamed to carry their unit keep the old name as a deprecated alias. */
static const cfg_key world_keys[] = {
	{.name = "speed_of_sound_m_s", .type = CFG_DOUBLE, .min = 100, .max = 2000, .alias = "speed_of_sound"},
	NUM("temperature_c", "20", -60, 60),
	NUM("humidity_pct", "50", 0, 100),
	{.name = "air_absorption", .type = CFG_BOOL, .def = "true"},
	{.name = "wind", .type = CFG_DOUBLE_LIST, .min = -1e3, .max = 1e3},
	ENUM("ground", "none", grounds),
	NUM("ground_reflection", "1", 0, 1),
	ENUM("background", "none", backgrounds),
	NUM("background_dbfs", "-60", -200, 0),
	NUM("noise_dbfs", "-60", -200, 0),
	INT("seed", "1", 0, 9007199254740992.0),
	{.name = "duration_s", .type = CFG_DOUBLE, .def = "60", .min = 0.001, .max = 1e7, .alias = "duration"},
	{.name = "min_distance_m", .type = CFG_DOUBLE, .def = "0.1", .min = 0.001, .max = 100, .alias = "min_distance"},
	{.name = "radio_range_m", .type = CFG_DOUBLE, .def = "100", .min = 0, .max = 1e6, .alias = "radio_range"},
	NUM("radio_loss", "0", 0, 1),
	{.name = "sample_rate_hz", .type = CFG_INT, .def = "48000", .min = 8000, .max = 192000, .alias = "sample_rate"},
	INT("period_frames", "480", 16, 65535),
	INT("buffer_periods", "4", 2, 1024),
	{.name = "partition", .type = CFG_STRING, .min = 1, .max = 0, .flags = CFG_NONEMPTY},
	ENUM("format", "S16_LE", formats),
	{.name = "xrun_every_s", .type = CFG_DOUBLE, .def = "0", .min = 0, .max = 1e7, .alias = "xrun_every"},
	{NULL},
};

static const cfg_key source_keys[] = {
	{.name = "position_m", .type = CFG_VEC3, .min = -1e6, .max = 1e6, .alias = "position"},
	{.name = "path", .type = CFG_STRING, .min = 1, .max = 0, .flags = CFG_NONEMPTY},
	NUM("level_dbfs", "-20", -200, 60),
	NUM("variation", "0", 0, 0.2),
	{.name = "call_times_s", .type = CFG_DOUBLE_LIST, .min = 0, .max = 1e7, .alias = "call_times"},
	{.name = "call_rate_hz", .type = CFG_DOUBLE, .min = 1e-6, .max = 1e4, .alias = "call_rate"},
	{.name = "call_start_s", .type = CFG_DOUBLE, .def = "0", .min = 0, .max = 1e7, .alias = "call_start"},
	{.name = "call_end_s", .type = CFG_DOUBLE, .min = 0, .max = 1e7, .alias = "call_end"},
	NUM("call_gap_s", "0.25", 0, 1e4),
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
	NUM("file_start", "0", 0, 1e7),
	NUM("file_length", "0", 0, 1e7),
	{NULL},
};

static const cfg_key room_keys[] = {
	{.name = "size", .type = CFG_VEC3, .min = 0.1, .max = 1e4, .flags = CFG_REQUIRED},
	{.name = "absorption", .type = CFG_DOUBLE_LIST, .def = "0.2", .min = 0, .max = 1},
	INT("max_order", "3", 0, 12),
	{NULL},
};

const cfg_group sim_scenario_table[] = {
	{.name = "world", .keys = world_keys, .unique = 1},
	{.name = "room", .keys = room_keys, .unique = 1},
	{.name = "node", .numbered = 1, .keys = sim_node_keys, .unique = 1},
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
	{"file_start", 1u << DSP_WAVE_FILE},
	{"file_length", 1u << DSP_WAVE_FILE},
	{"variation", ~(1u << DSP_WAVE_FILE)},
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
	w->temperature_c = cfg_file_double(ini, g, "temperature_c");
	w->humidity_pct = cfg_file_double(ini, g, "humidity_pct");
	w->speed_stated = cfg_file_has(ini, g, "speed_of_sound_m_s");
	w->speed_of_sound_m_s = w->speed_stated ? cfg_file_double(ini, g, "speed_of_sound_m_s")
						: sim_speed_of_sound_m_s(w->temperature_c);
	w->air_absorption = cfg_file_bool(ini, g, "air_absorption");
	if (cfg_file_has(ini, g, "wind")) {
		size_t n = 0;
		double *v = cfg_file_double_list(ini, g, "wind", &n);
		if (n != 2 || !v || v[0] < 0)
			cfg_file_fail(ini, g, "wind", "give SPEED_MPS, DIRECTION_DEG (speed >= 0; the direction the wind comes from, degrees clockwise from +y)");
		else {
			w->wind_speed_m_s = v[0];
			w->wind_from_deg = v[1];
			double a = v[1] * M_PI / 180.0; /* blows towards the opposite direction */
			w->wind_m_s[0] = -v[0] * sin(a);
			w->wind_m_s[1] = -v[0] * cos(a);
			if (v[0] > 0.3 * w->speed_of_sound_m_s)
				cfg_file_fail(ini, g, "wind", "%g m/s: the first-order moving-medium model needs a wind well below the speed of sound", v[0]);
		}
		g_free(v);
	}
	w->ground = (sim_ground)cfg_file_enum(ini, g, "ground");
	w->ground_reflection = cfg_file_double(ini, g, "ground_reflection");
	if (cfg_file_has(ini, g, "ground_reflection")) {
		if (cfg_file_has(ini, g, "ground"))
			cfg_file_fail(ini, g, "ground_reflection", "give either ground or ground_reflection, not both");
		w->ground = SIM_GROUND_FIXED;
	}
	w->background = (sim_bg_kind)cfg_file_enum(ini, g, "background");
	w->background_dbfs = cfg_file_double(ini, g, "background_dbfs");
	if (cfg_file_has(ini, g, "background_dbfs") && w->background == SIM_BG_NONE)
		cfg_file_fail(ini, g, "background_dbfs", "set background = white | pink | wind as well");
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

static void load_room(cfg_file *ini, sim_world_cfg *w)
{
	const char *g = "room";
	if (cfg_file_line(ini, g, NULL) == 0)
		return;
	w->room = 1;
	cfg_file_vec3(ini, g, "size", w->room_m);
	size_t n = 0;
	double *a = cfg_file_double_list(ini, g, "absorption", &n);
	if (a && n == 1)
		for (int i = 0; i < 6; i++)
			w->room_absorption[i] = a[0];
	else if (a && n == 6)
		memcpy(w->room_absorption, a, sizeof w->room_absorption);
	else
		cfg_file_fail(ini, g, "absorption", "give one value for every wall or six (x0, xL, y0, yL, floor, ceiling)");
	g_free(a);
	w->room_max_order = (int)cfg_file_int(ini, g, "max_order");
	if (w->ground != SIM_GROUND_NONE)
		cfg_file_fail(ini, "world", cfg_file_has(ini, "world", "ground") ? "ground" : "ground_reflection",
			      "a [room] has its own floor (absorption's fifth value); no ground with a room");
}

/* Everything in the room: a node or source outside it hears nothing sensible. */
static void check_inside_room(cfg_file *ini, const sim_world_cfg *w, const char *g, const double *p, const char *what)
{
	for (int a = 0; w->room && a < 3; a++)
		if (p[a] < 0 || p[a] > w->room_m[a]) {
			cfg_file_fail(ini, g, NULL, "%s (%g, %g, %g) m is outside the [room] of size (%g, %g, %g) m", what, p[0],
				      p[1], p[2], w->room_m[0], w->room_m[1], w->room_m[2]);
			return;
		}
}

/* One outage key's windows (sim/outage.h), owned by sc. */
static sim_window *load_windows(sim_scenario *sc, cfg_file *ini, const char *g, const char *key, size_t *n)
{
	*n = 0;
	if (!cfg_file_has(ini, g, key))
		return NULL;
	char *text = cfg_file_string(ini, g, key), why[160];
	sim_window *w = sim_windows_parse(text, n, why, sizeof why);
	g_free(text);
	if (!w)
		cfg_file_fail(ini, g, key, "%s", *why ? why : "no window");
	else
		g_ptr_array_add(sc->strings, w);
	return w;
}

static void load_outages(sim_scenario *sc, cfg_file *ini, const char *g, sim_node_cfg *n)
{
	n->radio_down = load_windows(sc, ini, g, "radio_down", &n->n_radio_down);
	n->down = load_windows(sc, ini, g, "down", &n->n_down);
	for (size_t i = 0; i < n->n_down; i++)
		if (n->down[i].to_s - n->down[i].from_s < 2.0)
			cfg_file_fail(ini, g, "down",
				      "window %zu (%g-%g s) is shorter than 2 s: the services are stopped and started "
				      "again, which takes about a second",
				      i + 1, n->down[i].from_s, n->down[i].to_s);
}

/* [world] partition: every node in one of its groups. */
static void load_partition(sim_scenario *sc, cfg_file *ini)
{
	for (guint i = 0; i < sc->nodes->len; i++)
		g_array_index(sc->nodes, sim_node_cfg, i).part_group = -1;
	if (!cfg_file_has(ini, "world", "partition"))
		return;
	char *text = cfg_file_string(ini, "world", "partition"), why[160];
	GArray *m = g_array_new(FALSE, FALSE, sizeof(sim_part_member));
	sim_window w;
	if (!sim_partition_parse(text, &w, m, why, sizeof why))
		cfg_file_fail(ini, "world", "partition", "%s", why);
	else {
		for (guint k = 0; k < m->len; k++) {
			const sim_part_member *pm = &g_array_index(m, sim_part_member, k);
			sim_node_cfg *n = (sim_node_cfg *)sim_scenario_find_node(sc, pm->node);
			if (!n) {
				cfg_file_fail(ini, "world", "partition", "node %d is not in the scenario", pm->node);
				continue;
			}
			n->part_group = pm->group;
			n->part_win = w;
		}
		for (guint i = 0; i < sc->nodes->len; i++)
			if (g_array_index(sc->nodes, sim_node_cfg, i).part_group < 0)
				cfg_file_fail(ini, "world", "partition", "node %d is in no group (name every node)",
					      g_array_index(sc->nodes, sim_node_cfg, i).id);
	}
	g_array_free(m, TRUE);
	g_free(text);
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
	double len_s = info.samplerate > 0 ? (double)info.frames / info.samplerate : 0;
	if (s->wave.file_start_s >= len_s)
		cfg_file_fail(ini, g, "file_start", "%g s is past the end of '%s' (%.3f s long)", s->wave.file_start_s,
			      s->wave.file, len_s);
	sf_close(sf);
}

static void load_source(sim_scenario *sc, cfg_file *ini, const char *g, const char *base_dir,
			sim_source_cfg *s)
{
	const sim_world_cfg *w = &sc->world;
	s->id = (int)cfg_group_number(g);
	s->line = cfg_file_line(ini, g, NULL);
	int has_pos = cfg_file_has(ini, g, "position_m"), has_path = cfg_file_has(ini, g, "path");
	if (has_pos && has_path)
		cfg_file_fail(ini, g, "path", "give either position_m (a source that stays) or path (one that moves), not both");
	else if (!has_pos && !has_path)
		cfg_file_fail(ini, g, NULL, "give position_m (x, y, z in m) or path (x,y,z @ t; ...)");
	if (has_pos)
		cfg_file_vec3(ini, g, "position_m", s->pos_m);
	if (has_path) {
		char *text = cfg_file_string(ini, g, "path"), why[160];
		s->path = sim_path_parse(text, &s->n_path, why, sizeof why);
		g_free(text);
		if (!s->path)
			cfg_file_fail(ini, g, "path", "%s", why);
		else {
			g_ptr_array_add(sc->strings, s->path);
			memcpy(s->pos_m, s->path, sizeof s->pos_m);
			for (size_t i = 0; i < s->n_path; i++)
				check_inside_room(ini, w, g, &s->path[4 * i], "a waypoint");
		}
	}
	check_inside_room(ini, w, g, s->pos_m, "the source");
	s->level_dbfs = cfg_file_double(ini, g, "level_dbfs");
	s->variation = cfg_file_double(ini, g, "variation");
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
	s->call_gap_s = cfg_file_double(ini, g, "call_gap_s");
	if (has_times && (cfg_file_has(ini, g, "call_start_s") || cfg_file_has(ini, g, "call_end_s") ||
			  cfg_file_has(ini, g, "call_gap_s")))
		cfg_file_fail(ini, g,
			      cfg_file_has(ini, g, "call_start_s") ? "call_start_s"
			      : cfg_file_has(ini, g, "call_end_s") ? "call_end_s"
								   : "call_gap_s",
			      "only used with call_rate_hz");
	if (has_rate && s->call_end_s <= s->call_start_s)
		cfg_file_fail(ini, g, "call_end_s", "must be after call_start_s (%g s)", s->call_start_s);
	else if (has_rate && s->call_rate_hz * (s->call_end_s - s->call_start_s) > SIM_MAX_CALLS)
		/* Within each key's range the product can still ask for
		 * millions of rendered calls (call_rate = 10000 over 1e7 s took
		 * chorus-sim to 2.1 GB and aborted audiod). */
		cfg_file_fail(ini, g, "call_rate_hz",
			      "%g calls/s over %g s is %.3g calls; a source makes at most %d (each is rendered in every process)",
			      s->call_rate_hz, s->call_end_s - s->call_start_s,
			      s->call_rate_hz * (s->call_end_s - s->call_start_s), SIM_MAX_CALLS);
	if (has_times && s->n_call_times > SIM_MAX_CALLS)
		cfg_file_fail(ini, g, "call_times_s", "%zu calls; a source makes at most %d", s->n_call_times,
			      SIM_MAX_CALLS);

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
	p->file_start_s = cfg_file_double(ini, g, "file_start");
	p->file_length_s = cfg_file_double(ini, g, "file_length");

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
	load_room(ini, &sc->world);
	for (const char *const *g = cfg_file_groups(ini, "node"); *g; g++) {
		sim_node_cfg n;
		memset(&n, 0, sizeof n);
		sim_node_load(ini, *g, &n);
		load_outages(sc, ini, *g, &n);
		n.cpu.wander.seed = sim_rng_hash(sc->world.seed, SIM_RNG_WANDER, (uint64_t)n.id, 0, 0);
		n.audio_wander.seed = sim_rng_hash(sc->world.seed, SIM_RNG_WANDER, (uint64_t)n.id, 1, 0);
		/* b = 2: the realtime clock's UTC error, beside the cpu's (0) and audio's (1) walks. */
		n.utc.seed = sim_rng_hash(sc->world.seed, SIM_RNG_WANDER, (uint64_t)n.id, 2, 0);
		for (size_t m = 0; m < n.n_mics; m++) {
			double at[3] = {n.pos_m[0] + n.mics_m[m][0], n.pos_m[1] + n.mics_m[m][1], n.pos_m[2] + n.mics_m[m][2]};
			check_inside_room(ini, &sc->world, *g, at, "a microphone");
		}
		if (sim_scenario_find_node(sc, n.id))
			cfg_file_fail(ini, *g, NULL, "node %d is already defined (leading zeros do not make a new number)", n.id);
		g_array_append_val(sc->nodes, n);
	}
	if (sc->nodes->len == 0)
		cfg_file_fail(ini, "world", NULL, "the scenario has no [node.N] group");
	load_partition(sc, ini);
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

double *sim_path_parse(const char *text, size_t *n, char *why, size_t why_len)
{
	gchar **pts = g_strsplit(text, ";", -1);
	GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
	size_t k = 0;
	gboolean ok = TRUE;
	for (gchar **p = pts; ok && *p; p++) {
		char *q = g_strstrip(*p);
		if (!*q && !p[1] && k > 0)
			break; /* a trailing ';' */
		k++;
		gchar **at = g_strsplit(q, "@", -1);
		gchar **xyz = at[0] && at[1] && !at[2] ? g_strsplit(at[0], ",", -1) : NULL;
		double v[4];
		ok = xyz && g_strv_length(xyz) == 3;
		for (int i = 0; ok && i < 4; i++) {
			char *s = g_strstrip(i < 3 ? xyz[i] : at[1]), *end = NULL;
			v[i] = g_ascii_strtod(s, &end);
			ok = *s && !*end && isfinite(v[i]);
		}
		if (!ok)
			g_snprintf(why, why_len, "waypoint %zu ('%s'): expected x,y,z @ t (m, s)", k, q);
		else if (k > 1 && v[3] <= g_array_index(a, double, a->len - 1)) {
			g_snprintf(why, why_len, "waypoint %zu: time %g s is not after the previous waypoint's %g s", k, v[3],
				   g_array_index(a, double, a->len - 1));
			ok = FALSE;
		} else if (v[3] < 0) {
			g_snprintf(why, why_len, "waypoint %zu: time %g s is before the world's start", k, v[3]);
			ok = FALSE;
		}
		if (ok)
			g_array_append_vals(a, v, 4);
		g_strfreev(xyz);
		g_strfreev(at);
	}
	g_strfreev(pts);
	if (ok && a->len == 0) {
		g_snprintf(why, why_len, "no waypoint");
		ok = FALSE;
	}
	*n = a->len / 4;
	return (double *)(void *)g_array_free(a, !ok);
}

gboolean sim_node_cut_off(const sim_node_cfg *n, double t_s)
{
	return sim_windows_contain(n->radio_down, n->n_radio_down, t_s) || sim_windows_contain(n->down, n->n_down, t_s);
}

sim_phase sim_node_phase(const sim_node_cfg *n, double t_s)
{
	gboolean parted = n->part_group >= 0;
	if (sim_node_cut_off(n, t_s) || (parted && sim_windows_contain(&n->part_win, 1, t_s)))
		return SIM_PHASE_DURING;
	if (sim_windows_last_end(n->radio_down, n->n_radio_down, t_s) >= 0 ||
	    sim_windows_last_end(n->down, n->n_down, t_s) >= 0 || (parted && sim_windows_last_end(&n->part_win, 1, t_s) >= 0))
		return SIM_PHASE_AFTER;
	return SIM_PHASE_BEFORE;
}

gboolean sim_nodes_split(const sim_node_cfg *a, const sim_node_cfg *b, double t_s)
{
	return a->part_group >= 0 && b->part_group >= 0 && a->part_group != b->part_group &&
	       sim_windows_contain(&a->part_win, 1, t_s);
}

size_t sim_scenario_n_outages(const sim_scenario *sc)
{
	size_t k = 0;
	for (guint i = 0; i < sc->nodes->len; i++) {
		const sim_node_cfg *n = &g_array_index(sc->nodes, sim_node_cfg, i);
		k += n->n_radio_down + n->n_down;
	}
	return k + (sc->nodes->len && g_array_index(sc->nodes, sim_node_cfg, 0).part_group >= 0);
}

void sim_node_told_position(const sim_scenario *sc, const sim_node_cfg *n, double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = n->pos_m[k] + n->survey_error_m * sim_rng_gauss(sc->world.seed, SIM_RNG_SURVEY, (uint64_t)n->id,
									 (uint64_t)k, 0);
}

void sim_node_told_mic1(const sim_scenario *sc, const sim_node_cfg *n, double out[3])
{
	out[0] = out[1] = out[2] = 0;
	if (n->n_mics < 2)
		return;
	double o[3], a = n->survey_heading_deg * M_PI / 180.0 *
			 sim_rng_gauss(sc->world.seed, SIM_RNG_SURVEY, (uint64_t)n->id, 3, 0);
	for (int k = 0; k < 3; k++)
		o[k] = n->mics_m[1][k] - n->mics_m[0][k];
	out[0] = cos(a) * o[0] - sin(a) * o[1];
	out[1] = sin(a) * o[0] + cos(a) * o[1];
	out[2] = o[2];
}

char *sim_scenario_effects(const sim_scenario *sc)
{
	const sim_world_cfg *w = &sc->world;
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "c = %.1f m/s %s", w->speed_of_sound_m_s,
			       w->speed_stated ? "stated" : "from temperature");
	if (w->air_absorption)
		g_string_append_printf(s, ", air absorption (%.1f °C, %.0f %% RH)", w->temperature_c, w->humidity_pct);
	if (w->room)
		g_string_append_printf(s, ", room %g x %g x %g m (images to order %d)", w->room_m[0], w->room_m[1],
				       w->room_m[2], w->room_max_order);
	else if (w->ground == SIM_GROUND_FIXED)
		g_string_append_printf(s, ", ground R = %g", w->ground_reflection);
	else if (w->ground != SIM_GROUND_NONE)
		g_string_append_printf(s, ", %s ground", grounds[w->ground]);
	else
		g_string_append(s, ", free field");
	if (w->wind_speed_m_s > 0)
		g_string_append_printf(s, ", wind %.1f m/s from %.0f°", w->wind_speed_m_s, w->wind_from_deg);
	if (w->background != SIM_BG_NONE)
		g_string_append_printf(s, ", %s background %.0f dBFS", backgrounds[w->background], w->background_dbfs);
	guint varied = 0, moving = 0, files = 0;
	for (guint i = 0; i < sc->sources->len; i++) {
		const sim_source_cfg *c = &g_array_index(sc->sources, sim_source_cfg, i);
		varied += c->variation > 0;
		moving += c->path != NULL;
		files += c->wave.kind == DSP_WAVE_FILE;
	}
	if (varied)
		g_string_append_printf(s, ", call variation on %u of %u sources", varied, sc->sources->len);
	else if (files < sc->sources->len)
		g_string_append(s, ", exact synthetic calls");
	if (files)
		g_string_append_printf(s, ", %u recorded source(s)", files);
	if (moving)
		g_string_append_printf(s, ", %u moving source(s)", moving);
	double survey = 0;
	for (guint i = 0; i < sc->nodes->len; i++)
		survey = fmax(survey, g_array_index(sc->nodes, sim_node_cfg, i).survey_error_m);
	if (survey > 0)
		g_string_append_printf(s, ", survey error up to %.2f m per axis", survey);
	else
		g_string_append(s, ", exact positions");
	guint wandering = 0;
	for (guint i = 0; i < sc->nodes->len; i++) {
		const sim_node_cfg *n = &g_array_index(sc->nodes, sim_node_cfg, i);
		wandering += sync_wander_active(&n->cpu.wander) || sync_wander_active(&n->audio_wander);
	}
	if (wandering)
		g_string_append_printf(s, ", wandering clocks on %u node(s)", wandering);
	guint utc[3] = {0};
	for (guint i = 0; i < sc->nodes->len; i++)
		utc[g_array_index(sc->nodes, sim_node_cfg, i).utc.kind]++;
	if (utc[SYNC_SIMUTC_NTP] + utc[SYNC_SIMUTC_GPS])
		g_string_append_printf(s, ", realtime disciplined to UTC on %u node(s) (%s%s%s)",
				       utc[SYNC_SIMUTC_NTP] + utc[SYNC_SIMUTC_GPS], utc[SYNC_SIMUTC_NTP] ? "ntp" : "",
				       utc[SYNC_SIMUTC_NTP] && utc[SYNC_SIMUTC_GPS] ? ", " : "",
				       utc[SYNC_SIMUTC_GPS] ? "gps" : "");
	return g_string_free(s, FALSE);
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
