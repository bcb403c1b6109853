/* scenario_node.c — the [node.N] group: its keys and its loader (see
 * sim/scenario_int.h; split from sim/scenario.c). */
#include <math.h>
#include <string.h>

#include "sim/scenario_int.h"

static const char *const latencies[] = {"exponential", "normal", "uniform", "constant", "mixture", NULL};
static const char *const utc_sources[] = {"none", "ntp", "gps", NULL}; /* sync_simutc_kind order */

const cfg_key sim_node_keys[] = {
	{.name = "position_m", .type = CFG_VEC3, .min = -1e6, .max = 1e6, .flags = CFG_REQUIRED, .alias = "position"},
	{.name = "mics_m", .type = CFG_VEC3_LIST, .def = "0,0,0", .min = -100, .max = 100, .alias = "mics"},
	NUM("cpu_skew_ppm", "0", -1e4, 1e4),
	INT("cpu_offset_ns", "0", -4e18, 4e18),
	NUM("audio_skew_ppm", "0", -1e4, 1e4),
	NUM("cpu_wander_ppb_per_s", "0", 0, 1e6),
	NUM("audio_wander_ppb_per_s", "0", 0, 1e6),
	{.name = "temperature_cycle", .type = CFG_DOUBLE_LIST, .def = "0, 86400", .min = 0, .max = 1e7},
	NUM("tempco_ppm_per_c", "0", -100, 100),
	NUM("audio_tempco_ppm_per_c", "0", -100, 100),
	ENUM("irq_latency", "exponential", latencies),
	NUM("irq_latency_mean_us", "20", 0, 1e5),
	NUM("irq_latency_sd_us", "5", 0, 1e5),
	NUM("irq_latency_mix_fraction", "0.1", 0, 1),
	NUM("irq_latency_mix_mean_us", "200", 0, 1e5),
	NUM("irq_latency_floor_us", "0", 0, 1e5),
	{.name = "calibrated_floor_us", .type = CFG_DOUBLE_LIST, .def = "0, 0", .min = 0, .max = 1e5},
	NUM("radio_jitter_ns", "1000", 0, 1e9),
	INT("radio_delay_from", "0", 1, 4294967294),
	NUM("radio_delay_us", "0", 0, 1e7),
	NUM("radio_delay_after_s", "0", 0, 1e9),
	NUM("survey_error_m", "0", 0, 100),
	NUM("survey_heading_deg", "0", 0, 180),
	ENUM("utc_source", "none", utc_sources),
	{.name = "utc_error_us", .type = CFG_DOUBLE, .min = 0, .max = 1e7},
	{.name = "utc_tau_s", .type = CFG_DOUBLE, .min = 0, .max = 1e7},
	{.name = "radio_down", .type = CFG_STRING, .min = 1, .max = 0, .flags = CFG_NONEMPTY},
	{.name = "down", .type = CFG_STRING, .min = 1, .max = 0, .flags = CFG_NONEMPTY},
	{NULL},
};

/* The realtime clock's UTC source: none (undisciplined, today's clock), or
 * an NTP or GPS daemon whose residual error is a Gauss–Markov process
 * (libsync/simutc.h) of s.d. utc_error_us and correlation time utc_tau_s,
 * defaulted by the kind.  The seed is build()'s. */
static void load_utc(cfg_file *ini, const char *g, sim_node_cfg *n)
{
	sync_simutc_kind k = (sync_simutc_kind)cfg_file_enum(ini, g, "utc_source");
	n->utc = (sync_simutc){.kind = k};
	sync_simutc_defaults(k, &n->utc.sigma_ns, &n->utc.tau_s);
	static const char *const keys[] = {"utc_error_us", "utc_tau_s"};
	for (int i = 0; i < 2; i++) {
		if (!cfg_file_has(ini, g, keys[i]))
			continue;
		double v = cfg_file_double(ini, g, keys[i]);
		if (k == SYNC_SIMUTC_NONE)
			cfg_file_fail(ini, g, keys[i],
				      "only used with utc_source = ntp or gps (this node's realtime clock has no UTC "
				      "source)");
		else if (!(v > 0))
			cfg_file_fail(ini, g, keys[i], "%g: must be > 0 (%s)", v,
				      i == 0 ? "the standard deviation of the realtime clock's error against UTC, us"
					     : "the correlation time of that error, s");
		else if (i == 0)
			n->utc.sigma_ns = v * 1e3;
		else
			n->utc.tau_s = v;
	}
}

/* The clocks' wander: random walks and a temperature cycle (seeds are set
 * by build(), which knows the world's seed). */
