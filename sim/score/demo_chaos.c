/* demo_chaos.c — chorus-demo --chaos (demo_chaos.h). */
#include "sim/score/demo_chaos.h"

#include <string.h>

#include "sim/launch/chaos.h"
#include "sim/score/chaos_calls.h"

struct demo_chaos {
	csim_chaos *chaos;
	csim *s;
	csim_truth *truth;
	GString *text;
	GArray *faults; /* chaos_fault, after finish */
};

/* chaos restarted a program: an audiod's numbering is found again. */
static void on_restarted(void *user, int node, const char *prog)
{
	if (!strcmp(prog, "audiod"))
		csim_truth_audio_restarted(user, node);
}

demo_chaos *demo_chaos_start(csim *s, csim_truth *truth, guint64 seed, double interval_s, gboolean hog,
			     gboolean radio)
{
	demo_chaos *c = g_new0(demo_chaos, 1);
	c->s = s;
	c->truth = truth;
	c->text = g_string_new(NULL);
	c->chaos = csim_chaos_new(s, seed, interval_s, on_restarted, truth);
	csim_chaos_hog(c->chaos, hog);
	csim_chaos_radio(c->chaos, radio);
	return c;
}

int demo_chaos_finish(demo_chaos *c, const char *csv_path)
{
	int failures = csim_chaos_report(c->chaos, c->text, csv_path);
	GArray *spans = csim_chaos_spans(c->chaos);
	c->faults = g_array_new(FALSE, FALSE, sizeof(chaos_fault));
	for (guint i = 0; i < spans->len; i++) {
		const csim_chaos_span *sp = &g_array_index(spans, csim_chaos_span, i);
		chaos_fault f = {sp->node, sp->from_s, sp->to_s};
		g_array_append_val(c->faults, f);
	}
	g_array_free(spans, TRUE);
	const sim_scenario *sc = csim_scenario(c->s);
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
		int id = sim_scenario_node(sc, i)->id, k = csim_truth_renumbered(c->truth, id);
		if (k)
			g_string_append_printf(c->text, "chaos: node%d's audiod numbered its frames anew after %d of its restarts\n", id, k);
	}
	return failures;
}

int demo_chaos_judge(demo_chaos *c, const sim_world *w, const demo_eval *ev, int min_nodes, const char *baseline, FILE *f)
{
	GArray *b = NULL;
	if (baseline) {
		GError *err = NULL;
		if (!(b = chaos_baseline_load(baseline, &err))) {
			fprintf(f, "chaos: calls: baseline: %s\n", err->message);
			g_error_free(err);
			return -1;
		}
	}
	GString *lines = g_string_new(NULL);
	chaos_calls_tally t;
	const GArray *fa = c->faults;
	int failures = chaos_calls_judge(w, ev, fa ? (const chaos_fault *)(const void *)fa->data : NULL, fa ? fa->len : 0,
					 min_nodes, b ? (const chaos_baseline_call *)(void *)b->data : NULL, b ? b->len : 0, lines, &t);
	fprintf(f, "\n%s", c->text->str);
	fprintf(f, "chaos: calls: %u scored, %u heard by >= %d nodes up for them (no fault %.0f s before to %.0f s after the arrival): %u located, %u missed, %u off, %u not ok; ",
		t.calls, t.judged, min_nodes, CHAOS_CALLS_BEFORE_S, CHAOS_CALLS_AFTER_S, t.located, t.missed, t.off,
		t.not_ok);
	if (b)
		fprintf(f, "%u of those not located without faults either (baseline %s), %d lost to the faults\n%s", t.baseline,
			baseline, failures, lines->str);
	else
		fprintf(f, "no baseline: every one not located fails\n%s", lines->str);
	g_string_free(lines, TRUE);
	if (b)
		g_array_free(b, TRUE);
	/* Every conversion the truth measured (cpu, global, audio0) within 5
	 * of its stated standard errors, as chorus-sim --chaos requires. */
	guint bad = csim_truth_outliers(c->truth, 5.0), n = csim_truth_all(c->truth)->len;
	fprintf(f, "chaos: conversions: %u measured, %u beyond 5 of their standard errors (t-quantile rule for young fits)\n", n,
		bad);
	return failures + (int)bad + (n == 0);
}

void demo_chaos_free(demo_chaos *c)
{
	if (!c)
		return;
	csim_chaos_free(c->chaos);
	g_string_free(c->text, TRUE);
	if (c->faults)
		g_array_free(c->faults, TRUE);
	g_free(c);
}
