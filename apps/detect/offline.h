/* offline.h — detect's pipeline on audio held in memory: what detect does
 * with a stream, for tests and for tracing a simulated field.
 *
 * The STFT fft computes (Hann window of `size`, hop `hop`), each frame's
 * band power density over the profile's band, the detector (detector.h:
 * adaptive floor, hysteresis, hangover, duration limits), and for every
 * event the clip detect fetches from audiod (a frame size plus pre_ms
 * before the coarse onset to the longest template past the event's end),
 * band-limited to the profile's band, the onset refined near its leading
 * edge (refine.h det_refine_clip), and the calls overlapping it: by the
 * templates' matched filters (det_refine_overlaps) and then, for kinds not
 * found, by their own band's envelope (overlap_env.h).  The windows and
 * the order are detect's (apps/detect/main.c on_call and finish_idle); the
 * clock conversions and the event's wire format are not here.  Pure: no
 * I/O.
 */
#ifndef CHORUS_DETECT_OFFLINE_H
#define CHORUS_DETECT_OFFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "apps/detect/overlap_env.h"
#include "apps/detect/profile.h"
#include "apps/detect/refine.h"

typedef enum {
	DET_FOUND_COARSE = 0,   /* not refined: the detector's coarse onset (tmpl 0) */
	DET_FOUND_FIRST = 1,    /* the event's call, refined */
	DET_FOUND_OVERLAP = 2,  /* overlapping it, by a template's matched filter */
	DET_FOUND_ENVELOPE = 3, /* overlapping it, by its band envelope and edge */
} det_found_how;

typedef struct {
	int64_t coarse;    /* the detector's event onset, frames from x[0] */
	int64_t end;       /* … and its end */
	double onset;      /* the call's start, frames from x[0] (fractional) */
	double se;         /* its stated standard error, frames */
	int tmpl;          /* 1-based template (0: coarse) */
	det_found_how how; /* how it was found */
	double enr_db;     /* the match's energy-to-noise ratio, dB (0: coarse) */
	double explained;  /* the share of the energy under the template its match explains (0..1; 0: coarse) */
} det_found;

/* Run detect on x[0, n) at rate_hz with frames of `size` and hop `hop`
 * (fft's), profile p, its refiner ref (det_refiner_set_band done) and
 * overlap search oe (may be NULL: none by envelope).  Up to max calls to
 * out[] in event order (each event's call, then its overlaps).  Returns
 * how many, or -EINVAL (bad sizes) / -ENOMEM. */
int det_offline_run(const det_profile *p, det_refiner *ref, const det_overlap_env *oe, const float *x, size_t n,
		    double rate_hz, int size, int hop, det_found *out, int max);

#endif
