/* utc_truth.c — the simulated nodes' UTC against the host's realtime clock
 * (issue 16 item 5): each node's cpu -> utc conversion, and the global
 * timescale's offset from UTC (see truth_priv.h).
 *
 * In the simulation true UTC is the host's CLOCK_REALTIME: a node with a
 * UTC source sees it plus its discipline's error (libsync/simutc.h).  The
 * truth takes host raw and realtime together from the tightest of a few
 * raw-realtime-raw sandwiches at each sample, so the host's own clock
 * discipline (its NTP daemon slewing realtime) does not enter the truth.
 */
#include <math.h>
#include <time.h>

#include "libsync/ticker_wire.h"
#include "sim/launch/truth_priv.h"
#include "sim/scenario.h"

static int64_t host_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Host raw and realtime at one instant (to within the sandwich's half width). */
static void host_pair(int64_t *raw, int64_t *rt)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t a = host_read(CLOCK_MONOTONIC_RAW), r = host_read(CLOCK_REALTIME), b = host_read(CLOCK_MONOTONIC_RAW);
		if (b - a < best) {
			best = b - a;
			*raw = a + (b - a) / 2;
			*rt = r;
		}
	}
}

static sim_phase phase_at(const csim_truth *t, int id, int64_t h)
{
	const sim_node_cfg *c = sim_scenario_find_node(t->sc, id);
	return c ? sim_node_phase(c, (double)(h - t->epoch_ns) * 1e-9) : SIM_PHASE_BEFORE;
}

/* Node v's cpu at h converted to utc through its own graph: error against
 * UTC rt.  Returns 0 and *m, or a negative errno (no utc vertex: no node
 * its graph reaches has a UTC source). */
static int measure_utc(const csim_truth *t, tnode *v, int64_t h, int64_t rt, csim_meas *m)
{
	int64_t x = sync_simclock_apply(&v->cpu, h);
	sync_graph_result r;
	char why[200];
	int rc = sync_graph_convert(v->g, sync_clock_cpu((uint32_t)v->id), sync_clock_utc(), sync_tval_of(x), x, &r, why,
				    sizeof why);
	if (rc < 0)
		return rc;
	*m = (csim_meas){.t_s = (double)(h - t->t0_ns) * 1e-9,
			 .from = v->id,
			 .to = v->id,
			 .kind = CSIM_UTC,
			 .hops = r.hops,
			 .err_ns = (double)(r.value.i - rt) + r.value.f,
			 .sd_ns = sqrt(r.var),
			 .bound_ns = NAN,
			 .dof = r.dof,
			 .phase = phase_at(t, v->id, h)};
	return 0;
}

/* The named root's global at h minus UTC rt, and its stated s.e. of
 * global -> utc; FALSE when the root or its definition is not known. */
static gboolean global_minus_utc(csim_truth *t, int64_t h, int64_t rt, csim_gutc *out)
{
	tnode *root = NULL;
	for (guint i = 0; i < t->nodes->len && !root; i++) {
		tnode *n = &g_array_index(t->nodes, tnode, i);
		if (!n->down && n->have && n->root != SYNC_TICKER_NO_ROOT && (uint32_t)n->id == n->root)
			root = n;
	}
	if (!root)
		return FALSE;
	int64_t x = sync_simclock_apply(&root->cpu, h);
	sync_graph_result g, u;
	char why[200];
	if (sync_graph_convert(root->g, sync_clock_cpu((uint32_t)root->id), sync_clock_global(), sync_tval_of(x), x, &g,
			       why, sizeof why) < 0)
		return FALSE;
	out->t_s = (double)(h - t->t0_ns) * 1e-9;
	out->root = root->id;
	out->diff_ns = (double)(g.value.i - rt) + g.value.f;
	out->claimed_ns = out->sd_ns = NAN;
	if (sync_graph_convert(root->g, sync_clock_global(), sync_clock_utc(), g.value, x, &u, why, sizeof why) == 0) {
		out->claimed_ns = (double)(g.value.i - u.value.i) + (g.value.f - u.value.f);
		out->sd_ns = sqrt(u.var);
	}
	return TRUE;
}

void csim_truth_utc_sample(csim_truth *t, tnode *const *nodes, guint n, gboolean keep)
{
	int64_t h = 0, rt = 0;
	host_pair(&h, &rt);
	guint count = nodes ? n : t->nodes->len;
	for (guint k = 0; k < count; k++) {
		tnode *v = nodes ? nodes[k] : &g_array_index(t->nodes, tnode, k);
		csim_meas m;
		if (v->down || !v->have || measure_utc(t, v, h, rt, &m) < 0)
			continue;
		g_array_append_val(t->last, m);
		if (keep)
			g_array_append_val(t->all, m);
	}
	csim_gutc d;
	if (keep && global_minus_utc(t, h, rt, &d))
		g_array_append_val(t->gutc, d);
}

void csim_truth_utc_report(const csim_truth *t, GString *out)
{
	guint n = t->gutc->len, nz = 0, beyond = 0;
	if (!n)
		return;
	double s2 = 0, mx = 0, z2 = 0, sum = 0;
	for (guint i = 0; i < n; i++) {
		const csim_gutc *d = &g_array_index(t->gutc, csim_gutc, i);
		sum += d->diff_ns;
		s2 += d->diff_ns * d->diff_ns;
		mx = fmax(mx, fabs(d->diff_ns));
		if (d->sd_ns > 0) {
			double z = (d->claimed_ns - d->diff_ns) / d->sd_ns;
			z2 += z * z;
			nz++;
			beyond += fabs(z) > 5;
		}
	}
	g_string_append_printf(out, "global - UTC: %u samples, mean %+.3f us, rms %.3f us, max |.| %.3f us", n,
			       sum / n * 1e-3, sqrt(s2 / n) * 1e-3, mx * 1e-3);
	if (nz)
		g_string_append_printf(out, "; the root's statement of it (%u samples): rms_z %.2f, %u beyond 5 s.e.\n",
				       nz, sqrt(z2 / nz), beyond);
	else
		g_string_append(out, "; the root states no UTC (global runs free)\n");
}
