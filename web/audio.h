/* audio.h — a node's audio for a global time range, as a WAV file in
 * memory: audiod's own by-time request on nodeN:audio/0/data (clock=global,
 * docs/protocol.md "audio/<k>/data") through remote device access, written
 * with libsndfile.  The file's comment carries the time metadata audiod
 * states (first frame's global time, frame period, their standard errors).
 * Asynchronous: the main loop never waits for a node.
 */
#ifndef CHORUS_WEB_AUDIO_H
#define CHORUS_WEB_AUDIO_H

#include <glib.h>
#include <stdint.h>

/* Longest range served, ns (60 s). */
#define WEB_AUDIO_MAX_NS (60 * (int64_t)1000000000)

typedef struct web_audio web_audio;

/* What came back besides the samples. */
typedef struct {
	uint32_t node;
	int64_t first_frame, frames, gap_frames;
	uint32_t rate_hz, channels;
	char format[16];
	char t0[40], t0_se[40], period[40], period_se[40]; /* audiod's text; "" unknown */
} web_audio_info;

/* err 0: wav (a WAV file; the callee may ref it) and *info; else -errno and
 * why (-ETIMEDOUT, audiod's refusal, -ENOENT no such node or device). */
typedef void (*web_audio_done_fn)(void *user, int err, const char *why, GBytes *wav, const web_audio_info *info);

/* Fetch [from_ns, to_ns) global of node's audio/0/data within timeout_ms.
 * `done` runs once from the main loop, never inside this call, unless the
 * fetch is cancelled first. */
web_audio *web_audio_fetch(uint32_t node, int64_t from_ns, int64_t to_ns, int timeout_ms, web_audio_done_fn done,
			   void *user);

/* Stop a fetch; `done` is not called.  NULL is fine. */
void web_audio_cancel(web_audio *a);

/* A WAV file (libsndfile) of `frames` frames of raw little-endian samples
 * in audiod's `format` ("S16_LE", "S32_LE", "FLOAT_LE", "S24_3LE") with
 * `comment`.  NULL with *why for another format or a libsndfile error. */
GBytes *web_wav_encode(const void *data, int64_t frames, uint32_t channels, uint32_t rate_hz, const char *format,
		       const char *comment, const char **why);

#endif
