/* onset_time.c — a detection's onset on another clock (see onset_time.h). */
#include "apps/detect/onset_time.h"

#include <errno.h>
#include <math.h>

#include <glib.h>

int det_onset_time(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t *ns, double *se_ns, char *why,
		   size_t len)
{
	uint32_t flags;
	return det_onset_time_flags(clocks, e, to, ns, se_ns, &flags, why, len);
}

/* Both: reach_ns <= 0 is the graph's tolerance alone (sync_client_convert). */
static int onset_time(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t reach_ns, int64_t *ns,
		      double *se_ns, uint32_t *flags, char *why, size_t len)
{
	/* sync_tval keeps the integer part exact. */
	double ip = floor(e->onset_frame + 0.5);
	sync_tval x = {(int64_t)ip, e->onset_frame - ip};
	sync_clock_id audio = sync_clock_audio(e->node, (uint16_t)e->dev);
	double ns_per_frame = 1e9 / e->rate_hz, var_on = e->onset_se * ns_per_frame * e->onset_se * ns_per_frame;
	sync_graph_result r;
	int rc = reach_ns > 0 ? sync_client_convert_past(clocks, audio, to, x, reach_ns, &r, why, len)
			      : sync_client_convert(clocks, audio, to, x, &r, why, len);
	if (rc < 0)
		return rc;
	*ns = r.value.i + (int64_t)floor(r.value.f + 0.5);
	*se_ns = sqrt(r.var + var_on);
	*flags = r.flags;
	return 0;
}

int det_onset_time_flags(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t *ns, double *se_ns,
			 uint32_t *flags, char *why, size_t len)
{
	return onset_time(clocks, e, to, 0, ns, se_ns, flags, why, len);
}

int det_onset_time_past(sync_client *clocks, const det_event *e, sync_clock_id to, int64_t reach_ns, int64_t *ns,
			double *se_ns, uint32_t *flags, char *why, size_t len)
{
	return onset_time(clocks, e, to, reach_ns, ns, se_ns, flags, why, len);
}

int det_onset_card_stretch(sync_client *clocks, const det_event *e, sync_clock_id to, double *stretch, char *why,
			   size_t len)
{
	det_event a = *e, b = *e;
	b.onset_frame -= e->rate_hz;
	int64_t na, nb;
	double se;
	int rc = det_onset_time(clocks, &a, to, &na, &se, why, len);
	if (rc == 0)
		rc = det_onset_time(clocks, &b, to, &nb, &se, why, len);
	if (rc < 0)
		return rc;
	if (na <= nb) {
		g_snprintf(why, len, "the audio clock does not advance against the clock it is timed in");
		return -EDOM;
	}
	*stretch = 1e9 / (double)(na - nb);
	return 0;
}
