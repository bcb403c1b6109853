/* profile.c — detector profiles: a static libcfg table (see profile.h). */
#include "apps/detect/profile.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "apps/detect/event.h"
#include "libcfg/cfg.h"

/* Choices of the enum keys, in the order of det_waveform / dsp_sweep. */
static const char *const waveforms[] = {"none", "pulse_train", "chirp", "tone", "click", "file", NULL};
static const char *const sweeps[] = {"linear", "exponential", NULL};

/* The table's entries (libcfg/cfg.h): a key, a key renamed to carry its unit, an enum. */
#define K CFG_KEY
#define R CFG_KEY_RENAMED
#define E CFG_KEY_ENUM
#define P(key, t, def, lo, hi, field, help) K(det_profile, key, t, def, lo, hi, field, help)
#define PR(key, old, t, def, lo, hi, field, help) R(det_profile, key, old, t, def, lo, hi, field, help)
#define T(key, t, def, lo, hi, field, help) K(det_template_cfg, key, t, def, lo, hi, field, help)

static const cfg_key profile_keys[] = {
	P("name", CFG_STRING, "frog", 1, 0, name, "name of the target, copied into events"),
	{NULL},
};

static const cfg_key detector_keys[] = {
	PR("f_lo_hz", "f_lo", CFG_DOUBLE, "1000", 0, 1e6, f_lo_hz, "band low edge, Hz"),
	PR("f_hi_hz", "f_hi", CFG_DOUBLE, "3200", 1, 1e6, f_hi_hz, "band high edge, Hz"),
	P("on_db", CFG_DOUBLE, "8", 0, 60, on_db, "a call is confirmed above floor + on_db, dB"),
	P("off_db", CFG_DOUBLE, "4", 0, 60, off_db, "a call lasts while above floor + off_db, dB (<= on_db)"),
	PR("min_duration_s", "min_duration", CFG_DOUBLE, "0.05", 0.001, 60, min_dur_s, "shortest call, s"),
	PR("max_duration_s", "max_duration", CFG_DOUBLE, "2", 0.01, 600, max_dur_s, "longest call, s (longer: background change)"),
	PR("hangover_s", "hangover", CFG_DOUBLE, "0.06", 0, 10, hangover_s, "silence tolerated inside a call (pulse gaps), s"),
	PR("floor_tau_s", "floor_tau", CFG_DOUBLE, "5", 0.1, 3600, floor_tau_s, "time constant of the noise floor, s"),
	PR("warmup_s", "warmup", CFG_DOUBLE, "0.5", 0.01, 60, warmup_s, "floor learned before detecting, s"),
	{NULL},
};

static const cfg_key refine_keys[] = {
	P("pre_ms", CFG_DOUBLE, "8", 2, 1000, pre_ms, "noise fetched before the earliest possible onset, ms"),
	P("overlap_enr_db", CFG_DOUBLE, "25", 0, 200, overlap_enr_db,
	  "another template matching the residual (the call found subtracted) this well is a second, overlapping call, dB"),
	P("overlap_explained", CFG_DOUBLE, "0.5", 0, 1, overlap_explained,
	  "… and explaining at least this fraction of the residual's energy under it"),
	P("min_enr_db", CFG_DOUBLE, "12", -20, 100, min_enr_db, "weaker matches keep the coarse onset, dB"),
	P("variation_pct", CFG_DOUBLE, "3", 0, 50, variation_pct,
	  "how far real calls differ from the templates, % of every duration and frequency (0: the calls are the templates)"),
	P("max_speed_m_s", CFG_DOUBLE, "0", 0, 100, max_speed_m_s,
	  "callers move at up to this while calling, m/s: the Doppler effect stretches a call by up to v/c (0: they call "
	  "from a perch)"),
	{NULL},
};

