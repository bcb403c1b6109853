/* spec.h — a scrolling spectrogram of a node's audio: channel 0 of
 * nodeN:audio/0/data streamed from the service's next frame (remote device
 * access), a Hann-windowed FFTW r2c of WEB_SPEC_SIZE samples every
 * WEB_SPEC_HOP, WEB_SPEC_BINS bins (pairs of FFT bins, the larger kept) of
 * dBFS quantised to a byte: 0 = WEB_SPEC_FLOOR_DB or less, 255 = 0 dBFS.
 * The newest WEB_SPEC_KEEP columns are held; new ones are handed out in
 * batches (every 250 ms).  The column's first frame is audiod's frame
 * index, the axis detect's onset_frame is on.
 */
#ifndef CHORUS_WEB_SPEC_H
#define CHORUS_WEB_SPEC_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

#define WEB_SPEC_SIZE 512
#define WEB_SPEC_HOP 256
#define WEB_SPEC_BINS 128
#define WEB_SPEC_KEEP 640
#define WEB_SPEC_FLOOR_DB (-110.0)

typedef struct web_spec web_spec;

/* A batch of new columns as JSON (web_spec_json's form); not kept. */
typedef void (*web_spec_fn)(void *user, uint32_t node, JsonNode *batch);

/* Start streaming node's audio. */
web_spec *web_spec_new(uint32_t node, web_spec_fn fn, void *user);

void web_spec_free(web_spec *s);

/* The columns held (at most `max`, the newest) as {node, rate, size, hop,
 * bins, floor_db, first_frame (of the first column), columns, data (base64,
 * columns × bins bytes)}. */
JsonNode *web_spec_json(const web_spec *s, guint max);

/* Columns computed since the start. */
guint64 web_spec_columns(const web_spec *s);

/* Quantise power spectra (pure, for tests): in[size/2+1] power per FFT bin
 * of a full-scale-normalised frame to out[WEB_SPEC_BINS] bytes. */
void web_spec_quantise(const float *power, uint8_t *out);

#endif
