/* held.h — this node's detections that had no global time when detect made
 * them (its clocks had not converged, or it was cut off longer than its
 * conversion to global lasted), held until libsync can convert their onset
 * (docs/protocol.md "Catching up").  Once converted (typically when the
 * radio is back and syncd has fits again) each is shared and grouped as a
 * late detection.  Bounded: at most max entries (the oldest dropped), none
 * held longer than max_age_ns of the node's cpu clock.  In memory: a restart
 * of collab loses what it held (detect's JSON-lines file still has them).
 */
#ifndef CHORUS_COLLAB_HELD_H
#define CHORUS_COLLAB_HELD_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"
#include "libsync/client.h"

typedef struct collab_held collab_held;

collab_held *collab_held_new(guint max, int64_t max_age_ns);

void collab_held_free(collab_held *h);

/* Hold e (it has a cpu time: cpu_se_ns finite). */
void collab_held_add(collab_held *h, const det_event *e);

/* Convert every held onset to global with `clocks`: those that convert are
 * appended to out (det_event, has_global set) and no longer held; those
 * whose cpu time is older than max_age_ns at now_cpu_ns are dropped.
 * Returns how many converted. */
guint collab_held_retry(collab_held *h, sync_client *clocks, int64_t now_cpu_ns, GArray *out);

typedef struct {
	guint held;
	guint64 added, converted, dropped;
} collab_held_stats;

void collab_held_counts(const collab_held *h, collab_held_stats *st);

#endif
