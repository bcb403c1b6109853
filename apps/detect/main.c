/* main.c — detect: finds calls in fft/<k>/frames (band energy against an
 * adaptive floor, apps/dsp/detector.h), refines each onset to sub-sample
 * precision on the raw audio (matched filter against the profile's
 * templates), converts it to the node's cpu clock and to global time with
 * uncertainties (libsync), and publishes the event on the packet device
 * detect/events (format: event.h, docs/protocol.md).  docs/architecture.md §6.3.
 *
 *   detect [-c /etc/chorus/detect.conf] [-p PROFILE.ini] [--jsonl FILE]
 *
 * Every client here is crashproof (libdev): fft, audiod or syncd may restart
 * and detect carries on.  An event whose refinement or conversion fails is
 * still published, with what is known (coarse onset, global_ns=none).
 */
#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "apps/detect/event.h"
#include "libdev/heap.h"
#include "apps/detect/onset_rate.h"
#include "apps/detect/onset_time.h"
#include "apps/detect/jsonl.h"
#include "libdev/appendlog.h"
#include "apps/dsp/band.h"
#include "apps/dsp/xcorr.h"
#include "apps/detect/profile.h"
#include "apps/detect/overlap_env.h"
#include "apps/detect/refine.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/sample.h"
#include "apps/fft/frames.h"
#include "libcfg/cfg.h"
#include "libdev/ratelog.h"
#include "libdev/dev.h"
#include "libsync/client.h"
#include "libsync/now.h"

#define MAX_BINS 32769
#define CARD_RATE_MAX 1e-3 /* a sound card's rate error beyond this is a measurement across a break */

typedef struct {
	gint64 node, device, channel;
	char *profile;      /* profile file; "" = built-in frog defaults (no templates) */
	char *jsonl;        /* also append events to this JSON-lines file; "" = no */
	gint64 queue;       /* events queued per subscriber */
	gint64 history;     /* events kept for subscribers that resume */
	double rate_sd_ppm; /* s.d. of the timing clock's rate against true seconds, ppm */
} detect_cfg;

#define K(...) CFG_KEY(detect_cfg, __VA_ARGS__)
static const cfg_key keys[] = {
	K("node", CFG_INT, "0", 0, 4294967294.0, node, "this node's number (CHORUS_NODE sets the default)"),
	K("device", CFG_INT, "0", 0, 15, device, "audio device k: reads fft/<k>/frames and audio/<k>/data"),
	K("channel", CFG_INT, "0", 0, 63, channel, "audio channel refined (the one fft transforms)"),
	K("profile", CFG_STRING, "/etc/chorus/profiles/frog.ini", 0, 0, profile, "detector profile (GKeyFile)"),
	K("jsonl", CFG_STRING, "", 0, 0, jsonl, "append every event to this JSON-lines file; empty = no"),
	K("queue", CFG_INT, "256", 4, 1 << 20, queue, "events queued per subscriber"),
	K("history", CFG_INT, "4096", 0, 1 << 20, history,
	  "events kept for subscribers that come back with a cursor (chorus-mqtt after a restart: libdev/packet.h \"History\"); 0 = none"),
	K("clock_rate_sd_ppm", CFG_DOUBLE, G_STRINGIFY(DETECT_RATE_SD_PPM), 0, 1000, rate_sd_ppm,
	  "s.d. of the rate of the clock onsets are timed in (global, else this node's cpu crystal) against true seconds, "
	  "ppm: the card's rate is measured against it to undo the stretch it puts into every call (a crystal within "
	  "+-50 ppm: 30)"),
	{NULL},
};
static const cfg_group table[] = {
	{.name = "detect", .keys = keys, .store = 1},
	{NULL},
};

typedef struct detectd detectd;

typedef struct {
	detectd *d;
	dsp_event de;
	int64_t clip_first; /* frames */
	size_t n, got;      /* clip length and frames received */
	float *clip;
	int lag_lo, lag_hi; /* where the onset is searched, samples from clip[0] */
	int lag_hi_all;     /* … and overlapping calls of other templates */
	int sample_bytes;
	gboolean is_float;
	dev_sensor_reader *r;
	char note[160]; /* why refinement was skipped */
} pending;

