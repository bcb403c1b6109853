/* truth.c — conversion errors against the simulator's clocks (see truth.h). */
#include "sim/launch/truth.h"
#include "sim/launch/truth_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libdev/link.h"
#include "libsync/graph.h"
#include "libsync/now.h"
#include "libsync/ticker_read.h"
#include "sim/launch/nodeenv.h"
#include "libsync/ticker_wire.h"
#include "sim/samplefmt.h"
#include "sim/world.h"

#include <sndfile.h>
#include <string.h>

static int64_t host_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

csim_truth *csim_truth_new(const sim_scenario *sc, const char *run_dir, int64_t epoch_ns)
{
	csim_truth *t = g_new0(csim_truth, 1);
	t->run_dir = g_strdup(run_dir);
	t->sc = sc;
	t->nodes = g_array_new(FALSE, TRUE, sizeof(tnode));
	t->all = g_array_new(FALSE, FALSE, sizeof(csim_meas));
	t->last = g_array_new(FALSE, FALSE, sizeof(csim_meas));
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
		const sim_node_cfg *c = sim_scenario_node(sc, i);
		tnode n = {.id = c->id, .cpu = c->cpu, .jitter_ns = c->radio_jitter_ns, .g = sync_graph_new(&gp), .ent = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry))};
		n.cpu.epoch_ns = epoch_ns;
		g_array_append_val(t->nodes, n);
	}
	double r = sim_scenario_world(sc)->radio_range_m;
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *a = &g_array_index(t->nodes, tnode, i);
		const sim_node_cfg *ca = sim_scenario_node(sc, i);
		a->near = g_array_new(FALSE, FALSE, sizeof(guint));
		for (guint j = 0; j < t->nodes->len; j++) {
			const sim_node_cfg *cb = sim_scenario_node(sc, j);
			double d2 = 0;
			for (int k = 0; k < 3; k++)
				d2 += (ca->pos_m[k] - cb->pos_m[k]) * (ca->pos_m[k] - cb->pos_m[k]);
			if (j != i && sqrt(d2) <= r)
				g_array_append_val(a->near, j);
		}
	}
	t->epoch_ns = epoch_ns;
	t->t0_ns = host_raw();
	t->def_root = -1;
	t->handovers = g_array_new(FALSE, FALSE, sizeof(csim_handover));
	t->node_steps = g_array_new(FALSE, FALSE, sizeof(csim_node_step));
	t->gutc = g_array_new(FALSE, FALSE, sizeof(csim_gutc));
	t->past_h = g_array_new(FALSE, FALSE, sizeof(int64_t));
	return t;
}

guint64 csim_truth_budget_failed(const csim_truth *t, guint64 *tried)
{
	*tried = t->budget_tried;
	return t->budget_failed;
}

void csim_truth_set_budget(csim_truth *t, unsigned vias, unsigned targets)
{
	t->vias = vias;
	t->targets = targets;
}

void csim_truth_free(csim_truth *t)
{
	if (!t)
		return;
	for (guint i = 0; i < t->nodes->len; i++) {
		sync_graph_free(g_array_index(t->nodes, tnode, i).g);
		g_array_free(g_array_index(t->nodes, tnode, i).ent, TRUE);
		g_array_free(g_array_index(t->nodes, tnode, i).near, TRUE);
	}
	g_array_free(t->nodes, TRUE);
	g_array_free(t->all, TRUE);
	g_array_free(t->last, TRUE);
	g_array_free(t->handovers, TRUE);
	g_array_free(t->node_steps, TRUE);
	g_array_free(t->gutc, TRUE);
	g_array_free(t->past_h, TRUE);
	sim_world_free(t->world);
	g_free(t->bin_dir);
	g_free(t->run_dir);
	g_free(t);
}

tnode *csim_truth_node(csim_truth *t, int id)
{
	for (guint i = 0; i < t->nodes->len; i++)
		if (g_array_index(t->nodes, tnode, i).id == id)
			return &g_array_index(t->nodes, tnode, i);
	return NULL;
}

