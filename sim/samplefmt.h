/* samplefmt.h — the virtual sound card's sample formats and the one
 * conversion from acoustic value (full scale = 1.0) to each of them.
 *
 * The plugin and every test that checks it call these same functions, so a
 * captured sample equals the world model's sample bit for bit.  Integer
 * formats scale by 2^(bits-1), round to nearest (ties to even, lrint in the
 * default rounding mode) and clip to the format's range.
 */
#ifndef CHORUS_SIM_SAMPLEFMT_H
#define CHORUS_SIM_SAMPLEFMT_H

#include <math.h>
#include <stdint.h>

typedef enum {
	SIM_FMT_S16_LE = 0,
	SIM_FMT_S32_LE = 1,
	SIM_FMT_FLOAT_LE = 2,
} sim_format;

/* Bytes per sample of a format. */
static inline unsigned sim_format_bytes(sim_format f)
{
	return f == SIM_FMT_S16_LE ? 2 : 4;
}

/* Value v (full scale 1.0) as S16, clipped. */
static inline int16_t sim_to_s16(double v)
{
	double s = v * 32768.0;
	if (s >= 32767.0)
		return INT16_MAX;
	if (s <= -32768.0)
		return INT16_MIN;
	return (int16_t)lrint(s);
}

/* Value v (full scale 1.0) as S32, clipped. */
static inline int32_t sim_to_s32(double v)
{
	double s = v * 2147483648.0;
	if (s >= 2147483647.0)
		return INT32_MAX;
	if (s <= -2147483648.0)
		return INT32_MIN;
	return (int32_t)llrint(s);
}

/* Value v as FLOAT (no clipping: float has headroom, as on real cards). */
static inline float sim_to_float(double v)
{
	return (float)v;
}

#endif