struct detectd {
	detect_cfg cfg;
	det_profile prof;
	char name_frames[32], name_audio[32];
	dev_packet_sub *frames;
	dev_packet *events;
	dev_status *status;
	sync_client *clocks;
	dsp_detector *det;
	det_refiner *ref;
	det_overlap_env *oenv;                                               /* overlapping calls no template fits (overlap_env.h); NULL with one template */
	double tmpl_lo_hz[DET_MAX_TEMPLATES], tmpl_hi_hz[DET_MAX_TEMPLATES]; /* each template's band (95 % of its energy, +-10 %) */
	double tmpl_s[DET_MAX_TEMPLATES];                                    /* and its length, s */
	uint32_t size, hop;
	double rate_hz;
	float P[MAX_BINS];
	int64_t next_first; /* expected first of the next frame */
	guint64 nframes, dropped, bad, calls, refined, unrefined, no_global, overlaps, seq;
	guint64 overlaps_env;   /* … of them found by their band envelope */
	guint64 untimed;        /* calls not sent: no cpu time for their onset */
	guint64 rate_corrected; /* matched onsets moved for the card's stretch */
	double card_ppm;        /* the card's rate error the last of them used, ppm */
	guint64 edges;          /* refinements that found the sound's leading edge */
	guint64 at_edge;        /* … and took the template's start near it */
	GList *pending;
	int jsonl;            /* the JSON-lines file (libdev/appendlog.h), or -1 */
	guint64 jsonl_failed; /* events the JSON-lines file could not take */
	char last_error[256];
	GString *why;
};

/* The event in the JSON-lines file, when there is one: the same keys,
 * one line per event; a line the file cannot take is counted and said on
 * the status. */
static void keep_jsonl(detectd *d, const det_event *e)
{
	if (d->jsonl < 0)
		return;
	gchar *j = det_event_json(e);
	int rc = dev_appendlog_line(d->jsonl, j, strlen(j));
	if (rc < 0) {
		d->jsonl_failed++;
		g_snprintf(d->last_error, sizeof d->last_error, "%s: %s (%" G_GUINT64_FORMAT " events not written)", d->cfg.jsonl,
			   g_strerror(-rc), d->jsonl_failed);
		g_warning("%s", d->last_error);
	}
	g_free(j);
}

/* Undo the card's stretch of a matched onset (onset_rate.h
 * det_onset_rate_correct), its rate measured against global where the
 * onset converts to global (one ruler for every node: what is left of the
 * stretch is the same everywhere), else against this node's cpu clock. */
static void rate_correct(detectd *d, det_event *e, int template_id)
{
	double stretch, shift = det_refiner_rate_shift(d->ref, template_id);
	char why[256];
	if (shift == 0)
		return;
	if (det_onset_card_stretch(d->clocks, e, sync_clock_global(), &stretch, why, sizeof why) < 0 &&
	    det_onset_card_stretch(d->clocks, e, sync_clock_cpu((uint32_t)d->cfg.node), &stretch, why, sizeof why) < 0)
		return; /* no time at all: said below, where the onset's own conversion fails */
	if (fabs(stretch - 1.0) > CARD_RATE_MAX) {
		/* no sound card is 0.1 % off: a conversion across a break in the
		 * clock's history, not the card's rate */
		g_message("onset frame %.1f: the card's rate measured %.0f ppm off, not used", e->onset_frame,
			  (stretch - 1.0) * 1e6);
		return;
	}
	det_onset_rate_correct(e, stretch, shift, d->cfg.rate_sd_ppm * 1e-6);
	d->card_ppm = (stretch - 1.0) * 1e6;
	d->rate_corrected++;
}

/* Publish the call rr (ok: refined, else the coarse onset); matched: its
 * onset is a matched filter's (not a band envelope's edge). */