int csim_truth_set_audio(csim_truth *t, int64_t epoch_ns, unsigned rate_hz, const char *bin_dir, const char **why)
{
	GError *err = NULL;
	t->world = sim_world_new(t->sc, &err);
	if (!t->world) {
		*why = "the world model of the scenario could not be built";
		g_clear_error(&err);
		return -ENOMEM;
	}
	sim_world_set_epoch(t->world, epoch_ns);
	t->epoch_ns = epoch_ns;
	t->rate_hz = rate_hz;
	t->bin_dir = g_strdup(bin_dir);
	return 0;
}

/* Run audioget for node n's frames [first, first + len) into a WAV and read
 * them (channel 0, S16) into out.  Returns 0 or -EIO. */
static int fetch_frames(csim_truth *t, tnode *n, int64_t first, int len, int16_t *out)
{
	char *wav = g_strdup_printf("%s/truth-node%d.wav", t->run_dir, n->id);
	char *prog = g_build_filename(t->bin_dir, "audioget", NULL);
	char node[16], f[32], l[32];
	g_snprintf(node, sizeof node, "%d", n->id);
	g_snprintf(f, sizeof f, "--first=%" G_GINT64_FORMAT, first);
	g_snprintf(l, sizeof l, "--last=%" G_GINT64_FORMAT, first + len);
	char *argv[] = {prog, "-N", node, f, l, "--channels=0", "-o", wav, NULL};
	char *envp_run = g_strdup_printf("CHORUS_RUN=%s", t->run_dir);
	gchar **envp = g_environ_setenv(g_get_environ(), "CHORUS_RUN", t->run_dir, TRUE);
	gint status = -1;
	int rc = -EIO;
	if (g_spawn_sync(NULL, argv, envp, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
			 &status, NULL) &&
	    g_spawn_check_wait_status(status, NULL)) {
		SF_INFO info = {0};
		SNDFILE *sf = sf_open(wav, SFM_READ, &info);
		if (sf && info.channels == 1 && sf_read_short(sf, out, len) == len)
			rc = 0;
		if (sf)
			sf_close(sf);
	}
	unlink(wav);
	g_strfreev(envp);
	g_free(envp_run);
	g_free(prog);
	g_free(wav);
	return rc;
}

/* Device paths follow CHORUS_NODE and CHORUS_RUN (libdev/path.h): point
 * them at node n for one synchronous read, and put them back after. */
int csim_truth_read_status(const csim_truth *t, const tnode *n, const char *dev, GByteArray *b)
{
	return csim_node_status_read(t->run_dir, n->id, dev, b);
}

/* audiod's ring span of node n from audio/0/status ("ring=[A, B)"). */
static int ring_span(csim_truth *t, tnode *n, int64_t *oldest, int64_t *next)
{
	GByteArray *b = g_byte_array_new();
	int rc = csim_node_status_read(t->run_dir, n->id, "audio/0/status", b); /* NUL-terminated */
	const char *r = rc == 0 ? strstr((const char *)b->data, "ring=[") : NULL;
	if (r && sscanf(r, "ring=[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", oldest, next) == 2)
		rc = 0;
	else
		rc = -EAGAIN;
	g_byte_array_free(b, TRUE);
	return rc;
}

#define LOCK_LEN 256

/* Find node n's f0: audiod's frames [f, f + LOCK_LEN) equal the world's
 * frames [f0 + f, ...) bit for bit.  The stream began after the epoch and
 * before now, so f0 lies in [F(epoch), F(now) - next]. */
