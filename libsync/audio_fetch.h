/* audio_fetch.h — fetch a node's audio by time on any clock (global, a cpu
 * clock, …) from audiod's audio/<k>/data, with the time of its first frame
 * and its frame period on that clock and their standard errors
 * (docs/protocol.md "audio/<k>/data", docs/libsync.md).
 *
 * Blocking: runs libdev's sensor reader on a private GMainContext until the
 * range has arrived, the service refused it, or the timeout passed; safe to
 * call from a program with or without its own main loop.  Frames audiod no
 * longer held (a gap) come back as zeros and are counted, never hidden.
 * Samples are returned as audiod stores them, except S24_3LE which is
 * widened to S32_LE (the 24 bits in the top of each 32-bit sample).
 */
#ifndef CHORUS_SYNC_AUDIO_FETCH_H
#define CHORUS_SYNC_AUDIO_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"

typedef struct sync_audio sync_audio;

/* The fetched audio's description (a plain struct, filled by sync_audio_info). */
typedef struct {
	int64_t first_frame;                /* audiod's index of the first frame returned, frames */
	int64_t frames;                     /* frames returned */
	int64_t gap_frames;                 /* of those, frames audiod no longer held (zeros) */
	uint32_t rate_hz;                   /* nominal sample rate, Hz */
	uint32_t channels;                  /* interleaved channels */
	uint32_t sample_bytes;              /* bytes per sample: 2 (S16_LE), 4 (S32_LE, FLOAT_LE) */
	char format[16];                    /* "S16_LE", "S32_LE" or "FLOAT_LE" */
	int has_t0;                         /* 1 when audiod stated the first frame's time */
	char t0_clock[SYNC_CLOCK_NAME_MAX]; /* the clock of t0 (the request's, else global) */
	int64_t t0;                         /* first frame's time on t0_clock, its unit (integer part) */
	double t0_frac;                     /* fraction of t0, its unit */
	double t0_se;                       /* standard error of t0, its unit */
	double period;                      /* frame period on t0_clock, its unit per frame */
	double period_se;                   /* standard error of period */
	double se_ns;                       /* the request's conversion s.e., ns (NaN for frame requests) */
} sync_audio_info_t;

/* Fetch [from, to) on clock `clock` (text: "global", "node2:cpu", "cpu", …;
 * ns, or frames for audio clocks) from audio device `device` of the node
 * $CHORUS_NODE / $CHORUS_RUN point at; `channels` "0,2" or NULL for all.
 * Returns 0 and *out (free with sync_audio_free), or a negative errno with
 * the reason in why[len]: -EINVAL (bad arguments), -ECONNREFUSED/-ENOENT
 * (audiod unreachable), -ETIMEDOUT, or audiod's refusal (its errno and
 * message: "frame F is older than the oldest held", "cannot convert …"). */
int sync_audio_fetch(uint32_t device, const char *clock, int64_t from, int64_t to, const char *channels, int timeout_ms,
		     sync_audio **out, char *why, size_t len);

/* Copy a's description into *info. */
void sync_audio_info(const sync_audio *a, sync_audio_info_t *info);

/* The interleaved samples (frames * channels * sample_bytes bytes in *bytes);
 * owned by a. */
const void *sync_audio_data(const sync_audio *a, size_t *bytes);

/* Free a (NULL is fine). */
void sync_audio_free(sync_audio *a);

#endif