static void publish(detectd *d, pending *p, const det_refine_result *rr, gboolean ok, gboolean matched)
{
	det_event e = {0};
	e.node = (uint32_t)d->cfg.node;
	e.dev = (uint32_t)d->cfg.device;
	e.seq = ++d->seq;
	g_strlcpy(e.profile, d->prof.name, sizeof e.profile);
	e.rate_hz = d->rate_hz;
	e.duration_s = p->de.duration_s;
	e.f_lo_hz = p->de.f_lo_hz;
	e.f_hi_hz = p->de.f_hi_hz;
	e.snr_db = p->de.peak_snr_db;
	if (ok) {
		e.onset_frame = (double)p->clip_first + rr->r.tau;
		e.onset_se = rr->r.se;
		e.onset_crb_se = rr->r.se_crb;
		e.n_alt = det_refine_alternatives(d->ref, rr, e.onset_alt, DET_EVENT_ALT);
		e.enr_db = rr->r.enr_db;
		e.template_id = rr->template_id;
		g_strlcpy(e.call, det_profile_call(&d->prof, rr->template_id - 1), sizeof e.call);
		/* The matched call's own band and length (its template's): an
		 * overlapping call of another kind fills the rest of the energy
		 * event and of the profile's band. */
		if (rr->template_id >= 1 && rr->template_id <= DET_MAX_TEMPLATES) {
			e.f_lo_hz = d->tmpl_lo_hz[rr->template_id - 1];
			e.f_hi_hz = d->tmpl_hi_hz[rr->template_id - 1];
			e.duration_s = d->tmpl_s[rr->template_id - 1];
		}
		d->refined++;
	} else {
		/* The coarse onset: the window centre of the first frame above
		 * threshold, uncertain by about +-size/2 (uniform: size/sqrt(12)). */
		e.onset_frame = (double)p->de.onset;
		e.onset_se = d->size / sqrt(12.0);
		d->unrefined++;
	}
	char why[256];
	if (ok && matched)
		rate_correct(d, &e, rr->template_id);
	/* Frame -> cpu and -> global. */
	if (det_onset_time(d->clocks, &e, sync_clock_cpu((uint32_t)d->cfg.node), &e.cpu_ns, &e.cpu_se_ns, why, sizeof why) < 0) {
		/* No time on this node's own clock (the onset lies where the
		 * audio clock's history has a break syncd does not bridge: an
		 * overrun's lost frames): an event every reader refuses
		 * (cpu_ns is required) is not sent.  Counted, said, and kept in
		 * the JSON-lines file with its times null. */
		d->untimed++;
		g_snprintf(d->last_error, sizeof d->last_error, "onset to cpu: %s (%" G_GUINT64_FORMAT " calls not sent)", why,
			   d->untimed);
		g_warning("call at frame %.1f not sent: no cpu time: %s", e.onset_frame, why);
		e.cpu_ns = 0;
		e.cpu_se_ns = INFINITY;
		e.has_global = FALSE;
		keep_jsonl(d, &e);
		dev_status_notify(d->status);
		return;
	}
	if (det_onset_time(d->clocks, &e, sync_clock_global(), &e.global_ns, &e.global_se_ns, why, sizeof why) == 0) {
		e.has_global = TRUE;
	} else {
		g_snprintf(d->last_error, sizeof d->last_error, "onset to global: %s", why);
		g_message("onset frame %.1f to global: %s", e.onset_frame, why);
		d->no_global++;
	}
	GString *s = g_string_new(NULL);
	det_event_format(&e, s);
	dev_packet_send(d->events, s->str, s->len);
	g_message("call %" G_GUINT64_FORMAT ": %s%s%s", e.seq, s->str, ok ? "" : " (coarse: ", ok ? "" : p->note);
	keep_jsonl(d, &e);
	g_string_free(s, TRUE);
	dev_status_notify(d->status);
}

/* Overlapping calls of other kinds in residual res (the primary and the
 * overlaps found[0..nf) subtracted) found by their band envelope
 * (overlap_env.h).  Publishes each; returns how many. */
static int overlaps_by_envelope(detectd *d, pending *p, const float *res, const det_refine_result *found, int nf)
{
	det_refine_result env[DET_REFINE_MAX];
	size_t noise_hi = (size_t)(d->size / 2 + p->lag_lo * 2 - d->hop); /* as det_refine_clip's (finish_idle) */
	size_t end = p->de.end > p->clip_first ? (size_t)(p->de.end - p->clip_first) : 0;
	int ne = det_overlap_env_find(d->oenv, res, p->n, noise_hi, p->lag_lo, p->lag_hi_all, end, found, nf,
				      DET_OVERLAP_ENV_SEP_S * d->rate_hz, env, DET_REFINE_MAX + 1 - nf);
	if (ne < 0) {
		g_warning("clip at frame %" G_GINT64_FORMAT ": out of memory looking for overlapping calls", p->clip_first);
		return 0;
	}
	for (int i = 0; i < ne; i++) {
		d->overlaps++;
		d->overlaps_env++;
		g_message("call at frame %.1f: template %d found by its band envelope overlapping the call at frame %.1f",
			  (double)p->clip_first + env[i].r.tau, env[i].template_id, (double)p->clip_first + found[0].r.tau);
		publish(d, p, &env[i], TRUE, FALSE);
	}
	return ne;
}

