/* profile.c — detector profiles (see profile.h). */
#include "apps/detect/profile.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "libcfg/cfg.h"

#define PER_T 15
#define N_FIXED 14
#define N_TABLE (N_FIXED + DET_MAX_TEMPLATES * PER_T)

static cfg_entry table[N_TABLE];
static char groups[DET_MAX_TEMPLATES][16];

static const cfg_entry *get_table(void)
{
	if (table[0].group)
		return table;
	size_t i = 0;
#define F(x) offsetof(det_profile, x)
	table[i++] = (cfg_entry){"profile", "name", CFG_STRING, "frog", 1, 0, F(name), "name of the target, copied into events"};
	table[i++] = (cfg_entry){"detector", "f_lo", CFG_DOUBLE, "1000", 0, 1e6, F(f_lo), "band low edge, Hz"};
	table[i++] = (cfg_entry){"detector", "f_hi", CFG_DOUBLE, "3200", 1, 1e6, F(f_hi), "band high edge, Hz"};
	table[i++] = (cfg_entry){"detector", "on_db", CFG_DOUBLE, "8", 0, 60, F(on_db), "a call is confirmed above floor + on_db, dB"};
	table[i++] = (cfg_entry){"detector", "off_db", CFG_DOUBLE, "4", 0, 60, F(off_db), "a call lasts while above floor + off_db, dB (<= on_db)"};
	table[i++] = (cfg_entry){"detector", "min_duration", CFG_DOUBLE, "0.05", 0.001, 60, F(min_dur_s), "shortest call, s"};
	table[i++] = (cfg_entry){"detector", "max_duration", CFG_DOUBLE, "2", 0.01, 600, F(max_dur_s), "longest call, s (longer: background change)"};
	table[i++] = (cfg_entry){"detector", "hangover", CFG_DOUBLE, "0.06", 0, 10, F(hangover_s), "silence tolerated inside a call (pulse gaps), s"};
	table[i++] = (cfg_entry){"detector", "floor_tau", CFG_DOUBLE, "5", 0.1, 3600, F(floor_tau_s), "time constant of the noise floor, s"};
	table[i++] = (cfg_entry){"detector", "warmup", CFG_DOUBLE, "0.5", 0.01, 60, F(warmup_s), "floor learned before detecting, s"};
	table[i++] = (cfg_entry){"refine", "pre_ms", CFG_DOUBLE, "8", 2, 1000, F(pre_ms), "noise fetched before the earliest possible onset, ms"};
	table[i++] = (cfg_entry){"refine", "overlap_enr_db", CFG_DOUBLE, "25", 0, 200, F(overlap_enr_db), "another template matching the residual (the call found subtracted) this well is a second, overlapping call, dB"};
	table[i++] = (cfg_entry){"refine", "overlap_explained", CFG_DOUBLE, "0.5", 0, 1, F(overlap_explained), "… and explaining at least this fraction of the residual's energy under it"};
	table[i++] = (cfg_entry){"refine", "min_enr_db", CFG_DOUBLE, "12", -20, 100, F(min_enr_db), "weaker matches keep the coarse onset, dB"};
	for (int k = 0; k < DET_MAX_TEMPLATES; k++) {
		g_snprintf(groups[k], sizeof groups[k], "template.%d", k + 1);
		const char *g = groups[k];
		size_t b = F(tmpl) + (size_t)k * sizeof(det_template_cfg);
#define T(x) (b + offsetof(det_template_cfg, x))
		table[i++] = (cfg_entry){g, "waveform", CFG_STRING, "none", 1, 0, T(waveform), "none, pulse_train, chirp, tone, click or file"};
		table[i++] = (cfg_entry){g, "carrier_hz", CFG_DOUBLE, "2000", 1, 1e6, T(carrier_hz), "pulse_train: carrier, Hz"};
		table[i++] = (cfg_entry){g, "pulse_ms", CFG_DOUBLE, "5", 0.01, 1e4, T(pulse_ms), "pulse_train: pulse length, ms"};
		table[i++] = (cfg_entry){g, "pulse_interval_ms", CFG_DOUBLE, "20", 0.01, 1e4, T(pulse_interval_ms), "pulse_train: start-to-start, ms"};
		table[i++] = (cfg_entry){g, "pulses", CFG_INT, "10", 1, 10000, T(pulses), "pulse_train: pulses per call"};
		table[i++] = (cfg_entry){g, "f0_hz", CFG_DOUBLE, "1000", 1, 1e6, T(f0_hz), "chirp: start frequency, Hz"};
		table[i++] = (cfg_entry){g, "f1_hz", CFG_DOUBLE, "2000", 1, 1e6, T(f1_hz), "chirp: end frequency, Hz"};
		table[i++] = (cfg_entry){g, "sweep", CFG_STRING, "linear", 1, 0, T(sweep), "chirp: linear or exponential"};
		table[i++] = (cfg_entry){g, "length_ms", CFG_DOUBLE, "100", 0.01, 1e5, T(length_ms), "chirp, tone: length, ms"};
		table[i++] = (cfg_entry){g, "taper_ms", CFG_DOUBLE, "5", 0, 1e5, T(taper_ms), "chirp, tone: raised-cosine fade, ms"};
		table[i++] = (cfg_entry){g, "freq_hz", CFG_DOUBLE, "1000", 1, 1e6, T(freq_hz), "tone: frequency, Hz"};
		table[i++] = (cfg_entry){g, "click_width_us", CFG_DOUBLE, "100", 1, 1e6, T(click_width_us), "click: Gaussian sigma, us"};
		table[i++] = (cfg_entry){g, "file", CFG_STRING, "", 1, 0, T(file), "file: sound file (relative to the profile)"};
		table[i++] = (cfg_entry){g, "file_channel", CFG_INT, "0", 0, 255, T(file_channel), "file: channel, from 0"};
		table[i++] = (cfg_entry){g, "max_ms", CFG_DOUBLE, "0", 0, 1e5, T(max_ms), "use at most this much of the call, ms; 0 = all"};
#undef T
	}
#undef F
	return table;
}

