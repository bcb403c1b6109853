/* outliers.c — the truth's conversions beyond k of their stated standard
 * errors, and the path each went through (see truth.h, truth_priv.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libsync/graph.h"
#include "libsync/ticker_wire.h"
#include "sim/launch/truth.h"
#include "sim/launch/truth_priv.h"

void csim_truth_path(sync_graph *g, const GArray *ent, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now,
		     int64_t reach_ns, char *buf, size_t len)
{
	sync_clock_id ids[8];
	char why[8];
	int n = sync_graph_path_past(g, from, to, x, now, reach_ns, ids, G_N_ELEMENTS(ids), why, sizeof why);
	buf[0] = 0;
	for (int k = 0; k < n && k < (int)G_N_ELEMENTS(ids); k++) {
		char name[SYNC_CLOCK_NAME_MAX];
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s", k ? " > " : "", sync_clock_format(ids[k], name, sizeof name));
		if (!k)
			continue;
		const sync_conv *cur = NULL;
		int pieces = 0;
		for (guint i = 0; i < ent->len; i++) {
			const sync_ticker_entry *e = &g_array_index(ent, sync_ticker_entry, i);
			int same = (sync_clock_equal(e->from, ids[k - 1]) && sync_clock_equal(e->to, ids[k])) ||
				   (sync_clock_equal(e->to, ids[k - 1]) && sync_clock_equal(e->from, ids[k]));
			if (!same)
				continue;
			if (e->conv.flags & SYNC_CONV_PIECE)
				pieces++;
			else
				cur = &e->conv;
		}
		used = strlen(buf);
		if (cur && !(cur->flags & SYNC_CONV_FIXED))
			snprintf(buf + used, len - used, " [fit %.0f s n=%u w=%.3g ppm, %d piece%s]",
				 (double)(cur->xmax - cur->xmin) * 1e-9, cur->n, cur->wander * 1e6, pieces,
				 pieces == 1 ? "" : "s");
	}
	if (n > (int)G_N_ELEMENTS(ids)) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, " > ...");
	}
}


gboolean csim_meas_beyond(const csim_meas *m, double k)
{
	return fabs(m->err_ns) > sync_tail_k(m->dof, k) * m->sd_ns;
}

guint csim_truth_outliers(const csim_truth *t, double k)
{
	guint n = 0;
	for (guint i = 0; i < t->all->len; i++)
		n += csim_meas_beyond(&g_array_index(t->all, csim_meas, i), k);
	return n;
}

void csim_truth_list_outliers(const csim_truth *t, double k, guint max, GString *out)
{
	guint shown = 0, n = 0;
	for (guint i = 0; i < t->all->len; i++) {
		const csim_meas *m = &g_array_index(t->all, csim_meas, i);
		if (!csim_meas_beyond(m, k))
			continue;
		if (shown++ < max)
			g_string_append_printf(out,
					       "  t=%.3f s %s %d->%d, %u hop(s): error %+.1f ns, stated s.e. %.1f ns "
					       "(%.1f of them, %.1f dof), %s%s%s; node%d's graph%s%s\n",
					       m->t_s, csim_kind_name(m->kind), m->from, m->to, m->hops, m->err_ns, m->sd_ns,
					       fabs(m->err_ns) / m->sd_ns, m->dof, sim_phase_name(m->phase),
					       m->flags & SYNC_GRAPH_BRIDGED ? ", bridged" : "",
					       m->flags & SYNC_GRAPH_EXTRAPOLATED ? ", extrapolated" : "", m->viewer,
					       m->path[0] ? ": " : "", m->path);
		n++;
	}
	if (n > max)
		g_string_append_printf(out, "  ... and %u more\n", n - max);
}
