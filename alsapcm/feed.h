/* feed.h — the ALSA plugin's stream from audiod: a libdev sensor client on
 * its own thread, filling a bounded buffer of frames that the PCM drains.
 *
 * The plugin lives inside somebody else's program (arecord, sox, a Python
 * script), whose only contact with it is ALSA's calls and the one poll
 * descriptor it hands out.  libdev's crashproof sensor client needs a
 * GMainContext that runs (its reconnect timers, its socket), so the feed
 * runs one on a private thread; the two sides share the frame buffer under
 * one mutex, and an eventfd is the PCM's poll descriptor, kept readable
 * exactly while the PCM has something to report (level-triggered: at least
 * avail_min frames, or a break).
 *
 * Positions are stream positions: frame 0 is the first frame delivered
 * after chorus_feed_start(); the buffer holds [pos, pos + n).  A full
 * buffer stops the thread from taking more from its socket, so audiod
 * (which serves sensor clients only when their socket has room) sends no
 * more: a slow application costs audiod nothing and loses nothing until it
 * falls behind the ring, which audiod then reports as a gap.  A gap, the
 * connection to audiod dropping, or audiod refusing the stream, is a
 * *break*: the frames before it are delivered, then the stream is over
 * (the PCM reports an xrun) until the next start.
 */
#ifndef CHORUS_ALSAPCM_FEED_H
#define CHORUS_ALSAPCM_FEED_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef struct chorus_feed chorus_feed;

/* What a sensor device serves, from its OPENED reply. */
typedef struct {
	unsigned rate_hz;
	unsigned channels;
	char format[16];    /* audiod's name: S16_LE, S32_LE, FLOAT_LE, S24_3LE */
	uint32_t item_size; /* bytes per frame, all channels */
} chorus_feed_info;

/* Ask sensor device `device` (audio/<k>/data) what it serves: a blocking
 * open from the device's next frame, closed again after the reply, within
 * timeout_ms.  0 and *info, or a negative errno with the reason in
 * why[len] (the device's path and the error: ENOENT when audiod does not
 * serve it, ECONNREFUSED, ETIMEDOUT, EPROTO for a reply without the keys). */
int chorus_feed_probe(const char *device, int timeout_ms, chorus_feed_info *info, char *why, size_t len);

/* Start the feed's thread (no stream yet) for `device`.  NULL + *err when
 * the thread or the eventfd cannot be made. */
chorus_feed *chorus_feed_new(const char *device, GError **err);

/* The poll descriptor (an eventfd, readable while chorus_feed_ready()),
 * owned by the feed. */
int chorus_feed_fd(chorus_feed *f);

/* Open a stream: params (audiod's request text, may be empty), `flags`
 * (DEV_SENSOR_FROM_NEXT or 0), buffering at most cap_frames frames of
 * frame_bytes each (the frames the device will send, audiod's item size),
 * from stream position 0.  An earlier stream is closed first and its
 * frames dropped.  With wait_ms > 0 it waits that long for audiod's answer:
 * 0 once audiod accepted the request (*first gets its first frame when not
 * NULL), or a negative errno with audiod's reason (ERANGE: older than the
 * ring holds, …), the unreachable path (ENOENT, ECONNREFUSED) or ETIMEDOUT,
 * in why[len].  With wait_ms = 0 it returns 0 at once and the answer comes
 * through the buffer (a refusal is a break).  -ENOMEM for an impossible
 * buffer size.  Called from the application's thread. */
int chorus_feed_start(chorus_feed *f, const char *params, uint32_t flags, size_t cap_frames, size_t frame_bytes,
		      int wait_ms, int64_t *first, char *why, size_t len);

/* Close the stream (if any) and drop its frames; the thread stays.  Never
 * fails. */
void chorus_feed_stop(chorus_feed *f);

/* The frames at stream positions [pos, pos + n) are done with: drop
 * them, making room for the thread.  pos only moves forward; a pos behind
 * the buffer's start is ignored. */
void chorus_feed_consume_to(chorus_feed *f, uint64_t pos);

/* Frames buffered from position `pos` (after dropping those before it),
 * and *broken = TRUE when a break follows them (the stream will bring
 * nothing more); *why, when not NULL, gets the reason of the break
 * (static until the next start). */
size_t chorus_feed_avail(chorus_feed *f, uint64_t pos, gboolean *broken, const char **why);

/* Copy n frames from stream position `pos` into dst (n * frame_bytes bytes,
 * interleaved as audiod sends them).  Returns the frames copied: fewer
 * than n when fewer are buffered.  It consumes nothing (ALSA's mmap
 * capture may ask for the same frames again before the application
 * commits them): chorus_feed_consume_to() does. */
size_t chorus_feed_read(chorus_feed *f, uint64_t pos, void *dst, size_t n);

/* The frame index on audiod's device of stream position 0 (INT64_MIN
 * before audiod answered). */
int64_t chorus_feed_first(chorus_feed *f);

/* Readiness threshold for the poll descriptor, frames (the PCM's
 * avail_min); 1 by default. */
void chorus_feed_set_avail_min(chorus_feed *f, size_t frames);

/* Stop the thread, close the stream and free.  NULL is fine. */
void chorus_feed_free(chorus_feed *f);

#endif
