/* frames.h — the message format of fft/<k>/frames (packet device), shared by
 * fft (encoder) and detect (decoder).  Pure: no I/O.
 *
 * One message per STFT frame, little-endian:
 *   off  size  field
 *     0     4  magic "FFTF"
 *     4     2  version (1)
 *     6     2  header bytes (48)
 *     8     8  first: absolute audio frame index of the frame's first sample (int64)
 *    16     4  size: samples per frame (uint32)
 *    20     4  hop: samples between frame starts (uint32)
 *    24     4  nbins = size/2 + 1 (uint32)
 *    28     4  window (dsp_window: 0 rect, 1 hann, 2 hamming, 3 blackman)
 *    32     8  rate: sample rate, Hz (double)
 *    40     4  channel of the audio device the frame came from (uint32)
 *    44     4  reserved, 0
 *    48  4*nbins  P_k (float32): band-power density per bin,
 *               P_k = c_k |X_k|^2 / (N sum w^2),  c_k = 1 at DC/Nyquist else 2
 * so the mean power of the signal in a band (dsp_stft_band_power) is simply
 * the sum of P_k over the band's bins: a client needs no window maths.
 * Errors: negative errno with a static reason.
 */
#ifndef CHORUS_FFT_FRAMES_H
#define CHORUS_FFT_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define FFT_FRAME_MAGIC "FFTF"
#define FFT_FRAME_VERSION 1
#define FFT_FRAME_HDR 48

typedef struct {
	int64_t first;    /* absolute index of the first sample, frames */
	uint32_t size;    /* samples per frame */
	uint32_t hop;     /* samples between frames */
	uint32_t nbins;   /* size/2 + 1 */
	uint32_t window;  /* dsp_window */
	double rate_hz;   /* Hz */
	uint32_t channel; /* audio channel */
	const float *P;   /* nbins band-power densities (points into the message: unaligned-safe copy in decode) */
} fft_frame_msg;

/* Bytes of a message with nbins bins. */
size_t fft_frame_bytes(uint32_t nbins);

/* Encode m (with P[nbins]) into buf (fft_frame_bytes(m->nbins) bytes).
 * Returns the length written, or -EINVAL (nbins != size/2+1). */
int fft_frame_encode(const fft_frame_msg *m, void *buf, size_t len);

/* Decode msg (len bytes); P is copied into `P` (room for max_bins floats) and
 * m->P points to it.  Returns 0, -EBADMSG (bad magic, short, inconsistent
 * sizes), -EPROTONOSUPPORT (other version) or -EMSGSIZE (more than max_bins),
 * with the reason in *why. */
int fft_frame_decode(const void *msg, size_t len, fft_frame_msg *m, float *P, size_t max_bins, const char **why);

/* Sum of P over the bins whose centre k*rate/size lies in [f_lo, f_hi] Hz:
 * the band's mean power, squared sample units. */
double fft_frame_band(const fft_frame_msg *m, double f_lo_hz, double f_hi_hz);

#endif
