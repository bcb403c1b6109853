/* truth_priv.h — the truth object's insides, shared by truth.c and
 * timescale.c (the hand-overs and every node's timescale); not for users of
 * truth.h. */
#ifndef CHORUS_SIM_LAUNCH_TRUTH_PRIV_H
#define CHORUS_SIM_LAUNCH_TRUTH_PRIV_H

#include <glib.h>
#include <stdint.h>

#include "libsync/graph.h"
#include "libsync/now.h"
#include "sim/launch/truth.h"
#include "sim/world.h"

typedef struct {
	int id;
	sync_simclock cpu;
	double jitter_ns; /* scenario receive jitter, sd */
	gboolean down;
	GArray *ent;     /* last ticker's entries (sync_ticker_entry) */
	gboolean locked; /* f0 known */
	int64_t f0;      /* world frame of audiod's frame 0 */
	int lock_tries;
	gboolean relock; /* audiod restarted: f0 is found again, and compared */
	int64_t old_f0;
	int renumbered; /* restarts after which f0 differed */
	sync_graph *g;
	gboolean have;
	gboolean warned; /* its ticker's first failure was reported */
	uint32_t root;
	GArray *near; /* guint: indices of the nodes in its radio range */
	/* Its own global timescale as its ticker defines it (timescale.c):
	 * the root it follows and its line cpu -> global at the last sample. */
	gboolean ts_have;
	int ts_root;
	int64_t ts_x0, ts_y0;
	double ts_y0_f, ts_slope, ts_var;
	/* While it is a root that continued another's timescale: the drift
	 * it states from that one (ns, 0: none stated), at its last sample. */
	double drift_ns;
} tnode;

struct csim_truth {
	char *run_dir;
	const sim_scenario *sc;
	sim_world *world; /* NULL: audio not measured */
	int64_t epoch_ns;
	unsigned rate_hz;
	char *bin_dir;
	GArray *nodes; /* tnode */
	GArray *all, *last;
	int64_t t0_ns;
	/* The timescale of the root the tickers name: its definition on its
	 * cpu clock (global = y0 + slope (x - x0)), and the hand-overs seen. */
	int def_root; /* -1: none yet */
	int64_t def_x0;
	double def_y0_f, def_slope;
	int64_t def_y0;
	GArray *handovers;   /* csim_handover */
	GArray *node_steps;  /* csim_node_step */
	guint vias, targets; /* measuring budget per sample (0: every pair) */
	guint cursor;        /* next via, in node order */
	guint64 samples;
	guint64 budget_tried;  /* kept conversions attempted within the budget */
	guint64 budget_failed; /* of which none could be made (no ticker, no path, no global) */
	GArray *gutc;          /* csim_gutc, kept samples */
	/* Past times (past_truth.c): host times of kept samples taken while
	 * some node was inside an outage, converted again after it ended. */
	GArray *past_h; /* int64_t */
	guint past_cursor;
	guint64 past_tried, past_failed;
	guint64 past_reached; /* of the tried, converted only with the past reach (CSIM_PAST_REACH_S) */
	char past_why[240];   /* the last failure's reason */
};

/* Convert node a's cpu at host time h through node v's graph (its ticker
 * as last read) to node b's cpu, or to global when b is NULL (the truth
 * then through root's own exact definition, at h), the edges' ages taken
 * at host time hnow (h for a conversion of now).  0 with *m filled but
 * for its t_s and phase, or a negative errno with why[len].  truth.c. */
int csim_truth_measure_at(tnode *v, tnode *a, tnode *b, tnode *root, int64_t h, int64_t hnow, csim_meas *m, char *why,
			  size_t len);

/* The same with node a's conversion reaching reach_ns further into the
 * past than the graph's tolerance (sync_graph_convert_past; 0: the
 * tolerance alone).  truth.c. */
int csim_truth_measure_past(tnode *v, tnode *a, tnode *b, tnode *root, int64_t h, int64_t hnow, int64_t reach_ns,
			    csim_meas *m, char *why, size_t len);

/* The outage phase of a conversion between nodes a and b at host time h
 * (the worse of the two nodes' phases).  truth.c. */
sim_phase csim_truth_phase_of(const csim_truth *t, int a, int b, int64_t h);

/* After a full sample at host time h (tickers just read): note h when
 * some node is inside an outage, and convert one noted past time (in
 * turn) again for every pair of nodes that was cut off then and has been
 * out of its outage for CSIM_PAST_SETTLE_S now, with each node's graph,
 * as kind-phase "past" measurements (kept when keep).  Returns how many
 * succeeded.  past_truth.c. */
int csim_truth_past_sample(csim_truth *t, int64_t h, gboolean keep);

/* The report's line on those conversions: how many were tried and could
 * not be made (nothing when none was tried).  past_truth.c. */
void csim_truth_past_report(const csim_truth *t, GString *out);

/* Seconds after the end of a pair's outage before its past is converted
 * again: the fits after it have taken enough observations to be
 * published (syncd's MIN_PUBLISH at its beacon interval), and bridged. */
#define CSIM_PAST_SETTLE_S 30.0

/* How far before every fit a past time may be converted when the graph's
 * tolerance refuses it (a node cut off from its very start: collab's
 * retiming reaches as far, its queue_s): the default queue_s, an hour. */
#define CSIM_PAST_REACH_S 3600.0

/* After the tickers were read: each node in nodes[] (n of them; NULL:
 * every node) converts its cpu time to utc, against the host's realtime
 * clock, and the named root's global - UTC is noted.  Measurements go to
 * t->last and, when keep, t->all and t->gutc.  utc_truth.c. */
void csim_truth_utc_sample(csim_truth *t, tnode *const *nodes, guint n, gboolean keep);

/* The global - UTC lines of the report (nothing when never measured). */
void csim_truth_utc_report(const csim_truth *t, GString *out);

/* Node n's status device `dev` (e.g. "sync/rbs") read once into b
 * (NUL-terminated); 0 or a negative errno.  truth.c. */
int csim_truth_read_status(const csim_truth *t, const tnode *n, const char *dev, GByteArray *b);

/* The node with this id, or NULL. */
tnode *csim_truth_node(csim_truth *t, int id);

/* After the tickers were read at host time h: follow the root the tickers
 * name (hand-overs) and each node's own timescale (its steps when the root
 * it follows changes).  timescale.c. */
void csim_truth_track(csim_truth *t, int64_t h);

/* The clocks a conversion goes through, "cpu:1 > cpu:2 > global", into
 * buf (empty when the graph gives none), each hop with what the viewer's
 * ticker (ent) held for it: its current fit's data span, observations and
 * fractional wander, and how many history pieces ("[fit 64 s n=64 w=0.01
 * ppm, 3 pieces]"). */
void csim_truth_path(sync_graph *g, const GArray *ent, sync_clock_id from, sync_clock_id to, sync_tval x, int64_t now,
		     int64_t reach_ns, char *buf, size_t len);

#endif
