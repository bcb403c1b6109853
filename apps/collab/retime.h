/* retime.h — a detection's onset on the global timescale now, for the
 * detections collab times again: resends after an outage (share.h's
 * retime), its own detections as they come from detect, and the
 * detections already grouped when this node joined another root's
 * timescale (group.h collab_grouper_retime).  docs/protocol.md "Catching
 * up".  No state of its own: conversions through libsync. */
#ifndef CHORUS_COLLAB_RETIME_H
#define CHORUS_COLLAB_RETIME_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"
#include "libsync/client.h"

typedef struct {
	sync_client *clocks; /* this node's conversions */
	uint32_t node;       /* this node */
	int64_t reach_ns;    /* how far before every fit an onset may be timed by extrapolation ([collab] queue_s) */
} collab_retimer;

/* The onset of e on global now: 0 with *g, *se and *flags (SYNC_GRAPH_*),
 * *past FALSE; or, when the onset lies before every fit to the field by
 * more than the graph's tolerance (a node cut off from its very start:
 * nothing before the outage to bridge from), timed by the fits after it
 * extrapolated back as far as reach_ns, with the variance that grows, and
 * *past TRUE; or a negative errno (no conversion). */
int collab_global_now(const collab_retimer *r, const det_event *e, int64_t *g, double *se, uint32_t *flags,
		      gboolean *past);

/* Whether e's carried global time lies on another timescale than g ± se,
 * the conversion of its onset now: they differ by more than
 * COLLAB_OFF_TIMESCALE_SE of their combined standard errors. */
#define COLLAB_OFF_TIMESCALE_SE 5.0
gboolean collab_off_timescale(const det_event *e, int64_t g, double se);

/* share.h's retime (ctx: a collab_retimer): a detection resent after an
 * outage takes the time its onset converts to now when that conversion
 * crosses an outage (bridged), extrapolates back (past), or puts the
 * carried time off its timescale; TRUE when e was changed. */
gboolean collab_retime_resent(void *ctx, det_event *e);

/* group.h's collab_retime_fn (ctx: a collab_retimer): a grouped detection
 * whose onset converts now and whose carried time is off the timescale
 * takes the new time (COLLAB_RETIME_MOVED); one of this node's that
 * converts no more is COLLAB_RETIME_LOST (to be held until it does);
 * another node's that does not convert here is COLLAB_RETIME_UNKNOWN (the
 * grouper moves it with its group's members when they all moved). */
int collab_retime_grouped(void *ctx, det_event *e);

/* This node's detection e as it comes from detect, which timed it with the
 * fits of its moment (one made just before this node joined another
 * root's timescale carries the old one): takes the conversion now when the
 * carried time is off its timescale.  Returns 1 when e was changed, else 0. */
int collab_retime_local(const collab_retimer *r, det_event *e);

#endif
