/* root.c — global time's root as this node sees it (see root.h). */
#include "syncd/root.h"

#include <math.h>
#include <stdio.h>

#include "syncd/continuity.h"
#include "syncd/rtcpu.h"

struct syncd_root {
	uint32_t self;     /* this node */
	int64_t preferred; /* preferred root node; -1: none */
	int rtcpu_tries;   /* sandwiches per realtime<->cpu sample */
	syncd_notify on_change;
	uint32_t node;                                        /* current global root node */
	gboolean have_global;                                 /* global <-> root cpu known */
	syncd_timescale *ts;                                  /* global on the root's cpu clock: made here, or noted from adverts */
	int64_t taken_ns;                                     /* cpu time this node last took the root */
	sync_utc utc;                                         /* this node's realtime against UTC, as last read */
	gboolean have_utc_read;                               /* utc was read */
	gboolean steered;                                     /* the last steering decision found a UTC estimate */
	double utc_offset_ns, utc_offset_se_ns, utc_rate_ppm; /* global - utc then, its s.e., utc rate - cpu rate */
	double steer_ppm;                                     /* the correction applied then, ppm */
	guint steer_count;                                    /* segments the steering made */
	syncd_steer_state steer;                              /* the loop's state on this node's timescale */
	sync_conv rtfit;                                      /* this node's latest realtime fit cpu -> realtime */
	gboolean have_rtfit;
	syncd_continuation cont; /* the latest conversion to the followed root's global */
	gboolean continued;      /* the definition continues cont.via_root's timescale */
	uint32_t continued_from;
	double step_avoided_ns, cont_se_ns, cont_age_s;
	syncd_continuity hist;             /* the line to the followed root's global, sampled */
	int64_t cont_x0_ns;                /* the hand-over, our cpu ns (the drift grows from here) */
	double cont_rate_var, cont_q2;     /* the continued line's rate variance and measured wander */
	int64_t cont_hist_ns, cont_tau_ns; /* how long the wander was measured for, and over which spans, ns */
	int64_t cont_tau_max_ns;           /* the longest span measured (a ramp's q2 is largest there), ns */
	double cont_jerk2;                 /* the rate's curvature the walk does not explain, squared (per ns^2) */
	int64_t cont_jerk_tau_ns;          /* ... measured over span triples of this, ns (0: none) */
	double before_drift_se_ns;         /* at a switch away from a continued timescale of ours: its stated drift */
	uint32_t before_drift_of;          /* ... from this node's timescale (the one it continued) */
	gboolean before_drift;
	syncd_continuation before; /* at a switch to a remote root: our line to the timescale we left */
	gboolean step_pending;     /* before is waiting for a conversion to the new root's global */
	gboolean have_joined;      /* the step at the last switch was measured */
	uint32_t joined_from, joined_to;
	double joined_step_ns, joined_se_ns, joined_after_s;
	int64_t switched_ns; /* cpu time of the switch the pending step is of */
	guint switches;      /* times the root changed */
	int64_t since_ns;    /* node cpu ns of the last root change */
};

syncd_root *syncd_root_new(uint32_t self, int64_t preferred, int rtcpu_tries, int64_t now_ns, syncd_notify on_change)
{
	syncd_root *rt = g_new0(syncd_root, 1);
	rt->self = self;
	rt->preferred = preferred;
	rt->rtcpu_tries = rtcpu_tries;
	rt->on_change = on_change;
	rt->ts = syncd_timescale_new();
	if (preferred < 0 || preferred == (int64_t)self)
		syncd_root_take(rt, now_ns);
	else
		rt->node = (uint32_t)preferred;
	return rt;
}

void syncd_root_free(syncd_root *rt)
{
	if (rt)
		syncd_timescale_free(rt->ts);
	g_free(rt);
}

uint32_t syncd_root_self(const syncd_root *rt)
{
	return rt->self;
}

uint32_t syncd_root_node(const syncd_root *rt)
{
	return rt->node;
}

gboolean syncd_root_have_global(const syncd_root *rt)
{
	return rt->have_global;
}

