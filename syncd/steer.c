/* steer.c — the rate of global steered to UTC (see steer.h). */
#include "syncd/steer.h"

#include <math.h>

/* The time constant at age age_s (steer.h). */
static double tau_at(const syncd_steer_params *p, double age_s)
{
	double tau = age_s > SYNCD_STEER_YOUNG_TAU_S ? age_s : SYNCD_STEER_YOUNG_TAU_S;
	return tau > p->tau_s ? p->tau_s : tau;
}

double syncd_steer_slope(const syncd_steer_params *p, double f, double offset_ns, double age_s)
{
	double tau = tau_at(p, age_s);
	double corr = offset_ns * 1e-9 / tau, max = p->max_slew_ppm * 1e-6;
	if (corr > max)
		corr = max;
	if (corr < -max)
		corr = -max;
	return f * (1.0 - corr);
}

int syncd_steer_due(const syncd_steer_params *p, double age_s, double since_last_s)
{
	double step = age_s / 8.0;
	if (step < 2.0)
		step = 2.0;
	if (step > p->interval_s)
		step = p->interval_s;
	return since_last_s >= step;
}

syncd_steer_state syncd_steer_start(int64_t taken_ns)
{
	return (syncd_steer_state){.taken_ns = taken_ns, .last_ns = taken_ns};
}

int syncd_steer_step(syncd_timescale *ts, syncd_steer_state *st, const sync_conv *utc, const syncd_steer_params *p,
		     int64_t now_ns, syncd_steer_result *out)
{
	double age = (double)(now_ns - st->taken_ns) * 1e-9, since = (double)(now_ns - st->last_ns) * 1e-9;
	if (!syncd_steer_due(p, age, since))
		return 0;
	double a = since / tau_at(p, age);
	if (!st->have_f) {
		st->f_lp = utc->slope;
		st->have_f = 1;
	} else {
		st->f_lp += (a < 1 ? a : 1) * (utc->slope - st->f_lp);
	}
	sync_tval g = syncd_timescale_at(ts, now_ns), u = sync_conv_apply(utc, sync_tval_of(now_ns));
	syncd_steer_result r;
	r.offset_ns = (double)(g.i - u.i) + (g.f - u.f);
	r.offset_se_ns = sqrt(sync_conv_var(utc, sync_tval_of(now_ns)));
	r.f = st->f_lp;
	r.slope = syncd_steer_slope(p, r.f, r.offset_ns, age);
	int rc = syncd_timescale_steer(ts, now_ns, r.slope);
	if (rc < 0)
		return rc;
	st->last_ns = now_ns;
	*out = r;
	return 1;
}

sync_conv syncd_steer_utc_conv(const sync_conv *rt, double est_error_ns)
{
	sync_conv c = *rt;
	c.var_c += est_error_ns * est_error_ns;
	c.flags &= ~(uint32_t)SYNC_CONV_FIXED;
	return c;
}
