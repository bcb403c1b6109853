/* radio.c — the simulated radio as syncd's receive filter (syncd/rxfilter.h).
 *
 * chorus-sim installs this object in every simulated syncd (CHORUS_RX_FILTER
 * = this .so, CHORUS_RX_FILTER_ARG = the scenario file), so the daemon
 * itself knows nothing of the world.  On a shared loopback every receiver
 * would get the same kernel timestamp and hear every node; this applies the
 * scenario's radio instead: packets from nodes farther than [world]
 * radio_range_m are dropped, any packet is lost with probability
 * radio_loss, and each receive time gets Gaussian noise with the receiving
 * node's radio_jitter_ns; a node's radio_delay_from (with radio_delay_us
 * and radio_delay_after_s) receives one sender's packets late, a delay
 * attack on that link.  With CHORUS_SIM_NETNS=1 (chorus-sim --netns: each
 * node on its own network path, whose timestamps differ for real) only range
 * and loss are simulated.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libsync/now.h"
#include "sim/scenario.h"
#include "syncd/rxfilter.h"

typedef struct {
	sim_scenario *sc;
	const sim_node_cfg *self;
	uint32_t self_id;
	double range_m, loss;
	double jitter_ns; /* sd, 0 when the path is real (netns) */
	int64_t epoch_ns; /* host raw ns of the world's time 0 (CHORUS_SIM_EPOCH_NS) */
	gboolean has_epoch;
	GRand *rng;
	guint64 dropped_range, dropped_loss, dropped_outage;
	guint64 cut_off; /* reachable() said no */
	/* Radio cuts made while the world runs (chorus-sim --chaos-radio):
	 * lines "NODE T0 T1" (world s) in CHORUS_SIM_RADIO_CUTS, re-read when
	 * the file changes (looked at every CUTS_CHECK_US at most). */
	char *cuts_path;
	GArray *cuts; /* cut */
	gint64 cuts_checked_us;
	struct stat cuts_st;
} radio;

typedef struct {
	uint32_t node;
	double t0, t1;
} cut;

#define CUTS_CHECK_US 100000

/* Re-read the cut file when it changed (it is replaced whole, by rename). */
static void load_cuts(radio *r)
{
	gint64 now = g_get_monotonic_time();
	if (!r->cuts_path || now - r->cuts_checked_us < CUTS_CHECK_US)
		return;
	r->cuts_checked_us = now;
	struct stat st;
	if (stat(r->cuts_path, &st) < 0)
		return;
	if (st.st_ino == r->cuts_st.st_ino && st.st_mtim.tv_sec == r->cuts_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == r->cuts_st.st_mtim.tv_nsec && st.st_size == r->cuts_st.st_size)
		return;
	r->cuts_st = st;
	char *text = NULL;
	if (!g_file_get_contents(r->cuts_path, &text, NULL, NULL))
		return;
	g_array_set_size(r->cuts, 0);
	gchar **lines = g_strsplit(text, "\n", -1);
	for (gchar **l = lines; *l; l++) {
		unsigned node;
		double t0, t1;
		if (sscanf(*l, "%u %lf %lf", &node, &t0, &t1) == 3 && t1 > t0) {
			cut c = {node, t0, t1};
			g_array_append_val(r->cuts, c);
		}
	}
	g_strfreev(lines);
	g_free(text);
}

/* TRUE when a cut made while the world runs holds `node` at world time t. */
static gboolean cut_now(radio *r, uint32_t node, double t)
{
	load_cuts(r);
	for (guint i = 0; r->cuts && i < r->cuts->len; i++) {
		const cut *c = &g_array_index(r->cuts, cut, i);
		if (c->node == node && t >= c->t0 && t < c->t1)
			return TRUE;
	}
	return FALSE;
}

static void *radio_open(uint32_t self, const char *arg, char **why)
{
	if (!arg || !*arg) {
		*why = strdup("the simulated radio needs the scenario file as CHORUS_RX_FILTER_ARG");
		return NULL;
	}
	GError *e = NULL;
	sim_scenario *sc = sim_scenario_load(arg, &e);
	if (!sc) {
		*why = strdup(e->message);
		g_error_free(e);
		return NULL;
	}
	const sim_node_cfg *n = sim_scenario_find_node(sc, (int)self);
	if (!n) {
		char *m = g_strdup_printf("%s: no [node.%u] for this node's radio", arg, self);
		*why = strdup(m);
		g_free(m);
		sim_scenario_free(sc);
		return NULL;
	}
	radio *r = g_new0(radio, 1);
	r->sc = sc;
	r->self = n;
	r->self_id = self;
	r->range_m = sim_scenario_world(sc)->radio_range_m;
	r->loss = sim_scenario_world(sc)->radio_loss;
	const char *ep = getenv("CHORUS_SIM_EPOCH_NS");
	char *end = NULL;
	r->epoch_ns = ep ? g_ascii_strtoll(ep, &end, 10) : 0;
	r->has_epoch = ep && *ep && end && !*end;
	if (!r->has_epoch && sim_scenario_n_outages(sc)) {
		*why = strdup("the scenario has outages but CHORUS_SIM_EPOCH_NS (the world's start, host raw ns) is not set");
		sim_scenario_free(sc);
		g_free(r);
		return NULL;
	}
	const char *cuts = getenv("CHORUS_SIM_RADIO_CUTS");
	if (cuts && *cuts && r->has_epoch) {
		r->cuts_path = g_strdup(cuts);
		r->cuts = g_array_new(FALSE, FALSE, sizeof(cut));
	}
	const char *netns = getenv("CHORUS_SIM_NETNS");
	r->jitter_ns = netns && *netns && *netns != '0' ? 0.0 : n->radio_jitter_ns;
	/* Independent draws per process; the scenario seed keeps runs comparable. */
	r->rng = g_rand_new_with_seed((guint32)(sim_scenario_world(sc)->seed * 2654435761u) ^ self ^ (guint32)getpid());
	return r;
}