gboolean syncd_root_definition(const syncd_root *rt, sync_ticker_entry *out)
{
	const sync_conv *c = syncd_timescale_current(rt->ts);
	if (!rt->have_global || rt->node != rt->self || !c)
		return FALSE;
	*out = (sync_ticker_entry){sync_clock_cpu(rt->node), sync_clock_global(), *c};
	return TRUE;
}

int64_t syncd_root_preferred(const syncd_root *rt)
{
	return rt->preferred;
}

void syncd_root_prefer(syncd_root *rt, int64_t node)
{
	rt->preferred = node;
}

void syncd_root_listen(syncd_root *rt)
{
	if (rt->node == rt->self && rt->have_global && !rt->switches) {
		rt->have_global = FALSE;
		g_message("global time: listening for a live timescale before defining one");
		syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
	}
}

const syncd_continuation *syncd_root_continuation(const syncd_root *rt)
{
	return &rt->cont;
}

/* The line this node's global followed until now, as a continuation:
 * on the root its own timescale (exact), on a follower its latest
 * conversion to the root's global.  FALSE when it had no global. */
static gboolean line_before(const syncd_root *rt, int64_t now_ns, syncd_continuation *out)
{
	const sync_conv *seg = syncd_timescale_current(rt->ts);
	if (!rt->have_global)
		return FALSE;
	if (rt->node == rt->self && seg) {
		sync_tval g = syncd_timescale_at(rt->ts, now_ns);
		*out = (syncd_continuation){.valid = 1, .cpu0_ns = now_ns, .global0_ns = g.i + (int64_t)llround(g.f), .slope = seg->slope, .via_root = rt->self};
		return TRUE;
	}
	if (rt->cont.valid && rt->cont.via_root == rt->node && now_ns - rt->cont.cpu0_ns <= SYNCD_ROOT_CONTINUATION_MAX_AGE_NS) {
		*out = rt->cont;
		return TRUE;
	}
	return FALSE;
}

/* The step a switch made, once the new root's global is known here. */
static void measure_join(syncd_root *rt, const syncd_continuation *c)
{
	if (!rt->step_pending || c->via_root != rt->node || c->cpu0_ns < rt->switched_ns)
		return;
	rt->step_pending = FALSE;
	if (c->cpu0_ns - rt->before.cpu0_ns > SYNCD_ROOT_CONTINUATION_MAX_AGE_NS)
		return;
	rt->have_joined = TRUE;
	rt->joined_from = rt->before.via_root;
	rt->joined_to = c->via_root;
	rt->joined_step_ns = (double)(c->global0_ns - syncd_continuation_at(&rt->before, c->cpu0_ns));
	rt->joined_se_ns = hypot(syncd_continuation_se(&rt->before, c->cpu0_ns), c->se_ns);
	rt->joined_after_s = (double)(c->cpu0_ns - rt->switched_ns) * 1e-9;
	char drift[200] = "";
	if (rt->before_drift)
		snprintf(drift, sizeof drift, "; ours continued node%u's, stated to have drifted from it by %.3f us (s.e.) "
					      "at the switch: the step is %.1f of that",
			 rt->before_drift_of, rt->before_drift_se_ns * 1e-3,
			 fabs(rt->joined_step_ns) / hypot(rt->before_drift_se_ns, rt->joined_se_ns));
	g_message("global time: joined node%u's timescale (was node%u's): global here stepped %+.3f us "
		  "(s.e. %.3f us), measured %.1f s after the switch%s",
		  rt->joined_to, rt->joined_from, rt->joined_step_ns * 1e-3, rt->joined_se_ns * 1e-3, rt->joined_after_s, drift);
	syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
}

void syncd_root_offer_continuation(syncd_root *rt, const syncd_continuation *c)
{
	if (c->valid && c->via_root != rt->self) {
		rt->cont = *c;
		syncd_continuity_note(&rt->hist, c->via_root, c->cpu0_ns, c->global0_ns, c->se_ns);
		measure_join(rt, c);
	}
}

