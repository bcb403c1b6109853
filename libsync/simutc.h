/* simutc.h — a simulated node's UTC source (issue 16 item 5): the error of
 * a realtime clock that an NTP or GPS daemon disciplines.
 *
 * In the field a disciplined CLOCK_REALTIME is UTC plus the daemon's
 * residual error: a few µs behind a GPS receiver's PPS, a fraction of a ms
 * to a few ms behind NTP over a network.  That error is not white: the
 * daemon's loop filter lets it wander slowly about 0, with a correlation
 * time of seconds to minutes (GPS) or of the NTP poll loop's hour, and its
 * rate changes smoothly (the daemon slews the clock's frequency).  The
 * simulator models it as
 *     node_realtime = true UTC + e(t)
 * where e is a stationary, zero-mean Gauss–Markov (Ornstein–Uhlenbeck)
 * process of standard deviation sigma and correlation time tau:
 *     E[e(t) e(t + L)] = sigma² exp(-|L| / tau),
 * t in seconds since the world's epoch.  The skew and wander of the node's
 * crystal do not appear: the daemon removes them.
 *
 * e is sampled on a grid of step h = tau / 16 — the exact discretisation
 * x[k+1] = a x[k] + sqrt(1 - a²) g[k+1], a = exp(-1/16), g standard normal
 * from a counter-based generator keyed by (seed, k) — and interpolated
 * between grid points by a Catmull–Rom cubic, so e and its rate de/dt are
 * continuous (C1); between grid points the cubic's variance dips below
 * sigma² by up to 1.5 % (0.8 % on average, a 0.4 % smaller s.d.), and its
 * correlation at lag tau is 0.371 rather than e^-1 = 0.368.  Each grid value is the process's moving-average sum
 * over its last 384 innovations (the weight of older ones, a^384 = e^-24,
 * is below 1e-10), computed in blocks of 64, so any value of any seed is a
 * pure function of (seed, k): the same in every process and thread, in any
 * order of evaluation, with no table that grows with time.  The process is
 * stationary at every grid index, the epoch's (k = 0) included: there is
 * no start-up transient, and before the epoch (t < 0) e continues the same
 * stationary process.  A small per-thread cache of blocks keeps the cost
 * of an evaluation near that of one cubic; everything is thread safe.
 *
 * The text form, CHORUS_SIM_UTC (libsync/now.h):
 *     "none"  or  "KIND,SIGMA_NS,TAU_S,SEED,EPOCH_NS"
 * KIND ntp or gps, SIGMA_NS > 0 (ns), TAU_S > 0 (s), SEED an unsigned
 * integer, EPOCH_NS the host CLOCK_MONOTONIC_RAW time of the world's time 0
 * (as CHORUS_SIM_CLOCK's EPOCH_NS), e.g. "gps,1000,60,42,123456789000".
 */
#ifndef CHORUS_SIMUTC_H
#define CHORUS_SIMUTC_H

#include <stdint.h>

typedef enum {
	SYNC_SIMUTC_NONE = 0, /* no UTC source: the realtime clock is undisciplined */
	SYNC_SIMUTC_NTP = 1,  /* an NTP daemon (chronyd, ntpd) over the network */
	SYNC_SIMUTC_GPS = 2,  /* a GPS receiver's PPS through the daemon */
} sync_simutc_kind;

typedef struct {
	sync_simutc_kind kind;
	double sigma_ns;  /* standard deviation of the error e, ns (> 0 unless kind is none) */
	double tau_s;     /* its correlation time, s (> 0 unless kind is none) */
	uint64_t seed;    /* keys the process */
	int64_t epoch_ns; /* host raw ns of the world's time 0 */
} sync_simutc;

/* The defaults the scenario gives a kind: ntp sigma 1 ms, tau 3600 s; gps
 * sigma 1 µs, tau 60 s; none 0, 0. */
void sync_simutc_defaults(sync_simutc_kind kind, double *sigma_ns, double *tau_s);

/* The kind's name: "none", "ntp" or "gps" ("?" for anything else). */
const char *sync_simutc_kind_name(sync_simutc_kind kind);

/* Parse CHORUS_SIM_UTC text (above) into *out: 0, or -EINVAL with a static
 * reason in *why (why may be NULL) and *out untouched.  "none" gives kind
 * SYNC_SIMUTC_NONE and every other field 0.  Pure. */
int sync_simutc_parse(const char *text, sync_simutc *out, const char **why);

/* Format *u as CHORUS_SIM_UTC text into buf[len] (exact: parsing it gives
 * *u back; kind none gives "none"); returns buf. */
char *sync_simutc_format(const sync_simutc *u, char *buf, unsigned len);

/* e(t): the realtime clock's error against UTC at t (s since the epoch), ns;
 * 0 when kind is none.  Deterministic and thread safe (above). */
double sync_simutc_error_ns(const sync_simutc *u, double t_s);

/* de/dt at t: the clock's fractional frequency error against UTC times
 * 1e9 (ns per s), the exact derivative of the cubic; 0 when kind is none. */
double sync_simutc_rate(const sync_simutc *u, double t_s);

/* e at host raw time host_raw_ns: sync_simutc_error_ns(u, (host_raw_ns -
 * u->epoch_ns) * 1e-9), for truth code that keeps host raw times. */
double sync_simutc_error_at_raw(const sync_simutc *u, int64_t host_raw_ns);

#endif