static void audio_lock(csim_truth *t, tnode *n, int64_t h)
{
	int64_t oldest, next;
	int16_t got[LOCK_LEN];
	/* Six searches at most (each compares every candidate f0); a ring
	 * not readable or not filled yet, or frames not fetched, is no search
	 * (an audiod that starts late under load is still found). */
	if (n->lock_tries > 5 || ring_span(t, n, &oldest, &next) < 0 || next - oldest < 2 * LOCK_LEN)
		return;
	int64_t f = next - 2 * LOCK_LEN;
	if (fetch_frames(t, n, f, LOCK_LEN, got) < 0)
		return;
	n->lock_tries++;
	double r = t->rate_hz;
	int64_t lo = sim_world_first_frame_at(t->world, n->id, r, 0) - 2;
	int64_t hi = (int64_t)ceil(sim_world_frame_at(t->world, n->id, r, (double)(h - t->epoch_ns) * 1e-9)) - f + 2;
	for (int64_t c = lo; c <= hi; c++) {
		int k = 0;
		while (k < LOCK_LEN && abs(sim_to_s16(sim_world_sample(t->world, n->id, 0, r, c + f + k)) - got[k]) <= 1)
			k++;
		if (k == LOCK_LEN) {
			n->f0 = c;
			n->locked = TRUE;
			if (n->relock && c != n->old_f0) {
				n->renumbered++;
				g_message("truth: node%d's audiod numbers its frames %+" G_GINT64_FORMAT
					  " frames from before its restart",
					  n->id, n->old_f0 - c);
			}
			n->relock = FALSE;
			return;
		}
	}
}

void csim_truth_audio_restarted(csim_truth *t, int node)
{
	tnode *n = csim_truth_node(t, node);
	if (!n || !n->locked)
		return;
	n->old_f0 = n->f0;
	n->relock = TRUE;
	n->locked = FALSE;
	n->lock_tries = 0;
}

int csim_truth_renumbered(const csim_truth *t, int node)
{
	for (guint i = 0; i < t->nodes->len; i++)
		if (g_array_index(t->nodes, tnode, i).id == node)
			return g_array_index(t->nodes, tnode, i).renumbered;
	return 0;
}

void csim_truth_set_down(csim_truth *t, int node, gboolean down)
{
	tnode *n = csim_truth_node(t, node);
	if (n)
		n->down = down;
}

/* Device paths follow CHORUS_NODE and CHORUS_RUN at call time (libdev/path.h):
 * point them at node n for one synchronous read. */
static void read_ticker(csim_truth *t, tnode *n)
{
	csim_node_env saved = csim_node_env_enter(t->run_dir, n->id);
	sync_ticker_asm *a = sync_ticker_asm_new();
	char why[300];
	n->have = FALSE;
	if (sync_ticker_fetch(2000, a, why, sizeof why) >= 0) {
		size_t k;
		const sync_ticker_entry *e = sync_ticker_asm_entries(a, &k);
		sync_ticker_entries_to_graph(e, k, n->g, NULL, why, sizeof why);
		n->have = TRUE;
		n->root = sync_ticker_asm_head(a)->root;
		g_array_set_size(n->ent, 0);
		g_array_append_vals(n->ent, e, (guint)k);
	} else if (!n->warned) {
		fprintf(stderr, "chorus-sim: node%d: %s\n", n->id, why);
		n->warned = TRUE;
	}
	sync_ticker_asm_free(a);
	csim_node_env_leave(&saved);
}

int csim_truth_measure_at(tnode *v, tnode *a, tnode *b, tnode *root, int64_t h, int64_t hnow, csim_meas *m, char *why,
			  size_t len)
{
	return csim_truth_measure_past(v, a, b, root, h, hnow, 0, m, why, len);
}

