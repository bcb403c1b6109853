/* tdoa_pairs.h — a node's second microphone: the difference of the call's
 * arrival times at its two microphones, for the solve (pure).
 *
 * Two channels of one sound card share every frame: their difference holds
 * none of the clock conversions' error, and moving the node changes it only
 * through the direction to the source.  So it is a bearing from that node,
 * a residual with no unknown of its own (apps/dsp/locate.h dsp_pair): four
 * nodes' arrivals in the plane with the source's height unknown fit x, y,
 * the emission and the height exactly, and nothing tests them (`untested`,
 * tdoa_solve.c); each pair adds a degree of freedom that does.
 *
 * Measured by GCC (the group's band and weighting) between the node's two
 * channels over its own call only — from the node's detected onset less
 * TDOA_PAIR_PRE_S to its end plus as much, where a second caller's sound
 * in the longer clip would be the loudest — and over the lags the pair's
 * spacing allows at the slowest speed of sound (plus two samples); the
 * strongest peak there, whatever the position found says — and only where
 * no other peak within those lags (and four samples beyond) reaches
 * TDOA_PAIR_SECOND of it: a narrow-band call whose wavelength is shorter
 * than the spacing correlates a carrier cycle off as well (bench/field's
 * frogs: 20 cm pairs, 1.8 and 2.6 kHz carriers, 19 and 13 cm — every such
 * pair picked by its strongest peak alone put the answer's chi-square in
 * the hundreds to thousands).  Such a pair is no bearing: none.  Its variance:
 * the peak's (the estimator's sandwich variance), and a survey error of
 * pos_sd_m per axis moving the node: (pos_sd_m |u_a - u_b| / c)^2 with u
 * the unit vectors from the source (where the steered response put it)
 * to the microphones; and a heading of the offset known to
 * mic2_heading_sd_rad (the nodes file's mic1_sd_deg: a compass's survey of
 * a rigid array) turning it: (u_a . (z x (a - b)) / c)^2 times its
 * variance, up to (b / c)^2 sd^2 across the line of sight (2 degrees at
 * 20 cm: 20 us).
 */
#ifndef CHORUS_COLLAB_TDOA_PAIRS_H
#define CHORUS_COLLAB_TDOA_PAIRS_H

#include "apps/collab/tdoa.h"

#define TDOA_PAIR_PRE_S 0.010
#define TDOA_PAIR_SECOND 0.5

/* Fill out->pairs (out->n_pairs, out->pair_in) for the inputs with a
 * second channel (in[i].x2), the source near src_m.  Inputs whose pair
 * cannot be measured (too short, no peak) have none.  Returns the number
 * measured, or -ENOMEM. */
int tdoa_measure_pairs(const tdoa_input *in, int n, const tdoa_params *p, const double src_m[3], tdoa_result *out);

/* The pairs of out whose inputs are among idx[0..m-1], into pr (at most
 * DSP_LOC_MAX_PAIRS), each dt corrected by corr_s[k] of its pair k (NULL:
 * none).  Returns how many. */
int tdoa_pairs_of(const tdoa_result *out, const int *idx, int m, dsp_pair *pr, int *which);

#endif
