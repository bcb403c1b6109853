/* wave.h — what a call sounds like: the waveforms shared by the simulator's
 * sources (sim/world.c) and detect's templates (apps/detect/profile.c).
 *
 * A waveform is s(tau), tau in seconds since the start of the call, with peak
 * amplitude about 1 (scaled by the source's level), zero outside
 * [0, length).  Synthetic waveforms are analytic functions of tau and are
 * evaluated exactly at any fractional time, which is what propagation delays
 * need (the pulse train is synth.h's dsp_frog); a recorded call is evaluated
 * by band-limited (windowed-sinc) interpolation between its samples.
 * Formulas are in docs/scenario.md.  Evaluation is pure and thread-safe;
 * only dsp_wave_new with DSP_WAVE_FILE reads a file (wavefile.c, libsndfile).
 */
#ifndef CHORUS_DSP_WAVE_H
#define CHORUS_DSP_WAVE_H

#include <glib.h>

typedef enum {
	DSP_WAVE_PULSE_TRAIN = 0, /* frog-like: Hann-shaped pulses of a carrier */
	DSP_WAVE_CHIRP = 1,       /* linear or exponential sweep f0 -> f1 */
	DSP_WAVE_TONE = 2,        /* constant frequency */
	DSP_WAVE_CLICK = 3,       /* Gaussian pulse: a test signal with a sharp peak */
	DSP_WAVE_FILE = 4,        /* WAV/FLAC/... read with libsndfile */
} dsp_wave_kind;

typedef enum { DSP_SWEEP_LINEAR = 0,
	       DSP_SWEEP_EXPONENTIAL = 1 } dsp_sweep;

typedef struct {
	dsp_wave_kind kind;
	double carrier_hz;        /* pulse_train: carrier frequency, Hz */
	double pulse_ms;          /* pulse_train: length of one pulse, ms */
	double pulse_interval_ms; /* pulse_train: start-to-start spacing, ms */
	int pulses;               /* pulse_train: pulses per call */
	double freq_hz;           /* tone: frequency, Hz */
	double f0_hz, f1_hz;      /* chirp: start and end frequency, Hz */
	dsp_sweep sweep;          /* chirp: sweep law */
	double length_ms;         /* tone, chirp: call length, ms */
	double taper_ms;          /* tone, chirp: raised-cosine fade in/out, ms */
	double click_width_us;    /* click: Gaussian sigma, µs; peak at 5 sigma */
	const char *file;         /* file: path (absolute or relative to the cwd) */
	int file_channel;         /* file: channel to use, from 0 */
	double file_start_s;      /* file: start of the segment used, s into the file */
	double file_length_s;     /* file: length of the segment, s (0: to the end) */
} dsp_wave_params;

typedef struct dsp_wave dsp_wave;

/* A recorded call as a waveform: n mono samples x at `rate_hz` (copied),
 * low-passed to world_rate/2 by the interpolator when rate is above it.
 * Pure; never fails (n >= 1). */
dsp_wave *dsp_wave_from_samples(const float *x, size_t n, double rate_hz, double world_rate_hz);

/* Read channel `channel` of the sound file at `path` (libsndfile) into a new
 * array of *n mono samples at *rate_hz (full scale 1.0; g_free it).  NULL with
 * *err naming the file and why (wavefile.c). */
float *dsp_wave_read_file(const char *path, int channel, size_t *n, double *rate_hz, GError **err);

/* Build a waveform; a file source is read (the segment file_start_s,
 * file_length_s of it; an error if the segment starts past the end) and, when its rate is above
 * `world_rate_hz`, low-passed to world_rate_hz/2 by the interpolator.  Returns the
 * waveform, or NULL with *err (the file and libsndfile's reason). */
dsp_wave *dsp_wave_new(const dsp_wave_params *p, double world_rate_hz, GError **err);

void dsp_wave_free(dsp_wave *w);

/* Length of one call, s (the support of s(tau) is [0, length)). */
double dsp_wave_length_s(const dsp_wave *w);

/* s(tau) at tau seconds after the call's start; 0 outside the call. */
double dsp_wave_eval(const dsp_wave *w, double tau_s);

#endif
