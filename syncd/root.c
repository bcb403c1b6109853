/* root.c — global time's root as this node sees it (see root.h). */
#include "syncd/root.h"

#include "syncd/rtcpu.h"

struct syncd_root {
	uint32_t self;     /* this node */
	int64_t preferred; /* preferred root node; -1: none */
	int rtcpu_tries;   /* sandwiches per realtime<->cpu sample */
	syncd_notify on_change;
	uint32_t node;           /* current global root node */
	gboolean have_global;    /* global <-> root cpu known */
	int64_t global_cpu0_ns;  /* root cpu time when the root was taken, ns */
	int64_t global_utc0;     /* global then: global = (cpu - cpu0) slope + utc0, ns */
	double global_slope;     /* 1 when defined from realtime; a continuation's slope */
	syncd_continuation cont; /* the latest conversion to the followed root's global */
	gboolean continued;      /* the definition continues cont.via_root's timescale */
	uint32_t continued_from;
	double step_avoided_ns, cont_se_ns, cont_age_s;
	guint switches;   /* times the root changed */
	int64_t since_ns; /* node cpu ns of the last root change */
};

syncd_root *syncd_root_new(uint32_t self, int64_t preferred, int rtcpu_tries, int64_t now_ns, syncd_notify on_change)
{
	syncd_root *rt = g_new0(syncd_root, 1);
	rt->self = self;
	rt->preferred = preferred;
	rt->rtcpu_tries = rtcpu_tries;
	rt->on_change = on_change;
	if (preferred < 0 || preferred == (int64_t)self)
		syncd_root_take(rt, now_ns);
	else
		rt->node = (uint32_t)preferred;
	return rt;
}

void syncd_root_free(syncd_root *rt)
{
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
	if (!rt->have_global || rt->node != rt->self)
		return FALSE;
	*out = (sync_ticker_entry){sync_clock_cpu(rt->node), sync_clock_global(),
				   sync_conv_fixed(rt->global_cpu0_ns, rt->global_utc0, rt->global_slope)};
	out->conv.updated_ns = rt->global_cpu0_ns;
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

void syncd_root_offer_continuation(syncd_root *rt, const syncd_continuation *c)
{
	if (c->valid && c->via_root != rt->self)
		rt->cont = *c;
}

void syncd_root_take(syncd_root *rt, int64_t now_ns)
{
	rtcpu_sample r = rtcpu_sample_take(rt->rtcpu_tries);
	const syncd_continuation *c = &rt->cont;
	rt->node = rt->self;
	rt->have_global = TRUE;
	if (c->valid && r.cpu_ns - c->cpu0_ns <= SYNCD_ROOT_CONTINUATION_MAX_AGE_NS && r.cpu_ns >= c->cpu0_ns) {
		/* Continue the timescale: the definition is the line itself. */
		rt->global_cpu0_ns = c->cpu0_ns;
		rt->global_utc0 = c->global0_ns;
		rt->global_slope = c->slope;
		rt->continued = TRUE;
		rt->continued_from = c->via_root;
		rt->step_avoided_ns = (double)(r.realtime_ns - syncd_continuation_at(c, r.cpu_ns));
		rt->cont_se_ns = syncd_continuation_se(c, r.cpu_ns);
		rt->cont_age_s = (double)(r.cpu_ns - c->cpu0_ns) * 1e-9;
		g_message("global time: root node%u, continuing node%u's timescale (our conversion to it %.1f s before, "
			  "s.e. %.0f ns at the hand-over, rate %+.3f ppm); defining it afresh from realtime would have stepped it %+.6f s",
			  rt->node, c->via_root, rt->cont_age_s, rt->cont_se_ns, (c->slope - 1) * 1e6, rt->step_avoided_ns * 1e-9);
	} else {
		rt->global_cpu0_ns = r.cpu_ns;
		rt->global_utc0 = r.realtime_ns;
		rt->global_slope = 1.0;
		rt->continued = FALSE;
		g_message("global time: root node%u, UTC offset taken at cpu %" G_GINT64_FORMAT, rt->node, r.cpu_ns);
	}
	rt->cont.valid = 0; /* a later hand-over needs a fresh one */
	syncd_notify_call(&rt->on_change, SYNCD_CHANGED_AT_ONCE);
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
	if (rt->continued && rt->node == rt->self)
		g_string_append_printf(out,
				       "continued: node%u's timescale, from our conversion to it %.1f s before the "
				       "hand-over (s.e. %.0f ns at the hand-over, rate %+.3f ppm); step avoided %+.6f s\n",
				       rt->continued_from, rt->cont_age_s, rt->cont_se_ns, (rt->global_slope - 1) * 1e6,
				       rt->step_avoided_ns * 1e-9);
}
