/* truth.h — chorus-sim's ground truth: read every virtual node's ticker
 * (sync/ticker of node N under CHORUS_RUN/sim/nodeN), convert through
 * libsync's graph as node N's clients would, and compare with the clocks
 * the simulator defines (scenario cpu skew/offset applied to host
 * CLOCK_MONOTONIC_RAW, exactly as libsync/now.h does in each node).
 *
 * Measured at each sample, for every node i (converting with i's ticker):
 *   cpu:    node i cpu -> node j cpu, every j != i;
 *   global: node i cpu -> global; the truth is the root's cpu through the
 *           root's own exact definition (root cpu -> global), so the error
 *           is that of reaching the root's cpu.  Hops exclude the exact edge.
 *   audio:  node i audio0 -> node j audio0 (csim_truth_set_audio): the
 *           world frame of audiod's frame 0 is not published, so it is
 *           found by fetching 256 past frames of audio/0/data (audioget)
 *           and matching them bit for bit against the world model's
 *           deterministic synthesis (sim/world.h, noise included) near
 *           the frame expected from the start time; errors in ns of node
 *           j's sound-card time (frames / rate).
 * Each measurement keeps the error, the standard error libsync claimed and
 * the path length.
 */
#ifndef CHORUS_SIM_TRUTH_H
#define CHORUS_SIM_TRUTH_H

#include <glib.h>
#include <stdint.h>

#include "sim/scenario.h"

typedef enum { CSIM_CPU = 0,
	       CSIM_GLOBAL = 1,
	       CSIM_AUDIO = 2,
	       CSIM_UTC = 3, /* a node's cpu -> utc against the host's realtime clock (true UTC here) */
	       CSIM_N_KINDS } csim_kind;

typedef struct {
	double t_s;   /* s since the truth object was made */
	int from, to; /* nodes (to = root for global) */
	csim_kind kind;
	unsigned hops;   /* edges followed (global: excluding the exact root edge) */
	double err_ns;   /* converted minus true, ns */
	double sd_ns;    /* libsync's standard error, ns */
	double bound_ns; /* one-hop cpu: the least-squares bound for that fit (scenario
			    * receive jitter of both nodes, the fit's n and spread); else NAN */
	double dof;      /* degrees of freedom of sd_ns (libsync's graph result) */
	sim_phase phase; /* the later of the two nodes' outage phases at the time (sim/outage.h) */
	uint32_t flags;  /* libsync's SYNC_GRAPH_* of the conversion (bridged, extrapolated) */
	int viewer;      /* the node whose graph converted */
	char path[256];  /* beyond 5 s.e., or a past one over 2+ hops: the clocks it went through, and the fits ("" else) */
} csim_meas;

/* Whether m lies beyond k of its standard errors by the t-quantile rule
 * (libsync/conv.h sync_tail_k): |err| > sync_tail_k(dof, k) * sd, the
 * error a fit of dof degrees of freedom makes as rarely as a Gaussian one
 * beyond k s.e.  Pure. */
gboolean csim_meas_beyond(const csim_meas *m, double k);

typedef struct csim_truth csim_truth;

/* A change of the root the tickers name, seen between two samples. */
typedef struct {
	double t_s;     /* s since the truth object was made (the first sample after) */
	int from, to;   /* old and new root */
	double step_ns; /* the new root's global minus the old root's timescale extended (its
			 * definition on its simulated cpu clock), at that sample */
} csim_handover;

/* A step of one node's own global timescale: the root it follows changed
 * (its half of a partition joined the other's timescale, or a hand-over),
 * and its global moved by step_ns against its line before, extended. */
typedef struct {
	double t_s;      /* s since the truth object was made */
	int node;        /* the node */
	int from, to;    /* the roots it followed before and after */
	double step_ns;  /* its global after minus its line before, extended, at that sample */
	double se_ns;    /* the two conversions' stated s.e. combined (the line's at its last sample) */
	double drift_ns; /* the drift the old root stated for its continued timescale at its last
			  * sample as root (`continued: ... drift from it now` on its sync/rbs;
			  * syncd/continuity.h), 0 when it stated none (it defined global itself) */
} csim_node_step;

/* A measurer for the nodes of sc whose devices are under run_dir; epoch_ns
 * is the world epoch (host raw ns) the cpu clocks' wander starts at. */
csim_truth *csim_truth_new(const sim_scenario *sc, const char *run_dir, int64_t epoch_ns);

void csim_truth_free(csim_truth *t);

/* Global - UTC at one sample: the named root's definition of global at the
 * host time minus true UTC (the host's realtime clock), and what the root
 * states of it through its global -> utc conversion then, with its
 * standard error (NAN: it states none, global runs free). */
typedef struct {
	double t_s;        /* s since the truth object was made */
	int root;          /* the root whose global it is */
	double diff_ns;    /* global - UTC, ns */
	double claimed_ns; /* global - UTC as the root states it (global -> utc), ns, or NAN */
	double sd_ns;      /* the root's stated s.e. of that, ns, or NAN */
} csim_gutc;

/* Every global - UTC sample kept (GArray of csim_gutc). */
const GArray *csim_truth_gutc(const csim_truth *t);

/* Measure audio0 too: world epoch (host raw ns), audiod's rate (Hz) and
 * where audioget is.  Returns 0, or -ENOMEM (the world model could not be
 * built; *why). */
int csim_truth_set_audio(csim_truth *t, int64_t epoch_ns, unsigned rate_hz, const char *bin_dir, const char **why);

/* Bound each sample's work for large fields: read the tickers of `vias`
 * nodes only (the next ones in turn, so every node's comes round) and
 * measure each of them to `targets` of the nodes in its radio range (in
 * turn) and to global; audio is not measured then.  vias = 0 (the
 * default): every ticker, every pair. */
