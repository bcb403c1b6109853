/* scenario.h — the scenario file: the simulated world described in INI.
 *
 * Groups [world], [node.N] (N = the node number, as in CHORUS_NODE) and
 * [source.K]; every key, its type, unit, default and range is in
 * sim_scenario_table and documented in docs/scenario.md.  Loading validates
 * everything and reports every error as "FILE:LINE: [group] key: why".
 * The result is a plain, read-only description; sim/world.h turns it into
 * the model that answers "what does this microphone hear at time t".
 */
#ifndef CHORUS_SIM_SCENARIO_H
#define CHORUS_SIM_SCENARIO_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libsync/now.h"
#include "libcfg/cfg.h"
#include "sim/background.h"
#include "sim/outage.h"
#include "sim/samplefmt.h"
#include "apps/dsp/wave.h"

#define SIM_MAX_MICS 32
#define SIM_MAX_NODE 65535  /* the side channel's record carries it in 16 bits */
#define SIM_MAX_CALLS 20000 /* per source: each call is rendered (and its paths kept) in every process */

typedef enum {
	SIM_LAT_EXPONENTIAL = 0,
	SIM_LAT_NORMAL = 1,  /* truncated at 0 */
	SIM_LAT_UNIFORM = 2, /* mean ± sqrt(3) sd */
	SIM_LAT_CONSTANT = 3,
	SIM_LAT_MIXTURE = 4, /* exponential of mean, else (mix_fraction) exponential of mix_mean */
} sim_latency_dist;

typedef enum {
	SIM_GROUND_NONE = 0,  /* free field: no ground plane */
	SIM_GROUND_HARD = 1,  /* rigid ground at z = 0: R = 1 */
	SIM_GROUND_GRASS = 2, /* Delany-Bazley, sigma = SIM_SIGMA_GRASS */
	SIM_GROUND_SNOW = 3,  /* Delany-Bazley, sigma = SIM_SIGMA_SNOW */
	SIM_GROUND_FIXED = 4, /* ground_reflection = R: real, frequency-independent */
} sim_ground;

typedef struct {
	double speed_of_sound_m_s; /* m/s: stated, or from temperature_c */
	int speed_stated;          /* speed_of_sound_m_s was given (else from temperature) */
	double temperature_c;      /* °C: air temperature */
	double humidity_pct;       /* % relative humidity */
	int air_absorption;        /* ISO 9613-1 absorption on every path */
	double wind_speed_m_s;     /* m/s */
	double wind_from_deg;      /* degrees clockwise from +y (north) the wind comes from */
	double wind_m_s[3];        /* m/s: the wind's velocity vector (horizontal) */
	sim_ground ground;
	double ground_reflection;  /* SIM_GROUND_FIXED: R (0..1) */
	sim_bg_kind background;    /* sim/background.h */
	double background_dbfs;    /* RMS of the background, dB re full scale */
	int room;                  /* a [room] group: shoebox enclosure */
	double room_m[3];          /* m: room size; the room spans [0, size] on each axis */
	double room_absorption[6]; /* energy absorption of walls x0, xL, y0, yL, z0 (floor), zL */
	int room_max_order;        /* highest image order */
	double noise_dbfs;         /* white Gaussian noise per mic, RMS, dB re full scale */
	uint64_t seed;             /* keys every random quantity of the world */
	double duration_s;         /* s: length of the run; Poisson calls fall in [0, duration) */
	double min_distance_m;     /* m: spreading loss 1/r is floored at this r */
	double radio_range_m;      /* m: nodes farther apart do not hear each other */
	double radio_loss;         /* probability a packet is lost, 0..1 */
	unsigned sample_rate_hz;   /* Hz: the virtual sound card's default rate */
	unsigned period_frames;    /* frames: default period size */
	unsigned buffer_periods;   /* default periods per buffer */
	sim_format format;         /* default sample format */
	double xrun_every_s;       /* s: inject an xrun this often (0: never) */
} sim_world_cfg;

typedef struct {
	int id;          /* N of [node.N] */
	int line;        /* line of the group header */
	double pos_m[3]; /* m */
	size_t n_mics;
	double mics_m[SIM_MAX_MICS][3]; /* m, relative to pos */
	sync_simclock cpu;              /* cpu clock: skew ppm, offset ns, wander vs true time (epoch 0) */
	double audio_skew_ppm;          /* sound card clock rate error vs true time, ppm */
	sync_wander audio_wander;       /* the card's rate wander (cpu.wander is the cpu's) */
	sync_simutc utc;                /* realtime clock's UTC source: kind none (undisciplined: skew and
					 * wander as cpu's), ntp or gps with sigma_ns, tau_s, seed; epoch_ns 0
					 * (the launcher sets the run's, as for cpu) */
	sim_latency_dist latency;
	double latency_mean_ns;        /* ns */
	double latency_sd_ns;          /* ns (normal, uniform) */
	double latency_mix_fraction;   /* mixture: probability of the second (busy) component */
	double latency_mix_mean_ns;    /* mixture: mean of the second exponential component, ns */
	double latency_floor_ns;       /* ns added to every latency (the part no envelope can see) */
	double calibrated_floor_ns;    /* the floor the operator states to audiod (latency_floor_us), ns */
	double calibrated_floor_sd_ns; /* and its standard error (latency_floor_sd_us), ns */
	double radio_jitter_ns;        /* ns: sd of the receive timestamp error */
	int radio_delay_from;          /* a delay attack: packets from this node (0: none) are received */
	double radio_delay_ns;         /* ... this much late (ns) */
	double radio_delay_after_s;    /* ... from this world time on (s) */
	double survey_error_m;         /* m: sd per axis of the position the apps are told */
	double survey_heading_deg;     /* degrees: sd of the heading of its microphones' offsets as told */
	const sim_window *radio_down;  /* windows the node hears and is heard by no one (owned by the scenario) */
	size_t n_radio_down;
	const sim_window *down; /* windows its services are stopped (a power blip; clocks continue) */
	size_t n_down;
	int part_group;      /* [world] partition: its group (-1: no partition) */
	sim_window part_win; /* the partition's window */
} sim_node_cfg;

