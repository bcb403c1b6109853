/* world_fixture.c — see world_fixture.h. */
#include "tests/world_fixture.h"

#include <check.h>
#include <glib.h>

fixture fixture_make(const char *name, const char *text)
{
	fixture f;
	GError *err = NULL;
	f.sc = sim_scenario_load_data(name, text, g_getenv("CHORUS_RUN"), &err);
	ck_assert_msg(f.sc, "scenario: %s", err ? err->message : "?");
	f.w = sim_world_new(f.sc, &err);
	ck_assert_msg(f.w, "world: %s", err ? err->message : "?");
	return f;
}

void fixture_drop(fixture f)
{
	sim_world_free(f.w);
	sim_scenario_free(f.sc);
}
