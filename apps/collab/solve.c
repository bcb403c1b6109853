/* solve.c — one group's call located (solve.h). */
#include "apps/collab/solve.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "apps/collab/clip.h"
#include "apps/collab/dump.h"
#include "apps/collab/tdoa.h"
#include "apps/detect/event.h"
#include "apps/dsp/gccphat.h"

void collab_solve_group(const collab_solve_ctx *d, const GArray *dets, collab_result *r, collab_solve_note *note)
{
	int n = 0;
	tdoa_input in[TDOA_MAX];
	clip clips[TDOA_MAX], clips2[TDOA_MAX];
	memset(clips, 0, sizeof clips);
	memset(clips2, 0, sizeof clips2);
	double dur = 0;
	r->kind = 0;
	for (guint i = 0; i < dets->len; i++) {
		const det_event *e = &g_array_index(dets, det_event, i);
		dur = fmax(dur, e->duration_s);
		if (!r->kind)
			r->kind = e->template_id;
	}
	double len_ms = fmin(dur * 1e3 + 10, d->cfg->max_clip_ms);
	r->dur_s = dur;
	/* The reference (strongest detection) is cut to its call; every other
	 * clip also holds every lag physically possible against it (the two
	 * microphones' distance at the slowest speed of sound the prior
	 * allows), however far its own onset is off. */
	const det_event *ref = &g_array_index(dets, det_event, 0);
	note->again = 0;
	note->dump_rc = 0;
	for (guint i = 1; i < dets->len; i++)
		if (g_array_index(dets, det_event, i).snr_db > ref->snr_db)
			ref = &g_array_index(dets, det_event, i);
	const collab_node *rn = collab_nodes_find(d->nodes, ref->node);
	double c_slow = d->c_m_s - 4 * d->c_sd_m_s - d->cfg->wind_speed_m_s;
	for (guint i = 0; i < dets->len && n < TDOA_MAX; i++) {
		const det_event *e = &g_array_index(dets, det_event, i);
		const collab_node *nd = collab_nodes_find(d->nodes, e->node);
		if (!nd)
			continue;
		int64_t pre = (int64_t)(d->cfg->pre_ms * 1e6 + 4 * det_event_global_crb_se_ns(e));
		int64_t t0 = e->global_ns - pre, t1 = e->global_ns + (int64_t)(len_ms * 1e6);
		if (rn && e != ref && c_slow > 0) {
			double dx = nd->pos_m[0] - rn->pos_m[0], dy = nd->pos_m[1] - rn->pos_m[1], dz = nd->pos_m[2] - rn->pos_m[2];
			int64_t reach = (int64_t)((sqrt(dx * dx + dy * dy + dz * dz) + 8 * d->cfg->position_sd_m) / c_slow * 1e9) +
					5000000;
			int64_t rpre = (int64_t)(d->cfg->pre_ms * 1e6 + 4 * det_event_global_crb_se_ns(ref));
			t0 = MIN(t0, ref->global_ns - rpre - reach);
			t1 = MAX(t1, ref->global_ns + (int64_t)(len_ms * 1e6) + reach);
		}
		char why[256];
		const char *host = nd->address ? nd->address : "127.0.0.1";
		int port = (int)(nd->address ? d->cfg->clip_port : d->cfg->clip_port + nd->id);
		int frc = clip_fetch(host, port, t0, t1, (int)d->cfg->channel, d->key, d->klen, (int)d->cfg->fetch_timeout_ms,
				     &clips[n], why, sizeof why);
		if (frc < 0) {
			g_snprintf(r->why, sizeof r->why, "node%u clip: %s", e->node, why);
			/* For now: refused for now (its clocks), nobody listening
			 * (its collab restarting), no answer in time (stopped,
			 * or busy). */
			note->again += frc == -EAGAIN || frc == -ECONNREFUSED || frc == -ETIMEDOUT || frc == -ECONNRESET;
			continue;
		}
		tdoa_input *t = &in[n];
		t->node = e->node;
		memcpy(t->mic_m, nd->pos_m, sizeof t->mic_m);
		t->x = clips[n].x;
		t->n = clips[n].n;
		t->rate_hz = clips[n].rate_hz;
		t->rate_eff_hz = clips[n].rate_eff_hz;
		t->t0_ns = clips[n].t0_ns;
		t->t0_frac_ns = clips[n].t0_frac_ns;
		t->t0_se_ns = clips[n].se_ns;
		t->onset_ns = e->global_ns;
		t->onset_se_ns = e->global_se_ns;
		/* The gate's: the same conversion with the onset's error were
		 * the call exactly the template (tdoa.c says why). */
		t->onset_crb_se_ns = det_event_global_crb_se_ns(e);
		/* Where else the call may start, as detect's match left open. */
		t->n_alt = MIN(e->n_alt, TDOA_ALT);
		for (int a = 0; a < t->n_alt; a++)
			t->onset_alt_ns[a] = e->onset_alt[a] / e->rate_hz * 1e9;
		t->snr_db = e->snr_db;
		t->dur_s = e->duration_s;
		t->x2 = NULL;
		/* A second microphone (channel 1): the same frames, for its bearing
		 * (tdoa_pairs.h); without them, none. */
		if (nd->has_mic1 && d->cfg->channel == 0 &&
		    clip_fetch(host, port, t0, t1, 1, d->key, d->klen, (int)d->cfg->fetch_timeout_ms, &clips2[n], why,
			       sizeof why) == 0) {
			if (clips2[n].n == clips[n].n && clips2[n].t0_ns == clips[n].t0_ns &&
			    clips2[n].t0_frac_ns == clips[n].t0_frac_ns) {
				t->x2 = clips2[n].x;
				for (int k = 0; k < 3; k++)
					t->mic2_m[k] = nd->pos_m[k] + nd->mic1_m[k];
				t->mic2_heading_sd_rad = nd->mic1_sd_rad;
			}
		}
		r->nodes[n] = e->node;
		n++;
	}
	r->n = n;
	tdoa_params p;
	tdoa_params_default(&p);
	const det_event *e0 = &g_array_index(dets, det_event, 0);
	p.f_lo_hz = e0->f_lo_hz;
	p.f_hi_hz = e0->f_hi_hz;
	p.beta = d->cfg->gcc_beta;
	dsp_gcc_weighting_parse(d->cfg->gcc_weighting, &p.weighting); /* checked at start-up */
	p.onset_floor_s = d->cfg->onset_floor_ms * 1e-3;
	p.margin_m = d->cfg->search_margin_m;
	p.ambiguity_ratio = d->cfg->ambiguity_ratio;
	p.dominance_ratio = d->cfg->dominance_ratio;
	p.onset_check_k = d->cfg->onset_check;
	p.onset_timing = d->cfg->onset_timing;
	p.coarse_m = d->cfg->coarse_m;
	p.source_speed_m_s = d->cfg->source_speed_m_s;
	p.c_m_s = d->c_m_s;
	p.c_sd_m_s = d->c_sd_m_s;
	p.pos_sd_m = d->cfg->position_sd_m;
	/* It comes from wind_from_deg, so it blows the other way. */
	double wa = d->cfg->wind_from_deg * M_PI / 180.0;
	p.wind_m_s[0] = -d->cfg->wind_speed_m_s * sin(wa);
	p.wind_m_s[1] = -d->cfg->wind_speed_m_s * cos(wa);
	p.wind_m_s[2] = 0;
	p.alpha = d->cfg->alpha;
	p.source_z_m = d->cfg->source_plane ? d->cfg->source_z_m : NAN;
	if (n < d->cfg->min_nodes) {
		r->rc = -EDOM;
		r->tr.loc.status = DSP_LOC_TOO_FEW;
		if (!*r->why)
			g_snprintf(r->why, sizeof r->why, "%d clips", n);
	} else {
		r->rc = tdoa_locate(in, n, &p, &r->tr);
		if (*d->cfg->dump_dir && (d->cfg->dump_ok || r->rc != 0 || r->tr.loc.status != DSP_LOC_OK || r->tr.ambiguous)) {
			char name[96];
			GError *e = NULL;
			g_snprintf(name, sizeof name, "call-%" G_GINT64_FORMAT "-node%u", ref->global_ns, ref->node);
			note->dump_rc = tdoa_dump_write(d->cfg->dump_dir, name, in, n, &p, &r->tr, &e) == 0 ? 1 : -1;
			if (e) {
				g_strlcpy(note->dump_err, e->message, sizeof note->dump_err);
				g_error_free(e);
			}
		}
	}
	for (int i = 0; i < n; i++) {
		g_free(clips[i].x);
		g_free(clips2[i].x);
	}
}