int csim_truth_measure_past(tnode *v, tnode *a, tnode *b, tnode *root, int64_t h, int64_t hnow, int64_t reach_ns,
			    csim_meas *m, char *why, size_t len)
{
	int64_t xa = sync_simclock_apply(&a->cpu, h), now = sync_simclock_apply(&a->cpu, hnow);
	sync_graph_result r;
	sync_clock_id to = b ? sync_clock_cpu((uint32_t)b->id) : sync_clock_global();
	int rc = sync_graph_convert_past(v->g, sync_clock_cpu((uint32_t)a->id), to, sync_tval_of(xa), now, reach_ns, &r,
					 why, len);
	if (rc < 0)
		return rc;
	double truth_off; /* truth as a tval difference from r.value.i */
	if (b) {
		truth_off = (double)(sync_simclock_apply(&b->cpu, h) - r.value.i);
		m->hops = r.hops;
	} else {
		if (!root) {
			snprintf(why, len, "root unknown to the simulator");
			return -ENOENT;
		}
		int64_t xr = sync_simclock_apply(&root->cpu, h);
		sync_graph_result g;
		rc = sync_graph_convert(v->g, sync_clock_cpu((uint32_t)root->id), sync_clock_global(), sync_tval_of(xr), now,
					&g, why, len);
		if (rc < 0)
			return rc;
		truth_off = (double)(g.value.i - r.value.i) + g.value.f;
		m->hops = r.hops ? r.hops - 1 : 0;
	}
	m->err_ns = r.value.f - truth_off;
	m->flags = r.flags;
	m->bound_ns = NAN;
	if (b && r.hops == 1) {
		/* The least-squares bound of the fit used: observations with the
		 * two nodes' receive jitter, at this x, for the fit's n and spread:
		 * var = (sa^2 + sb^2) (1/n + (x - xbar)^2 / Sxx), Sxx = n var_c / var_s. */
		for (guint i = 0; i < v->ent->len; i++) {
			const sync_ticker_entry *e = &g_array_index(v->ent, sync_ticker_entry, i);
			int fwd = sync_clock_equal(e->from, sync_clock_cpu((uint32_t)a->id)) &&
				  sync_clock_equal(e->to, sync_clock_cpu((uint32_t)b->id));
			int rev = sync_clock_equal(e->to, sync_clock_cpu((uint32_t)a->id)) &&
				  sync_clock_equal(e->from, sync_clock_cpu((uint32_t)b->id));
			if ((!fwd && !rev) || e->conv.var_s <= 0 || e->conv.var_c <= 0 || (e->conv.flags & SYNC_CONV_PIECE))
				continue;
			int64_t x = fwd ? xa : sync_simclock_apply(&b->cpu, h);
			double dx = (double)(x - e->conv.x0) - e->conv.xbar, n = e->conv.n;
			double s2 = a->jitter_ns * a->jitter_ns + b->jitter_ns * b->jitter_ns;
			m->bound_ns = sqrt(s2 * (1.0 / n + dx * dx * e->conv.var_s / (e->conv.var_c * n)));
		}
	}
	m->sd_ns = sqrt(r.var);
	m->dof = r.dof;
	m->from = a->id;
	m->to = b ? b->id : root->id;
	m->kind = b ? CSIM_CPU : CSIM_GLOBAL;
	m->viewer = v->id;
	m->path[0] = 0;
	if (csim_meas_beyond(m, 5.0))
		csim_truth_path(v->g, v->ent, sync_clock_cpu((uint32_t)a->id), to, sync_tval_of(xa), now, reach_ns, m->path,
				sizeof m->path);
	return 0;
}

sim_phase csim_truth_phase_of(const csim_truth *t, int a, int b, int64_t h)
{
	double w = (double)(h - t->epoch_ns) * 1e-9;
	const sim_node_cfg *na = sim_scenario_find_node(t->sc, a), *nb = sim_scenario_find_node(t->sc, b);
	return sim_phase_worse(na ? sim_node_phase(na, w) : SIM_PHASE_BEFORE, nb ? sim_node_phase(nb, w) : SIM_PHASE_BEFORE);
}

/* node's audio0 (fractional frame since audiod's frame 0) at host time h */
static sync_tval audio_at(csim_truth *t, tnode *n, int64_t h)
{
	double F = sim_world_frame_at(t->world, n->id, t->rate_hz, (double)(h - t->epoch_ns) * 1e-9);
	double fl = floor(F);
	sync_tval v = {(int64_t)fl - n->f0, F - fl};
	if (v.f > 0.5) {
		v.i++;
		v.f -= 1.0;
	}
	return v;
}

