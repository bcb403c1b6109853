/* now.h — the one place in chorus that reads a clock.
 *
 * In the field, the node's cpu clock is the host's CLOCK_MONOTONIC_RAW and its
 * realtime clock is CLOCK_REALTIME.  In simulation (CHORUS_SIM_CLOCK or
 * CHORUS_SIM_UTC set in the environment, see below) every process of virtual
 * node N sees N's clocks: the host clocks with N's skew and offset applied,
 * or N's realtime disciplined to UTC with N's daemon's error.  Kernel
 * timestamps (socket receive times in CLOCK_REALTIME, ALSA timestamps in
 * CLOCK_MONOTONIC_RAW) are host times and go through sync_host_to_node() at
 * once, so they follow the same mappings.
 *
 * CHORUS_SIM_CLOCK = "SKEW_PPM,OFFSET_NS", e.g. "-37.5,1000000000", or with
 * a wandering rate (libsync/simwander.h)
 * "SKEW_PPM,OFFSET_NS,RW_PPB,TEMP_AMP_C,TEMP_PERIOD_S,TEMPCO_PPM_PER_C,SEED,EPOCH_NS[,TEMP_PHASE_S]"
 * (the ninth field, the cycle's phase, 0 when absent):
 *   node_cpu(h)      = h + OFFSET_NS + round(h * SKEW_PPM * 1e-6 + W(h - EPOCH_NS))
 *   node_realtime(r) = r + round((r - D) * SKEW_PPM * 1e-6 + W(r - D - EPOCH_NS))
 * where h is host CLOCK_MONOTONIC_RAW, r host CLOCK_REALTIME, D the host's
 * realtime - raw difference measured once per process (its error of a few µs
 * moves the skew term by < 1e-9 ns), and W the wander's phase (0 before the
 * epoch, the host raw time of the simulated world's time 0).  Ground truth in
 * the simulator uses sync_simclock_apply() with the same parameters.  Such a
 * realtime clock is undisciplined: it runs at the crystal's rate, as a
 * node's CLOCK_REALTIME with no NTP daemon.
 *
 * CHORUS_SIM_UTC = "none" (or unset: the realtime clock above) or
 * "KIND,SIGMA_NS,TAU_S,SEED,EPOCH_NS" with KIND ntp or gps (libsync/simutc.h):
 * the node's realtime clock is disciplined to UTC by a daemon,
 *   node_realtime(r) = r + round(e((r - D - EPOCH_NS) * 1e-9))
 * with r (the host's CLOCK_REALTIME) taken as true UTC and e the daemon's
 * residual error (sync_simutc_error_ns: stationary, zero mean, standard
 * deviation SIGMA_NS, correlation time TAU_S, a continuous rate); the
 * crystal's skew and wander do not appear.  The cpu clock is CHORUS_SIM_CLOCK's
 * (the host's raw clock when only CHORUS_SIM_UTC is set).
 */
#ifndef CHORUS_NOW_H
#define CHORUS_NOW_H

#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/simutc.h"
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

/* Read CHORUS_SIM_CLOCK and CHORUS_SIM_UTC once (the first call that
 * succeeds fixes them for the process).  Returns 0 (also when unset) or
 * -EINVAL with a static reason in *why. */
int sync_now_init(const char **why);

/* True when a simulated clock is in use (CHORUS_SIM_CLOCK or CHORUS_SIM_UTC
 * other than "none"). */
int sync_now_simulated(void);

/* Parse "SKEW_PPM,OFFSET_NS" or the eight- or nine-field form with wander (above)
 * into *out: 0 or -EINVAL with a reason. Pure. */
int sync_simclock_parse(const char *text, sync_simclock *out, const char **why);

/* Format *c as CHORUS_SIM_CLOCK text (the short form when it has no wander,
 * else the nine-field one)
 * into buf[len]; returns buf. */
