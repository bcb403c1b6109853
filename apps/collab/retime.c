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

gboolean collab_retime_resent(void *ctx, det_event *e)
{
	const collab_retimer *r = ctx;
	int64_t g;
	double se;
	uint32_t flags;
	gboolean past;
	if (collab_global_now(r, e, &g, &se, &flags, &past) < 0)
		return FALSE;
	if (!past && !(flags & SYNC_GRAPH_BRIDGED) && !collab_off_timescale(e, g, se))
		return FALSE;
	e->global_ns = g;
	e->global_se_ns = se;
	e->has_global = TRUE;
	return TRUE;
}

int collab_retime_grouped(void *ctx, det_event *e)
{
	const collab_retimer *r = ctx;
	int64_t g;
	double se;
	uint32_t flags;
	gboolean past;
	if (collab_global_now(r, e, &g, &se, &flags, &past) < 0)
		return e->node == r->node ? COLLAB_RETIME_LOST : COLLAB_RETIME_SAME;
	if (!collab_off_timescale(e, g, se))
		return COLLAB_RETIME_SAME;
	e->global_ns = g;
	e->global_se_ns = se;
	return COLLAB_RETIME_MOVED;
}

int collab_retime_local(const collab_retimer *r, det_event *e)
{
	int64_t g;
	double se;
	uint32_t flags;
	gboolean past;
	if (!e->has_global || collab_global_now(r, e, &g, &se, &flags, &past) < 0 || !collab_off_timescale(e, g, se))
		return 0;
	e->global_ns = g;
	e->global_se_ns = se;
	return 1;
}
