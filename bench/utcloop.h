/* utcloop.h — the root's UTC steering loop against a modelled root clock
 * and UTC source, faster than real time (issue 16 item 5: "a 24-hour
 * simulated run ... with the root's crystal 50 ppm off").
 *
 * The loop is syncd's own code: the realtime <-> cpu pair (syncd/pairs.h,
 * MEAN fit, syncd's default window, rejection and span), the cpu -> utc
 * conversion and the steering step (syncd/steer.h) on the timescale
 * (syncd/timescale.h), called as syncd calls them (a realtime sample and a
 * steering check every second; the timescale started from the fit's
 * rate after 5 samples, as a networked root does after listening).  Only
 * the clocks are modelled: true time t; the root's cpu clock
 * sync_simclock_apply (skew, random walk, temperature cycle); its realtime
 * clock UTC + e(t) (libsync/simutc.h: the discipline's error) read in a
 * cpu-realtime-cpu sandwich of `sandwich_ns` width with the reading
 * uniform inside it.  Truth: every `sample_s` after `warmup_s`, global -
 * UTC, and the claim the root publishes (global - utc through its cpu ->
 * utc conversion) with its standard error.  Pure but for the wander's
 * table (libsync/simwander.h).
 */
#ifndef CHORUS_BENCH_UTCLOOP_H
#define CHORUS_BENCH_UTCLOOP_H

#include <stdint.h>

#include "libsync/now.h"
#include "libsync/simutc.h"
#include "syncd/steer.h"

typedef struct {
	sync_simclock cpu; /* the root's cpu clock against true time (epoch 0) */
	sync_simutc utc;   /* its realtime clock's discipline (kind NONE: free-running) */
	syncd_steer_params steer;
	int steering;       /* 0: global runs free (as with [utc] steer = false) */
	double duration_s;  /* true seconds simulated */
	double warmup_s;    /* s before the truth counts */
	double sample_s;    /* s between truth samples */
	double sandwich_ns; /* width of a realtime reading's sandwich */
	uint64_t seed;      /* the sandwich readings' seed */
} utcloop_cfg;

typedef struct {
	unsigned n;            /* truth samples */
	double rms_diff_ns;    /* RMS of global - UTC */
	double max_diff_ns;    /* max |global - UTC| */
	double max_diff_sd;    /* max |global - UTC| / the source's stated s.e. */
	double rms_z;          /* RMS of (claimed - true global - UTC) / stated s.e. */
	unsigned beyond5;      /* claims beyond 5 stated s.e. */
	unsigned diff_beyond5; /* samples with |global - UTC| beyond 5 of the source's stated s.e. */
	double max_corr_ppm;   /* largest rate correction the loop applied */
	unsigned segments;     /* segments the steering made */
	double sum_z2;         /* for pooling rows: sum of z^2 */
} utcloop_result;

/* Run the loop; 0 and *out, or -EINVAL (a configuration the loop cannot
 * run: no source while steering, durations not positive). */
int utcloop_run(const utcloop_cfg *c, utcloop_result *out);

#endif
