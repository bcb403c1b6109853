/* srp_heap.h — the steered response's branch-and-bound search (srp.c):
 * its squares (cubes, with a speed of sound) and the max-heap of them by
 * bound (pure: memory only).
 *
 * The squares are appended to a pool and the heap moves only (bound,
 * index) pairs, a third of a square's size: the search's splits push up to
 * 16 children each, 20000 times, and in a reverberant room, where nothing
 * dominates and every search runs out of splits, moving whole squares was
 * 38 % of collab's time.  A heap is kept between its bank's searches, and
 * a freed bank's heap is adopted by the next one its thread takes (collab
 * takes one per call: mapping those pages afresh was another third).
 * tests/test_tdoa_onsets' reverberant room: 107.9 -> 32.4 cpu-s, every
 * answer identical.
 */
#ifndef CHORUS_DSP_SRP_HEAP_H
#define CHORUS_DSP_SRP_HEAP_H

#include <stddef.h>

typedef struct {
	double x, y, z, c, v; /* centre (m, m, m, m/s), bound (or, at the finest level, the power) */
	int level;
} cell;

typedef struct srp_heap srp_heap;

/* A heap: the one this thread's last released heap left, else a new one;
 * NULL when out of memory. */
srp_heap *srp_heap_take(void);

/* Done with h (NULL is fine): kept for the thread's next srp_heap_take when
 * none is, else freed. */
void srp_heap_release(srp_heap *h);

/* Empty h (its memory kept). */
void srp_heap_clear(srp_heap *h);

/* Push c.  0, or -ENOMEM (h unchanged). */
int srp_heap_push(srp_heap *h, cell c);

/* Squares in h. */
size_t srp_heap_size(const srp_heap *h);

/* The square of largest bound (h not empty), and it taken out. */
cell srp_heap_top(const srp_heap *h);
cell srp_heap_pop(srp_heap *h);

#endif
