/* background.c — background noise as a pure function of (seed, node, mic,
 * frame) (see background.h; the formulas are docs/background.md).
 *
 * Keys (sim/rng.h SIM_RNG_BACKGROUND): a = node, b = kind << 32 | mic.
 * white takes sim_rng_gauss() at c = frame.  pink and wind take one
 * sim_rng_hash() at c = 0 as the base of the (node, mic) and derive a base
 * per row or layer with sim_rng_mix(); a row's or knot's value is then the
 * SplitMix64 sequence on that base, mix(base_k + index * golden), one mix per
 * value.  Two such sequences overlap only if their bases differ by a small
 * multiple of the golden increment: with mixed 64-bit bases and < 2^45
 * indices in use, probability < 2^-18 per pair of rows, and an overlap would
 * only repeat values at unrelated times.  The gust envelope uses
 * sim_rng_gauss() at mic 0xffffffff, c = knot index.
 *
 * Frames map to unsigned counters by u = frame ^ 2^63 (order preserving), so
 * negative frames need no special case and no signed shift or division.
 */
#include "sim/background.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "sim/rng.h"

#define GUST_MIC 0xffffffffull

struct sim_background {
	sim_bg_kind kind;
	uint64_t seed;
	double rms; /* full scale */
	/* pink */
	int rows;       /* K */
	double row_amp; /* half-width of a row's uniform: rms * sqrt(3 / K) */
	/* wind */
	uint64_t layer_frames[SIM_BG_WIND_LAYERS]; /* knot spacing M_l */
	double layer_weight[SIM_BG_WIND_LAYERS];   /* share of the carrier variance */
	double layer_gain[SIM_BG_WIND_LAYERS];     /* sqrt(3 weight / c_l): uniform knots of unit variance */
	uint64_t gust_frames;                      /* envelope knot spacing */
};

static const char *const names[] = {"none", "white", "pink", "wind"};

int sim_background_kind_from_name(const char *name)
{
	for (int k = 0; name && k < (int)G_N_ELEMENTS(names); k++)
		if (strcmp(name, names[k]) == 0)
			return k;
	return -EINVAL;
}

const char *sim_background_kind_name(int k)
{
	return k >= 0 && k < (int)G_N_ELEMENTS(names) ? names[k] : NULL;
}

/* Cubic B-spline weights of knots j-1, j, j+1, j+2 at fraction t in [0, 1). */
static inline void bspline(double t, double w[4])
{
	double t2 = t * t, t3 = t2 * t, s = 1 - t;
	w[0] = s * s * s / 6;
	w[1] = (3 * t3 - 6 * t2 + 4) / 6;
	w[2] = (-3 * t3 + 3 * t2 + 3 * t + 1) / 6;
	w[3] = t3 / 6;
}

/* Mean over the M phases of a knot interval of the spline's variance
 * sum_i w_i^2 (unit-variance knots): 151/315 as M grows (the degree-7
 * B-spline at its centre), computed exactly for this M. */
static double spline_var(uint64_t m)
{
	double acc = 0;
	for (uint64_t p = 0; p < m; p++) {
		double w[4];
		bspline((double)p / (double)m, w);
		acc += w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3];
	}
	return acc / (double)m;
}

sim_background *sim_background_new(sim_bg_kind kind, double level_dbfs, uint64_t seed, double sample_rate_hz,
				   const char **why)
{
	if ((int)kind < 0 || (int)kind > SIM_BG_WIND) {
		*why = "background: unknown kind";
		return NULL;
	}
	if (!(level_dbfs >= -200 && level_dbfs <= 20)) {
		*why = "background_dbfs: expected -200..20 dB re full scale";
		return NULL;
	}
	if (!(sample_rate_hz >= 1000 && sample_rate_hz <= 1e6)) {
		*why = "background: sample rate outside 1000..1e6 Hz";
		return NULL;
	}
	sim_background *b = g_new0(sim_background, 1);
	b->kind = kind;
	b->seed = seed;
	b->rms = pow(10.0, level_dbfs / 20.0);
	if (kind == SIM_BG_PINK) {
		/* Smallest K with 2^(K-1) >= rate / 4 Hz: the slowest row holds for
		 * at least a quarter second, so 1/f reaches below 20 Hz with an
		 * octave to spare (docs/background.md). */
		b->rows = 1 + (int)ceil(log2(sample_rate_hz / 4.0));
		b->row_amp = b->rms * sqrt(3.0 / b->rows);
	}
	if (kind == SIM_BG_WIND) {
		double wsum = 0;
		for (int l = 0; l < SIM_BG_WIND_LAYERS; l++)
			wsum += ldexp(1.0, l);
		for (int l = 0; l < SIM_BG_WIND_LAYERS; l++) {
			double f_hz = SIM_BG_WIND_TOP_HZ / ldexp(1.0, l);
			uint64_t m = (uint64_t)fmax(1.0, round(sample_rate_hz / f_hz));
			b->layer_frames[l] = m;
			b->layer_weight[l] = ldexp(1.0, l) / wsum;
			b->layer_gain[l] = sqrt(3.0 * b->layer_weight[l] / spline_var(m));
		}
		b->gust_frames = (uint64_t)round(SIM_BG_GUST_S * sample_rate_hz);
	}
	return b;
}

