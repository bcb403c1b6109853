/* stft.h — streaming short-time Fourier transform of one channel (docs/architecture.md §6.1).
 *
 * Samples are pushed in chunks of any size; a frame comes out every `hop`
 * samples once `size` samples from its start are in.  Each frame is tagged
 * with the absolute index of its first sample, so frame k of a stream that
 * starts at index s0 begins at s0 + k*hop.  The transform is FFTW3 single
 * precision r2c of the windowed frame, unnormalised (FFTW's convention):
 *     X_k = sum_{n<N} w_n x_n exp(-2 pi i k n / N),   k = 0 .. N/2.
 *
 * Plans are made once, in dsp_stft_new(); the FFTW planner is not thread
 * safe, so make all dsp objects from one thread (executing is safe).  Wisdom
 * is imported from and exported to a file the caller names.
 *
 * Pure: no clocks, no sockets, no GLib; file I/O only for wisdom.  Errors:
 * negative errno with a static reason in *why.
 */
#ifndef CHORUS_DSP_STFT_H
#define CHORUS_DSP_STFT_H

#include <stddef.h>
#include <stdint.h>

#include <fftw3.h>

typedef enum {
	DSP_WIN_RECT = 0,
	DSP_WIN_HANN = 1,     /* periodic Hann, 0.5 - 0.5 cos(2 pi n / N) */
	DSP_WIN_HAMMING = 2,  /* periodic Hamming, 0.54 - 0.46 cos(2 pi n / N) */
	DSP_WIN_BLACKMAN = 3, /* periodic exact-ish Blackman (0.42, 0.5, 0.08) */
} dsp_window;

typedef enum {
	DSP_PLAN_ESTIMATE = 0,    /* FFTW_ESTIMATE: instant, no measurement */
	DSP_PLAN_MEASURE = 1,     /* FFTW_MEASURE: times candidates (wisdom helps) */
	DSP_PLAN_WISDOM_ONLY = 2, /* only from wisdom; fails (-ENOENT) without it */
} dsp_plan_mode;

typedef struct {
	int size; /* samples per frame (>= 8); even sizes are fastest */
	int hop;  /* samples between frame starts (1 .. size) */
	dsp_window window;
	double rate_hz; /* sample rate, Hz (used by the band helpers) */
	dsp_plan_mode plan;
	const char *wisdom; /* wisdom cache file, or NULL: imported if it exists, exported after planning */
} dsp_stft_params;

typedef struct {
	int64_t first;          /* absolute index of the frame's first sample, frames */
	int size;               /* samples in the frame */
	int nbins;              /* size/2 + 1 */
	const fftwf_complex *X; /* the spectrum; valid until the next dsp_stft call */
} dsp_frame;

typedef struct dsp_stft dsp_stft;

/* Fill *p with defaults: 1024-sample Hann frames, hop 256, 48 kHz, ESTIMATE,
 * no wisdom file. */
void dsp_stft_params_default(dsp_stft_params *p);

/* A new transform whose first pushed sample has absolute index `first`.
 * Returns it, or NULL with the reason in *why (bad parameter, no wisdom for
 * a WISDOM_ONLY plan, out of memory). */
dsp_stft *dsp_stft_new(const dsp_stft_params *p, int64_t first, const char **why);

/* Free s (NULL is fine). */
void dsp_stft_free(dsp_stft *s);

/* Drop buffered samples; the next pushed sample has absolute index `first`
 * (use after a gap in the stream). */
void dsp_stft_reset(dsp_stft *s, int64_t first);

/* Make room for pushes of up to n samples at a time (on top of the less
 * than one frame the buffer keeps between pushes), so that none of them
 * reallocates: a caller that pushes in blocks reserves its block at start,
 * and its footprint does not step up at the first large push (fft after a
 * stall).  Returns 0, or -ENOMEM. */
int dsp_stft_reserve(dsp_stft *s, size_t n);

/* Append n samples.  Returns 0, or -ENOMEM. */
int dsp_stft_push(dsp_stft *s, const float *x, size_t n);

/* Compute the next complete frame into *f.  Returns 1 (a frame), 0 (needs
 * more samples). */
int dsp_stft_next(dsp_stft *s, dsp_frame *f);

/* Absolute index of the next sample to be pushed. */
int64_t dsp_stft_next_index(const dsp_stft *s);

/* The window coefficients (size of them). */
const float *dsp_stft_window(const dsp_stft *s);

/* Mean power of the signal in [f_lo, f_hi] Hz (bins whose centre lies in
 * the band), in squared sample units per sample: white noise of variance s2
 * gives s2 * (fraction of the band) on average, a tone of amplitude A inside
 * the band gives about A^2/2.  Formula: (1 / (N sum w^2)) sum c_k |X_k|^2,
 * c_k = 1 at DC and Nyquist, 2 elsewhere (one-sided Parseval). */
double dsp_stft_band_power(const dsp_stft *s, const dsp_frame *f, double f_lo_hz, double f_hi_hz);

/* Same as dsp_stft_band_power over bins [k_lo, k_hi] (clamped). */
double dsp_stft_bin_power(const dsp_stft *s, const dsp_frame *f, int k_lo, int k_hi);

/* Export FFTW's accumulated wisdom to `path`.  Returns 0, or -EIO. */
int dsp_wisdom_save(const char *path);

/* Import wisdom from `path` into FFTW.  Returns 0, -ENOENT (no file), or
 * -EINVAL (not wisdom). */
int dsp_wisdom_load(const char *path);

#endif
