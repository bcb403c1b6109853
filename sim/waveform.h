/* waveform.h — what a sound source emits during one call.
 *
 * A waveform is s(tau), tau in seconds since the start of the call, with peak
 * amplitude about 1 (scaled by the source's level), zero outside
 * [0, length).  Synthetic waveforms are analytic functions of tau and are
 * evaluated exactly at any fractional time, which is what propagation delays
 * need; a sound file is evaluated by band-limited (windowed-sinc)
 * interpolation between its samples.  Formulas are in docs/scenario.md.
 * Evaluation is pure and thread-safe; only sim_wave_new reads a file.
 */
#ifndef CHORUS_SIM_WAVEFORM_H
#define CHORUS_SIM_WAVEFORM_H

#include <glib.h>

typedef enum {
	SIM_WAVE_PULSE_TRAIN = 0, /* frog-like: Hann-shaped pulses of a carrier */
	SIM_WAVE_CHIRP = 1,       /* linear or exponential sweep f0 -> f1 */
	SIM_WAVE_TONE = 2,        /* constant frequency */
	SIM_WAVE_CLICK = 3,       /* Gaussian pulse: a test signal with a sharp peak */
	SIM_WAVE_FILE = 4,        /* WAV/FLAC/... read with libsndfile */
} sim_wave_kind;

typedef enum { SIM_SWEEP_LINEAR = 0, SIM_SWEEP_EXPONENTIAL = 1 } sim_sweep;

typedef struct {
	sim_wave_kind kind;
	double carrier_hz;        /* pulse_train: carrier frequency, Hz */
	double pulse_ms;          /* pulse_train: length of one pulse, ms */
	double pulse_interval_ms; /* pulse_train: start-to-start spacing, ms */
	int pulses;               /* pulse_train: pulses per call */
	double freq_hz;           /* tone: frequency, Hz */
	double f0_hz, f1_hz;      /* chirp: start and end frequency, Hz */
	sim_sweep sweep;          /* chirp: sweep law */
	double length_ms;         /* tone, chirp: call length, ms */
	double taper_ms;          /* tone, chirp: raised-cosine fade in/out, ms */
	double click_width_us;    /* click: Gaussian sigma, µs; peak at 5 sigma */
	const char *file;         /* file: path (absolute or relative to the cwd) */
	int file_channel;         /* file: channel to use, from 0 */
} sim_wave_params;

typedef struct sim_wave sim_wave;

/* Build a waveform; a file source is read whole and, when its rate is above
 * `world_rate`, low-passed to world_rate/2 by the interpolator.  Returns the
 * waveform, or NULL with *err (the file and libsndfile's reason). */
sim_wave *sim_wave_new(const sim_wave_params *p, double world_rate, GError **err);

void sim_wave_free(sim_wave *w);

/* Length of one call, s (the support of s(tau) is [0, length)). */
double sim_wave_length_s(const sim_wave *w);

/* s(tau) at tau seconds after the call's start; 0 outside the call. */
double sim_wave_eval(const sim_wave *w, double tau_s);

#endif