void sim_background_free(sim_background *b)
{
	g_free(b);
}

static inline uint64_t ukey(const sim_background *b, int mic)
{
	return (uint64_t)b->kind << 32 | (uint32_t)mic;
}

/* Uniform on (-1, 1) (variance 1/3) from a hash. */
static inline double sym_unit(uint64_t h)
{
	return 2.0 * sim_rng_unit(h) - 1.0;
}

static double pink(const sim_background *b, int node, int mic, uint64_t u)
{
	uint64_t base = sim_rng_hash(b->seed, SIM_RNG_BACKGROUND, (uint64_t)node, ukey(b, mic), 0);
	double v = 0;
	for (int k = 0; k < b->rows; k++) {
		uint64_t row = sim_rng_mix(base + (uint64_t)(k + 1) * 0xd1b54a32d192ed03ull);
		v += sym_unit(sim_rng_mix(row + (u >> k) * SIM_RNG_GOLDEN));
	}
	return b->row_amp * v;
}

static double wind_carrier(const sim_background *b, int node, int mic, uint64_t u)
{
	uint64_t base = sim_rng_hash(b->seed, SIM_RNG_BACKGROUND, (uint64_t)node, ukey(b, mic), 0);
	double y = 0;
	for (int l = 0; l < SIM_BG_WIND_LAYERS; l++) {
		uint64_t layer = sim_rng_mix(base + (uint64_t)(l + 1) * 0xd1b54a32d192ed03ull);
		uint64_t m = b->layer_frames[l], j = u / m;
		double w[4], acc = 0;
		bspline((double)(u % m) / (double)m, w);
		for (int i = 0; i < 4; i++)
			acc += w[i] * sym_unit(sim_rng_mix(layer + (j + (uint64_t)i - 1) * SIM_RNG_GOLDEN));
		y += b->layer_gain[l] * acc;
	}
	return y;
}

/* exp(s z - s^2) with z = sum_i w_i g_i / sqrt(sum_i w_i^2) over Gaussian
 * knots: z is exactly N(0, 1) at every frame, so E[e^2] = 1 exactly. */
static double gust(const sim_background *b, int node, uint64_t u)
{
	uint64_t m = b->gust_frames, j = u / m;
	double w[4], z = 0, w2 = 0;
	bspline((double)(u % m) / (double)m, w);
	for (int i = 0; i < 4; i++) {
		z += w[i] * sim_rng_gauss(b->seed, SIM_RNG_BACKGROUND, (uint64_t)node, ukey(b, (int)GUST_MIC),
					  j + (uint64_t)i - 1);
		w2 += w[i] * w[i];
	}
	const double s = SIM_BG_GUST_LOG_SD;
	return exp(s * z / sqrt(w2) - s * s);
}

static inline uint64_t counter(int64_t frame)
{
	return (uint64_t)frame ^ (1ull << 63);
}

double sim_background_sample(const sim_background *b, int node, int mic, int64_t frame)
{
	switch (b->kind) {
	case SIM_BG_NONE:
		return 0;
	case SIM_BG_WHITE:
		return b->rms * sim_rng_gauss(b->seed, SIM_RNG_BACKGROUND, (uint64_t)node, ukey(b, mic), (uint64_t)frame);
	case SIM_BG_PINK:
		return pink(b, node, mic, counter(frame));
	case SIM_BG_WIND: {
		uint64_t u = counter(frame);
		return b->rms * gust(b, node, u) * wind_carrier(b, node, mic, u);
	}
	}
	return 0;
}

double sim_background_gust(const sim_background *b, int node, int64_t frame)
{
	return b->kind == SIM_BG_WIND ? gust(b, node, counter(frame)) : 1.0;
}

int sim_background_pink_rows(const sim_background *b)
{
	return b->kind == SIM_BG_PINK ? b->rows : 0;
}

int sim_background_wind_layer(const sim_background *b, int l, double *weight)
{
	if (b->kind != SIM_BG_WIND || l < 0 || l >= SIM_BG_WIND_LAYERS)
		return 0;
	if (weight)
		*weight = b->layer_weight[l];
	return (int)b->layer_frames[l];
}
