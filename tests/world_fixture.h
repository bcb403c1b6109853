/* world_fixture.h — a scenario from text and its world, for the simulator's
 * tests (test_world, test_propagation).  Relative file paths in the text
 * resolve against $CHORUS_RUN (tests/run gives each test its own). */
#ifndef CHORUS_TESTS_WORLD_FIXTURE_H
#define CHORUS_TESTS_WORLD_FIXTURE_H

#include "sim/scenario.h"
#include "sim/world.h"

typedef struct {
	sim_scenario *sc;
	sim_world *w;
} fixture;

/* Load the scenario text (named `name` in messages) and build its world;
 * fails the running Check test with the loader's message otherwise. */
fixture fixture_make(const char *name, const char *text);

/* Free both. */
void fixture_drop(fixture f);

#endif
