/* scenario_int.h — what sim/scenario.c and sim/scenario_node.c share
 * (internal to the scenario parser; see sim/scenario.h for its interface). */
#ifndef CHORUS_SIM_SCENARIO_INT_H
#define CHORUS_SIM_SCENARIO_INT_H

#include "libcfg/cfg.h"
#include "sim/scenario.h"

/* Table entries: a real, an integer, an enum (name, default, range / choices). */
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
/* The keys of [node.N] (docs/scenario.md). */
extern const cfg_key sim_node_keys[];

/* Read group g ("node.N") into *n: position, mics, clocks (the wander's and
 * the UTC source's seeds are left 0: build() sets them from the world's
 * seed), latency, radio and survey; every semantic error through
 * cfg_file_fail.  The outages are sim/scenario.c's (they need the
 * scenario's string store). */
void sim_node_load(cfg_file *ini, const char *g, sim_node_cfg *n);

#endif
