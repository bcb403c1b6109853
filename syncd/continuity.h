/* continuity.h — how far a continued timescale drifts from the one it
 * continues (issue 16, "Partitions"; docs/clocks.md §7).
 *
 * A node cut off from the field's root becomes root of its part and
 * continues the old root's timescale along its last line to it
 * (continuation.h).  From then on its global and the old root's drift
 * apart by what the two clocks' frequencies wander, and on a rejoin the
 * part that lost steps by that drift.  This module states it:
 *
 *   V(dt) = se0^2 + rate_var dt^2 + q2 dt^3 / 3 [+ c^2 dt^6 / 36]
 *
 * the line's variance at the hand-over, its rate's variance as libsync
 * states it for an extrapolation (the fits' slope variance and their wander
 * allowance), and a random walk of the frequency with diffusion q2 measured
 * on the line itself while the node followed the root: the rates s_a, s_b
 * of the line over consecutive spans tau differ, for such a walk, by
 * E[(s_b - s_a)^2] = (2/3) q2 tau + N, where N is what the samples' own
 * stated errors give (se0^2/t1^2 + se1^2 (1/t1 + 1/t2)^2 + se2^2/t2^2), so
 * q2 = 1.5 ((s_b - s_a)^2 - N) / tau, averaged over every pair of spans in
 * the history and clipped at 0.  That is taken for spans of 32, 64, 128
 * and 256 s (each that fits a pair into the history) and the largest kept:
 * for a random walk each is unbiased, and one alone (the longest has few
 * independent pairs) is often far too low; for a ramp of the frequency (a
 * temperature change) the estimate grows with tau, so the longest states
 * the drift best (z = sqrt(dt / (2 tau)) of the truth after dt).  The
 * bracketed term is a curvature c of the frequency (its ramp changing: a
 * turn of a temperature cycle), from the rates' second differences over
 * span triples less what the walk explains (syncd_continuity_jerk2).
 *
 * The line may be any clock pair's x -> y (syncd/history.h: a pair's
 * history bridged with the q2 measured here): `unit_ns`, the ns one unit
 * of x lasts (1 for a clock in ns, about 20833 for an audio clock's frames
 * at 48 kHz), scales the spacing and the spans, which are times; q2 is
 * then in (y units / x unit)^2 per x unit, the unit of the bridge's q2
 * (libsync/bridge.h).  The rate is computed as (dy - dx) / dx, exact for
 * a line of slope near 1 and as good as a double for any other.  Pure.
 */
#ifndef CHORUS_SYNCD_CONTINUITY_H
#define CHORUS_SYNCD_CONTINUITY_H

#include <stddef.h>
#include <stdint.h>

/* Samples kept, and the least spacing between two (ns): 256 x 4 s, the
 * last 17 minutes of following. */
#define SYNCD_CONTINUITY_SAMPLES 256
#define SYNCD_CONTINUITY_SPACING_NS 4000000000LL

typedef struct {
	uint32_t root;                       /* the timescale the samples are of */
	double unit_ns;                      /* ns per unit of x (1: x in ns) */
	size_t n, head;                      /* samples held; index of the oldest */
	int64_t x[SYNCD_CONTINUITY_SAMPLES]; /* this node's cpu time, ns */
	int64_t g[SYNCD_CONTINUITY_SAMPLES]; /* global then on the line to the root, ns */
	double se[SYNCD_CONTINUITY_SAMPLES]; /* its stated standard error, ns */
} syncd_continuity;

/* Empty the history, x in ns. */
void syncd_continuity_reset(syncd_continuity *h);

/* Empty the history and set the unit of x: unit_ns ns per unit (> 0). */
void syncd_continuity_init(syncd_continuity *h, double unit_ns);

/* Note the line's value global_ns (s.e. se_ns) at cpu time cpu_ns, of
 * root `root`'s timescale (for another pair: y at x, in their units, and
 * any key in place of root): a sample closer than
 * SYNCD_CONTINUITY_SPACING_NS (in x's unit: unit_ns) to the newest is
 * skipped, one of another root's timescale or earlier than the newest
 * starts the history afresh. */
void syncd_continuity_note(syncd_continuity *h, uint32_t root, int64_t cpu_ns, int64_t global_ns, double se_ns);

/* The measured diffusion q2 of the line's frequency (ns^2 per ns^3, i.e.
 * fractional frequency^2 per ns; for x not in ns, (y / x)^2 per x unit),
 * 0 when the history does not fit a pair of 32 s spans; the history's
 * length in *span_ns and the span whose estimate was kept in *tau_ns (0:
 * none; either may be NULL), both in ns whatever x's unit. */
double syncd_continuity_q2(const syncd_continuity *h, int64_t *span_ns, int64_t *tau_ns);

/* The longest span (of 32, 64, 128, 256 s) the history fits a pair of
 * into, ns (0: none). */
int64_t syncd_continuity_tau_max(const syncd_continuity *h);

/* The squared curvature of the line's frequency that a random walk does
 * not explain (fractional frequency per ns^2, squared; for x not in ns,
 * (y / x) per x unit^2, squared): over consecutive triples of spans tau,
 * the rates' second difference dd = s_c - 2 s_b + s_a, which a smooth
 * change of the ramp (a turn of a temperature cycle: the rate's curvature
 * c) makes c tau^2, and a walk makes E[dd^2] = q2 tau while its first
 * differences give E[d^2] = (2/3) q2 tau, so (mean dd^2 - 1.5 mean d^2) /
 * tau^4, each less the samples' stated noise, estimates c^2 free of the
 * walk (about 0.6 c^2 across a turn, where the ramp's own first
 * differences are subtracted too); clipped at 0.  Taken at the longest
 * span of 32 s times a power of sqrt(2) that fits a triple into the
 * history (a curvature's dd grows as tau^2 against a walk's sqrt(tau)), in
 * *tau_ns (0: none; may be NULL). */
double syncd_continuity_jerk2(const syncd_continuity *h, int64_t *tau_ns);

/* V(dt) above (ns^2) for dt ns after the hand-over (|dt| taken), its walk
 * term q2 dt^3 / 3 taken as a ramp of the frequency would make it beyond
 * twice tau_ns (0: never), the longest span the history measured
 * (syncd_continuity_tau_max): a ramp ydot measures q2 = 1.5 ydot^2 tau,
 * largest at the longest span, and drifts by ydot dt^2 / 2, that is
 * dt / (2 tau) times the walk's variance — z = sqrt(dt / (2 tau)) of the
 * truth unstated (2.2 after dt = 300 s followed by spans of 32 s:
 * tests/test_continuity ramp_stated).  A random walk is stated wider than
 * it is only beyond twice the longest span (10 minutes followed: 512 s).
 * Plus jerk2 dt^6 / 36 (syncd_continuity_jerk2; 0: none): a curvature c
 * of the rate drifts by c dt^3 / 6 — what the walk's term, measured where
 * the rate turned and barely moved, misses when the outage meets the
 * steep flank after the turn (tests/test_continuity cycle_turn_stated). */
double syncd_continuity_var(double se0_ns, double rate_var, double q2, double tau_ns, double jerk2, double dt_ns);

#endif
