/* onset_rate.h — a matched onset moved for the sound card's rate: a card
 * fast by eps against the clock onsets are timed in records every call
 * (1 + eps) times its template's length, and the matched filter aligns
 * the call's weight, not its start (refine.h det_refiner_rate_shift).
 * detect measures the card's rate (onset_time.h det_onset_card_stretch)
 * and moves every matched onset with this.  Pure. */
#ifndef CHORUS_DETECT_ONSET_RATE_H
#define CHORUS_DETECT_ONSET_RATE_H

#include "apps/detect/event.h"

/* detect's default `[detect] clock_rate_sd_ppm`: the s.d. of the timing
 * clock's rate against true seconds, ppm (a crystal within +-50 ppm). */
#define DETECT_RATE_SD_PPM 30

/* A matched onset of e moved to where the call started: a card fast by
 * eps against the clock the onsets are timed in records the call
 * (1 + eps) times its template's length, which moves the onset eps *
 * shift samples (det_refiner_rate_shift); e->onset_frame is moved back by
 * (stretch - 1) * shift, and e->onset_se grows by rate_sd * |shift| in
 * quadrature, rate_sd the relative s.d. of that clock's own rate against
 * true seconds (it is the ruler the stretch was measured with).  Pure. */
void det_onset_rate_correct(det_event *e, double stretch, double shift, double rate_sd);

#endif
