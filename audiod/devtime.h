/* devtime.h — a capture device's frames and the clocks, both ways, with
 * their variances: what audiod's requests by time resolve to and what its
 * replies state of their first frame (issue 13).
 *
 * frame <-> cpu goes through the device's own history (timehist: the fit
 * that held at the frame, each restarted run a segment of its own), cpu <->
 * any other clock through syncd (libsync's client), and the device's
 * systematic term (calibrated floor, restarts' index error) joins every
 * conversion.  Pure apart from the libsync client it is given.
 */
#ifndef CHORUS_AUDIOD_DEVTIME_H
#define CHORUS_AUDIOD_DEVTIME_H

#include <glib.h>
#include <stdint.h>

#include "libsync/client.h"
#include "timehist/timehist.h"

typedef struct {
	const timehist *th;                   /* frame -> cpu ns */
	sync_client *clocks;                  /* syncd's conversions; NULL: none */
	sync_clock_id audio_clock, cpu_clock; /* the device's and its node's */
	uint32_t rate_hz;                     /* nominal */
	double sys_ns;                        /* systematic error of every conversion, ns */
} devtime;

/* Time t on `clock` to a fractional frame index and its variance
 * (frames^2).  Returns 0, or < 0 with the reason in why[len]. */
int devtime_to_frame(const devtime *dt, sync_clock_id clock, int64_t t, sync_tval *frame, double *var, char *why,
		     size_t len);

/* The time on `clock` of frame `frame` and its variance (clock units^2).
 * A frame older than the device's history (audio from the archive) goes
 * through syncd's history of the pair (syncd/history.h), which it keeps
 * longer.  Returns 0, or < 0 with the reason in why[len]. */
int devtime_of_frame(const devtime *dt, sync_clock_id clock, int64_t frame, sync_tval *t, double *var, char *why,
		     size_t len);

/* Append a reply's statement of its own time to out: " t0_clock=C t0=T.ddd
 * t0_se=S period=P period_se=Q" — the time on `clock` of frame `first`
 * (integer part and three decimals), its standard error, and the frame
 * period there over the next second (the one before, where the next runs
 * into a gap: the break between a run and its restart converts to
 * nothing) with the audio fit's slope s.e., all in the clock's units.
 * When the clock cannot be reached it appends " t0_clock=C t0=none" and
 * returns < 0 with the reason in why[len]; else 0. */
int devtime_append_first(const devtime *dt, sync_clock_id clock, int64_t first, GString *out, char *why, size_t len);

#endif