gboolean det_profile_load(det_profile *p, const char *path, GError **err)
{
	memset(p, 0, sizeof *p);
	const cfg_entry *t = get_table();
	if (!cfg_defaults(t, N_TABLE, p, err))
		return FALSE;
	if (path && !cfg_load(path, FALSE, t, N_TABLE, p, err))
		return FALSE;
	p->dir = path ? g_path_get_dirname(path) : g_strdup(".");
	const char *where = path ? path : "(defaults)";
	if (p->off_db > p->on_db || p->f_hi <= p->f_lo || p->min_dur_s >= p->max_dur_s) {
		g_set_error(err, CFG_ERROR, EINVAL, "%s: [detector] needs off_db <= on_db, f_lo < f_hi, min_duration < max_duration",
			    where);
		return FALSE;
	}
	static const char *const kinds[] = {"none", "pulse_train", "chirp", "tone", "click", "file", NULL};
	for (int k = 0; k < DET_MAX_TEMPLATES; k++) {
		gboolean ok = FALSE;
		for (const char *const *s = kinds; *s; s++)
			ok = ok || !strcmp(*s, p->tmpl[k].waveform);
		if (!ok || (strcmp(p->tmpl[k].sweep, "linear") && strcmp(p->tmpl[k].sweep, "exponential"))) {
			g_set_error(err, CFG_ERROR, EINVAL,
				    "%s: [template.%d] waveform \"%s\" / sweep \"%s\": waveform is none, pulse_train, chirp, tone, "
				    "click or file; sweep linear or exponential", where, k + 1, p->tmpl[k].waveform,
				    p->tmpl[k].sweep);
			return FALSE;
		}
		if (!strcmp(p->tmpl[k].waveform, "file") && !*p->tmpl[k].file) {
			g_set_error(err, CFG_ERROR, EINVAL, "%s: [template.%d] file: a file template needs a file", where, k + 1);
			return FALSE;
		}
	}
	return TRUE;
}

void det_profile_clear(det_profile *p)
{
	cfg_clear(get_table(), N_TABLE, p);
	g_free(p->dir);
	p->dir = NULL;
}

void det_profile_detector(const det_profile *p, double rate, dsp_det_params *out)
{
	dsp_det_params_default(out);
	out->rate = rate;
	out->f_lo = p->f_lo;
	out->f_hi = p->f_hi;
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
		if (strcmp(p->tmpl[k].waveform, "none") && i-- == 0)
			return &p->tmpl[k];
	return NULL;
}

int det_profile_n_templates(const det_profile *p)
{
	int n = 0;
	while (nth(p, n))
		n++;
	return n;
}

float *det_profile_render(const det_profile *p, int i, double rate, size_t *n, GError **err)
{
	const det_template_cfg *t = nth(p, i);
	if (!t) {
		g_set_error(err, CFG_ERROR, ENOENT, "no template %d", i + 1);
		return NULL;
	}
	dsp_wave_params w = {0};
	char *file = NULL;
	const char *k = t->waveform;
	w.kind = !strcmp(k, "pulse_train") ? DSP_WAVE_PULSE_TRAIN
		 : !strcmp(k, "chirp")     ? DSP_WAVE_CHIRP
		 : !strcmp(k, "tone")      ? DSP_WAVE_TONE
		 : !strcmp(k, "click")     ? DSP_WAVE_CLICK
					   : DSP_WAVE_FILE;
	w.carrier_hz = t->carrier_hz;
	w.pulse_ms = t->pulse_ms;
	w.pulse_interval_ms = t->pulse_interval_ms;
	w.pulses = (int)t->pulses;
	w.freq_hz = t->freq_hz;
	w.f0_hz = t->f0_hz;
	w.f1_hz = t->f1_hz;
	w.sweep = !strcmp(t->sweep, "exponential") ? DSP_SWEEP_EXPONENTIAL : DSP_SWEEP_LINEAR;
	w.length_ms = t->length_ms;
	w.taper_ms = t->taper_ms;
	w.click_width_us = t->click_width_us;
	if (w.kind == DSP_WAVE_FILE) {
		file = g_path_is_absolute(t->file) ? g_strdup(t->file) : g_build_filename(p->dir, t->file, NULL);
		w.file = file;
		w.file_channel = (int)t->file_channel;
	}
	dsp_wave *sw = dsp_wave_new(&w, rate, err);
	g_free(file);
	if (!sw)
		return NULL;
	double len = dsp_wave_length_s(sw);
	if (t->max_ms > 0 && len > t->max_ms * 1e-3)
		len = t->max_ms * 1e-3;
	size_t m = (size_t)ceil(len * rate);
	float *h = m ? g_new(float, m) : NULL;
	double e = 0;
	for (size_t j = 0; j < m; j++) {
		h[j] = (float)dsp_wave_eval(sw, (double)j / rate);
		e += (double)h[j] * h[j];
	}
	dsp_wave_free(sw);
	if (!(e > 0)) {
		g_free(h);
		g_set_error(err, CFG_ERROR, EINVAL, "template %d is silent or empty at %.0f Hz", i + 1, rate);
		return NULL;
	}
	*n = m;
	return h;
}

char *det_profile_describe(void)
{
	return cfg_describe(get_table(), N_TABLE);
}
