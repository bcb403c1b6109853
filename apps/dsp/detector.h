/* detector.h — band-limited energy detector with an adaptive noise floor
 * and hysteresis, fed with one band power per STFT frame (stft.h).
 *
 * Floor F: the mean band power of the first `warmup_s` of frames, then an
 * exponential average with time constant floor_tau_s, updated only with
 * frames below the off threshold while no call is in progress — so a call
 * never raises the floor it is measured against.
 * Hysteresis: a candidate starts at the first frame with E > F * 10^(off/10)
 * and becomes a call once some frame exceeds F * 10^(on/10); it ends when
 * E stays below the off threshold for hangover_s (which bridges the gaps
 * of a pulse train).  Durations:
 *   shorter than min_dur_s -> rejected (clicks, single noise frames);
 *   longer than max_dur_s  -> rejected and the floor re-learned from the
 *   segment: a sound that long is a change of background (wind, a chorus),
 *   not a call; splitting it would only manufacture false alarms.
 * A floor too high (a loud call inside the warm-up, a background that fell)
 * is re-learned the same way: warmup_s of idle frames in a row off_db below
 * the floor set it to their mean (a right floor is essentially never
 * undershot that far for that long).
 * The onset is the first frame of the unbroken run above off that holds
 * the confirming frame (a noise blip just before, bridged by the hangover,
 * must not move it).
 * Times: a frame above threshold has the window's centre inside the call,
 * so the coarse onset is the first such frame's start + size/2 and the end
 * the last one's start + size/2 (each uncertain by about +-size/2; onset.h
 * refines the onset).
 *
 * Pure: no I/O, no clocks.  Errors: negative errno with a static reason.
 */
#ifndef CHORUS_DSP_DETECTOR_H
#define CHORUS_DSP_DETECTOR_H

#include <stdint.h>

typedef struct {
	double rate_hz;          /* sample rate, Hz */
	double f_lo_hz, f_hi_hz; /* band, Hz (recorded in events; the caller computes band power) */
	double on_db;            /* call confirmed above floor + on_db, dB */
	double off_db;           /* candidate/call persists above floor + off_db, dB (<= on_db) */
	double min_dur_s;        /* shortest call, s */
	double max_dur_s;        /* longest call, s */
	double hangover_s;       /* time below off tolerated inside a call, s */
	double floor_tau_s;      /* time constant of the floor, s */
	double warmup_s;         /* floor learned before any detection, s */
} dsp_det_params;

typedef struct {
	int64_t onset;           /* coarse onset, absolute sample index, frames */
	int64_t end;             /* coarse end, absolute sample index, frames */
	double duration_s;       /* (end - onset) / rate, s */
	double peak_snr_db;      /* max over frames of 10 log10((E - F) / F), dB */
	double floor;            /* noise band power F at the call, squared sample units */
	double f_lo_hz, f_hi_hz; /* band, Hz */
} dsp_event;

typedef struct dsp_detector dsp_detector;

/* Defaults for the simulator's frogs: 48 kHz, 1-4 kHz, on 8 dB, off 4 dB,
 * 20 ms..2 s, hangover 40 ms, floor tau 5 s, warmup 0.5 s. */
void dsp_det_params_default(dsp_det_params *p);

/* A detector for frames of `size` samples every `hop`.  Returns it, or NULL
 * with the reason in *why (bad parameter, out of memory). */
dsp_detector *dsp_detector_new(const dsp_det_params *p, int size, int hop, const char **why);

/* Free d (NULL is fine). */
void dsp_detector_free(dsp_detector *d);

/* Feed the band power E (squared sample units, dsp_stft_band_power) of the
 * frame starting at absolute index `first`.  Returns 1 with a finished call
 * in *ev, 0 when none finished, -EINVAL (first not after the previous
 * frame, or E negative / not finite). */
int dsp_detector_feed(dsp_detector *d, int64_t first, double E, dsp_event *ev);

/* End of stream (or a gap): finish a call in progress.  Returns 1 with it
 * in *ev, or 0. */
int dsp_detector_flush(dsp_detector *d, dsp_event *ev);

/* Current noise floor, squared sample units (0 before the first frame). */
double dsp_detector_floor(const dsp_detector *d);

/* Nonzero while a candidate or call is in progress. */
int dsp_detector_busy(const dsp_detector *d);

/* Calls rejected so far as too short / too long. */
void dsp_detector_rejected(const dsp_detector *d, uint64_t *too_short, uint64_t *too_long);

/* Times the floor was re-learned because it stood off_db above warmup_s of
 * idle frames in a row (too high). */
uint64_t dsp_detector_relearned_low(const dsp_detector *d);

#endif