void csim_truth_set_budget(csim_truth *t, unsigned vias, unsigned targets);

/* Within the budget, of the kept samples: how many conversions were
 * attempted (*tried) and, returned, how many of them could not be made (a
 * ticker not read, no path, no global root named). */
guint64 csim_truth_budget_failed(const csim_truth *t, guint64 *tried);

/* Skip nodes that are down (their tickers are not read). */
void csim_truth_set_down(csim_truth *t, int node, gboolean down);

/* Node N's audiod was restarted: its frame numbering is found again from
 * the samples (no audio0 conversion of the node is judged meanwhile); a
 * numbering that differs from the one before the restart is counted. */
void csim_truth_audio_restarted(csim_truth *t, int node);

/* How many of node N's audiod restarts changed its numbering. */
int csim_truth_renumbered(const csim_truth *t, int node);

/* Read every ticker and measure every conversion now.  With `keep` the
 * measurements are recorded (otherwise only returned through `last`).
 * Returns the number of conversions that succeeded. */
int csim_truth_sample(csim_truth *t, gboolean keep);

/* The hand-overs seen (GArray of csim_handover). */
const GArray *csim_truth_handovers(const csim_truth *t);

/* The steps of the nodes' own timescales seen (GArray of csim_node_step). */
const GArray *csim_truth_node_steps(const csim_truth *t);

/* Measurements of the last sample (kept or not). */
const GArray *csim_truth_last(const csim_truth *t);

/* All kept measurements (GArray of csim_meas). */
const GArray *csim_truth_all(const csim_truth *t);

/* Kept measurements farther than k standard errors from the truth
 * (csim_meas_beyond: the t-quantile rule for young fits). */
guint csim_truth_outliers(const csim_truth *t, double k);

/* Append to out a line for each of the first max kept measurements
 * beyond k standard errors (time, kind, nodes, hops, error, stated s.e.
 * and dof, outage phase, libsync's bridged/extrapolated flags), and how
 * many more there were: what a failed run needs to be diagnosed from its
 * log alone. */
void csim_truth_list_outliers(const csim_truth *t, double k, guint max, GString *out);

/* The name of a kind as the table and samples.csv print it ("cpu",
 * "global", "audio0", "utc"). */
const char *csim_kind_name(csim_kind k);

/* One conversion now with node `via`'s ticker, from node a's cpu to node b's
 * cpu (b < 0: global).  Returns 0 with the measurement in *m (error,
 * standard error, its degrees of freedom, hops), or a negative errno with
 * the reason in why. */
int csim_truth_convert(csim_truth *t, int via, int a, int b, csim_meas *m, char *why, size_t len);

/* The same for a past time: node a's cpu at host raw time h (ns),
 * converted now with node via's ticker (its history: a time inside an
 * outage converts across it, m->flags has SYNC_GRAPH_BRIDGED); the truth
 * at h, for global through the root via names now.  Phase "past". */
int csim_truth_convert_at(csim_truth *t, int via, int a, int b, int64_t h, csim_meas *m, char *why, size_t len);

/* audiod's frame number on node `node`'s audio0 of the first frame at or
 * after world time w_s (s since the epoch).  Needs csim_truth_set_audio and
 * a sample that found the node's numbering.  0, or -EAGAIN (not found yet)
 * / -ENOENT with why[len]. */
int csim_truth_frame_at(const csim_truth *t, int node, double w_s, int64_t *frame, char *why, size_t len);

/* The true global time (ns; the fraction in *frac_ns) at host raw time h
 * in root node `root`'s timescale: the root's cpu clock then and its own
 * exact definition of global, from its ticker read now (so the root must
 * be running).  0, or -EAGAIN / -ENOENT with why[len]. */
int csim_truth_global_at(csim_truth *t, int root, int64_t h, int64_t *global_ns, double *frac_ns, char *why, size_t len);

/* The same for audiod's frame `frame` on node `node`'s audio0 (its world
 * time through the found numbering). */
int csim_truth_global_of_frame(csim_truth *t, int node, int64_t frame, int root, int64_t *global_ns, double *frac_ns,
			       char *why, size_t len);

/* Per (kind, hops): n, RMS, p95, max |error| and mean claimed sd, in µs,
 * the RMS of error / claimed sd (rms_z, about 1 when the sd is honest) and
 * the count beyond 5 sd, as a table appended to out; also written as CSV
 * to csv_path (NULL: none).  When the scenario has outages each row is
 * split by phase (before, during, after a node's outage; a conversion
 * between two nodes takes the later phase of the two).  Returns 0 or
 * -errno from writing the CSV.  Each hand-over of the root follows as a
 * line with its step of global. */
int csim_truth_report(const csim_truth *t, GString *out, const char *csv_path);

/* Every kept measurement as CSV (t_s,kind,from,to,hops,err_ns,sd_ns,bound_ns,dof,phase)
 * to path.  Returns 0 or -EIO. */
int csim_truth_write_samples(const csim_truth *t, const char *path);

/* RMS error (ns) of kept measurements of `kind` with `hops` (0 = any
 * hops); *n gets the count.  Returns NAN when there are none. */
double csim_truth_rms(const csim_truth *t, csim_kind kind, unsigned hops, size_t *n);

/* RMS of the claimed standard errors likewise. */
double csim_truth_sd_rms(const csim_truth *t, csim_kind kind, unsigned hops);

/* RMS of the least-squares bounds of kept one-hop cpu measurements (NAN if none). */
double csim_truth_bound_rms(const csim_truth *t);

#endif
