/* band.h — the band a waveform occupies: the frequencies between which
 * its central `frac` of energy lies (e.g. 0.95: 2.5 % below, 2.5 % above),
 * from its power spectrum (FFTW r2c, zero padded).  detect states each
 * matched call's band as its template's, so collab correlates the call's
 * own band and not the profile's: an overlapping call of another kind
 * fills the rest.  Pure: no I/O. */
#ifndef CHORUS_DSP_BAND_H
#define CHORUS_DSP_BAND_H

#include <stddef.h>

/* Band of h (n samples at rate_hz) holding the central frac of its energy,
 * within [f_min_hz, f_max_hz] (f_max <= 0: Nyquist).  Returns 0 with *lo,
 * *hi; -EINVAL (empty, silent, frac not in (0, 1]); -ENOMEM. */
int dsp_band_of(const float *h, size_t n, double rate_hz, double frac, double f_min_hz, double f_max_hz, double *lo,
		double *hi);

/* Band-pass x (n samples at rate_hz) to [f_lo_hz, f_hi_hz] in place: the
 * FFT's bins outside set to zero (x is real: both halves).  A background
 * loud outside a call's band (wind below it) then no longer counts as the
 * noise or the misfit under a template.  Returns 0, -EINVAL (empty, bad
 * band) or -ENOMEM. */
int dsp_band_pass(float *x, size_t n, double rate_hz, double f_lo_hz, double f_hi_hz);

#endif