gboolean syncd_root_joined(const syncd_root *rt, double *step_ns, double *se_ns)
{
	if (!rt->have_joined)
		return FALSE;
	*step_ns = rt->joined_step_ns;
	*se_ns = rt->joined_se_ns;
	return TRUE;
}

/* "wander W ppb/sqrt(s) measured over H s, spans of T s; curvature C
 * ppb/s^2 over span triples of U s" (or "...; curvature not measured":
 * under three spans followed) for the continued line, into buf. */
static const char *wander_clause(const syncd_root *rt, char *buf, size_t n)
{
	int k = snprintf(buf, n, "wander %.3g ppb/sqrt(s) measured over %.0f s, spans of %.0f s; curvature ",
			 sqrt(rt->cont_q2 * 1e9) * 1e9, (double)rt->cont_hist_ns * 1e-9, (double)rt->cont_tau_ns * 1e-9);
	if (k < 0 || (size_t)k >= n)
		return buf;
	if (rt->cont_jerk_tau_ns)
		snprintf(buf + k, n - (size_t)k, "%.3g ppb/s^2 over span triples of %.0f s", sqrt(rt->cont_jerk2) * 1e27,
			 (double)rt->cont_jerk_tau_ns * 1e-9);
	else
		snprintf(buf + k, n - (size_t)k, "not measured");
	return buf;
}

void syncd_root_take(syncd_root *rt, int64_t now_ns)
{
	char clause[160];
	rtcpu_sample r = rtcpu_sample_take(rt->rtcpu_tries);
	const syncd_continuation *c = &rt->cont;
	rt->node = rt->self;
	rt->have_global = TRUE;
	if (c->valid && r.cpu_ns - c->cpu0_ns <= SYNCD_ROOT_CONTINUATION_MAX_AGE_NS && r.cpu_ns >= c->cpu0_ns) {
		/* Continue the timescale: the definition is the line itself. */
		syncd_timescale_start(rt->ts, rt->self, c->cpu0_ns, c->global0_ns, c->slope);
		rt->continued = TRUE;
		rt->continued_from = c->via_root;
		rt->step_avoided_ns = (double)(r.realtime_ns - syncd_continuation_at(c, r.cpu_ns));
		rt->cont_se_ns = syncd_continuation_se(c, r.cpu_ns);
		rt->cont_age_s = (double)(r.cpu_ns - c->cpu0_ns) * 1e-9;
		rt->cont_x0_ns = c->cpu0_ns;
		rt->cont_rate_var = c->rate_var;
		rt->cont_q2 = syncd_continuity_q2(&rt->hist, &rt->cont_hist_ns, &rt->cont_tau_ns);
		rt->cont_tau_max_ns = syncd_continuity_tau_max(&rt->hist);
		rt->cont_jerk2 = syncd_continuity_jerk2(&rt->hist, &rt->cont_jerk_tau_ns);
		g_message("global time: root node%u, continuing node%u's timescale (our conversion to it %.1f s before, "
			  "s.e. %.0f ns at the hand-over, rate %+.3f ppm); defining it afresh from realtime would have stepped it %+.6f s; "
			  "drift from it stated %.1f us after 5 min (%s)",
			  rt->node, c->via_root, rt->cont_age_s, rt->cont_se_ns, (c->slope - 1) * 1e6, rt->step_avoided_ns * 1e-9,
			  sqrt(syncd_continuity_var(rt->cont_se_ns, rt->cont_rate_var, rt->cont_q2, (double)rt->cont_tau_max_ns,
						    rt->cont_jerk2, 300e9)) *
				  1e-3,
			  wander_clause(rt, clause, sizeof clause));
	} else {
		/* A disciplined realtime clock: global starts at UTC's rate. */
		double slope = rt->have_utc_read && rt->utc.synced && rt->have_rtfit ? rt->rtfit.slope : 1.0;
		syncd_timescale_start(rt->ts, rt->self, r.cpu_ns, r.realtime_ns, slope);
		rt->continued = FALSE;
		g_message("global time: root node%u, UTC offset taken at cpu %" G_GINT64_FORMAT, rt->node, r.cpu_ns);
	}
	rt->taken_ns = r.cpu_ns;
	rt->steer = syncd_steer_start(r.cpu_ns);
	rt->steered = FALSE;
	rt->cont.valid = 0;                /* a later hand-over needs a fresh one */
	syncd_continuity_reset(&rt->hist); /* and a fresh history of the line it follows */
	syncd_notify_call(&rt->on_change, SYNCD_CHANGED_AT_ONCE);
}