static gboolean finish_idle(gpointer data)
{
	pending *p = data;
	detectd *d = p->d;
	det_refine_result rr;
	gboolean ok = FALSE;
	const char *why = p->note;
	if (!*p->note && d->ref && p->got == p->n) {
		/* The clip before the earliest the call can start (the coarse
		 * onset, at size + pre, is within size / 2 + hop of it) holds
		 * only noise: the sound's leading edge rises after it. */
		int pre = p->lag_lo * 2, found = 0;
		/* Only the profile's band: a background loud outside it (wind
		 * below a frog's band) is neither the noise nor the misfit under
		 * a template (it cost 20-40 dB of ENR in bench/field's wind row,
		 * and the overlapping calls it hid). */
		if (dsp_band_pass(p->clip, p->n, d->rate_hz, d->prof.f_lo_hz, d->prof.f_hi_hz) < 0)
			g_warning("clip at frame %" G_GINT64_FORMAT ": out of memory band-limiting it", p->clip_first);
		int named = det_refiner_classified(d->ref);
		int rc = det_refine_clip(d->ref, p->clip, p->n, p->lag_lo, p->lag_hi, (size_t)(d->size / 2 + pre - d->hop), d->size,
					 d->prof.f_lo_hz, d->prof.f_hi_hz, d->prof.min_enr_db, &rr, &found, &why);
		if (det_refiner_classified(d->ref) > named)
			g_message("call at frame %" G_GINT64_FORMAT ": no template explains a fifth of it; named template %d by its band envelope",
				  p->clip_first + (int64_t)rr.r.tau, rr.template_id);
		d->edges += found;
		if (rc == 0) {
			d->at_edge += rr.at_edge;
			ok = TRUE;
			/* Calls overlapping in time make one energy event.  Subtract
			 * the call found and look for the
			 * templates in the residual (successive cancellation; the
			 * same template again for two calls of one species). */
			float *res = g_memdup2(p->clip, p->n * sizeof(float));
			det_refine_result found[DET_REFINE_MAX + 1];
			found[0] = rr;
			int nm = det_refine_overlaps(d->ref, res, p->n, p->lag_lo, p->lag_hi_all, &rr, d->prof.overlap_enr_db,
						     d->prof.overlap_explained, 0.002 * d->rate_hz, found + 1, DET_REFINE_MAX);
			for (int i = 1; i <= nm; i++) {
				d->overlaps++;
				publish(d, p, &found[i], TRUE, TRUE);
			}
			/* A call of another kind none of whose templates fits it
			 * (a varied call: the matched filter explains none of it),
			 * by its own band's envelope and edge. */
			if (d->oenv && nm >= 0 && nm < DET_REFINE_MAX)
				overlaps_by_envelope(d, p, res, found, nm + 1);
			g_free(res);
		} else {
			g_strlcpy(p->note, why, sizeof p->note);
		}
	} else if (!*p->note) {
		g_strlcpy(p->note, d->ref ? "audio incomplete" : "no templates in the profile", sizeof p->note);
	}
	/* FFTW remembers every transform size planned (apps/dsp/xcorr.h), and
	 * the band-pass and the edge plan one as long as each clip, whose
	 * length follows its event's: forgotten after each refinement (the
	 * chaos soak: detect on node 1 grew 3552 -> 3828 kB over 30 minutes,
	 * as collab did before it forgot them). */
	dsp_fft_forget();
	publish(d, p, &rr, ok, ok);
	d->pending = g_list_remove(d->pending, p);
	dev_sensor_reader_free(p->r);
	g_free(p->clip);
	g_free(p);
	return G_SOURCE_REMOVE;
}

static void finish(pending *p)
{
	/* Not from inside the reader's callback: finishing frees the reader. */
	g_idle_add(finish_idle, p);
}

static void a_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	pending *p = user;
	char *r = g_strndup(reply, len);
	p->is_float = strstr(r, "format=FLOAT_LE") != NULL;
	p->sample_bytes = (int)item_size;
	g_free(r);
}

