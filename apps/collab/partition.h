/* partition.h — two callers' detections told apart by where they fit
 * (pure; issue 12 item 5, "overlapping callers ... per-source candidate
 * sets").
 *
 * Two frogs of one species calling 50 ms apart are heard by every node
 * within the array's aperture (124 ms for bench/field's 30 m square), so
 * the grouper's windows hold both calls' detections, and a node's
 * detection joins the open group whose first onset is nearest — which
 * puts some nodes' first call in the second call's group (bench/field's
 * overlap row).  Both groups are then mixed; the onsets' gate refuses
 * them (no position fits), and both calls are lost.
 *
 * Given the two groups' detections (each node at most once per group),
 * the assignment that makes both groups fit one source each is found by
 * exhaustion: a node with a detection in each group contributes one to
 * each (2 ways), a node with one detection goes to either group (2 ways),
 * at most COLLAB_PARTITION_MAX detections.  A group's fit: the least
 * chi-square, over a 1-m grid of source positions on the plane z_m
 * covering box, of its onsets about the best emission time there (each
 * onset weighed by its s.e.); a group of three or fewer fits anything,
 * so only assignments that keep at least four in each are weighed, and
 * only when at least four nodes have a detection in each group.
 */
#ifndef CHORUS_COLLAB_PARTITION_H
#define CHORUS_COLLAB_PARTITION_H

#include <stdint.h>

#define COLLAB_PARTITION_MAX 16

typedef struct {
	uint32_t node;
	double pos_m[3]; /* its microphone, m */
	double t_s;      /* onset, s (any common origin) */
	double se_s;     /* its s.e., s (> 0) */
	int side;        /* in: its group now (0 or 1); out: its group in the best assignment */
} collab_part_obs;

/* The chi-square of obs' onsets (the members with side == which) about
 * one source on the plane z_m within box {x0, x1, y0, y1} (1-m grid) and
 * the best emission time; *n_out: members.  Pure. */
double collab_partition_chi2(const collab_part_obs *obs, int n, int which, double c_m_s, const double box[4], double z_m,
			     int *n_out);

/* When the groups as given (obs[].side) do not both fit one source each
 * (a group's chi-square beyond its 99.9 % point for m - 3 degrees of
 * freedom), the assignment of obs[0..n) to two groups whose groups both
 * fit, with the least sum of their chi-square (collab_partition_chi2),
 * written to obs[].side.  Returns 1 when one was found, 0 when the given
 * one stands (it fits, or nothing fits better), -1 when the groups cannot
 * be weighed (fewer than 8 or more than COLLAB_PARTITION_MAX detections, a
 * node twice in one group, fewer than four nodes in both, more than 2^9
 * assignments).  *chi2_before, *chi2_after (may be NULL): the sums.
 * Pure. */
int collab_partition_best(collab_part_obs *obs, int n, double c_m_s, const double box[4], double z_m,
			  double *chi2_before, double *chi2_after);

#endif