static int audio_sample(csim_truth *t, int64_t h, gboolean keep)
{
	int ok = 0;
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *n = &g_array_index(t->nodes, tnode, i);
		if (!n->down && !n->locked)
			audio_lock(t, n, h);
	}
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *v = &g_array_index(t->nodes, tnode, i);
		if (v->down || !v->have || !v->locked)
			continue;
		for (guint j = 0; j < t->nodes->len; j++) {
			tnode *b = &g_array_index(t->nodes, tnode, j);
			if (b == v || b->down || !b->locked)
				continue;
			sync_graph_result r;
			char why[200];
			int64_t xcpu = sync_simclock_apply(&v->cpu, h);
			if (sync_graph_convert(v->g, sync_clock_audio((uint32_t)v->id, 0), sync_clock_audio((uint32_t)b->id, 0),
					       audio_at(t, v, h), xcpu, &r, why, sizeof why) < 0)
				continue;
			sync_tval truth = audio_at(t, b, h);
			double frames = (double)(r.value.i - truth.i) + r.value.f - truth.f;
			csim_meas m = {.t_s = (double)(h - t->t0_ns) * 1e-9, .from = v->id, .to = b->id, .kind = CSIM_AUDIO, .hops = r.hops, .err_ns = frames * 1e9 / t->rate_hz, .sd_ns = sqrt(r.var) * 1e9 / t->rate_hz, .bound_ns = NAN, .dof = r.dof, .phase = csim_truth_phase_of(t, v->id, b->id, h), .viewer = v->id};
			g_array_append_val(t->last, m);
			if (keep)
				g_array_append_val(t->all, m);
			ok++;
		}
	}
	return ok;
}

/* Measure node v's cpu to node b's (NULL: global); record it.  Returns 1,
 * 0 when there is nothing to measure (b is v or down, v is the root), -1
 * when the conversion could not be made (no global root named, no path). */
static int measure_one(csim_truth *t, tnode *v, tnode *b, int64_t h, gboolean keep)
{
	char why[200];
	csim_meas m = {.t_s = (double)(h - t->t0_ns) * 1e-9};
	if (b == v || (b && b->down))
		return 0;
	tnode *root = b ? NULL : csim_truth_node(t, (int)v->root);
	if (!b && root == v)
		return 0; /* the root's own global is exact by definition */
	if (!b && !root)
		return -1;
	if (csim_truth_measure_at(v, v, b, root, h, h, &m, why, sizeof why) < 0)
		return -1;
	m.phase = csim_truth_phase_of(t, m.from, m.to, h);
	g_array_append_val(t->last, m);
	if (keep)
		g_array_append_val(t->all, m);
	return 1;
}

/* Within the budget: `vias` nodes (in turn) each to `targets` of the nodes
 * in its radio range (in turn) and to global. */
static int sample_budget(csim_truth *t, gboolean keep)
{
	guint n = t->nodes->len, nv = MIN(t->vias, n);
	guint *via = g_new(guint, nv);
	for (guint k = 0; k < nv; k++) {
		via[k] = (t->cursor + k) % n;
		tnode *v = &g_array_index(t->nodes, tnode, via[k]);
		if (!v->down)
			read_ticker(t, v);
	}
	t->cursor = (t->cursor + nv) % n;
	int64_t h = host_raw();
	int ok = 0;
	for (guint k = 0; k < nv; k++) {
		tnode *v = &g_array_index(t->nodes, tnode, via[k]);
		if (v->down)
			continue;
		guint nn = v->near->len, m = MIN(t->targets, nn);
		if (!v->have) { /* its ticker could not be read: all failed */
			if (keep) {
				t->budget_tried += m + 1;
				t->budget_failed += m + 1;
			}
			continue;
		}
		for (guint j = 0; j <= m; j++) {
			tnode *b = j < m ? &g_array_index(t->nodes, tnode,
							  g_array_index(v->near, guint, (guint)((t->samples * m + j) % nn)))
					 : NULL;
			int rc = measure_one(t, v, b, h, keep);
			if (rc > 0)
				ok++;
			if (keep && rc != 0) {
				t->budget_tried++;
				t->budget_failed += rc < 0;
			}
		}
	}
	tnode **vn = g_new(tnode *, nv);
	for (guint k = 0; k < nv; k++)
		vn[k] = &g_array_index(t->nodes, tnode, via[k]);
	csim_truth_utc_sample(t, vn, nv, keep);
	g_free(vn);
	g_free(via);
	return ok;
}