static const cfg_key template_keys[] = {
	E(det_template_cfg, "waveform", "none", waveforms, waveform, "what the call looks like (none: no template)"),
	T("carrier_hz", CFG_DOUBLE, "2000", 1, 1e6, carrier_hz, "pulse_train: carrier, Hz"),
	T("pulse_ms", CFG_DOUBLE, "5", 0.01, 1e4, pulse_ms, "pulse_train: pulse length, ms"),
	T("pulse_interval_ms", CFG_DOUBLE, "20", 0.01, 1e4, pulse_interval_ms, "pulse_train: start-to-start, ms"),
	T("pulses", CFG_INT, "10", 1, 10000, pulses, "pulse_train: pulses per call"),
	T("f0_hz", CFG_DOUBLE, "1000", 1, 1e6, f0_hz, "chirp: start frequency, Hz"),
	T("f1_hz", CFG_DOUBLE, "2000", 1, 1e6, f1_hz, "chirp: end frequency, Hz"),
	E(det_template_cfg, "sweep", "linear", sweeps, sweep, "chirp: how the frequency moves"),
	T("length_ms", CFG_DOUBLE, "100", 0.01, 1e5, length_ms, "chirp, tone: length, ms"),
	T("taper_ms", CFG_DOUBLE, "5", 0, 1e5, taper_ms, "chirp, tone: raised-cosine fade, ms"),
	T("freq_hz", CFG_DOUBLE, "1000", 1, 1e6, freq_hz, "tone: frequency, Hz"),
	T("click_width_us", CFG_DOUBLE, "100", 1, 1e6, click_width_us, "click: Gaussian sigma, us"),
	T("file", CFG_STRING, "", 1, 0, file, "file: sound file (relative to the profile)"),
	T("file_channel", CFG_INT, "0", 0, 255, file_channel, "file: channel, from 0"),
	T("file_start", CFG_DOUBLE, "0", 0, 1e6, file_start_s, "file: start of the segment used, s into the file"),
	T("file_length", CFG_DOUBLE, "0", 0, 1e6, file_length_s, "file: length of the segment, s (0: to the end)"),
	T("max_ms", CFG_DOUBLE, "0", 0, 1e5, max_ms, "use at most this much of the call, ms; 0 = all"),
	T("call", CFG_STRING, "", 0, 0, call,
	  "the call type this template is one form of (1-31 of A-Z a-z 0-9 _ . -): detections of templates of one call "
	  "type are grouped together by collab; empty: a call type of its own"),
	{NULL},
};

static const cfg_group table[] = {
	{.name = "profile", .keys = profile_keys, .store = 1},
	{.name = "detector", .keys = detector_keys, .store = 1},
	{.name = "refine", .keys = refine_keys, .store = 1},
	{.name = "template", .numbered = 1, .keys = template_keys, .store = 1, .offset = offsetof(det_profile, tmpl), .stride = sizeof(det_template_cfg), .first = 1, .count = DET_MAX_TEMPLATES},
	{NULL},
};

/* The checks across keys, each error at its key's line. */
static void check(cfg_file *f, const det_profile *p)
{
	if (p->off_db > p->on_db)
		cfg_file_fail(f, "detector", "off_db", "must not exceed on_db (%g dB)", p->on_db);
	if (p->f_hi_hz <= p->f_lo_hz)
		cfg_file_fail(f, "detector", "f_hi_hz", "must be above f_lo_hz (%g Hz)", p->f_lo_hz);
	if (p->min_dur_s >= p->max_dur_s)
		cfg_file_fail(f, "detector", "max_duration_s", "must be above min_duration_s (%g s)", p->min_dur_s);
	for (int k = 0; k < DET_MAX_TEMPLATES; k++) {
		char g[32];
		g_snprintf(g, sizeof g, "template.%d", k + 1);
		if (p->tmpl[k].waveform == DET_WAVE_FILE && !*p->tmpl[k].file)
			cfg_file_fail(f, g, "waveform", "waveform = file needs the key file");
		if (p->tmpl[k].call && *p->tmpl[k].call && !det_call_name_ok(p->tmpl[k].call))
			cfg_file_fail(f, g, "call", "\"%.40s\" is not a call type's name (1-31 of A-Z a-z 0-9 _ . -)",
				      p->tmpl[k].call);
	}
}

gboolean det_profile_load(det_profile *p, const char *path, GError **err)
{
	memset(p, 0, sizeof *p);
	if (!cfg_defaults(table, p, err))
		return FALSE;
	if (path) {
		cfg_file *f = cfg_file_load(path, table, err);
		if (!f)
			return FALSE;
		cfg_file_store(f, p);
		check(f, p);
		gboolean ok = cfg_file_check(f, err);
		cfg_file_free(f);
		if (!ok)
			return FALSE;
	}
	p->dir = path ? g_path_get_dirname(path) : g_strdup(".");
	return TRUE;
}

