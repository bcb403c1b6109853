/* rbs_paths.h — do one pair's beacon senders agree? (issue 15: a delay
 * attack on a link).
 *
 * No MAC stops an attacker who receives a packet and passes it on late (or
 * delays it in a relay): the packet is genuine.  In RBS such a delay on
 * the link from one beacon sender S to one receiver R makes R's receptions
 * of S's beacons late, so every pair fit at R — and at R's peers, from R's
 * reports — takes observations shifted by the delay from S's beacons and
 * not from the other senders'.  The other senders are the "other paths":
 * for each pair this keeps, per third-party sender, an exponentially
 * weighted mean and variance of the residuals of its observations against
 * the pair's fit (alpha = 1/RBS_PATHS_MEMORY per observation), and flags a
 * sender whose mean differs from the other senders' pooled mean by more
 * than both RBS_PATHS_Z of its standard error and the configured
 * tolerance (a field's radio paths differ by their light time, 3.3 ns per
 * metre, and a receiver's timestamping by its own constant bias).
 *
 * What this cannot see, and no consistency check can: a delay on *every*
 * link into one node looks exactly like that node's clock being late, and
 * shifts it by the delay (docs/deployment.md, "What the key does not
 * stop").  A pair with one third-party sender has nothing to compare with.
 * Pure.
 */
#ifndef CHORUS_SYNCD_RBS_PATHS_H
#define CHORUS_SYNCD_RBS_PATHS_H

#include <glib.h>
#include <stdint.h>

/* Observations one sender's statistics remember (1/alpha), the fewest each
 * side of the comparison needs, and the z a disagreement must pass. */
#define RBS_PATHS_MEMORY 32.0
#define RBS_PATHS_MIN_OBS 16
#define RBS_PATHS_Z 6.0

typedef struct rbs_paths rbs_paths;

/* An empty record for one pair; `timeout_ns`: a sender silent this long is
 * left out of the comparison. */
rbs_paths *rbs_paths_new(int64_t timeout_ns);

/* Free (NULL is fine). */
void rbs_paths_free(rbs_paths *p);

/* One observation of the pair from `sender`'s beacon at now_ns, its
 * residual against the pair's fit (ns: the peer's reception minus the fit
 * at ours). */
void rbs_paths_add(rbs_paths *p, uint32_t sender, double residual_ns, int64_t now_ns);

typedef struct {
	gboolean flagged; /* a sender disagrees */
	uint32_t sender;  /* the one that disagrees most (flagged or not) */
	double offset_ns; /* its mean minus the others', ns */
	double z;         /* that over its standard error */
	guint senders;    /* senders compared (heard within the timeout, enough observations) */
} rbs_paths_verdict;

/* Compare the senders heard within the timeout before now_ns, each with
 * at least RBS_PATHS_MIN_OBS observations: the one whose mean differs most
 * (in z) from the pooled mean of the others, flagged when |z| >
 * RBS_PATHS_Z and |offset| > tolerance_ns.  senders < 2: nothing compared
 * (flagged FALSE).  Returns the verdict. */
rbs_paths_verdict rbs_paths_check(const rbs_paths *p, double tolerance_ns, int64_t now_ns);

#endif