/* World time (s since the epoch) of our cpu time cpu_ns. */
static double world_s(const radio *r, int64_t cpu_ns)
{
	return (double)(sync_node_to_host_cpu(cpu_ns) - r->epoch_ns) * 1e-9;
}

/* TRUE when a packet from `sender` received at our cpu time rx_ns reaches
 * us: neither of us cut off, in range and not lost. */
static gboolean reaches(radio *r, uint32_t sender, int64_t rx_ns)
{
	if (sender == r->self_id)
		return TRUE; /* our own packet looped back */
	const sim_node_cfg *s = sim_scenario_find_node(r->sc, (int)sender);
	if (!s) {
		r->dropped_range++;
		return FALSE;
	}
	if (r->has_epoch) {
		double t = world_s(r, rx_ns);
		if (sim_node_cut_off(r->self, t) || sim_node_cut_off(s, t) || sim_nodes_split(r->self, s, t) ||
		    cut_now(r, r->self_id, t) || cut_now(r, sender, t)) {
			r->dropped_outage++;
			return FALSE;
		}
	}
	double d2 = 0;
	for (int i = 0; i < 3; i++)
		d2 += (s->pos_m[i] - r->self->pos_m[i]) * (s->pos_m[i] - r->self->pos_m[i]);
	if (sqrt(d2) > r->range_m) {
		r->dropped_range++;
		return FALSE;
	}
	if (r->loss > 0 && g_rand_double(r->rng) < r->loss) {
		r->dropped_loss++;
		return FALSE;
	}
	return TRUE;
}

/* One Gaussian draw with s.d. jitter_ns (Box-Muller on GRand), ns. */
static int64_t jitter(radio *r)
{
	if (r->jitter_ns <= 0)
		return 0;
	double u1 = g_rand_double(r->rng), u2 = g_rand_double(r->rng);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return (int64_t)llround(r->jitter_ns * sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2));
}

static int radio_deliver(void *h, uint32_t sender, int64_t *rx_ns)
{
	radio *r = h;
	if (!reaches(r, sender, *rx_ns))
		return 0;
	*rx_ns += jitter(r);
	/* [node.N] radio_delay_from: a delay attack on the link from that
	 * sender (genuine packets passed on late). */
	if (r->self->radio_delay_from > 0 && sender == (uint32_t)r->self->radio_delay_from &&
	    (!r->has_epoch || world_s(r, *rx_ns) >= r->self->radio_delay_after_s))
		*rx_ns += (int64_t)llround(r->self->radio_delay_ns);
	return 1;
}

static int radio_reachable(void *h, uint32_t peer, int64_t now_ns)
{
	radio *r = h;
	if (!r->has_epoch || peer == r->self_id)
		return 1;
	const sim_node_cfg *s = sim_scenario_find_node(r->sc, (int)peer);
	double t = world_s(r, now_ns);
	if (sim_node_cut_off(r->self, t) || (s && (sim_node_cut_off(s, t) || sim_nodes_split(r->self, s, t))) ||
	    cut_now(r, r->self_id, t) || cut_now(r, peer, t)) {
		r->cut_off++;
		return 0;
	}
	return 1;
}

static void radio_describe(void *h, char *buf, size_t len)
{
	const radio *r = h;
	g_snprintf(buf, len,
		   "simulated radio: scenario %s range=%.1fm loss=%.3f jitter=%.0fns dropped: %" G_GUINT64_FORMAT
		   " out of range, %" G_GUINT64_FORMAT " lost, %" G_GUINT64_FORMAT " in outages; %" G_GUINT64_FORMAT " unreachable",
		   sim_scenario_name(r->sc), r->range_m, r->loss, r->jitter_ns, r->dropped_range, r->dropped_loss,
		   r->dropped_outage, r->cut_off);
}

static void radio_close(void *h)
{
	radio *r = h;
	if (!r)
		return;
	g_rand_free(r->rng);
	sim_scenario_free(r->sc);
	g_free(r->cuts_path);
	if (r->cuts)
		g_array_free(r->cuts, TRUE);
	g_free(r);
}

/* Fields this large have the kernel drop what is out of range (rxfilter.h
 * syncd_rxfilter_senders): below it every packet reaches the radio, which
 * counts what it drops (sync/rbs) as the tests expect. */
#define KERNEL_FILTER_NODES 64

/* The optional hook: the nodes in range (and we ourselves), for fields of
 * more than KERNEL_FILTER_NODES; -1 (any) for smaller ones. */
int syncd_rxfilter_senders(void *h, uint32_t *out, size_t max);
int syncd_rxfilter_senders(void *h, uint32_t *out, size_t max)
{
	radio *r = h;
	size_t n = sim_scenario_n_nodes(r->sc), k = 0;
	if (n <= KERNEL_FILTER_NODES)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const sim_node_cfg *s = sim_scenario_node(r->sc, i);
		double d2 = 0;
		for (int j = 0; j < 3; j++)
			d2 += (s->pos_m[j] - r->self->pos_m[j]) * (s->pos_m[j] - r->self->pos_m[j]);
		if ((uint32_t)s->id == r->self_id || sqrt(d2) <= r->range_m) {
			if (k < max)
				out[k] = (uint32_t)s->id;
			k++;
		}
	}
	return (int)k;
}

const syncd_rxfilter_ops syncd_rxfilter = {
	.abi = SYNCD_RXFILTER_ABI,
	.open = radio_open,
	.deliver = radio_deliver,
	.describe = radio_describe,
	.close = radio_close,
	.reachable = radio_reachable,
};
