/* onset_time.h — a detection's onset on another clock: its fractional audio
 * frame converted through libsync, with the onset's own standard error
 * added to the conversion's.  detect times every event with it, and collab
 * again for a detection that had no global time when it was made (a node
 * cut off before its clocks had converged: docs/protocol.md "Catching
 * up"). */
#ifndef CHORUS_DETECT_ONSET_TIME_H
#define CHORUS_DETECT_ONSET_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "apps/detect/event.h"
#include "libsync/client.h"

/* The onset of e (e->onset_frame ± e->onset_se frames of audio e->dev of
 * e->node at e->rate_hz) on clock `to`: 0 with *ns (rounded) and *se_ns, or
 * sync_client_convert's negative errno with the reason in why[len]. */
int det_onset_time(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t *ns, double *se_ns, char *why,
		   size_t len);

/* The same, and the conversion's SYNC_GRAPH_* flags in *flags (e.g.
 * SYNC_GRAPH_BRIDGED: the onset lies inside an outage of some pair on the
 * path, converted across it with the history from before it). */
int det_onset_time_flags(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t *ns, double *se_ns,
			 uint32_t *flags, char *why, size_t len);

/* det_onset_time_flags() with sync_client_convert_past(): the onset may
 * lie up to reach_ns further before a conversion's data than the graph's
 * tolerance (the line extrapolated back, its variance grown with the
 * distance; *flags then has SYNC_GRAPH_EXTRAPOLATED). */
int det_onset_time_past(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t reach_ns, int64_t *ns,
			double *se_ns, uint32_t *flags, char *why, size_t len);

/* The sound card's rate against clock `to` (an ns clock) where e was
 * heard: the frames it records per second of `to` over the second before
 * the onset, divided by e->rate_hz (1 + the card's rate error against
 * `to`; two conversions of the same path, so the path's offset cancels).
 * 0 with *stretch, or sync_client_convert's negative errno with the reason
 * in why[len]. */
int det_onset_card_stretch(sync_client *clocks, const det_event *e, sync_clock_id to, double *stretch, char *why,
			   size_t len);

#endif