gboolean syncd_root_drift(const syncd_root *rt, int64_t now_ns, double *se_ns, uint32_t *of)
{
	if (!rt->continued || rt->node != rt->self)
		return FALSE;
	*se_ns = sqrt(syncd_continuity_var(rt->cont_se_ns, rt->cont_rate_var, rt->cont_q2, (double)rt->cont_tau_max_ns,
					   rt->cont_jerk2, (double)(now_ns - rt->cont_x0_ns)));
	*of = rt->continued_from;
	return TRUE;
}

gboolean syncd_root_continued(const syncd_root *rt, double *step_ns, double *se_ns)
{
	if (!rt->continued || rt->node != rt->self)
		return FALSE;
	*step_ns = rt->step_avoided_ns;
	*se_ns = rt->cont_se_ns;
	return TRUE;
}

void syncd_root_follow(syncd_root *rt, uint32_t chosen, gboolean remote_global_known, int64_t now_ns)
{
	if (chosen == rt->self && !(rt->node == rt->self && rt->have_global)) {
		gboolean first = rt->node == rt->self && !rt->switches; /* after listening: no switch */
		if (!first)
			g_message("global time: node%u is the root now (was node%u)", rt->self, rt->node);
		syncd_root_take(rt, now_ns);
		if (!first) {
			rt->switches++;
			rt->since_ns = now_ns;
		}
		syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
	} else if (chosen != rt->self && chosen != rt->node) {
		g_message("global time: root node%u (was node%u)", chosen, rt->node);
		/* A switch while the last one's step is still unmeasured (the
		 * rule passing over a node that does not define global) keeps
		 * the line from before the first. */
		if (!rt->step_pending || rt->have_global) {
			rt->step_pending = line_before(rt, now_ns, &rt->before);
			rt->before_drift = syncd_root_drift(rt, now_ns, &rt->before_drift_se_ns, &rt->before_drift_of);
		}
		rt->switched_ns = now_ns;
		rt->have_joined = FALSE;
		rt->node = chosen;
		rt->switches++;
		rt->since_ns = now_ns;
		syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
	}
	if (chosen != rt->self) {
		/* Global is known once the root's definition has reached us. */
		if (remote_global_known != rt->have_global)
			syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
		rt->have_global = remote_global_known;
	}
}

guint syncd_root_switches(const syncd_root *rt)
{
	return rt->switches;
}

int64_t syncd_root_since(const syncd_root *rt)
{
	return rt->since_ns;
}

void syncd_root_describe(const syncd_root *rt, int64_t now_ns, GString *out)
{
	g_string_append_printf(out, "root: node%u%s switches=%u", rt->node,
			       rt->have_global ? "" : " (global not known yet)", rt->switches);
	if (rt->switches)
		g_string_append_printf(out, " last_switch=%.3fs ago", (double)(now_ns - rt->since_ns) * 1e-9);
	g_string_append_printf(out, " rule=%s\n",
			       rt->preferred >= 0 ? "configured root while alive, else lowest live node"
						  : "lowest live node");
	double drift;
	uint32_t of;
	char clause[160];
	if (syncd_root_drift(rt, now_ns, &drift, &of))
		g_string_append_printf(out,
				       "continued: node%u's timescale, from our conversion to it %.1f s before the "
				       "hand-over (s.e. %.0f ns at the hand-over, rate %+.3f ppm); step avoided %+.6f s; "
				       "drift from it now %.3f us (s.e.; %s)\n",
				       of, rt->cont_age_s, rt->cont_se_ns, (syncd_timescale_current(rt->ts)->slope - 1) * 1e6,
				       rt->step_avoided_ns * 1e-9, drift * 1e-3, wander_clause(rt, clause, sizeof clause));
	if (rt->have_joined && rt->node != rt->self) {
		g_string_append_printf(out,
				       "joined: node%u's timescale (was node%u's): global here stepped %+.3f us (s.e. "
				       "%.3f us) at the switch, measured %.1f s after it",
				       rt->joined_to, rt->joined_from, rt->joined_step_ns * 1e-3, rt->joined_se_ns * 1e-3,
				       rt->joined_after_s);
		if (rt->before_drift)
			g_string_append_printf(out, "; stated drift of our continuation of node%u's then %.3f us",
					       rt->before_drift_of, rt->before_drift_se_ns * 1e-3);
		g_string_append_c(out, '\n');
	} else if (rt->step_pending && rt->node != rt->self)
		g_string_append_printf(out, "joined: node%u's timescale (was node%u's): step not measured yet\n", rt->node,
				       rt->before.via_root);
}