static void load_wander(cfg_file *ini, const char *g, sim_node_cfg *n)
{
	size_t nt;
	double *tc = cfg_file_double_list(ini, g, "temperature_cycle", &nt);
	double amp = 0, period = 86400, phase = 0;
	if (nt != 2 && nt != 3)
		cfg_file_fail(ini, g, "temperature_cycle", "%zu value(s); give AMPLITUDE_C, PERIOD_S[, PHASE_S]", nt);
	else if (tc[0] > 0 && !(tc[1] > 0))
		cfg_file_fail(ini, g, "temperature_cycle", "the period must be > 0 s");
	else {
		amp = tc[0];
		period = tc[1] > 0 ? tc[1] : 86400;
		phase = nt == 3 ? tc[2] : 0;
	}
	g_free(tc);
	double cpu_tc = cfg_file_double(ini, g, "tempco_ppm_per_c"), audio_tc = cfg_file_double(ini, g, "audio_tempco_ppm_per_c");
	if (amp > 0 && cpu_tc == 0 && audio_tc == 0)
		cfg_file_fail(ini, g, "temperature_cycle",
			      "no clock follows it: give tempco_ppm_per_c (the cpu crystal, ~0.1-1) and/or "
			      "audio_tempco_ppm_per_c (the sound card's, often more)");
	n->cpu.wander = (sync_wander){.rw_ppb = cfg_file_double(ini, g, "cpu_wander_ppb_per_s"), .temp_amp_c = amp, .temp_period_s = period, .temp_phase_s = phase, .tempco_ppm_per_c = cpu_tc};
	n->audio_wander = (sync_wander){.rw_ppb = cfg_file_double(ini, g, "audio_wander_ppb_per_s"), .temp_amp_c = amp, .temp_period_s = period, .temp_phase_s = phase, .tempco_ppm_per_c = audio_tc};
}

void sim_node_load(cfg_file *ini, const char *g, sim_node_cfg *n)
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
	load_wander(ini, g, n);
	load_utc(ini, g, n);
	n->latency = (sim_latency_dist)cfg_file_enum(ini, g, "irq_latency");
	n->latency_mean_ns = cfg_file_double(ini, g, "irq_latency_mean_us") * 1e3;
	n->latency_sd_ns = cfg_file_double(ini, g, "irq_latency_sd_us") * 1e3;
	n->latency_mix_fraction = cfg_file_double(ini, g, "irq_latency_mix_fraction");
	n->latency_mix_mean_ns = cfg_file_double(ini, g, "irq_latency_mix_mean_us") * 1e3;
	n->latency_floor_ns = cfg_file_double(ini, g, "irq_latency_floor_us") * 1e3;
	size_t ncal;
	double *cal = cfg_file_double_list(ini, g, "calibrated_floor_us", &ncal);
	if (ncal != 2)
		cfg_file_fail(ini, g, "calibrated_floor_us",
			      "%zu value(s); give FLOOR, SD in us (the floor the node's operator calibrated, told "
			      "to audiod as latency_floor_us and latency_floor_sd_us)",
			      ncal);
	else {
		n->calibrated_floor_ns = cal[0] * 1e3;
		n->calibrated_floor_sd_ns = cal[1] * 1e3;
	}
	g_free(cal);
	n->radio_jitter_ns = cfg_file_double(ini, g, "radio_jitter_ns");
	/* A delay attack on one link: what this node receives from one sender
	 * is timestamped late (a relay passing genuine packets on late). */
	n->radio_delay_from = cfg_file_has(ini, g, "radio_delay_from") ? (int)cfg_file_int(ini, g, "radio_delay_from") : 0;
	n->radio_delay_ns = cfg_file_double(ini, g, "radio_delay_us") * 1e3;
	n->radio_delay_after_s = cfg_file_double(ini, g, "radio_delay_after_s");
	static const char *const delay_keys[] = {"radio_delay_us", "radio_delay_after_s"};
	for (int i = 0; i < 2; i++)
		if (cfg_file_has(ini, g, delay_keys[i]) && !n->radio_delay_from)
			cfg_file_fail(ini, g, delay_keys[i], "only used with radio_delay_from (the sender whose packets this node receives late)");
	if (n->radio_delay_from && n->radio_delay_from == n->id)
		cfg_file_fail(ini, g, "radio_delay_from", "%d is this node: the delayed link is from another sender", n->id);
	n->survey_error_m = cfg_file_double(ini, g, "survey_error_m");
	n->survey_heading_deg = cfg_file_double(ini, g, "survey_heading_deg");
	if (n->latency == SIM_LAT_UNIFORM && n->latency_mean_ns < sqrt(3.0) * n->latency_sd_ns)
		cfg_file_fail(ini, g, cfg_file_has(ini, g, "irq_latency_sd_us") ? "irq_latency_sd_us" : "irq_latency",
			      "uniform latency needs mean >= sqrt(3) * sd (it spans mean ± sqrt(3) sd and cannot be negative)");
	if (cfg_file_has(ini, g, "irq_latency_sd_us") &&
	    (n->latency == SIM_LAT_EXPONENTIAL || n->latency == SIM_LAT_CONSTANT))
		cfg_file_fail(ini, g, "irq_latency_sd_us", "not used by irq_latency = %s",
			      latencies[n->latency]);
	if (cfg_file_has(ini, g, "irq_latency_sd_us") && n->latency == SIM_LAT_MIXTURE)
		cfg_file_fail(ini, g, "irq_latency_sd_us",
			      "not used by irq_latency = mixture (two exponentials: irq_latency_mean_us and "
			      "irq_latency_mix_mean_us, the second with probability irq_latency_mix_fraction)");
	static const char *const mix_keys[] = {"irq_latency_mix_fraction", "irq_latency_mix_mean_us"};
	for (int i = 0; i < 2; i++)
		if (cfg_file_has(ini, g, mix_keys[i]) && n->latency != SIM_LAT_MIXTURE)
			cfg_file_fail(ini, g, mix_keys[i], "only used by irq_latency = mixture (not %s)",
				      latencies[n->latency]);
}