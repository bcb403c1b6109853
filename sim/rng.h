/* rng.h — counter-based random numbers for the simulated world.
 *
 * Every random quantity in the world (noise of a sample, latency of an
 * interrupt, the time of a Poisson call) is a pure function of a key
 * (seed, domain, a, b, c), not the next value of a sequential stream.  That
 * makes the world reproducible for any frame range in any order: a test or a
 * ground-truth checker regenerates sample k of node N without generating
 * samples 0..k-1.  The mixer is SplitMix64's finaliser applied in a chain,
 * which passes BigCrush for sequential counters.  Pure: no I/O, no state.
 */
#ifndef CHORUS_SIM_RNG_H
#define CHORUS_SIM_RNG_H

#include <stdint.h>

/* Domains keep independent quantities from sharing keys. */
enum {
	SIM_RNG_NOISE = 1,     /* a = node, b = mic, c = frame */
	SIM_RNG_LATENCY = 2,   /* a = node, b = 0 (delay) or 1 (mixture component), c = frame at the period's end */
	SIM_RNG_CALLS = 3,     /* a = source, b = 0, c = call index */
	SIM_RNG_JITTER = 4,    /* free for the network simulation */
	SIM_RNG_VARIATION = 5, /* a = source, b = which parameter, c = call index */
	SIM_RNG_SURVEY = 6,    /* a = node, b = axis (3: the microphones' heading), c = 0 */
	SIM_RNG_WANDER = 7,    /* a = node, b = 0 (cpu) or 1 (audio), c = 0: the seed of a clock's walk */
	/* sim/background.c: a = node, b = kind << 32 | mic (mic 0xffffffff: the
	 * node's gust envelope), c = frame, row or knot (background.c says). */
	SIM_RNG_BACKGROUND = 16,
};

/* SplitMix64's finaliser, the mixer sim_rng_hash() chains: a bijection of
 * 64-bit words.  mix(base + i * SIM_RNG_GOLDEN) over i is the SplitMix64
 * sequence, for hot paths that key many values off one sim_rng_hash(). */
#define SIM_RNG_GOLDEN 0x9e3779b97f4a7c15ull
static inline uint64_t sim_rng_mix(uint64_t z)
{
	/* Steele, Lea, Flood 2014. */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A 64-bit hash of the key; uniform over all 64-bit values. */
uint64_t sim_rng_hash(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c);

/* Uniform in the open interval (0, 1) from hash h (53 bits). */
double sim_rng_unit(uint64_t h);

/* Standard normal deviate for the key (Box-Muller on two derived hashes). */
double sim_rng_gauss(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c);

/* Exponential deviate of mean 1 for the key. */
double sim_rng_exp(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c);

#endif