static void a_data(void *user, int64_t first, const void *items, size_t n)
{
	pending *p = user;
	for (size_t i = 0; i < n; i++) {
		int64_t k = first + (int64_t)i - p->clip_first;
		if (k < 0 || k >= (int64_t)p->n)
			continue;
		float v = dsp_sample_le(items, i, p->sample_bytes, p->is_float);
		p->clip[k] = v;
		p->got++;
	}
}

static void a_gap(void *user, int64_t from, int64_t to)
{
	pending *p = user;
	g_snprintf(p->note, sizeof p->note, "audio gap [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") in the clip", from, to);
}

static void a_end(void *user, int64_t next)
{
	finish(user);
}

static void a_error(void *user, int err, const char *msg)
{
	pending *p = user;
	g_snprintf(p->note, sizeof p->note, "audiod: %s", msg);
	finish(p);
}

static void on_call(detectd *d, const dsp_event *de)
{
	d->calls++;
	pending *p = g_new0(pending, 1);
	p->d = d;
	p->de = *de;
	/* The true onset lies within about +-size/2 of the coarse one (more for a
	 * slow rise): fetch from a frame size before it, plus noise for the
	 * refiner's noise estimate, to the end of the longest template. */
	int pre = (int)ceil(d->prof.pre_ms * 1e-3 * d->rate_hz);
	if (pre < 64)
		pre = 64;
	size_t mlen = d->ref ? det_refiner_max_len(d->ref) : 0;
	p->clip_first = de->onset - d->size - pre;
	p->lag_lo = pre / 2;
	p->lag_hi = (int)(d->size * 3 / 2) + pre;
	/* Another call overlapping this one starts inside the event: at least
	 * a shortest call before its end (the clip reaches further, into what
	 * may be the next call, which is the next event's). */
	p->lag_hi_all = (int)(de->end - p->clip_first) - (int)(d->prof.min_dur_s * d->rate_hz);
	if (p->lag_hi_all < p->lag_hi)
		p->lag_hi_all = p->lag_hi;
	p->n = (size_t)p->lag_hi_all + mlen + (size_t)pre;
	p->clip = g_new0(float, p->n);
	d->pending = g_list_append(d->pending, p);
	if (!d->ref) {
		finish(p);
		return;
	}
	char params[32];
	g_snprintf(params, sizeof params, "channels=%" G_GINT64_FORMAT, d->cfg.channel);
	dev_sensor_reader_ops ops = {a_opened, a_data, a_gap, a_end, a_error, NULL};
	GError *err = NULL;
	p->r = dev_sensor_reader_new(d->name_audio, p->clip_first, p->clip_first + (int64_t)p->n, 0, params, strlen(params),
				     NULL, &ops, p, &err);
	if (!p->r) {
		g_snprintf(p->note, sizeof p->note, "%s", err->message);
		g_error_free(err);
		finish(p);
	}
}

