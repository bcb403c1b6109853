/* rtstep.h — noticing that the realtime clock was set (stepped): `date -s`,
 * an NTP or chrony step at boot, a GPS receiver's first fix.  A slew
 * (adjtime, the discipline's usual way) is not a step and is not noticed.
 *
 * The kernel says so: a timerfd on CLOCK_REALTIME armed with
 * TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET for a far future reads
 * ECANCELED once the clock has been set discontinuously (forwards or
 * backwards; timerfd_create(2)).  syncd's cpu -> realtime pair then
 * starts afresh, its fit until then the last piece before a break
 * (syncd_pairs_reset): the samples after a step lie a whole step off the
 * line, and the robust fit would reject them as outliers — the old line
 * standing for the new clock — until the window's majority were new
 * (a backward step was caught already: a sample whose realtime went
 * backwards is refused; a forward one was not).
 *
 * Main context only: the watch is a GLib unix fd source on the default
 * context. */
#ifndef CHORUS_SYNCD_RTSTEP_H
#define CHORUS_SYNCD_RTSTEP_H

#include <glib.h>

typedef struct rtstep rtstep;

/* Watch for steps of CLOCK_REALTIME: on_step(ctx) runs in the main loop
 * after each (several steps between two iterations are one call).
 * NULL with *err when the timerfd cannot be made or armed. */
rtstep *rtstep_new(void (*on_step)(void *ctx), void *ctx, GError **err);

/* Steps noticed so far. */
guint64 rtstep_count(const rtstep *r);

/* Stop watching and free (NULL is fine). */
void rtstep_free(rtstep *r);

#endif