typedef struct {
	int id;               /* K of [source.K] */
	int line;             /* line of the group header */
	double pos_m[3];      /* m */
	double level_dbfs;    /* peak amplitude at 1 m, dB re full scale */
	double *call_times_s; /* s since the world's epoch; NULL when a rate is given */
	size_t n_call_times;
	double call_rate_hz;             /* calls per s (Poisson), 0 with an explicit list */
	double call_start_s, call_end_s; /* s: window of Poisson calls */
	double call_gap_s;               /* s: least silence between a Poisson call's end and the next start */
	dsp_wave_params wave;            /* wave.file is absolute or relative to the cwd */
	double variation;                /* relative sd of each call's drawn parameters (0..0.2) */
	double *path;                    /* moving source: waypoints x, y, z (m), t (s) each; NULL: static */
	size_t n_path;                   /* number of waypoints */
} sim_source_cfg;

typedef struct sim_scenario sim_scenario;

/* The validation table (for tools and tests). */
extern const cfg_group sim_scenario_table[];

/* Load and validate a scenario file; file sources are resolved relative to
 * its directory.  Returns the scenario, or NULL with *err listing every
 * error as "FILE:LINE: [group] key: why". */
sim_scenario *sim_scenario_load(const char *path, GError **err);

/* The same from text in memory; `name` is used in messages and `base_dir`
 * resolves relative file paths (NULL: the cwd). */
sim_scenario *sim_scenario_load_data(const char *name, const char *text, const char *base_dir,
				     GError **err);

void sim_scenario_free(sim_scenario *sc);

/* Parse a path value "x,y,z @ t; x,y,z @ t; ..." (m, s; times strictly
 * increasing) into 4 doubles per waypoint (g_free them).  NULL with a reason
 * in why[why_len] (which waypoint and what is wrong). */
double *sim_path_parse(const char *text, size_t *n, char *why, size_t why_len);

/* One line naming the effects the world has (a newly allocated string):
 * "air absorption (20.0 °C, 50 % RH), c = 343.2 m/s from temperature, ground
 * grass, wind 5.0 m/s from 270°, background wind -30 dBFS, call variation
 * on 2 of 3 sources, 1 moving source, survey error up to 0.10 m, wandering
 * clocks on 4 node(s), realtime disciplined to UTC on 2 node(s) (ntp, gps),
 * ..." or
 * "free field, exact calls, exact positions" for today's idealised world. */
char *sim_scenario_effects(const sim_scenario *sc);

/* The position the field team is told for node n (m): its true position
 * plus a seeded Gaussian error of survey_error_m per axis (the same for
 * every run with the same seed). */
void sim_node_told_position(const sim_scenario *sc, const sim_node_cfg *n, double out[3]);

/* Where the field team is told node n's second microphone is from its
 * first (m): the true offset turned about the vertical by a seeded
 * Gaussian angle of survey_heading_deg (the array's heading as surveyed,
 * with a compass).  Zero for a node with one microphone. */
void sim_node_told_mic1(const sim_scenario *sc, const sim_node_cfg *n, double out[3]);

/* TRUE when node n is cut off at world time t_s (s since the epoch): in
 * one of its radio_down or down windows. */
gboolean sim_node_cut_off(const sim_node_cfg *n, double t_s);

/* Where t_s stands relative to node n's outages (radio_down, down and the
 * world's partition when the node is in it): during one, after one, or
 * before any. */
sim_phase sim_node_phase(const sim_node_cfg *n, double t_s);

/* TRUE when nodes a and b are in different groups of the world's
 * partition and t_s lies in its window: they hear each other not at all. */
gboolean sim_nodes_split(const sim_node_cfg *a, const sim_node_cfg *b, double t_s);

/* The number of outage windows of all nodes, plus 1 for a partition (0: a
 * world without outages). */
size_t sim_scenario_n_outages(const sim_scenario *sc);

/* The file name (for messages). */
const char *sim_scenario_name(const sim_scenario *sc);

const sim_world_cfg *sim_scenario_world(const sim_scenario *sc);
size_t sim_scenario_n_nodes(const sim_scenario *sc);
/* Node i in file order (i < n_nodes). */
const sim_node_cfg *sim_scenario_node(const sim_scenario *sc, size_t i);
/* Node with number `id`, or NULL. */
const sim_node_cfg *sim_scenario_find_node(const sim_scenario *sc, int id);
size_t sim_scenario_n_sources(const sim_scenario *sc);
const sim_source_cfg *sim_scenario_source(const sim_scenario *sc, size_t i);

#endif
