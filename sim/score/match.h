/* match.h — one-to-one assignment of observed times to true times, the
 * matching every score in sim/score rests on (pure: numbers in, numbers out).
 *
 * Two sets of times, a[] (e.g. detections) and b[] (e.g. true arrivals), s.
 * A pair (i, j) is a candidate when |a_i - b_j| <= tol.  Candidates are
 * taken greedily in ascending |a_i - b_j| (ties: lower i, then lower j), a
 * pair only when neither member is taken yet: each a is matched to at most
 * one b and each b to at most one a.  So one detection can never satisfy two
 * arrivals, nor one result two calls.  Greedy by distance is not the
 * maximum-cardinality matching: where two times compete for one, the nearer
 * wins and the other stays unmatched, which can only cost the estimator a
 * match, never invent one.  Non-finite times match nothing.
 */
#ifndef CHORUS_SIM_SCORE_MATCH_H
#define CHORUS_SIM_SCORE_MATCH_H

#include <stddef.h>

/* A candidate pair: a's index i, b's index j, their distance d (s, >= 0);
 * rank: candidates of a lower rank are taken before any of a higher one
 * (0 unless the caller ranks them). */
typedef struct {
	size_t i, j;
	double d;
	int rank;
} score_cand;

/* Greedy assignment over n candidates (sorted in place by rank, then d,
 * then i, then j) between a set of na and a set of nb members; the candidates' i < na,
 * j < nb.  Fills a_to_b[na] and b_to_a[nb] (-1: unmatched).  Returns the
 * number of pairs.  Pure. */
size_t score_match_greedy(score_cand *c, size_t n, size_t na, size_t nb, int *a_to_b, int *b_to_a);

/* Match a[na] to b[nb] within tol (s, >= 0).  Fills a_to_b[na] (index into
 * b, or -1) and b_to_a[nb] (index into a, or -1); either may be NULL when
 * na or nb is 0.  Returns the number of pairs.  Pure; allocates scratch of
 * O(candidates) with GLib (aborts only when memory runs out, as GLib does). */
size_t score_match_times(const double *a, size_t na, const double *b, size_t nb, double tol, int *a_to_b, int *b_to_a);

#endif