int csim_truth_sample(csim_truth *t, gboolean keep)
{
	g_array_set_size(t->last, 0);
	if (t->vias) {
		int ok = sample_budget(t, keep);
		t->samples++;
		return ok;
	}
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *n = &g_array_index(t->nodes, tnode, i);
		if (!n->down)
			read_ticker(t, n);
	}
	int64_t h = host_raw();
	csim_truth_track(t, h);
	int ok = 0;
	for (guint i = 0; i < t->nodes->len; i++) {
		tnode *v = &g_array_index(t->nodes, tnode, i);
		if (v->down || !v->have)
			continue;
		for (guint j = 0; j <= t->nodes->len; j++)
			ok += measure_one(t, v, j < t->nodes->len ? &g_array_index(t->nodes, tnode, j) : NULL, h, keep) > 0;
	}
	if (t->world)
		ok += audio_sample(t, h, keep);
	ok += csim_truth_past_sample(t, h, keep);
	csim_truth_utc_sample(t, NULL, 0, keep);
	t->samples++;
	return ok;
}

const GArray *csim_truth_last(const csim_truth *t)
{
	return t->last;
}

const GArray *csim_truth_all(const csim_truth *t)
{
	return t->all;
}

const GArray *csim_truth_gutc(const csim_truth *t)
{
	return t->gutc;
}

const char *csim_kind_name(csim_kind k)
{
	static const char *const names[CSIM_N_KINDS] = {"cpu", "global", "audio0", "utc"};
	return k < CSIM_N_KINDS ? names[k] : "?";
}

/* Node a's cpu at host time h (past: a past time, phase "past") converted
 * now with node via's ticker. */
static int convert_with(csim_truth *t, int via, int a, int b, int64_t h, gboolean past, csim_meas *out, char *why,
			size_t len)
{
	tnode *v = csim_truth_node(t, via), *na = csim_truth_node(t, a), *nb = b >= 0 ? csim_truth_node(t, b) : NULL;
	if (!v || !na || (b >= 0 && !nb)) {
		snprintf(why, len, "unknown node");
		return -ENOENT;
	}
	read_ticker(t, v);
	if (!v->have) {
		snprintf(why, len, "node%d's ticker could not be read", via);
		return -EAGAIN;
	}
	int64_t now = past ? host_raw() : h;
	csim_meas m = {.t_s = (double)(h - t->t0_ns) * 1e-9};
	int rc = csim_truth_measure_at(v, na, nb, nb ? NULL : csim_truth_node(t, (int)v->root), h, now, &m, why, len);
	if (rc == 0) {
		m.phase = past ? SIM_PHASE_PAST : csim_truth_phase_of(t, m.from, m.to, h);
		*out = m;
	}
	return rc;
}

int csim_truth_convert(csim_truth *t, int via, int a, int b, csim_meas *out, char *why, size_t len)
{
	return convert_with(t, via, a, b, host_raw(), FALSE, out, why, len);
}

int csim_truth_convert_at(csim_truth *t, int via, int a, int b, int64_t h, csim_meas *out, char *why, size_t len)
{
	return convert_with(t, via, a, b, h, TRUE, out, why, len);
}

/* The node's numbering, for the two functions below. */
static const tnode *locked_node(const csim_truth *t, int node, char *why, size_t len)
{
	const tnode *n = NULL;
	for (guint i = 0; i < t->nodes->len; i++)
		if (g_array_index(t->nodes, tnode, i).id == node)
			n = &g_array_index(t->nodes, tnode, i);
	if (!n || !t->world) {
		snprintf(why, len, n ? "audio is not measured (csim_truth_set_audio)" : "no node%d", node);
		return NULL;
	}
	if (!n->locked) {
		snprintf(why, len, "node%d's audiod numbering is not found yet (%d of 6 searches of its ring made)", node,
			 n->lock_tries);
		return NULL;
	}
	return n;
}

int csim_truth_frame_at(const csim_truth *t, int node, double w_s, int64_t *frame, char *why, size_t len)
{
	const tnode *n = locked_node(t, node, why, len);
	if (!n)
		return t->world ? -EAGAIN : -ENOENT;
	*frame = (int64_t)ceil(sim_world_frame_at(t->world, node, t->rate_hz, w_s)) - n->f0;
	return 0;
}

