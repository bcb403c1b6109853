/* growth.h — did a long-lived process grow?  (issue 15's chaos soak: "RSS
 * or open-fd growth over 5 % between the first and last 10 minutes of each
 * long-lived process" fails it.)  Pure: samples in, a verdict out.
 *
 * One process instance's samples (time, resident memory, open
 * descriptors), in time order; memory is what the caller measures (the
 * chaos soak: the process's own, RssAnon + RssShmem — library code paged
 * in when a rare path first runs is not growth).  Its life is judged when
 * the samples span at least 2 windows (CSIM_GROWTH_WINDOW_S, 10 minutes,
 * each): the median memory of the first window against the median of the
 * last, the fewest descriptors of the first against the fewest of the
 * last.  It grew when either last is more than 5 % above its first.
 * Memory's median: a footprint breathes with its work (collab holds a
 * solve's clips, spectra and search cells for a second, detect a burst of
 * frames), so a window's ceiling is the largest burst it happened to
 * sample, which differs from window to window without anything growing;
 * a leak lifts every sample after it, and so the median.  (The daemons
 * trim their heaps, libdev/heap.h: between bursts resident memory is what
 * is in use, not what the largest burst once took.)  Descriptors' floor:
 * a connection open for a moment (a clip fetched, a client reconnecting)
 * lifts one sample by one, 6 % of a process holding 16; a leaked
 * descriptor is never closed and lifts the floor.  A shorter life is
 * reported (its first and last samples), not judged.
 */
#ifndef CHORUS_SIM_LAUNCH_GROWTH_H
#define CHORUS_SIM_LAUNCH_GROWTH_H

#include <stddef.h>

#define CSIM_GROWTH_WINDOW_S 600.0
#define CSIM_GROWTH_LIMIT 1.05

typedef struct {
	double t_s;
	long rss_kb;
	int fd;
} csim_usage;

typedef struct {
	double life_s;         /* last sample's time - first's */
	int judged;            /* life_s >= 2 windows */
	int grew;              /* judged, and RSS or descriptors rose over 5 % */
	long rss_first_kb;     /* judged: the first window's median; else the first sample's */
	long rss_last_kb;      /* judged: the last window's median; else the last sample's */
	int fd_first, fd_last; /* judged: the first and last windows' fewest; else the first and last samples' */
} csim_growth;

/* Judge samples s[n] (n may be 0: not judged, zeros).  Pure. */
void csim_growth_judge(const csim_usage *s, size_t n, csim_growth *out);

#endif
