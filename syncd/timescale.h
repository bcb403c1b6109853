/* timescale.h — the global timescale as a piecewise-linear function of the
 * root's cpu clock (issue 16 item 5, docs/clocks.md "Global").
 *
 * Global is defined on the root as global = seg_k(cpu) for the segment k in
 * force: each segment is an exact line (x0 = its start on the root's cpu
 * clock, y0 + yoff = global there, slope) that starts where the one before
 * it ends, at the value that one reached, so global never jumps; only its
 * rate changes (steering to UTC, steer.h).  The root makes the segments;
 * a follower notes each new one as the root's advertisements bring it, so
 * both can publish the recent history (the last SYNCD_TIMESCALE_KEEP
 * segments) on sync/ticker, where libsync converts past times through the
 * segment that was in force then (graph.h sync_graph_set_segments).
 * Pure: no clocks, no I/O.
 */
#ifndef CHORUS_SYNCD_TIMESCALE_H
#define CHORUS_SYNCD_TIMESCALE_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/conv.h"
#include "libsync/ticker_wire.h"

/* Segments kept and published (at the default 16 s steering interval, the
 * last 17 minutes: longer than any fit's data reaches back). */
#define SYNCD_TIMESCALE_KEEP 64

typedef struct syncd_timescale syncd_timescale;

/* An empty timescale (no root, no segment). */
syncd_timescale *syncd_timescale_new(void);

/* Free (NULL is fine). */
void syncd_timescale_free(syncd_timescale *ts);

/* Start afresh on root `root`'s cpu clock with the one line
 * global = y0 + slope (x - x0) (the first root of a field, or a hand-over
 * continuing another root's timescale along a continuation). */
void syncd_timescale_start(syncd_timescale *ts, uint32_t root, int64_t x0, int64_t y0, double slope);

/* Forget everything (the root is unknown). */
void syncd_timescale_clear(syncd_timescale *ts);

/* The root whose cpu clock the segments are on, and how many are kept
 * (0: none). */
uint32_t syncd_timescale_root(const syncd_timescale *ts);
size_t syncd_timescale_count(const syncd_timescale *ts);

/* The segment in force now (the last); NULL when there is none. */
const sync_conv *syncd_timescale_current(const syncd_timescale *ts);

/* Global at cpu time x through the segment in force at x.  Requires a
 * segment. */
sync_tval syncd_timescale_at(const syncd_timescale *ts, int64_t x);

/* On the root: from cpu time x on, global runs at `slope` (global ns per
 * cpu ns), starting at the value the current segment reaches at x.
 * Returns 0, -EINVAL (no segment, slope not positive and finite, x not
 * after the current segment's start). */
int syncd_timescale_steer(syncd_timescale *ts, int64_t x, double slope);

/* On a follower: the definition `def` of global on root `root`'s cpu clock
 * as an advertisement brought it.  Another root than the kept one starts
 * afresh from def; a segment starting after the current one is appended;
 * the current one again (or an older one) changes nothing.  Returns 1 when
 * the timescale changed, 0 when not, -EINVAL when def is not an exact
 * conversion. */
int syncd_timescale_note(syncd_timescale *ts, uint32_t root, const sync_conv *def);

/* The kept segments as ticker entries cpu(root) -> global, oldest first,
 * each exact with xmin = its start (the form sync_ticker_entries_to_graph
 * reads as one timescale; the oldest also maps every earlier time), and
 * updated_ns = its start.  Writes up to max and returns how many. */
size_t syncd_timescale_entries(const syncd_timescale *ts, sync_ticker_entry *out, size_t max);

#endif
