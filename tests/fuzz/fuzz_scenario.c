/* fuzz_scenario.c — libFuzzer target over the scenario parser
 * (sim/scenario.h, through libcfg's validation tables and GKeyFile): the
 * text a user writes, and what a misconfigured field hands chorus-sim.
 * Beyond "no crash, no sanitizer report": a scenario that loads has a node,
 * every outage window in order and within range, and a positive duration;
 * one that does not load says why with the file's name. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sim/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char *text = g_strndup((const char *)data, size);
	/* No file source may reach outside a directory that does not exist. */
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("fuzz.ini", text, "/nonexistent-fuzz-dir", &err);
	if (sc) {
		assert(sim_scenario_n_nodes(sc) >= 1);
		assert(sim_scenario_world(sc)->duration_s > 0);
		for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
			const sim_node_cfg *n = sim_scenario_node(sc, i);
			const sim_window *w[2] = {n->radio_down, n->down};
			size_t k[2] = {n->n_radio_down, n->n_down};
			for (int j = 0; j < 2; j++)
				for (size_t q = 0; q < k[j]; q++) {
					assert(w[j][q].from_s >= 0 && w[j][q].to_s > w[j][q].from_s && w[j][q].to_s <= 1e7);
					assert(q == 0 || w[j][q].from_s >= w[j][q - 1].to_s);
				}
			assert(isfinite(n->pos_m[0]) && isfinite(n->pos_m[1]) && isfinite(n->pos_m[2]));
		}
		sim_scenario_free(sc);
	} else {
		assert(err && g_str_has_prefix(err->message, "fuzz.ini"));
		g_error_free(err);
	}
	g_free(text);
	return 0;
}
