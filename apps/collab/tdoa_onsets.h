/* tdoa_onsets.h — the detected onsets as a check on the clips' correlation,
 * and as the timing where the clips do not correlate (pure).
 *
 * detect states each onset with its whole error: the sound's leading edge
 * in the call's band where it is usable (apps/dsp/edge.h), every
 * alignment the template leaves open, the template's misfit.  The edge is
 * where the direct sound begins; in a reverberant room it is the one
 * timing the echoes cannot move (they all come later), while the
 * correlation of whole clips there is a sum over dozens of paths: GCC-PHAT
 * coherence of 0.01-0.06 in bench/field's room row, its peaks on
 * echo-against-direct lags 5-8 ms from the truth.
 *
 * So, first, a check: the correlation's arrivals against the onsets.  For
 * the used arrivals, e_j = a_j - (onset_j - onset_ref); their median is the
 * reference onset's own error, and an arrival whose e_j lies more than k
 * of its onset's stated errors from that median is one the onset denies.
 * One such arrival is a slipped onset (one node; detect's outlier); two or
 * more mean the correlation timed something other than the call's first
 * arrival (echoes, another caller), and the answer is refused.
 *
 * Second, the stand-in: the arrivals are the onsets themselves, each with
 * its stated error, solved as the correlation's would be (tdoa_solve.h:
 * the chi-square test, one rejection).  Centimetres where the edge is
 * sharp (the room's pulse trains: 0.1-0.2 m s.d.), metres where detect
 * states metres.
 */
#ifndef CHORUS_COLLAB_TDOA_ONSETS_H
#define CHORUS_COLLAB_TDOA_ONSETS_H

#include <stddef.h>

#include "apps/collab/tdoa.h"

/* The s.e. the onsets' check gives arrival idx[i] (i < m) in s[i], s:
 * hypot(its onset's stated error, the smallest of idx[0..m-1]'s,
 * floor_s).  Pure. */
void tdoa_onsets_check_se(const tdoa_input *in, const int *idx, int m, double floor_s, double *s);

/* How many of the used arrivals idx[0..m-1] of r (r->a_s relative to the
 * reference r->ref) lie more than k s.e. from the median offset between
 * arrivals and onsets, the s.e. hypot(onset_se, the smallest onset_se of
 * the used (the median's own), floor_s).  The floor is what an onset that
 * states only its Cramer-Rao bound (an exact template) leaves unsaid: a
 * half carrier cycle (0.28 ms at 1800 Hz) was the largest such
 * disagreement over bench/field's overlap row, where every answer was
 * right.  When any, why[len] names the first two nodes and by how much.
 * Pure. */
int tdoa_onsets_disagree(const tdoa_input *in, const tdoa_result *r, const int *idx, int m, double k, double floor_s,
			 char *why, size_t len);

/* The onsets' joint verdict on the same arrivals: with d_i the offsets'
 * departures from their median in the s.e. above, the chi-square of all
 * but the largest (one slipped onset allowed) on m - 2 degrees of freedom;
 * its upper tail probability (1 below 4 arrivals).  A correlation timed on
 * echoes can leave every onset 2-6 s.e. off and none beyond k
 * (bench/field's room: the 2.6 kHz train answered 2.8 m off, stated to
 * 8 cm, its onsets 1.9-4.4 ms off at four nodes, s.e. 0.8 ms): one node
 * beyond k is a slip, four at 2-6 s.e. are not.  Pure. */
#define TDOA_ONSETS_JOINT_Q 1e-6
double tdoa_onsets_joint_q(const tdoa_input *in, const tdoa_result *r, const int *idx, int m, double floor_s);

/* Solve from the onsets alone: every input an arrival at its onset
 * relative to in[out->ref]'s, with its stated error, the clip's start
 * conversion's and the survey term; out->ok, a_s, sigma_s, meas_sigma_s
 * and n_ok are filled, delay_se and coherence zeroed, idx[] gets every
 * input, out->loc the answer (tdoa_solve's return).  Pure. */
int tdoa_solve_onsets(const tdoa_input *in, int n, const tdoa_params *p, tdoa_result *out, int *idx);

#endif