void syncd_root_set_utc(syncd_root *rt, const sync_utc *u)
{
	rt->utc = *u;
	rt->have_utc_read = TRUE;
}

void syncd_root_set_realtime_fit(syncd_root *rt, const sync_conv *fit)
{
	rt->rtfit = *fit;
	rt->have_rtfit = TRUE;
}

gboolean syncd_root_utc(const syncd_root *rt, double *est_error_ns)
{
	if (!rt->have_utc_read || !rt->utc.synced)
		return FALSE;
	*est_error_ns = rt->utc.est_error_ns;
	return TRUE;
}

int syncd_root_steer(syncd_root *rt, const sync_conv *utc, const syncd_steer_params *p, int64_t now_ns)
{
	if (rt->node != rt->self || !rt->have_global || !syncd_timescale_current(rt->ts))
		return 0;
	if (!utc) {
		rt->steered = FALSE;
		return 0;
	}
	syncd_steer_result sr;
	int rc = syncd_steer_step(rt->ts, &rt->steer, utc, p, now_ns, &sr);
	if (rc <= 0)
		return rc;
	rt->steered = TRUE;
	rt->utc_offset_ns = sr.offset_ns;
	rt->utc_offset_se_ns = sr.offset_se_ns;
	rt->utc_rate_ppm = (sr.f - 1.0) * 1e6;
	rt->steer_ppm = (sr.slope / sr.f - 1.0) * 1e6;
	rt->steer_count++;
	syncd_notify_call(&rt->on_change, SYNCD_CHANGED);
	return 1;
}

void syncd_root_note_definition(syncd_root *rt, const sync_conv *def)
{
	if (rt->node == rt->self || !def)
		return;
	syncd_timescale_note(rt->ts, rt->node, def);
}

const syncd_timescale *syncd_root_timescale(const syncd_root *rt)
{
	return rt->ts;
}

void syncd_root_describe_utc(const syncd_root *rt, GString *out)
{
	if (rt->node != rt->self) {
		g_string_append_printf(out, "timescale: node%u's (%zu segment%s kept here)\n", rt->node,
				       syncd_timescale_count(rt->ts), syncd_timescale_count(rt->ts) == 1 ? "" : "s");
		return;
	}
	if (!rt->have_global)
		return;
	if (rt->steered)
		g_string_append_printf(out,
				       "timescale: steered to UTC (%s, stated error %.3f us): global-utc %+.3f us +- %.3f us, "
				       "utc rate vs cpu %+.3f ppm, correction %+.4f ppm, %u steps, %zu segments kept\n",
				       rt->utc.source, rt->utc.est_error_ns * 1e-3, rt->utc_offset_ns * 1e-3,
				       rt->utc_offset_se_ns * 1e-3, rt->utc_rate_ppm, rt->steer_ppm, rt->steer_count,
				       syncd_timescale_count(rt->ts));
	else
		g_string_append_printf(out, "timescale: free-running (not steered to UTC: %s)\n",
				       rt->have_utc_read && rt->utc.synced ? "no realtime fit yet"
				       : rt->have_utc_read && rt->utc.why  ? rt->utc.why
									   : "steering is off");
}
