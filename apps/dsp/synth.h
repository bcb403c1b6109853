/* synth.h — synthetic test signals with exactly known timing, for the tests
 * and the benchmark: frog-like pulse trains evaluated analytically at any
 * fractional time, and exact fractional delays of arbitrary clips by a
 * frequency-domain phase shift.  Pure; noise comes from the caller's RNG.
 */
#ifndef CHORUS_DSP_SYNTH_H
#define CHORUS_DSP_SYNTH_H

#include <stddef.h>

typedef struct {
	double carrier_hz; /* carrier of each pulse, Hz */
	double pulse_s;    /* length of one Hann-shaped pulse, s */
	double interval_s; /* start-to-start spacing of pulses, s */
	int pulses;        /* pulses per call */
} dsp_frog;

/* s(t) of one call at t seconds after its start: sum of pulses
 * 0.5 (1 - cos(2 pi u / pulse_s)) sin(2 pi carrier u), u = t - j interval;
 * peak about 1, zero outside [0, length). */
double dsp_frog_eval(const dsp_frog *f, double t_s);

/* Length of one call, s. */
double dsp_frog_length(const dsp_frog *f);

/* Mean power of s(t) over one pulse (for SNR bookkeeping): 3/16 for a Hann
 * pulse of a carrier many cycles long. */
double dsp_frog_pulse_power(const dsp_frog *f);

/* Add amp * s(i / rate_hz - t_call_s) to out[i], i < n (t_call_s: the call's start,
 * seconds after sample 0, fractional). */
void dsp_frog_render(const dsp_frog *f, double amp, double t_call_s, double rate_hz, float *out, size_t n);

/* y[t] = x(t - d) for a fractional delay d (samples) by a phase shift of the
 * spectrum (circular: keep margins of zeros at both ends longer than |d|;
 * the Nyquist bin is dropped).  y may equal x.  Returns 0, or -ENOMEM. */
int dsp_delay_exact(const float *x, size_t n, double d, float *y);

#endif
