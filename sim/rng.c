/* rng.c — counter-based random numbers (see rng.h). */
#include "sim/rng.h"

#include <math.h>

static uint64_t mix(uint64_t z)
{
	return sim_rng_mix(z);
}

uint64_t sim_rng_hash(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c)
{
	/* Chain: each word is added with the golden-ratio increment and mixed, so
	 * keys differing in any word give independent outputs. */
	const uint64_t g = SIM_RNG_GOLDEN;
	uint64_t h = mix(seed + g);
	h = mix(h ^ (domain + 2 * g));
	h = mix(h ^ (a + 3 * g));
	h = mix(h ^ (b + 4 * g));
	h = mix(h ^ (c + 5 * g));
	return h;
}

double sim_rng_unit(uint64_t h)
{
	/* 53 random bits, offset by half a step: never 0, never 1. */
	return ((double)(h >> 11) + 0.5) * 0x1.0p-53;
}

double sim_rng_gauss(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h1 = sim_rng_hash(seed, domain, a, b, c);
	uint64_t h2 = mix(h1 ^ 0x5851f42d4c957f2dull);
	double u1 = sim_rng_unit(h1), u2 = sim_rng_unit(h2);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double sim_rng_exp(uint64_t seed, uint64_t domain, uint64_t a, uint64_t b, uint64_t c)
{
	return -log(sim_rng_unit(sim_rng_hash(seed, domain, a, b, c)));
}