/* (Re)build the detector and the templates for a stream format. */
static int setup(detectd *d, const fft_frame_msg *m)
{
	dsp_detector_free(d->det);
	det_overlap_env_free(d->oenv);
	det_refiner_free(d->ref);
	d->det = NULL;
	d->oenv = NULL;
	d->ref = NULL;
	d->size = m->size;
	d->hop = m->hop;
	d->rate_hz = m->rate_hz;
	dsp_det_params dp;
	det_profile_detector(&d->prof, m->rate_hz, &dp);
	const char *why;
	d->det = dsp_detector_new(&dp, (int)m->size, (int)m->hop, &why);
	if (!d->det) {
		g_snprintf(d->last_error, sizeof d->last_error, "detector: %s", why);
		g_warning("%s", d->last_error);
		return -EINVAL;
	}
	int nt = det_profile_n_templates(&d->prof);
	float *h[DET_MAX_TEMPLATES] = {0};
	size_t len[DET_MAX_TEMPLATES] = {0};
	int rc = 0;
	for (int i = 0; i < nt && !rc; i++) {
		GError *err = NULL;
		h[i] = det_profile_render(&d->prof, i, m->rate_hz, &len[i], &err);
		d->tmpl_lo_hz[i] = d->prof.f_lo_hz;
		d->tmpl_hi_hz[i] = d->prof.f_hi_hz;
		if (h[i]) {
			d->tmpl_s[i] = (double)len[i] / m->rate_hz;
			/* Calls vary by per cents from the template: its band is
			 * widened by 10 % each side, within the profile's. */
			det_template_band(h[i], len[i], m->rate_hz, d->prof.f_lo_hz, d->prof.f_hi_hz, &d->tmpl_lo_hz[i],
					  &d->tmpl_hi_hz[i]);
		}
		if (!h[i]) {
			g_snprintf(d->last_error, sizeof d->last_error, "profile template: %s", err->message);
			g_warning("%s", d->last_error);
			g_error_free(err);
			rc = -EINVAL;
		}
	}
	if (!rc && nt > 0 && !(d->ref = det_refiner_new(h, len, nt, &why))) {
		g_snprintf(d->last_error, sizeof d->last_error, "templates: %s", why);
		g_warning("%s", d->last_error);
	} else if (d->ref && det_refiner_set_variation(d->ref, det_profile_stretch(&d->prof)) < 0) {
		g_snprintf(d->last_error, sizeof d->last_error, "templates: out of memory measuring their variation");
		g_warning("%s", d->last_error);
		rc = -ENOMEM;
	} else if (d->ref) {
		int be = det_refiner_set_band(d->ref, d->rate_hz, d->prof.f_lo_hz, d->prof.f_hi_hz);
		if (be == -ENOMEM)
			g_warning("templates: out of memory: onsets are not checked against the sound's leading edge");
		for (int i = 0; i < nt; i++) {
			double spread;
			int usable;
			double off = det_refiner_edge_offset(d->ref, i + 1, &spread, &usable);
			g_message("template %d: onset error under %.3g %% variation%s %.3g ms; leading edge %.3g ms after its start "
				  "(%.3g ms later at 10 dB): %s; a card 40 ppm fast moves its matched onset %.3g us",
				  i + 1, 100 * det_profile_stretch(&d->prof),
				  d->prof.max_speed_m_s > 0 ? " (with the callers' Doppler)" : "",
				  det_refiner_variation_bias(d->ref, i + 1) / d->rate_hz * 1e3,
				  off / d->rate_hz * 1e3, spread / d->rate_hz * 1e3,
				  usable ? "onsets are taken near the edge" : "the edge does not say where the call starts",
				  40e-6 * det_refiner_rate_shift(d->ref, i + 1) / d->rate_hz * 1e6);
		}
	}
	const char *calls[DET_MAX_TEMPLATES];
	for (int i = 0; i < nt; i++)
		calls[i] = det_profile_call(&d->prof, i);
	if (d->ref && nt > 1 &&
	    !(d->oenv = det_overlap_env_new(d->ref, h, len, nt, d->rate_hz, d->prof.f_lo_hz, d->prof.f_hi_hz, calls, &why)))
		g_warning("templates: %s: overlapping calls no template fits are not looked for", why);
	for (int i = 0; i < nt; i++)
		g_free(h[i]);
	g_message("detecting %s: %.0f-%.0f Hz at %.0f Hz, frames %u/%u, %d template%s", d->prof.name, d->prof.f_lo_hz,
		  d->prof.f_hi_hz, m->rate_hz, m->size, m->hop, nt, nt == 1 ? "" : "s");
	return 0;
}

static void on_frame(void *user, const char *msg, size_t len, uint32_t dropped)
{
	detectd *d = user;
	fft_frame_msg m;
	const char *why;
	if (fft_frame_decode(msg, len, &m, d->P, MAX_BINS, &why) < 0) {
		ratelog(G_LOG_LEVEL_WARNING, ++d->bad, "fft frame rejected: %s", why); /* per frame */
		return;
	}
	d->nframes++;
	dsp_event ev;
	if (!d->det || m.size != d->size || m.hop != d->hop || m.rate_hz != d->rate_hz) {
		if (d->det && dsp_detector_flush(d->det, &ev) == 1)
			on_call(d, &ev);
		if (setup(d, &m) < 0)
			return;
	} else if (dropped || m.first != d->next_first) {
		/* Lost frames: end a call in progress there; never bridge a gap. */
		d->dropped += dropped;
		if (dsp_detector_flush(d->det, &ev) == 1)
			on_call(d, &ev);
	}
	if (m.first <= d->next_first - (int64_t)m.hop) {
		/* The stream went backwards (audiod restarted): start afresh. */
		setup(d, &m);
	}
	d->next_first = m.first + m.hop;
	double E = fft_frame_band(&m, d->prof.f_lo_hz, d->prof.f_hi_hz);
	if (dsp_detector_feed(d->det, m.first, E, &ev) == 1)
		on_call(d, &ev);
}

