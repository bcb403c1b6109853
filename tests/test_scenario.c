/* test_scenario.c — scenario files: defaults, shipped files, and precise
 * errors (file, line, group, key, why) for a set of broken files. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim/scenario.h"
#include "tests/check_run.h"

static char *load_error(const char *text)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("bad.ini", text, NULL, &err);
	ck_assert_msg(!sc, "expected an error for:\n%s", text);
	ck_assert(err);
	char *msg = g_strdup(err->message);
	g_error_free(err);
	return msg;
}

START_TEST(defaults_are_applied)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("min.ini", "[node.5]\nposition_m = 1, 2\n"
							     "[source.0]\nposition_m = 3,4,5\ncall_rate_hz = 0.5\n",
						  NULL, &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	const sim_world_cfg *w = sim_scenario_world(sc);
	/* From the default 20 °C: 331.3 sqrt(1 + 20 / 273.15). */
	ck_assert_double_eq_tol(w->speed_of_sound_m_s, 343.2146, 1e-4);
	ck_assert_double_eq(w->noise_dbfs, -60);
	ck_assert_int_eq(w->seed, 1);
	ck_assert_double_eq(w->duration_s, 60);
	ck_assert_double_eq(w->min_distance_m, 0.1);
	ck_assert_double_eq(w->radio_range_m, 100);
	ck_assert_double_eq(w->radio_loss, 0);
	ck_assert_uint_eq(w->sample_rate_hz, 48000);
	ck_assert_uint_eq(w->period_frames, 480);
	ck_assert_uint_eq(w->buffer_periods, 4);
	ck_assert_int_eq(w->format, SIM_FMT_S16_LE);
	ck_assert_double_eq(w->xrun_every_s, 0);

	ck_assert_uint_eq(sim_scenario_n_nodes(sc), 1);
	const sim_node_cfg *n = sim_scenario_find_node(sc, 5);
	ck_assert_ptr_nonnull(n);
	ck_assert_int_eq(n->line, 1);
	ck_assert(n->pos_m[0] == 1 && n->pos_m[1] == 2 && n->pos_m[2] == 0);
	ck_assert_uint_eq(n->n_mics, 1);
	ck_assert(n->mics_m[0][0] == 0 && n->mics_m[0][1] == 0 && n->mics_m[0][2] == 0);
	ck_assert_double_eq(n->cpu.skew_ppm, 0);
	ck_assert_int_eq(n->cpu.offset_ns, 0);
	ck_assert_double_eq(n->audio_skew_ppm, 0);
	ck_assert_int_eq(n->latency, SIM_LAT_EXPONENTIAL);
	ck_assert_double_eq(n->latency_mean_ns, 20000);
	ck_assert_double_eq(n->latency_sd_ns, 5000);
	ck_assert_double_eq(n->radio_jitter_ns, 1000);

	const sim_source_cfg *s = sim_scenario_source(sc, 0);
	ck_assert_int_eq(s->id, 0);
	ck_assert_double_eq(s->level_dbfs, -20);
	ck_assert_double_eq(s->call_rate_hz, 0.5);
	ck_assert_double_eq(s->call_start_s, 0);
	ck_assert_double_eq(s->call_end_s, 60); /* the world's duration */
	ck_assert_int_eq(s->wave.kind, DSP_WAVE_PULSE_TRAIN);
	ck_assert_double_eq(s->wave.carrier_hz, 2000);
	ck_assert_double_eq(s->wave.pulse_ms, 4);
	ck_assert_double_eq(s->wave.pulse_interval_ms, 25);
	ck_assert_int_eq(s->wave.pulses, 8);
	sim_scenario_free(sc);
}
END_TEST

