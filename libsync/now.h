/* now.h — the one place in chorus that reads a clock.
 *
 * In the field, the node's cpu clock is the host's CLOCK_MONOTONIC_RAW and its
 * realtime clock is CLOCK_REALTIME.  In simulation (CHORUS_SIM_CLOCK set in
 * the environment, see below) every process of virtual node N sees N's clocks:
 * the host clocks with N's skew and offset applied.  Kernel timestamps (socket
 * receive times in CLOCK_REALTIME, ALSA timestamps in CLOCK_MONOTONIC_RAW)
 * are host times and go through sync_host_to_node() at once.
 *
 * CHORUS_SIM_CLOCK = "SKEW_PPM,OFFSET_NS", e.g. "-37.5,1000000000", or with
 * a wandering rate (libsync/simwander.h)
 * "SKEW_PPM,OFFSET_NS,RW_PPB,TEMP_AMP_C,TEMP_PERIOD_S,TEMPCO_PPM_PER_C,SEED,EPOCH_NS":
 *   node_cpu(h)      = h + OFFSET_NS + round(h * SKEW_PPM * 1e-6 + W(h - EPOCH_NS))
 *   node_realtime(r) = r + round((r - D) * SKEW_PPM * 1e-6 + W(r - D - EPOCH_NS))
 * where h is host CLOCK_MONOTONIC_RAW, r host CLOCK_REALTIME, D the host's
 * realtime - raw difference measured once per process (its error of a few µs
 * moves the skew term by < 1e-9 ns), and W the wander's phase (0 before the
 * epoch, the host raw time of the simulated world's time 0).  Ground truth in
 * the simulator uses sync_simclock_apply() with the same parameters.
 */
#ifndef CHORUS_NOW_H
#define CHORUS_NOW_H

#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/simwander.h"

typedef struct {
	double skew_ppm;    /* node clock rate minus true rate, parts per million */
	int64_t offset_ns;  /* node cpu clock minus host raw clock at host raw 0, ns */
	sync_wander wander; /* the rate's wander (all 0: a constant rate) */
	int64_t epoch_ns;   /* host raw ns where the wander starts */
} sync_simclock;

/* Current time of the node's clock of `kind` (SYNC_KIND_CPU or
 * SYNC_KIND_REALTIME), ns; virtual when CHORUS_SIM_CLOCK is set.  Any other
 * kind returns INT64_MIN.  Never fails otherwise (aborts on a malformed
 * CHORUS_SIM_CLOCK at first use after logging why; check it at start-up with
 * sync_now_init()). */
int64_t sync_now(sync_kind kind);

/* Map a host timestamp of `kind` (CPU: CLOCK_MONOTONIC_RAW, REALTIME:
 * CLOCK_REALTIME) to the node's clock; identity outside simulation. */
int64_t sync_host_to_node(sync_kind kind, int64_t host_ns);

/* Map a node cpu time back to host CLOCK_MONOTONIC_RAW (inverse of the
 * simulated mapping, to the ns); identity outside simulation. */
int64_t sync_node_to_host_cpu(int64_t node_ns);

/* Read CHORUS_SIM_CLOCK once.  Returns 0 (also when unset) or -EINVAL with
 * a static reason in *why. */
int sync_now_init(const char **why);

/* True when a simulated clock is in use. */
int sync_now_simulated(void);

/* Parse "SKEW_PPM,OFFSET_NS" or the eight-field form with wander (above)
 * into *out: 0 or -EINVAL with a reason. Pure. */
int sync_simclock_parse(const char *text, sync_simclock *out, const char **why);

/* Format *c as CHORUS_SIM_CLOCK text (the short form when it has no wander)
 * into buf[len]; returns buf. */
char *sync_simclock_format(const sync_simclock *c, char *buf, unsigned len);

/* The node cpu time for host raw time h under parameters c.  Pure but for
 * the wander's shared table (thread safe). */
int64_t sync_simclock_apply(const sync_simclock *c, int64_t host_raw_ns);

/* The host raw time whose node cpu time is node_ns (exact inverse, ±1 ns). Pure. */
int64_t sync_simclock_invert(const sync_simclock *c, int64_t node_ns);

#endif
