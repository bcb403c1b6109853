/* steer.h — steering the global timescale's rate to UTC (issue 16 item 5,
 * docs/clocks.md "Global tracks UTC").
 *
 * The root knows UTC through its realtime clock when a daemon (chrony,
 * ntpd, a GPS receiver) disciplines it: syncd's realtime <-> cpu fit gives
 * utc(x) on the root's cpu clock, and the discipline states its error
 * against UTC (sync_utc_status).  Every `interval_s` the root measures
 *     o = global(x) - utc(x),    f = d utc / d cpu  (the fit's slope)
 * and lets global run from x on at
 *     slope = f (1 - clamp(o / tau, +-max_slew))
 * so global - UTC decays as exp(-t / tau) while global's rate follows the
 * root crystal's (f removes its error, 50 ppm or whatever it is).  While
 * the timescale is young (age: s since this root started or continued it)
 * the root decides more often, every clamp(age / 8, 2 s, interval), with
 * a shorter time constant, tau_eff = clamp(age, 32 s, tau), so a fresh
 * root converges in a minute or two; the loop gain step / tau_eff stays
 * <= interval / tau (1/4 by default; the configuration refuses more),
 * which keeps it stable.  A fresh root also starts at the rate of
 * its realtime fit when it has one (root.c), so little is left to steer.
 * The rate f is low-passed over tau_eff as well: the fit's slope over its
 * 64 s follows the discipline's error (a GPS-disciplined clock's wanders
 * in a minute), and a loop fed with it overshoots.
 * Global is never stepped: the timescale gains a segment (timescale.h).
 *
 * The UTC estimate cpu -> utc that syncd publishes (so that any clock
 * converts to "utc" with an honest uncertainty) is the realtime fit with
 * the discipline's stated error added in quadrature: the fit's own
 * variance says how well realtime is known, the discipline how far
 * realtime is from UTC.  Pure.
 */
#ifndef CHORUS_SYNCD_STEER_H
#define CHORUS_SYNCD_STEER_H

#include <stdint.h>

#include "libsync/conv.h"
#include "syncd/timescale.h"

typedef struct {
	double interval_s;   /* s between steering decisions */
	double tau_s;        /* time constant of global - UTC's decay, s */
	double max_slew_ppm; /* largest rate correction, ppm */
} syncd_steer_params;

/* The shortest time constant, s, while the timescale is young. */
#define SYNCD_STEER_YOUNG_TAU_S 32.0

/* Whether a steering decision is due, `since_last_s` after the last one
 * (or since the timescale started), at age `age_s`: 1 or 0. */
int syncd_steer_due(const syncd_steer_params *p, double age_s, double since_last_s);

/* The slope (global ns per cpu ns) from now on, given the UTC rate
 * f = d utc / d cpu, the offset o = global - utc now (ns) and the
 * timescale's age (s since this root started or continued it). */
double syncd_steer_slope(const syncd_steer_params *p, double f, double offset_ns, double age_s);

/* What one steering decision measured and chose. */
typedef struct {
	double offset_ns;    /* global - utc at the decision, ns */
	double offset_se_ns; /* the s.e. of utc there (the cpu -> utc conversion's), ns */
	double f;            /* d utc / d cpu, low-passed */
	double slope;        /* the slope chosen */
} syncd_steer_result;

/* The loop's state on one root's timescale. */
typedef struct {
	int64_t taken_ns; /* cpu time the timescale started here */
	int64_t last_ns;  /* cpu time of the last decision (taken_ns before the first) */
	double f_lp;      /* d utc / d cpu, low-passed (see syncd_steer_step) */
	int have_f;
} syncd_steer_state;

/* A fresh state for a timescale started at cpu time taken_ns. */
syncd_steer_state syncd_steer_start(int64_t taken_ns);

/* One step of the loop on the root's timescale ts at cpu time now_ns: when
 * a decision is due (syncd_steer_due), measure global - utc through utc
 * (cpu -> utc) and the UTC rate f = utc's slope, low-pass f with the loop's
 * time constant (the realtime fit's slope over its short window carries
 * the discipline's own rate noise, which global must not follow), add the
 * segment and note the decision in *st.  Returns 1 and *out when a
 * segment was added, 0 when no decision was due, -EINVAL when the
 * timescale refused it. */
int syncd_steer_step(syncd_timescale *ts, syncd_steer_state *st, const sync_conv *utc, const syncd_steer_params *p,
		     int64_t now_ns, syncd_steer_result *out);

/* The conversion cpu -> utc from the realtime fit `rt` (cpu -> realtime)
 * and the discipline's stated standard error est_error_ns: rt with
 * est_error^2 added to its variance at every point.  Returns it. */
sync_conv syncd_steer_utc_conv(const sync_conv *rt, double est_error_ns);

#endif
