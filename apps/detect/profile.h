/* profile.h — a detector profile: what to listen for (docs/architecture.md §6.3).
 *
 * An INI file validated by libcfg (every error as file:line: [group] key: why):
 *   [detector]     band, thresholds, durations, floor (dsp_det_params)
 *   [refine]       onset refinement: clip margins, minimum ENR
 *   [template.1] … [template.4]   matched-filter templates: the call's
 *                  waveform from its start, described like a scenario
 *                  source (pulse_train, chirp, tone, click) or a sound file.
 * The refiner tries every template and keeps the best match (largest ENR:
 * the generalised likelihood ratio), so one profile covers several species
 * or call types.  apps/profiles/frog.ini and bird-chirp.ini are examples.
 */
#ifndef CHORUS_DETECT_PROFILE_H
#define CHORUS_DETECT_PROFILE_H

#include <glib.h>

#include "apps/dsp/detector.h"
#include "apps/dsp/wave.h"

#define DET_MAX_TEMPLATES 4

/* [template.K] waveform; from pulse_train on, in the order of sim_wave_kind. */
typedef enum {
	DET_WAVE_NONE = 0,
	DET_WAVE_PULSE_TRAIN,
	DET_WAVE_CHIRP,
	DET_WAVE_TONE,
	DET_WAVE_CLICK,
	DET_WAVE_FILE,
} det_waveform;

typedef struct {
	int waveform;                                   /* det_waveform */
	double carrier_hz, pulse_ms, pulse_interval_ms; /* pulse_train */
	gint64 pulses;
	double f0_hz, f1_hz; /* chirp, Hz */
	int sweep;           /* sim_sweep: linear, exponential */
	double length_ms, taper_ms, freq_hz, click_width_us;
	char *file; /* relative to the profile's directory */
	gint64 file_channel;
	double file_start_s;  /* file: start of the segment used, s into the file */
	double file_length_s; /* file: length of the segment, s (0: to the end) */
	double max_ms;        /* use at most this much of the call, ms (0 = all) */
	char *call;           /* the call type this template is a form of ("": its own); templates of one
			       * call type are one kind to collab's grouping */
} det_template_cfg;

typedef struct {
	char *name;              /* [profile] name */
	double f_lo_hz, f_hi_hz; /* Hz */
	double on_db, off_db, min_dur_s, max_dur_s, hangover_s, floor_tau_s, warmup_s;
	double pre_ms;            /* audio fetched before the coarse onset's uncertainty, ms */
	double min_enr_db;        /* a match weaker than this keeps the coarse onset, dB */
	double variation_pct;     /* real calls differ from the templates by up to this, % (onset error) */
	double max_speed_m_s;     /* callers move at up to this while calling, m/s (Doppler: onset error) */
	double overlap_enr_db;    /* another template matching the residual this well … */
	double overlap_explained; /* … and explaining this fraction of the energy under it is a second, overlapping call */
	det_template_cfg tmpl[DET_MAX_TEMPLATES];
	char *dir; /* the profile's directory (for template files) */
} det_profile;

/* Defaults (the simulator's frogs, no templates), then `path` (NULL: none).
 * FALSE + *err listing every error as file:line: [group] key: why (also
 * the checks across keys: off_db <= on_db, f_lo_hz < f_hi_hz,
 * min_duration_s < max_duration_s, a file template has a file). */
gboolean det_profile_load(det_profile *p, const char *path, GError **err);

/* How far a call may be stretched from its template, relative: the
 * stated variation (variation_pct / 100) plus the Doppler of a caller
 * moving at max_speed_m_s (/ 343 m/s), at most 0.5: what
 * det_refiner_set_variation takes.  Pure. */
double det_profile_stretch(const det_profile *p);

/* Free the strings. */
void det_profile_clear(det_profile *p);

/* The detector parameters of p at sample rate `rate_hz`. */
void det_profile_detector(const det_profile *p, double rate_hz, dsp_det_params *out);

/* The call type of template i (0-based among the configured ones): its
 * [template.N] call, "" when none is named (or no such template). */
const char *det_profile_call(const det_profile *p, int i);

/* Number of templates configured (waveform != none). */
int det_profile_n_templates(const det_profile *p);

/* Render template i (0-based among the configured ones) at `rate_hz` into a
 * new array (*n samples).  Returns it, or NULL with *err (bad waveform name,
 * unreadable file, empty). */
float *det_profile_render(const det_profile *p, int i, double rate_hz, size_t *n, GError **err);

/* Every key with its default and help, as INI text (g_free). */
char *det_profile_describe(void);

#endif
