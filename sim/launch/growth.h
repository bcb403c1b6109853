/* growth.h — did a long-lived process grow?  (issue 15's chaos soak: "RSS
 * or open-fd growth over 5 % between the first and last 10 minutes of each
 * long-lived process" fails it.)  Pure: samples in, a verdict out.
 *
 * One process instance's samples (time, resident memory, open
 * descriptors), in time order.  Its life is judged when the samples span
 * at least 2 windows (CSIM_GROWTH_WINDOW_S, 10 minutes, each): the largest
 * RSS of the first window against the largest of the last, and the same
 * for descriptors.  It grew when either last is more than 5 % above its
 * first.  Maxima, not single samples: a process's footprint breathes with
 * its work (a clip solved, a burst of messages), and what the soak asks is
 * whether the ceiling rose.  A shorter life is reported (its first and last
 * samples), not judged.
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
	long rss_first_kb;     /* judged: the first window's largest; else the first sample's */
	long rss_last_kb;      /* judged: the last window's largest; else the last sample's */
	int fd_first, fd_last; /* the same for descriptors */
} csim_growth;

/* Judge samples s[n] (n may be 0: not judged, zeros).  Pure. */
void csim_growth_judge(const csim_usage *s, size_t n, csim_growth *out);

#endif
