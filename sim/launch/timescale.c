/* timescale.c — the global timescales the simulated nodes define and
 * follow, against the simulator's clocks (see truth.h: hand-overs and
 * every node's own timescale steps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libsync/ticker_wire.h"
#include "sim/launch/truth_priv.h"

/* The root most tickers name now (-1: none). */
static int named_root(const csim_truth *t)
{
	int best = -1, best_n = 0;
	for (guint i = 0; i < t->nodes->len; i++) {
		const tnode *a = &g_array_index(t->nodes, tnode, i);
		if (a->down || !a->have || a->root == SYNC_TICKER_NO_ROOT)
			continue;
		int n = 0;
		for (guint j = 0; j < t->nodes->len; j++) {
			const tnode *b = &g_array_index(t->nodes, tnode, j);
			n += !b->down && b->have && b->root == a->root;
		}
		if (n > best_n || (n == best_n && (int)a->root < best)) {
			best_n = n;
			best = (int)a->root;
		}
	}
	return best;
}

/* Follow the named root's timescale; a change of root is a hand-over, and
 * its step is the new definition minus the old one (on the old root's
 * simulated clock, known after it died) at host time h. */
static void track_root(csim_truth *t, int64_t h)
{
	int r = named_root(t);
	tnode *root = r >= 0 ? csim_truth_node(t, r) : NULL;
	if (!root || root->down || !root->have || (int)root->root != r)
		return;
	int64_t x1 = sync_simclock_apply(&root->cpu, h), x2 = x1 + 100000000000LL;
	sync_graph_result g1, g2;
	char why[160];
	if (sync_graph_convert(root->g, sync_clock_cpu((uint32_t)r), sync_clock_global(), sync_tval_of(x1), x1, &g1, why,
			       sizeof why) < 0 ||
	    sync_graph_convert(root->g, sync_clock_cpu((uint32_t)r), sync_clock_global(), sync_tval_of(x2), x1, &g2, why,
			       sizeof why) < 0)
		return;
	double slope = ((double)(g2.value.i - g1.value.i) + (g2.value.f - g1.value.f)) / (double)(x2 - x1);
	if (t->def_root >= 0 && t->def_root != r) {
		tnode *old = csim_truth_node(t, t->def_root);
		double y_old = (double)(t->def_y0 - g1.value.i) + t->def_y0_f +
			       t->def_slope * (double)(sync_simclock_apply(&old->cpu, h) - t->def_x0);
		csim_handover ho = {.t_s = (double)(h - t->t0_ns) * 1e-9, .from = t->def_root, .to = r, .step_ns = g1.value.f - y_old};
		g_array_append_val(t->handovers, ho);
		g_message("truth: global hand-over node%d -> node%d: global stepped %+.0f ns", ho.from, ho.to, ho.step_ns);
	}
	t->def_root = r;
	t->def_x0 = x1;
	t->def_y0 = g1.value.i;
	t->def_y0_f = g1.value.f;
	t->def_slope = slope;
}

const GArray *csim_truth_handovers(const csim_truth *t)
{
	return t->handovers;
}

/* Node v's global at its cpu time x (from its own ticker), its variance,
 * and the line's slope there.  FALSE when v has no conversion to global now. */
static gboolean node_global(tnode *v, int64_t x, sync_tval *g, double *var, double *slope)
{
	sync_graph_result g1, g2;
	char why[160];
	int64_t x2 = x - 1000000000LL; /* a second back: inside a fit's data, where a step ahead may not be */
	if (sync_graph_convert(v->g, sync_clock_cpu((uint32_t)v->id), sync_clock_global(), sync_tval_of(x), x, &g1, why,
			       sizeof why) < 0 ||
	    sync_graph_convert(v->g, sync_clock_cpu((uint32_t)v->id), sync_clock_global(), sync_tval_of(x2), x, &g2, why,
			       sizeof why) < 0)
		return FALSE;
	*g = g1.value;
	*var = g1.var;
	*slope = ((double)(g1.value.i - g2.value.i) + (g1.value.f - g2.value.f)) / (double)(x - x2);
	return TRUE;
}

/* A root's stated drift from the timescale it continued (its sync/rbs
 * `continued:` line), kept on the node: 0 when it states none. */
static void read_drift(csim_truth *t, tnode *v)
{
	GByteArray *b = g_byte_array_new();
	v->drift_ns = 0;
	if (csim_truth_read_status(t, v, "sync/rbs", b) == 0) {
		const char *d = strstr((const char *)b->data, "drift from it now ");
		double us;
		if (d && sscanf(d, "drift from it now %lf us", &us) == 1 && us > 0)
			v->drift_ns = us * 1e3;
	}
	g_byte_array_free(b, TRUE);
}

/* Each node's own timescale: when the root it follows changes (a
 * partition's half joining the other's timescale, a hand-over), the step
 * its global makes there against its previous line extended. */
static void track_nodes(csim_truth *t, int64_t h)
{
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *v = &g_array_index(t->nodes, tnode, i);
		if (v->down || !v->have || v->root == SYNC_TICKER_NO_ROOT)
			continue;
		int64_t x = sync_simclock_apply(&v->cpu, h);
		sync_tval g;
		double slope, var;
		if (!node_global(v, x, &g, &var, &slope))
			continue;
		if (v->ts_have && v->ts_root != (int)v->root) {
			double was = (double)(v->ts_y0 - g.i) + v->ts_y0_f + v->ts_slope * (double)(x - v->ts_x0);
			const tnode *old = csim_truth_node(t, v->ts_root);
			csim_node_step st = {.t_s = (double)(h - t->t0_ns) * 1e-9, .node = v->id, .from = v->ts_root, .to = (int)v->root, .step_ns = g.f - was, .se_ns = sqrt(var + v->ts_var), .drift_ns = old ? old->drift_ns : 0};
			g_array_append_val(t->node_steps, st);
			g_message("truth: node%d's timescale, root node%d -> node%d: stepped %+.0f ns (s.e. %.0f ns; node%d "
				  "stated a drift of %.0f ns)",
				  st.node, st.from, st.to, st.step_ns, st.se_ns, st.from, st.drift_ns);
		}
		v->ts_have = TRUE;
		v->ts_root = (int)v->root;
		v->ts_x0 = x;
		v->ts_y0 = g.i;
		v->ts_y0_f = g.f;
		v->ts_slope = slope;
		v->ts_var = var;
	}
}

void csim_truth_track(csim_truth *t, int64_t h)
{
	track_root(t, h);
	track_nodes(t, h);
	/* After the steps were taken against the drifts of the last sample:
	 * the roots' drifts now. */
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *v = &g_array_index(t->nodes, tnode, i);
		if (!v->down && v->have && v->root == (uint32_t)v->id)
			read_drift(t, v);
	}
}

const GArray *csim_truth_node_steps(const csim_truth *t)
{
	return t->node_steps;
}
