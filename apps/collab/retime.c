/* retime.c — a detection's onset on global now (see retime.h). */
#include "apps/collab/retime.h"

#include <errno.h>
#include <math.h>

#include "apps/collab/group.h"
#include "apps/detect/onset_time.h"

int collab_global_now(const collab_retimer *r, const det_event *e, int64_t *g, double *se, uint32_t *flags,
		      gboolean *past)
{
	char why[200];
	*past = FALSE;
	int rc = det_onset_time_flags(r->clocks, e, sync_clock_global(), g, se, flags, why, sizeof why);
	if (rc == -ERANGE) {
		*past = TRUE;
		rc = det_onset_time_past(r->clocks, e, sync_clock_global(), r->reach_ns, g, se, flags, why, sizeof why);
	}
	return rc;
}

gboolean collab_off_timescale(const det_event *e, int64_t g, double se)
{
	/* Conversions of one onset on one timescale agree within a fraction
	 * of their combined s.e. (they share most of their fits); a node
	 * that joined another root's timescale moves by the difference of
	 * the roots' clocks, seconds. */
	return fabs((double)g - (double)e->global_ns) > COLLAB_OFF_TIMESCALE_SE * hypot(e->global_se_ns, se);
}

/* The onset of e now: a negative errno, or 1 when e's carried time is
 * off the timescale of the conversion *g ± *se and 0 when not; *crossed:
 * the conversion crossed an outage (bridged) or extrapolated back. */
static int convert_now(const collab_retimer *r, const det_event *e, int64_t *g, double *se, gboolean *crossed)
{
	uint32_t flags;
	gboolean past;
	int rc = collab_global_now(r, e, g, se, &flags, &past);
	if (rc < 0)
		return rc;
	*crossed = past || (flags & SYNC_GRAPH_BRIDGED);
	return collab_off_timescale(e, *g, *se);
}

/* e takes global time g ± se. */
static void take(det_event *e, int64_t g, double se)
{
	e->global_ns = g;
	e->global_se_ns = se;
	e->has_global = TRUE;
}

gboolean collab_retime_resent(void *ctx, det_event *e)
{
	int64_t g;
	double se;
	gboolean crossed;
	int rc = convert_now(ctx, e, &g, &se, &crossed);
	if (rc < 0 || (!rc && !crossed))
		return FALSE;
	take(e, g, se);
	return TRUE;
}

int collab_retime_grouped(void *ctx, det_event *e)
{
	const collab_retimer *r = ctx;
	int64_t g;
	double se;
	gboolean crossed;
	int rc = convert_now(r, e, &g, &se, &crossed);
	if (rc < 0)
		return e->node == r->node ? COLLAB_RETIME_LOST : COLLAB_RETIME_UNKNOWN;
	if (!rc)
		return COLLAB_RETIME_SAME;
	take(e, g, se);
	return COLLAB_RETIME_MOVED;
}

int collab_retime_local(const collab_retimer *r, det_event *e)
{
	int64_t g;
	double se;
	gboolean crossed;
	if (!e->has_global || convert_now(r, e, &g, &se, &crossed) <= 0)
		return 0;
	take(e, g, se);
	return 1;
}