START_TEST(values_are_read)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("v.ini",
						  "# comment\n[world]\nspeed_of_sound_m_s = 340.5\nseed = 99\nformat = FLOAT_LE\nxrun_every_s = 2.5\n"
						  "[node.2]\nposition_m = 1,2,3\nmics_m = 0,0,0; 0.1,0.2,0.3;\ncpu_skew_ppm = -12.5\n"
						  "cpu_offset_ns = -7000000000\naudio_skew_ppm = 40\nirq_latency = normal\n"
						  "irq_latency_mean_us = 15\nirq_latency_sd_us = 3\nradio_jitter_ns = 250\n"
						  "[source.3]\nposition_m = 0,0\nwaveform = chirp\nf0_hz = 500\nf1_hz = 900\nsweep = exponential\n"
						  "length_ms = 80\ncall_times_s = 1, 2.5 ,4\n",
						  NULL, &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	ck_assert_double_eq(sim_scenario_world(sc)->speed_of_sound_m_s, 340.5);
	ck_assert_int_eq(sim_scenario_world(sc)->seed, 99);
	ck_assert_int_eq(sim_scenario_world(sc)->format, SIM_FMT_FLOAT_LE);
	const sim_node_cfg *n = sim_scenario_node(sc, 0);
	ck_assert_uint_eq(n->n_mics, 2);
	ck_assert_double_eq(n->mics_m[1][2], 0.3);
	ck_assert_int_eq(n->cpu.offset_ns, -7000000000LL);
	ck_assert_int_eq(n->latency, SIM_LAT_NORMAL);
	ck_assert_double_eq(n->latency_sd_ns, 3000);
	const sim_source_cfg *s = sim_scenario_source(sc, 0);
	ck_assert_int_eq(s->wave.kind, DSP_WAVE_CHIRP);
	ck_assert_int_eq(s->wave.sweep, DSP_SWEEP_EXPONENTIAL);
	ck_assert_uint_eq(s->n_call_times, 3);
	ck_assert_double_eq(s->call_times_s[1], 2.5);
	sim_scenario_free(sc);
}
END_TEST