char *sync_simclock_format(const sync_simclock *c, char *buf, unsigned len);

/* The node cpu time for host raw time h under parameters c.  Pure but for
 * the wander's shared table (thread safe). */
int64_t sync_simclock_apply(const sync_simclock *c, int64_t host_raw_ns);

/* The host raw time whose node cpu time is node_ns (exact inverse, ±1 ns). Pure. */
int64_t sync_simclock_invert(const sync_simclock *c, int64_t node_ns);

/* The node's realtime clock against UTC (sync_utc_status). */
typedef struct {
	int synced;          /* 1: CLOCK_REALTIME is disciplined to UTC (an NTP/PTP/GPS daemon says so) */
	double est_error_ns; /* its stated standard error against UTC, ns (> 0 when synced) */
	double max_error_ns; /* its stated bound, ns (>= est_error_ns when synced) */
	const char *source;  /* static text: "adjtimex", "simulated ntp", "simulated gps", "simulated none", "none" */
	const char *why;     /* static text when !synced: why not; NULL when synced */
} sync_utc;

/* Whether the node's realtime clock is disciplined to UTC, and how well.
 *
 * Field (no CHORUS_SIM_UTC, no CHORUS_SIM_CLOCK): adjtimex() with modes = 0,
 * a read that needs no privilege; source "adjtimex".  synced when the call
 * does not return TIME_ERROR and STA_UNSYNC is clear; est_error_ns is the
 * kernel's esterror (µs) x 1000 and max_error_ns its maxerror x 1000 (the
 * kernel adds 500 µs to maxerror every second until a daemon sets it
 * again, and sets STA_UNSYNC when it reaches 16 s).  What the daemons
 * write there:
 *  - chronyd sets esterror and maxerror on every clock update (its
 *    estimated error and root distance); on Linux it clears STA_UNSYNC only
 *    with the `rtcsync` directive (Debian's default chrony.conf has it):
 *    without it the clock reads as not synced here however good it is;
 *  - ntpd (kernel discipline, its default) sets esterror and maxerror and
 *    clears STA_UNSYNC once it has selected a source;
 *  - systemd-timesyncd (SNTP) clears STA_UNSYNC and writes esterror = 0
 *    and maxerror = 0 at every adjustment, so maxerror is the time since
 *    then x 500 µs/s and esterror stays 0;
 *  - linuxptp's phc2sys/ptp4l, locked on CLOCK_REALTIME, clear STA_UNSYNC
 *    and set maxerror = 0 likewise, leaving esterror alone.
 * So when synced with esterror 0, est_error_ns is maxerror / 3 (a bound
 * taken as 3 standard errors) and, if that is 0 too, 1 ms (1e6 ns); and
 * max_error_ns is never below est_error_ns.  When not synced the two are
 * the kernel's numbers as they are (16 s when nothing ever set them) and
 * why says which flag: "the kernel says STA_UNSYNC (no NTP daemon has
 * synchronised the clock)" or, with STA_UNSYNC clear but TIME_ERROR
 * returned, "the kernel says TIME_ERROR (STA_CLOCKERR, or a PPS signal the
 * discipline uses is missing or noisy)".
 *
 * Simulation: with CHORUS_SIM_UTC = KIND,SIGMA_NS,...: synced, est_error_ns
 * = SIGMA_NS, max_error_ns = 4 SIGMA_NS, source "simulated ntp" or
 * "simulated gps".  With a simulated clock but no UTC source (CHORUS_SIM_UTC
 * unset or "none"): not synced, source "simulated none", why "the scenario
 * gives this node no UTC source".
 *
 * Returns 0; or -EINVAL (a malformed CHORUS_SIM_CLOCK or CHORUS_SIM_UTC:
 * why says what, source "none") or the negative errno of a failed adjtimex
 * (why says so, source "adjtimex"), with out->synced = 0 in both. */
int sync_utc_status(sync_utc *out);

#endif
