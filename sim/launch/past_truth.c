/* past_truth.c — chorus-sim's truth for times inside an outage converted
 * after it ended (truth_priv.h; issue 16 item 3: "libsync answers for past
 * times with the joined history"). */
#include <errno.h>
#include <math.h>

#include "sim/launch/truth_priv.h"

/* Whether any node is inside an outage at host time h. */
static gboolean someone_cut_off(const csim_truth *t, int64_t h)
{
	double w = (double)(h - t->epoch_ns) * 1e-9;
	for (guint i = 0; i < t->nodes->len; i++) {
		const sim_node_cfg *c = sim_scenario_find_node(t->sc, g_array_index(t->nodes, tnode, i).id);
		if (c && sim_node_phase(c, w) == SIM_PHASE_DURING)
			return TRUE;
	}
	return FALSE;
}

/* Node v's cpu at the past host time hp to b (NULL: global), measured at
 * hnow.  1 measured, 0 not a pair to measure then, -1 could not be made. */
static int past_one(csim_truth *t, tnode *v, tnode *b, int64_t hp, int64_t hnow, gboolean keep)
{
	if (b == v || (b && b->down))
		return 0;
	tnode *root = b ? NULL : csim_truth_node(t, (int)v->root);
	if (!b && root == v)
		return 0;                                /* its own global is exact by definition, now and then */
	int bid = b ? b->id : (root ? root->id : v->id); /* global: the root's phase (none named: ours) */
	int64_t settled = hnow - (int64_t)(CSIM_PAST_SETTLE_S * 1e9);
	if (csim_truth_phase_of(t, v->id, bid, hp) != SIM_PHASE_DURING ||
	    csim_truth_phase_of(t, v->id, bid, hnow) != SIM_PHASE_AFTER ||
	    csim_truth_phase_of(t, v->id, bid, settled) != SIM_PHASE_AFTER)
		return 0;
	if (keep)
		t->past_tried++;
	char why[200];
	csim_meas m = {.t_s = (double)(hp - t->t0_ns) * 1e-9};
	int rc = -ENOENT;
	if ((b || root) && (rc = csim_truth_measure_at(v, v, b, root, hp, hnow, &m, why, sizeof why)) == -ERANGE) {
		/* Before every fit by more than the tolerance (a node cut off
		 * from its very start): as collab retimes it, the fits after
		 * it extrapolated back. */
		rc = csim_truth_measure_past(v, v, b, root, hp, hnow, (int64_t)(CSIM_PAST_REACH_S * 1e9), &m, why,
					     sizeof why);
		if (rc == 0 && keep)
			t->past_reached++;
	}
	if (rc < 0) {
		if (keep) {
			t->past_failed++;
			g_snprintf(t->past_why, sizeof t->past_why, "node%d: %s", v->id, b || root ? why : "no root named");
		}
		return -1;
	}
	m.phase = SIM_PHASE_PAST;
	/* The path of a past conversion over two hops or more, for
	 * samples.csv: which edges bridged and which had no piece. */
	if (m.hops >= 2 && !m.path[0])
		csim_truth_path(v->g, v->ent, sync_clock_cpu((uint32_t)v->id),
				b ? sync_clock_cpu((uint32_t)b->id) : sync_clock_global(),
				sync_tval_of(sync_simclock_apply(&v->cpu, hp)), sync_simclock_apply(&v->cpu, hnow),
				(int64_t)(CSIM_PAST_REACH_S * 1e9), m.path, sizeof m.path);
	g_array_append_val(t->last, m);
	if (keep)
		g_array_append_val(t->all, m);
	return 1;
}

int csim_truth_past_sample(csim_truth *t, int64_t h, gboolean keep)
{
	if (keep && someone_cut_off(t, h))
		g_array_append_val(t->past_h, h);
	if (!t->past_h->len)
		return 0;
	int64_t hp = g_array_index(t->past_h, int64_t, t->past_cursor++ % t->past_h->len);
	int ok = 0;
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *v = &g_array_index(t->nodes, tnode, i);
		if (v->down || !v->have)
			continue;
		for (guint j = 0; j <= t->nodes->len; j++)
			ok += past_one(t, v, j < t->nodes->len ? &g_array_index(t->nodes, tnode, j) : NULL, hp, h, keep) > 0;
	}
	return ok;
}

void csim_truth_past_report(const csim_truth *t, GString *out)
{
	if (!t->past_tried)
		return;
	g_string_append_printf(out,
			       "past: %" G_GUINT64_FORMAT " conversions of times inside an outage, %.0f s or more after it, %" G_GUINT64_FORMAT
			       " of them before every fit by more than the tolerance (converted by the fits after "
			       "extrapolated back), %" G_GUINT64_FORMAT " could not be made (phase \"past\" above)%s%s\n",
			       t->past_tried, CSIM_PAST_SETTLE_S, t->past_reached, t->past_failed,
			       t->past_failed ? "; the last: " : "", t->past_failed ? t->past_why : "");
}
