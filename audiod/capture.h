/* capture.h — one ALSA capture stream through alsa-lib (docs/architecture.md §4.1).
 *
 * Opens any PCM by name (hw:1, plughw:…, chorus_sim) non-blocking with the
 * configured rate, channels, format, period and buffer; asks for timestamps
 * of hw_ptr updates on CLOCK_MONOTONIC_RAW; reads whole periods.  Nothing
 * here knows about rings or clocks beyond the timestamp ALSA gives.
 * Errors are negative errno values; capture_open also sets a GError
 * (AUDIOD_ERROR, audiod/error.h) saying which PCM and parameter failed.
 */
#ifndef CHORUS_AUDIOD_CAPTURE_H
#define CHORUS_AUDIOD_CAPTURE_H

#include <alsa/asoundlib.h>
#include <glib.h>
#include <stdint.h>

typedef struct {
	const char *pcm;          /* ALSA PCM name */
	unsigned rate_hz;         /* frames per second wanted */
	unsigned channels;        /* channels wanted */
	snd_pcm_format_t format;  /* S16_LE, S32_LE, FLOAT_LE or S24_3LE (3 bytes a sample) */
	snd_pcm_uframes_t period; /* frames per period wanted */
	snd_pcm_uframes_t buffer; /* frames of ALSA buffer wanted (>= 2 periods) */
} capture_cfg;

typedef struct capture capture;

/* Open and configure the PCM.  Returns 0 and *out, or a negative errno with
 * err set (AUDIOD_ERROR, code the errno; the message names the PCM and the
 * parameter the device refused).  Blocks only as long as alsa-lib's open. */
int capture_open(const capture_cfg *cfg, capture **out, GError **err);

/* Close the PCM (NULL is fine). */
void capture_close(capture *c);

/* The parameters the device accepted (rate, channels, format, period, buffer). */
const capture_cfg *capture_actual(const capture *c);

/* Bytes per frame. */
size_t capture_frame_bytes(const capture *c);

/* ALSA card, device and subdevice numbers of the PCM (-1 when it is not a
 * hardware PCM, e.g. a plugin), for finding the kpatch FIFO. */
void capture_hw_ids(const capture *c, int *card, int *device, int *subdevice);

/* Start (or restart after capture_recover) the stream.  0 or -errno. */
int capture_start(capture *c);

/* Wait up to timeout_ms for the PCM's descriptors (poll).  Returns 1 when
 * one is ready, 0 on timeout or a signal, or -errno.  The caller stamps its
 * wakeup right after, before ALSA's processing (capture_revents). */
int capture_poll(capture *c, int timeout_ms);

/* After capture_poll returned 1: what the descriptors mean to ALSA (for a
 * plugin PCM this runs its poll callback).  Returns 1 readable, 0 not yet,
 * or -errno (-EPIPE: overrun). */
int capture_revents(capture *c);

/* Read up to max frames into buf without blocking.  Returns frames read,
 * 0 when none are ready, -EPIPE on overrun (call capture_recover), or
 * another -errno. */
long capture_read(capture *c, void *buf, snd_pcm_uframes_t max);

/* ALSA's timestamp of the last hw_ptr update and the frames available then,
 * from one snd_pcm_status (the kernel updates hw_ptr and stamps it in the
 * same call for drivers that report the DMA position): *tstamp_ns on host
 * CLOCK_MONOTONIC_RAW, *avail frames.  The status also asks for the
 * driver's link audio timestamp (snd_pcm_status_set_audio_htstamp_config,
 * LINK with the A/D delay): what the driver offered is kept for
 * capture_audio_tstamp.  Returns 0, -EPIPE in XRUN, -ENODATA when the
 * device gives no timestamp (all zero), or -errno. */
int capture_htimestamp(capture *c, int64_t *tstamp_ns, snd_pcm_uframes_t *avail);

/* The audio timestamp the driver offered at the last capture_htimestamp:
 * *type a snd_pcm_audio_tstamp_type_t (-1: none offered; ioplug plugins
 * and drivers without get_time_info offer none) and *accuracy_ns as the
 * driver reports it (-1: not reported).  Pure. */
void capture_audio_tstamp(const capture *c, int *type, int64_t *accuracy_ns);

/* After an overrun: prepare the stream again (it must then be started).
 * Returns 0 or -errno. */
int capture_recover(capture *c, int err);

/* The ALSA boundary (hw_ptr wraps at it), frames. */
snd_pcm_uframes_t capture_boundary(const capture *c);

#endif