void det_profile_clear(det_profile *p)
{
	cfg_clear(table, p);
	g_free(p->dir);
	p->dir = NULL;
}

void det_profile_detector(const det_profile *p, double rate_hz, dsp_det_params *out)
{
	dsp_det_params_default(out);
	out->rate_hz = rate_hz;
	out->f_lo_hz = p->f_lo_hz;
	out->f_hi_hz = p->f_hi_hz;
	out->on_db = p->on_db;
	out->off_db = p->off_db;
	out->min_dur_s = p->min_dur_s;
	out->max_dur_s = p->max_dur_s;
	out->hangover_s = p->hangover_s;
	out->floor_tau_s = p->floor_tau_s;
	out->warmup_s = p->warmup_s;
}

static const det_template_cfg *nth(const det_profile *p, int i)
{
	for (int k = 0; k < DET_MAX_TEMPLATES; k++)
		if (p->tmpl[k].waveform != DET_WAVE_NONE && i-- == 0)
			return &p->tmpl[k];
	return NULL;
}

const char *det_profile_call(const det_profile *p, int i)
{
	const det_template_cfg *t = nth(p, i);
	return t && t->call ? t->call : "";
}

int det_profile_n_templates(const det_profile *p)
{
	int n = 0;
	while (nth(p, n))
		n++;
	return n;
}

float *det_profile_render(const det_profile *p, int i, double rate_hz, size_t *n, GError **err)
{
	const det_template_cfg *t = nth(p, i);
	if (!t) {
		g_set_error(err, CFG_ERROR, ENOENT, "no template %d", i + 1);
		return NULL;
	}
	dsp_wave_params w = {0};
	char *file = NULL;
	/* det_waveform counts from none; dsp_wave_kind from pulse_train. */
	w.kind = (dsp_wave_kind)(t->waveform - DET_WAVE_PULSE_TRAIN);
	w.carrier_hz = t->carrier_hz;
	w.pulse_ms = t->pulse_ms;
	w.pulse_interval_ms = t->pulse_interval_ms;
	w.pulses = (int)t->pulses;
	w.freq_hz = t->freq_hz;
	w.f0_hz = t->f0_hz;
	w.f1_hz = t->f1_hz;
	w.sweep = (dsp_sweep)t->sweep;
	w.length_ms = t->length_ms;
	w.taper_ms = t->taper_ms;
	w.click_width_us = t->click_width_us;
	if (w.kind == DSP_WAVE_FILE) {
		file = g_path_is_absolute(t->file) ? g_strdup(t->file) : g_build_filename(p->dir, t->file, NULL);
		w.file = file;
		w.file_channel = (int)t->file_channel;
		w.file_start_s = t->file_start_s;
		w.file_length_s = t->file_length_s;
	}
	dsp_wave *sw = dsp_wave_new(&w, rate_hz, err);
	g_free(file);
	if (!sw)
		return NULL;
	double len = dsp_wave_length_s(sw);
	if (t->max_ms > 0 && len > t->max_ms * 1e-3)
		len = t->max_ms * 1e-3;
	size_t m = (size_t)ceil(len * rate_hz);
	float *h = m ? g_new(float, m) : NULL;
	double e = 0;
	for (size_t j = 0; j < m; j++) {
		h[j] = (float)dsp_wave_eval(sw, (double)j / rate_hz);
		e += (double)h[j] * h[j];
	}
	dsp_wave_free(sw);
	if (!(e > 0)) {
		g_free(h);
		g_set_error(err, CFG_ERROR, EINVAL, "template %d is silent or empty at %.0f Hz", i + 1, rate_hz);
		return NULL;
	}
	*n = m;
	return h;
}

char *det_profile_describe(void)
{
	return cfg_describe(table);
}

double det_profile_stretch(const det_profile *p)
{
	return fmin(0.5, p->variation_pct / 100 + p->max_speed_m_s / 343.0);
}
