/* simwander.h — the frequency wander of a simulated clock (issue 13 item 3).
 *
 * A real crystal's rate is not constant: it random-walks (the frequency
 * noise that makes a clock's Allan deviation rise at long averaging times)
 * and follows the temperature.  A simulated clock here is
 *     phase(t) = t (1 + skew) + W(t),   W(t) = ∫0^t y(u) du
 * with y the fractional frequency deviation
 *     y(u) = q B(u) + tempco * A sin(2 pi (u + phi) / P)
 * where B is a standard Brownian motion (y changes by q sqrt(dt) in dt s:
 * q is "ppb per s" at one second), A the temperature cycle's amplitude (°C),
 * P its period (s), phi where in the cycle the epoch falls (s: the cycle is
 * shifted phi earlier, so an outage at a chosen time meets any phase of it)
 * and tempco the crystal's coefficient (ppm/°C).  Time t is
 * seconds since the wander's epoch (the world's time 0); before it W = 0.
 *
 * B is sampled on a 1 s grid from a counter-based Gaussian keyed by `seed`
 * (every process that simulates the clock gets the same walk, in any order
 * of evaluation) and linear between grid points, so W is exact and smooth.
 * The walk's table grows on demand and is shared by all threads of a
 * process (a mutex guards it); everything else is pure.
 */
#ifndef CHORUS_SIMWANDER_H
#define CHORUS_SIMWANDER_H

#include <stdint.h>

typedef struct {
	double rw_ppb;           /* q: random-walk frequency noise, ppb per sqrt(s) (0: none) */
	double temp_amp_c;       /* A: temperature cycle amplitude, °C (0: none) */
	double temp_period_s;    /* P: its period, s (> 0 when A > 0) */
	double temp_phase_s;     /* phi: the cycle's time at the epoch, s (0: it starts rising there) */
	double tempco_ppm_per_c; /* the clock's frequency change per °C, ppm */
	uint64_t seed;           /* keys the walk */
} sync_wander;

/* True when w changes the clock at all. */
int sync_wander_active(const sync_wander *w);

/* W(t): the clock's phase gained through the wander from the epoch to t
 * (t in s since the epoch), ns; 0 for t <= 0.  Thread safe. */
double sync_wander_phase_ns(const sync_wander *w, double t_s);

/* y(t): the fractional frequency deviation at t (s since the epoch); 0 for
 * t <= 0.  Thread safe. */
double sync_wander_freq(const sync_wander *w, double t_s);

/* A standard normal draw that depends only on (seed, salt, k): Box-Muller
 * over SplitMix64 of the counter, so every process draws the same walk in
 * any order (the wander uses salt 0x5741, the simulated UTC error
 * 0x555443).  Pure. */
double sync_sim_gauss(uint64_t seed, uint64_t salt, uint64_t k);

#endif