int csim_truth_global_at(csim_truth *t, int root_id, int64_t h, int64_t *global_ns, double *frac_ns, char *why, size_t len)
{
	tnode *root = csim_truth_node(t, root_id);
	if (!root) {
		snprintf(why, len, "no node%d", root_id);
		return -ENOENT;
	}
	read_ticker(t, root);
	if (!root->have || root->root != (uint32_t)root_id) {
		snprintf(why, len, "node%d's ticker could not be read or does not define global", root_id);
		return -EAGAIN;
	}
	int64_t xr = sync_simclock_apply(&root->cpu, h);
	sync_graph_result g;
	int rc = sync_graph_convert(root->g, sync_clock_cpu((uint32_t)root->id), sync_clock_global(), sync_tval_of(xr), xr,
				    &g, why, len);
	if (rc < 0)
		return rc;
	*global_ns = g.value.i;
	*frac_ns = g.value.f;
	return 0;
}

int csim_truth_global_of_frame(csim_truth *t, int node, int64_t frame, int root, int64_t *global_ns, double *frac_ns,
			       char *why, size_t len)
{
	const tnode *n = locked_node(t, node, why, len);
	if (!n)
		return t->world ? -EAGAIN : -ENOENT;
	int64_t h = t->epoch_ns + sim_world_frame_time_ns(t->world, node, t->rate_hz, n->f0 + frame);
	return csim_truth_global_at(t, root, h, global_ns, frac_ns, why, len);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double csim_truth_rms(const csim_truth *t, csim_kind kind, unsigned hops, size_t *n)
{
	double s = 0;
	size_t k = 0;
	for (guint i = 0; i < t->all->len; i++) {
		const csim_meas *m = &g_array_index(t->all, csim_meas, i);
		if (m->kind == kind && (!hops || m->hops == hops)) {
			s += m->err_ns * m->err_ns;
			k++;
		}
	}
	if (n)
		*n = k;
	return k ? sqrt(s / (double)k) : NAN;
}

double csim_truth_sd_rms(const csim_truth *t, csim_kind kind, unsigned hops)
{
	double s = 0;
	size_t k = 0;
	for (guint i = 0; i < t->all->len; i++) {
		const csim_meas *m = &g_array_index(t->all, csim_meas, i);
		if (m->kind == kind && (!hops || m->hops == hops)) {
			s += m->sd_ns * m->sd_ns;
			k++;
		}
	}
	return k ? sqrt(s / (double)k) : NAN;
}

int csim_truth_write_samples(const csim_truth *t, const char *path)
{
	GString *o = g_string_new("t_s,kind,from,to,hops,err_ns,sd_ns,bound_ns,dof,phase,world_s,viewer,path\n");
	for (guint i = 0; i < t->all->len; i++) {
		const csim_meas *m = &g_array_index(t->all, csim_meas, i);
		g_string_append_printf(o, "%.3f,%s,%d,%d,%u,%.1f,%.1f,%.1f,%.1f,%s,%.3f,%d,\"%s\"\n", m->t_s,
				       csim_kind_name(m->kind), m->from, m->to, m->hops, m->err_ns, m->sd_ns, m->bound_ns,
				       m->dof, sim_phase_name(m->phase), m->t_s + (double)(t->t0_ns - t->epoch_ns) * 1e-9,
				       m->viewer, m->path);
	}
	gboolean ok = g_file_set_contents(path, o->str, (gssize)o->len, NULL);
	g_string_free(o, TRUE);
	return ok ? 0 : -EIO;
}

double csim_truth_bound_rms(const csim_truth *t)
{
	double s = 0;
	size_t k = 0;
	for (guint i = 0; i < t->all->len; i++) {
		const csim_meas *m = &g_array_index(t->all, csim_meas, i);
		if (!isnan(m->bound_ns)) {
			s += m->bound_ns * m->bound_ns;
			k++;
		}
	}
	return k ? sqrt(s / (double)k) : NAN;
}

int csim_truth_report(const csim_truth *t, GString *out, const char *csv_path)
{
	gboolean phased = sim_scenario_n_outages(t->sc) > 0;
	int nph = phased ? SIM_N_PHASES : 1;
	GString *csv = g_string_new(phased ? "kind,hops,phase,n,rms_us,p95_us,max_us,sd_rms_us,rms_z,beyond_5se\n"
					   : "kind,hops,n,rms_us,p95_us,max_us,sd_rms_us,rms_z,beyond_5se\n");
	g_string_append_printf(out, "%-7s %4s %s%7s %9s %9s %9s %10s %6s %7s\n", "kind", "hops", phased ? "phase  " : "",
			       "n", "rms_us", "p95_us", "max_us", "claimed_sd", "rms_z", ">5se");
	for (int k = 0; k < CSIM_N_KINDS; k++)
		for (unsigned h = 0; h <= SYNC_GRAPH_MAX_HOPS; h++)
			for (int ph = 0; ph < nph; ph++) {
				GArray *e = g_array_new(FALSE, FALSE, sizeof(double));
				double s2 = 0, sd2 = 0, z2 = 0;
				guint out5 = 0;
				for (guint i = 0; i < t->all->len; i++) {
					const csim_meas *m = &g_array_index(t->all, csim_meas, i);
					if ((int)m->kind != k || m->hops != h || (phased && (int)m->phase != ph))
						continue;
					double a = fabs(m->err_ns);
					g_array_append_val(e, a);
					s2 += a * a;
					sd2 += m->sd_ns * m->sd_ns;
					z2 += m->sd_ns > 0 ? (a / m->sd_ns) * (a / m->sd_ns) : INFINITY;
					out5 += csim_meas_beyond(m, 5.0);
				}
				if (e->len) {
					g_array_sort(e, (GCompareFunc)cmp_d);
					double n = e->len, *v = (double *)(void *)e->data;
					double p95 = v[(size_t)MIN(n - 1, floor(0.95 * n))], mx = v[e->len - 1];
					char pcol[16] = "", pcsv[16] = "";
					if (phased) {
						g_snprintf(pcol, sizeof pcol, "%-6s ", sim_phase_name((sim_phase)ph));
						g_snprintf(pcsv, sizeof pcsv, "%s,", sim_phase_name((sim_phase)ph));
					}
					g_string_append_printf(out, "%-7s %4u %s%7u %9.3f %9.3f %9.3f %10.3f %6.2f %7u\n",
							       csim_kind_name((csim_kind)k), h, pcol, e->len, sqrt(s2 / n) * 1e-3, p95 * 1e-3,
							       mx * 1e-3, sqrt(sd2 / n) * 1e-3, sqrt(z2 / n), out5);
					g_string_append_printf(csv, "%s,%u,%s%u,%.6f,%.6f,%.6f,%.6f,%.4f,%u\n", csim_kind_name((csim_kind)k), h,
							       pcsv, e->len, sqrt(s2 / n) * 1e-3, p95 * 1e-3, mx * 1e-3,
							       sqrt(sd2 / n) * 1e-3, sqrt(z2 / n), out5);
				}
				g_array_free(e, TRUE);
			}
	for (guint i = 0; i < t->handovers->len; i++) {
		const csim_handover *ho = &g_array_index(t->handovers, csim_handover, i);
		g_string_append_printf(out, "global hand-over node%d -> node%d at %.0f s: global stepped %+.3f us\n", ho->from,
				       ho->to, ho->t_s, ho->step_ns * 1e-3);
	}
	for (guint i = 0; i < t->node_steps->len; i++) {
		const csim_node_step *ns = &g_array_index(t->node_steps, csim_node_step, i);
		g_string_append_printf(out, "timescale of node%d: root node%d -> node%d at %.0f s: its global stepped %+.3f us (%.1f s.e.",
				       ns->node, ns->from, ns->to, ns->t_s, ns->step_ns * 1e-3,
				       ns->se_ns > 0 ? fabs(ns->step_ns) / ns->se_ns : INFINITY);
		if (ns->drift_ns > 0)
			g_string_append_printf(out, "; %.1f of the drift %.3f us node%d stated for its continued timescale",
					       fabs(ns->step_ns) / hypot(ns->drift_ns, ns->se_ns), ns->drift_ns * 1e-3,
					       ns->from);
		g_string_append(out, ")\n");
	}
	csim_truth_utc_report(t, out);
	csim_truth_past_report(t, out);
	int rc = 0;
	if (csv_path && !g_file_set_contents(csv_path, csv->str, (gssize)csv->len, NULL))
		rc = -EIO;
	g_string_free(csv, TRUE);
	return rc;
}
