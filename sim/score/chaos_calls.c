/* chaos_calls.c — judged calls under faults (chaos_calls.h). */
#include "sim/score/chaos_calls.h"

#include <math.h>
#include <string.h>

int chaos_calls_up(const sim_world *w, const demo_call *c, const chaos_fault *f, size_t n)
{
	int up = 0;
	for (int h = 0; h < MIN(c->heard, DEMO_HEARD_IDS); h++) {
		int node = c->heard_id[h];
		double arr = sim_world_arrival_s(w, node, 0, c->src, c->k);
		if (!isfinite(arr))
			arr = c->t_s; /* an unknown node: the call's start */
		double lo = arr - CHAOS_CALLS_BEFORE_S, hi = arr + CHAOS_CALLS_AFTER_S;
		gboolean hit = FALSE;
		for (size_t i = 0; i < n && !hit; i++)
			hit = (f[i].node < 0 || f[i].node == node) && f[i].from_s <= hi && f[i].to_s >= lo;
		up += !hit;
	}
	return up;
}

int chaos_calls_judge(const sim_world *w, const demo_eval *ev, const chaos_fault *f, size_t n, GString *out,
		      chaos_calls_tally *t)
{
	memset(t, 0, sizeof *t);
	int failures = 0;
	for (guint i = 0; i < ev->calls->len; i++) {
		const demo_call *c = &g_array_index(ev->calls, demo_call, i);
		t->calls++;
		int up = chaos_calls_up(w, c, f, n);
		if (up < CHAOS_CALLS_MIN_NODES)
			continue;
		t->judged++;
		const char *v = c->verdict ? c->verdict : "missed";
		if (!strcmp(v, "located")) {
			t->located++;
			continue;
		}
		t->off += !strcmp(v, "off");
		t->not_ok += !strcmp(v, "not_ok");
		t->missed += !strcmp(v, "missed");
		failures++;
		if (out)
			g_string_append_printf(out, "  source %d call at %.3f s: heard by %d nodes up for it, %s (%s, error %.3f m)\n",
					       c->source, c->t_s, up, v, c->status, c->err_m);
	}
	return failures;
}
