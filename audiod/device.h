/* device.h — one audio device as clients see it: the capture stream, its
 * timehist, and the devices audio/<k>/data (sensor), audio/<k>/status
 * (status) and audio/<k>/ring (hands out the ring's memfd); it also feeds
 * syncd the filtered audio<k> <-> cpu observations (docs/architecture.md §4.6).
 */
#ifndef CHORUS_AUDIOD_DEVICE_H
#define CHORUS_AUDIOD_DEVICE_H

#include <glib.h>

#include "audiod/obslog.h"
#include "audiod/stream.h"
#include "libsync/client.h"

typedef struct audio_dev audio_dev;

/* Open device index k from cfg on ctx for node `node`; `clocks` converts
 * requests by time (shared, not owned).  Returns the device, or NULL with
 * *err (the PCM, the ring, a socket). */
audio_dev *audio_dev_new(int k, const stream_cfg *cfg, uint32_t node, GMainContext *ctx, sync_client *clocks,
			 GError **err);

/* Serve requests older than the ring from chorus-archive's directory dir
 * (NULL or "": refuse them, as without an archive; audiod/archived.h). */
void audio_dev_set_archive(audio_dev *d, const char *dir);

/* Write every observation into l (shared, not owned; NULL: none) and its
 * state on the status (audiod/obslog.h). */
void audio_dev_set_obslog(audio_dev *d, obslog *l);

/* Start capturing.  FALSE with *err on failure. */
gboolean audio_dev_start(audio_dev *d, GError **err);

/* TRUE once audio/<k>/data serves clients (after the first frames). */
gboolean audio_dev_ready(audio_dev *d);

/* Stop capturing, close the devices, free (NULL is fine). */
void audio_dev_free(audio_dev *d);

/* Publish the status now if it changed (called periodically). */
void audio_dev_tick(audio_dev *d);

#endif