static int status_text(void *user, GString *out)
{
	detectd *d = user;
	double fl = d->det ? dsp_detector_floor(d->det) : 0;
	g_string_append_printf(out, "profile %s band=%.0f-%.0f templates=%d\n", d->prof.name, d->prof.f_lo_hz, d->prof.f_hi_hz,
			       det_profile_n_templates(&d->prof));
	g_string_append_printf(out, "frames received=%" G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT " bad=%" G_GUINT64_FORMAT " floor_dbfs=%.1f floor_relearned_low=%" G_GUINT64_FORMAT " busy=%d\n", d->nframes, d->dropped, d->bad,
			       fl > 0 ? 10 * log10(fl) : -INFINITY, d->det ? (guint64)dsp_detector_relearned_low(d->det) : 0,
			       d->det ? dsp_detector_busy(d->det) : 0);
	uint64_t ts = 0, tl = 0;
	if (d->det)
		dsp_detector_rejected(d->det, &ts, &tl);
	g_string_append_printf(out, "calls %" G_GUINT64_FORMAT " refined=%" G_GUINT64_FORMAT " coarse=%" G_GUINT64_FORMAT " no_global=%" G_GUINT64_FORMAT " untimed=%" G_GUINT64_FORMAT " rejected_short=%" G_GUINT64_FORMAT " rejected_long=%" G_GUINT64_FORMAT " overlapping=%" G_GUINT64_FORMAT " overlapping_by_envelope=%" G_GUINT64_FORMAT " pending=%u subscribers=%u\n", d->calls, d->refined, d->unrefined,
			       d->no_global, d->untimed, (guint64)ts, (guint64)tl, d->overlaps, d->overlaps_env, g_list_length(d->pending),
			       dev_packet_subscribers(d->events));
	g_string_append_printf(out,
			       "onsets edge_found=%" G_GUINT64_FORMAT " at_edge=%" G_GUINT64_FORMAT
			       " named_by_envelope=%d named_by_halves=%d rate_corrected=%" G_GUINT64_FORMAT
			       " card_ppm=%.2f clock_rate_sd_ppm=%g\n",
			       d->edges, d->at_edge, d->ref ? det_refiner_classified(d->ref) : 0,
			       d->ref ? det_refiner_halves_chosen(d->ref) : 0, d->rate_corrected,
			       d->card_ppm, d->cfg.rate_sd_ppm);
	g_string_append_printf(out, "clocks %s\n", sync_client_ready(d->clocks) ? "ready" : "waiting for sync/ticker");
	if (d->jsonl >= 0)
		g_string_append_printf(out, "jsonl %s failed=%" G_GUINT64_FORMAT "\n", d->cfg.jsonl, d->jsonl_failed);
	if (*d->last_error)
		g_string_append_printf(out, "error %s\n", d->last_error);
	dev_heap_usage_append(out);
	return 0;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char *conf = NULL, *profile = NULL, *jsonl = NULL;
	gint64 node = -1, device = -1;
	gboolean print_config = FALSE;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/detect.conf)", "FILE"},
		{"profile", 'p', 0, G_OPTION_ARG_FILENAME, &profile, "detector profile", "FILE"},
		{"jsonl", 0, 0, G_OPTION_ARG_FILENAME, &jsonl, "also append events to this JSON-lines file", "FILE"},
		{"node", 'n', 0, G_OPTION_ARG_INT64, &node, "this node's number", "N"},
		{"device", 'd', 0, G_OPTION_ARG_INT64, &device, "audio device index", "K"},
		{"print-config", 0, 0, G_OPTION_ARG_NONE, &print_config, "print every key of the config and of a profile, and exit", NULL},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("- chorus call detector");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "detect: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	if (print_config) {
		char *a = cfg_describe(table), *b = det_profile_describe();
		printf("# detect.conf\n%s\n# profile\n%s", a, b);
		g_free(a);
		g_free(b);
		return 0;
	}
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "detect: %s\n", why);
		return 2;
	}
	detectd d = {0};
	d.jsonl = -1;
	d.why = g_string_new(NULL);
	const char *env = getenv("CHORUS_NODE");
	if (!cfg_defaults(table, &d.cfg, &err) ||
	    (env && *env && !cfg_set(table, &d.cfg, "detect", "node", env, "environment CHORUS_NODE: ", &err)) ||
	    !cfg_load(conf ? conf : "/etc/chorus/detect.conf", conf == NULL, table, &d.cfg, &err)) {
		fprintf(stderr, "detect: %s\n", err->message);
		return 2;
	}
	if (node >= 0)
		d.cfg.node = node;
	if (device >= 0)
		d.cfg.device = device;
	if (profile) {
		g_free(d.cfg.profile);
		d.cfg.profile = g_strdup(profile);
	}
	if (jsonl) {
		g_free(d.cfg.jsonl);
		d.cfg.jsonl = g_strdup(jsonl);
	}
	if (!det_profile_load(&d.prof, *d.cfg.profile ? d.cfg.profile : NULL, &err)) {
		fprintf(stderr, "detect: %s\n", err->message);
		return 2;
	}
	d.jsonl = *d.cfg.jsonl ? dev_appendlog_open(d.cfg.jsonl) : -1;
	if (*d.cfg.jsonl && d.jsonl < 0) {
		fprintf(stderr, "detect: %s: %s\n", d.cfg.jsonl, g_strerror(-d.jsonl));
		return 2;
	}
	g_snprintf(d.name_frames, sizeof d.name_frames, "fft/%" G_GINT64_FORMAT "/frames", d.cfg.device);
	g_snprintf(d.name_audio, sizeof d.name_audio, "audio/%" G_GINT64_FORMAT "/data", d.cfg.device);
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	dev_options o;
	dev_options_init(&o);
	o.queue_limit = (size_t)d.cfg.queue;
	o.history = (size_t)d.cfg.history;
	dev_packet_ops pops = {0};
	int rc = 0;
	if (!(d.clocks = sync_client_new(NULL, NULL, NULL, NULL, &err)) ||
	    !(d.events = dev_packet_new("detect/events", &o, NULL, &pops, &d, &err)) ||
	    !(d.status = dev_status_new("detect/status", NULL, NULL, status_text, NULL, &d, &err)) ||
	    !(d.frames = dev_packet_sub_new(d.name_frames, NULL, 0, NULL, on_frame, NULL, &d, &err))) {
		fprintf(stderr, "detect: %s\n", err->message);
		rc = 1;
	} else {
		g_unix_signal_add(SIGINT, on_signal, loop);
		g_unix_signal_add(SIGTERM, on_signal, loop);
		g_message("node%" G_GINT64_FORMAT ": profile %s (%s)", d.cfg.node, d.prof.name,
			  *d.cfg.profile ? d.cfg.profile : "built-in");
		sd_notify(0, "READY=1\nSTATUS=detecting");
		g_main_loop_run(loop);
		sd_notify(0, "STOPPING=1");
	}
	for (GList *l = d.pending; l; l = l->next) {
		pending *p = l->data;
		dev_sensor_reader_free(p->r);
		g_free(p->clip);
		g_free(p);
	}
	g_list_free(d.pending);
	dev_packet_sub_free(d.frames);
	dev_status_free(d.status);
	dev_packet_free(d.events);
	sync_client_free(d.clocks);
	dsp_detector_free(d.det);
	det_overlap_env_free(d.oenv);
	det_refiner_free(d.ref);
	det_profile_clear(&d.prof);
	cfg_clear(table, &d.cfg);
	/* Events the file lost make the exit status, as for collab. */
	int ce = d.jsonl >= 0 ? dev_appendlog_close(d.jsonl) : 0;
	if (ce < 0) {
		fprintf(stderr, "detect: %s: %s\n", d.cfg.jsonl, g_strerror(-ce));
		rc = 1;
	}
	if (d.jsonl_failed) {
		fprintf(stderr, "detect: %" G_GUINT64_FORMAT " events were not written to %s\n", d.jsonl_failed, d.cfg.jsonl);
		rc = 1;
	}
	g_string_free(d.why, TRUE);
	g_free(conf);
	g_free(profile);
	g_free(jsonl);
	g_main_loop_unref(loop);
	return rc;
}
