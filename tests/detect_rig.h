/* detect_rig.h — the detection pipeline detect runs, for its tests
 * (test_detect, test_detect_overlap): the frog profile's templates and
 * the simulator's waveforms of them, seeded white noise, calls added at
 * fractional times, and detect's pipeline on them (apps/detect/offline.h:
 * STFT -> band power -> detector -> best-of-templates onset -> overlaps by
 * subtraction, then overlaps of other kinds by their band envelope). */
#ifndef CHORUS_TESTS_DETECT_RIG_H
#define CHORUS_TESTS_DETECT_RIG_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "apps/detect/overlap_env.h"
#include "apps/detect/profile.h"
#include "apps/detect/refine.h"
#include "apps/dsp/wave.h"

#define RATE 16000.0
#define SIZE 1024
#define HOP 256

typedef struct {
	det_profile prof;
	dsp_wave *wave[DET_MAX_TEMPLATES];
	det_refiner *ref;
	det_overlap_env *oenv;
	int nt;
} rig;

/* apps/profiles/frog.ini (cwd: the source tree) with its refiner (band
 * set) at RATE, and the simulator's waveforms of its three templates
 * (wave[t] for template t + 1).  Fails the running test otherwise. */
void rig_init(rig *r);

void rig_free(rig *r);

/* Template t's call (0-based) varied as the simulator's `variation = v`
 * varies it (every parameter x (1 + v g), g normal from rng, truncated
 * at 3: carrier or sweep ends, pulse length, interval, pulse count,
 * length; sim/world.c).  A new wave (dsp_wave_free it). */
dsp_wave *rig_varied_wave(gsl_rng *g, int t, double v);

/* Add wave w times amp starting at start_s (true seconds) to x[0, n). */
void rig_add_wave(const dsp_wave *w, float *x, size_t n, double amp, double start_s);

/* Mean power of waveform t over its length. */
double rig_wave_power(rig *r, int t);

/* x[0, n) = white Gaussian noise of s.d. sd. */
void rig_noise(gsl_rng *g, float *x, size_t n, double sd);

/* The sound card's rate error, fraction (a card 40 ppm fast samples the
 * call at RATE (1 + 40e-6) true samples per second); 0 unless a test
 * sets it (and sets it back). */
extern double rig_card_skew;

/* Add waveform t times amp starting at start_s (true seconds) to x[0, n). */
void rig_add_call(rig *r, float *x, size_t n, int t, double amp, double start_s);

typedef struct {
	int64_t coarse; /* detector onset */
	int64_t end;
	double onset; /* refined, frames */
	double se;
	int tmpl;
} rig_found;

/* What detect does for every frame and every event of x[0, n)
 * (apps/detect/offline.h det_offline_run).  Up to max to out[]; returns
 * the number of calls (each event's, and its overlaps). */
int rig_run(rig *r, const float *x, size_t n, rig_found *out, int max);

#endif
