/* signal.h — chorus-selftest's known test signal (docs/audiod.md §5.1).
 *
 * A seeded noise sequence with a click every `click_every` frames: frame n,
 * channel c of the signal is a pure function of (seed, n, c), so a capture
 * of it can be checked bit for bit at any frame without storing what was
 * played.  Noise stays within a quarter of full scale; a click is 0.9 of
 * full scale on every channel, so clicks are found by value alone.
 * Formats: S16_LE, S32_LE and S24_3LE (the value in the top bits, the low
 * ones filled too), native ints.
 */
#ifndef CHORUS_SELFTEST_SIGNAL_H
#define CHORUS_SELFTEST_SIGNAL_H

#include <alsa/asoundlib.h>
#include <stdint.h>

typedef struct {
	uint64_t seed;        /* noise seed */
	unsigned channels;    /* interleaved channels */
	snd_pcm_format_t fmt; /* SND_PCM_FORMAT_S16_LE, _S32_LE or _S24_3LE */
	int64_t click_every;  /* frames between clicks (> 0) */
	int64_t click_at;     /* first click's frame, 0 <= click_at < click_every */
} sig_params;

/* Bytes per sample of p's format (2, 3 or 4), 0 when the format is not one
 * the signal is made in (pure). */
unsigned sig_sample_bytes(const sig_params *p);

/* 1 when frame n (>= 0) of the signal is a click (pure). */
int sig_is_click(const sig_params *p, int64_t n);

/* Sample (n, c) of the signal as a 32-bit value in the format's width
 * (S16: -32768..32767; S24_3LE: 24 bits, sign-extended; S32: the full
 * range) (pure). */
int32_t sig_value(const sig_params *p, int64_t n, unsigned c);

/* Write frames [n, n + count) interleaved in the format into buf (pure). */
void sig_fill(const sig_params *p, int64_t n, size_t count, void *buf);

/* Read sample c of frame i of an interleaved buffer in the format (pure). */
int32_t sig_get(const sig_params *p, const void *buf, size_t i, unsigned c);

#endif