START_TEST(shipped_scenarios_load)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load(SIM_SRC_DIR "/scenarios/default.ini", &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	ck_assert_uint_eq(sim_scenario_n_nodes(sc), 6);
	ck_assert_uint_eq(sim_scenario_n_sources(sc), 3);
	ck_assert_double_eq(sim_scenario_world(sc)->duration_s, 60);
	for (size_t i = 0; i < 6; i++) {
		const sim_node_cfg *n = sim_scenario_node(sc, i);
		ck_assert(fabs(n->cpu.skew_ppm) <= 50 && fabs(n->audio_skew_ppm) <= 40);
		ck_assert(n->pos_m[0] >= 0 && n->pos_m[0] <= 30 && n->pos_m[1] >= 0 && n->pos_m[1] <= 30);
	}
	sim_scenario_free(sc);
	sc = sim_scenario_load(SIM_SRC_DIR "/scenarios/test.ini", &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	ck_assert_double_eq(sim_scenario_node(sc, 1)->calibrated_floor_ns, 12500);
	ck_assert_double_eq(sim_scenario_node(sc, 1)->calibrated_floor_sd_ns, 1000);
	sim_scenario_free(sc);
	sc = sim_scenario_load(SIM_SRC_DIR "/scenarios/shapes.ini", &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	ck_assert_int_eq(sim_scenario_node(sc, 3)->latency, SIM_LAT_MIXTURE);
	ck_assert_double_eq(sim_scenario_node(sc, 3)->latency_mix_mean_ns, 200000);
	sim_scenario_free(sc);
	/* bench/outage's scenarios: each has its outage */
	static const char *const outage[] = {"radio60", "temperature300", "rootkill", "partition", "calls60", "callsplit"};
	for (size_t i = 0; i < G_N_ELEMENTS(outage); i++) {
		char *path = g_strdup_printf(SIM_SRC_DIR "/scenarios/outage/%s.ini", outage[i]);
		sc = sim_scenario_load(path, &err);
		ck_assert_msg(sc, "%s", err ? err->message : "");
		ck_assert_uint_eq(sim_scenario_n_outages(sc), 1);
		sim_scenario_free(sc);
		g_free(path);
	}
}
END_TEST

/* Each broken file and the exact "file:line: [group] key:" prefix plus a
 * fragment of the reason it must produce. */
static const struct {
	const char *text;
	const char *where;
	const char *why;
} broken[] = {
	{"[world]\nspeed_of_sond = 340\n[node.1]\nposition_m=0,0\n",
	 "bad.ini:2: [world] speed_of_sond: ", "unknown key (did you mean speed_of_sound_m_s?)"},
	{"[world]\n\nsample_rate_hz = 1000\n[node.1]\nposition_m=0,0\n",
	 "bad.ini:3: [world] sample_rate_hz: ", "1000 is out of range [8000, 192000]"},
	{"[world]\nnoise_dbfs = loud\n[node.1]\nposition_m=0,0\n",
	 "bad.ini:2: [world] noise_dbfs: ", "'loud' is not a number"},
	{"[world]\nseed = 1.5\n[node.1]\nposition_m=0,0\n",
	 "bad.ini:2: [world] seed: ", "'1.5' is not an integer"},
	{"[nodes.1]\nposition_m = 0,0\n", "bad.ini:1: [nodes.1] ", "unknown group (did you mean [node.1]?)"},
	{"[node.x]\nposition_m = 0,0\n", "bad.ini:1: [node.x] ", "[node.N] with N a non-negative integer"},
	{"[world.2]\n[node.1]\nposition_m=0,0\n", "bad.ini:1: [world.2] ", "[world] takes no number"},
	{"[node.1]\nmics_m = 0,0\n", "bad.ini:1: [node.1] position_m: ", "required key is missing"},
	{"[node.1]\nposition_m = 0,0\nirq_latency = gaussian\n", "bad.ini:3: [node.1] irq_latency: ",
	 "'gaussian' is not one of: exponential, normal, uniform, constant, mixture"},
	{"[node.1]\nposition_m = 0,0\nirq_latency_mix_fraction = 0.2\n", "bad.ini:3: [node.1] irq_latency_mix_fraction: ",
	 "only used by irq_latency = mixture (not exponential)"},
	{"[node.1]\nposition_m = 0,0\nirq_latency = mixture\nirq_latency_sd_us = 3\n",
	 "bad.ini:4: [node.1] irq_latency_sd_us: ", "not used by irq_latency = mixture"},
	{"[node.1]\nposition_m = 0,0\nirq_latency = mixture\nirq_latency_mix_fraction = 1.5\n",
	 "bad.ini:4: [node.1] irq_latency_mix_fraction: ", "out of range [0, 1]"},
	{"[node.1]\nposition_m = 0,0\ncalibrated_floor_us = 12\n", "bad.ini:3: [node.1] calibrated_floor_us: ",
	 "1 value(s); give FLOOR, SD in us"},
	{"[node.1]\nposition_m = 1,2,3,4\n", "bad.ini:2: [node.1] position_m: ", "is not a position x,y[,z]"},
	{"[node.1]\nposition_m = 0,0\nmics_m = 0,0,0; 1,x\n", "bad.ini:3: [node.1] mics_m: ", "not a list of positions"},
	{"[node.1]\nposition_m = 0,0\nposition_m = 1,1\n", "bad.ini:3: [node.1] position_m: ", "key given twice (first at line 2)"},
	{"[node.1]\nposition_m = 0,0\n[node.1]\n", "bad.ini:3: [node.1] ", "group defined twice (first at line 1)"},
	{"[node.1]\nposition_m = 0,0\nthis is junk\n", "bad.ini:3: [node.1] ", "is not a group header, a key = value line"},
	{"seed = 3\n[node.1]\nposition_m = 0,0\n", "bad.ini:1: seed: ", "key before any [group]"},
	{"[node.1]\nposition_m = 0,0\n[node.01]\nposition_m = 1,1\n", "bad.ini:3: [node.01] ", "node 1 is already defined"},
	{"[node.1]\nposition_m = 0,0\nirq_latency = uniform\nirq_latency_mean_us = 10\nirq_latency_sd_us = 10\n",
	 "bad.ini:5: [node.1] irq_latency_sd_us: ", "uniform latency needs mean >= sqrt(3) * sd"},
	{"[node.1]\nposition_m = 0,0\nirq_latency_sd_us = 3\n", "bad.ini:3: [node.1] irq_latency_sd_us: ",
	 "not used by irq_latency = exponential"},
	{"[world]\nseed = 2\n", "bad.ini:1: [world] ", "the scenario has no [node.N] group"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_times_s = 1\ncall_rate_hz = 2\n",
	 "bad.ini:6: [source.1] call_rate_hz: ", "give either call_times_s or call_rate_hz, not both"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\n", "bad.ini:3: [source.1] ",
	 "give call_times_s (a list of s) or call_rate_hz"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\nwaveform = tone\nf0_hz = 300\n",
	 "bad.ini:7: [source.1] f0_hz: ", "not used by waveform = tone"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\ncarrier_hz = 30000\n",
	 "bad.ini:6: [source.1] carrier_hz: ", "not below the Nyquist frequency 24000 Hz"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\nwaveform = file\nfile = /nonexistent/frog.wav\n",
	 "bad.ini:7: [source.1] file: ", "cannot open '/nonexistent/frog.wav'"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\nwaveform = file\n",
	 "bad.ini:6: [source.1] waveform: ", "waveform = file needs the key file"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\ncall_start_s = 5\ncall_end_s = 2\n",
	 "bad.ini:7: [source.1] call_end_s: ", "must be after call_start_s"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_times_s = 1, 2\ncall_gap_s = 1\n",
	 "bad.ini:6: [source.1] call_gap_s: ", "only used with call_rate_hz"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_times_s = 1,-2\n",
	 "bad.ini:5: [source.1] call_times_s: ", "value -2 is out of range"},
	{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 1\npulse_ms = 30\n",
	 "bad.ini:6: [source.1] pulse_ms: ", "longer than pulse_interval_ms"},
	{"[node.1]\nposition_m = 0,0\n[sauce.1]\nposition_m = 1,1\n", "bad.ini:3: [sauce.1] ",
	 "unknown group (did you mean [source.1]?)"},
	{"[node.1]\nposition_m = 0,0\ntemperature_cycle = 5, 600\n", "bad.ini:3: [node.1] temperature_cycle: ",
	 "no clock follows it: give tempco_ppm_per_c"},
	{"[node.1]\nposition_m = 0,0\ntemperature_cycle = 5\ntempco_ppm_per_c = 0.3\n",
	 "bad.ini:3: [node.1] temperature_cycle: ", "1 value(s); give AMPLITUDE_C, PERIOD_S[, PHASE_S]"},
	{"[node.1]\nposition_m = 0,0\ntemperature_cycle = 5, 600, 1, 2\ntempco_ppm_per_c = 0.3\n",
	 "bad.ini:3: [node.1] temperature_cycle: ", "4 value(s); give AMPLITUDE_C, PERIOD_S[, PHASE_S]"},
	{"[node.1]\nposition_m = 0,0\ntemperature_cycle = 5, 0\ntempco_ppm_per_c = 0.3\n",
	 "bad.ini:3: [node.1] temperature_cycle: ", "the period must be > 0 s"},
	{"[node.1]\nposition_m = 0,0\ncpu_wander_ppb_per_s = -1\n", "bad.ini:3: [node.1] cpu_wander_ppb_per_s: ",
	 "out of range"},
	{"[node.1]\nposition_m = 0,0\nradio_down = 10-5\n", "bad.ini:3: [node.1] radio_down: ",
	 "window 1 (10-5 s): the end is not after the start"},
	{"[node.1]\nposition_m = 0,0\nradio_down = 1-20, 15-30\n", "bad.ini:3: [node.1] radio_down: ",
	 "window 2 (15-30 s) starts before the previous one ends (20 s)"},
	{"[node.1]\nposition_m = 0,0\nradio_down = 10\n", "bad.ini:3: [node.1] radio_down: ",
	 "window 1 ('10'): expected T0-T1"},
	{"[node.1]\nposition_m = 0,0\ndown = 3-x\n", "bad.ini:3: [node.1] down: ", "window 1 ('3-x'): expected T0-T1"},
	{"[node.1]\nposition_m = 0,0\ndown = 3-4\n", "bad.ini:3: [node.1] down: ", "shorter than 2 s"},
	{"[world]\npartition = 10-20: 1\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] partition: ",
	 "two or more groups"},
	{"[world]\npartition = 10-20: 1 | 2\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] partition: ",
	 "node 2 is not in the scenario"},
	{"[world]\npartition = 10-20: 1 | 1\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] partition: ",
	 "node 1 is in two groups"},
	{"[world]\npartition = 1,2 | 3\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] partition: ",
	 "expected T0-T1: NODES | NODES"},
	{"[world]\npartition = 5-9: 1 | 2\n[node.1]\nposition_m = 0,0\n[node.2]\nposition_m = 1,0\n[node.3]\nposition_m = 2,0\n",
	 "bad.ini:2: [world] partition: ", "node 3 is in no group"},
	{"[world]\nduration_s = 1e7\n[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\ncall_rate_hz = 10000\n",
	 "bad.ini:7: [source.1] call_rate_hz: ", "is 1e+11 calls; a source makes at most 20000"},
};

START_TEST(broken_files_are_reported_precisely)
{
	char *msg = load_error(broken[_i].text);
	char *expect = g_strconcat(broken[_i].where, NULL);
	ck_assert_msg(g_str_has_prefix(msg, expect) && strstr(msg, broken[_i].why),
		      "case %d: got\n  %s\nexpected\n  %s...%s", _i, msg, broken[_i].where, broken[_i].why);
	g_free(expect);
	g_free(msg);
}
END_TEST

START_TEST(every_error_is_reported_not_just_the_first)
{
	char *msg = load_error("[world]\nspeed_of_sound_m_s = 1\nnoise_dbfs = x\n[node.1]\nposition_m = 0,0\n"
			       "cpu_skew_ppm = 1e9\nfoo = 1\n");
	char **lines = g_strsplit(msg, "\n", -1);
	ck_assert_int_eq(g_strv_length(lines), 4);
	ck_assert(g_str_has_prefix(lines[0], "bad.ini:2: [world] speed_of_sound_m_s: "));
	ck_assert(g_str_has_prefix(lines[1], "bad.ini:3: [world] noise_dbfs: "));
	ck_assert(g_str_has_prefix(lines[2], "bad.ini:6: [node.1] cpu_skew_ppm: "));
	ck_assert(g_str_has_prefix(lines[3], "bad.ini:7: [node.1] foo: unknown key"));
	g_strfreev(lines);
	g_free(msg);
}
END_TEST

/* Outage windows: parsed, queried, and the phase of a time. */
START_TEST(outages_are_read)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("o.ini",
						  "[node.1]\nposition_m = 0,0,0\nradio_down = 10 - 20, 30.5-40,\n"
						  "[node.2]\nposition_m = 1,0,0\ndown = 5-8\n[node.3]\nposition_m = 2,0,0\n",
						  NULL, &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	const sim_node_cfg *a = sim_scenario_find_node(sc, 1), *b = sim_scenario_find_node(sc, 2),
			   *c = sim_scenario_find_node(sc, 3);
	ck_assert_uint_eq(a->n_radio_down, 2);
	ck_assert_double_eq(a->radio_down[1].from_s, 30.5);
	ck_assert_double_eq(a->radio_down[1].to_s, 40);
	ck_assert_uint_eq(a->n_down, 0);
	ck_assert_uint_eq(b->n_down, 1);
	ck_assert_uint_eq(c->n_radio_down + c->n_down, 0);
	ck_assert_uint_eq(sim_scenario_n_outages(sc), 3);
	ck_assert(!sim_node_cut_off(a, 9.999));
	ck_assert(sim_node_cut_off(a, 10));
	ck_assert(!sim_node_cut_off(a, 20)); /* [from, to) */
	ck_assert(sim_node_cut_off(b, 7));
	ck_assert_int_eq(sim_node_phase(a, 5), SIM_PHASE_BEFORE);
	ck_assert_int_eq(sim_node_phase(a, 15), SIM_PHASE_DURING);
	ck_assert_int_eq(sim_node_phase(a, 25), SIM_PHASE_AFTER);
	ck_assert_int_eq(sim_node_phase(a, 35), SIM_PHASE_DURING);
	ck_assert_int_eq(sim_node_phase(c, 35), SIM_PHASE_BEFORE);
	ck_assert_int_eq(sim_phase_worse(SIM_PHASE_AFTER, SIM_PHASE_BEFORE), SIM_PHASE_AFTER);
	ck_assert_int_eq(sim_phase_worse(SIM_PHASE_AFTER, SIM_PHASE_DURING), SIM_PHASE_DURING);
	ck_assert_int_eq(sim_phase_worse(SIM_PHASE_BEFORE, SIM_PHASE_DURING), SIM_PHASE_DURING);
	sim_scenario_free(sc);
	/* A partition: the groups hear each other not at all in its window. */
	sc = sim_scenario_load_data("p.ini",
				    "[world]\npartition = 60-180: 1, 2 | 3,4\n[node.1]\nposition_m = 0,0,0\n"
				    "[node.2]\nposition_m = 1,0,0\n[node.3]\nposition_m = 2,0,0\n[node.4]\nposition_m = 3,0,0\n",
				    NULL, &err);
	ck_assert_msg(sc, "%s", err ? err->message : "");
	const sim_node_cfg *p1 = sim_scenario_find_node(sc, 1), *p2 = sim_scenario_find_node(sc, 2),
			   *p3 = sim_scenario_find_node(sc, 3);
	ck_assert(!sim_nodes_split(p1, p3, 59.9));
	ck_assert(sim_nodes_split(p1, p3, 60));
	ck_assert(!sim_nodes_split(p1, p2, 100));
	ck_assert(!sim_nodes_split(p1, p3, 180));
	ck_assert(!sim_node_cut_off(p1, 100)); /* it still hears its own group */
	ck_assert_int_eq(sim_node_phase(p3, 100), SIM_PHASE_DURING);
	ck_assert_int_eq(sim_node_phase(p3, 200), SIM_PHASE_AFTER);
	ck_assert_uint_eq(sim_scenario_n_outages(sc), 1);
	sim_scenario_free(sc);
	char why[160];
	size_t n = 9;
	ck_assert_ptr_null(sim_windows_parse("", &n, why, sizeof why));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(sim_windows_parse("-1-5", &n, why, sizeof why));
	ck_assert_msg(strstr(why, "window 1"), "%s", why);
	ck_assert_ptr_null(sim_windows_parse("0-2e7", &n, why, sizeof why));
	ck_assert_msg(strstr(why, "outside 0-1e7 s"), "%s", why);
}
END_TEST

START_TEST(missing_file_names_the_file)
{
	GError *err = NULL;
	ck_assert_ptr_null(sim_scenario_load("/nonexistent/x.ini", &err));
	ck_assert(g_str_has_prefix(err->message, "/nonexistent/x.ini: cannot read"));
	g_error_free(err);
}
END_TEST

START_TEST(line_index_tracks_real_lines)
{
	/* Comments, blank lines, CRLF endings and indentation do not shift lines. */
	GError *err = NULL;
	const cfg_key keys[] = {{.name = "a", .type = CFG_INT, .def = "1", .min = 0, .max = 10}, {NULL}};
	const cfg_group groups[] = {{.name = "g", .numbered = 1, .keys = keys}, {NULL}};
	cfg_file *ini = cfg_file_load_data("x.ini", "# c\r\n\r\n  [g.1]\r\n  # c\r\n   a = 3\r\n[g.2]\n", groups, &err);
	ck_assert_msg(ini, "%s", err ? err->message : "");
	ck_assert_int_eq(cfg_file_line(ini, "g.1", NULL), 3);
	ck_assert_int_eq(cfg_file_line(ini, "g.1", "a"), 5);
	ck_assert_int_eq(cfg_file_line(ini, "g.2", "a"), 6); /* absent: the group's line */
	ck_assert_int_eq(cfg_file_int(ini, "g.1", "a"), 3);
	ck_assert_int_eq(cfg_file_int(ini, "g.2", "a"), 1);
	const char *const *gs = cfg_file_groups(ini, "g");
	ck_assert_str_eq(gs[0], "g.1");
	ck_assert_str_eq(gs[1], "g.2");
	ck_assert_ptr_null(gs[2]);
	cfg_file_fail(ini, "g.1", "a", "too %s", "big");
	ck_assert(!cfg_file_check(ini, &err));
	ck_assert_str_eq(err->message, "x.ini:5: [g.1] a: too big");
	g_error_free(err);
	cfg_file_free(ini);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("scenario");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, defaults_are_applied);
	tcase_add_test(tc, values_are_read);
	tcase_add_test(tc, shipped_scenarios_load);
	tcase_add_loop_test(tc, broken_files_are_reported_precisely, 0, G_N_ELEMENTS(broken));
	tcase_add_test(tc, every_error_is_reported_not_just_the_first);
	tcase_add_test(tc, outages_are_read);
	tcase_add_test(tc, missing_file_names_the_file);
	tcase_add_test(tc, line_index_tracks_real_lines);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
