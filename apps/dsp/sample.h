/* sample.h — one audio sample of audiod's items as a float in [-1, 1): the
 * formats audiod serves to detect and collab (S16_LE, S32_LE, FLOAT_LE:
 * little-endian, whatever the host's order; docs/protocol.md "audio/<k>/data").
 * Header-only, pure; items may be unaligned. */
#ifndef CHORUS_DSP_SAMPLE_H
#define CHORUS_DSP_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libdev/le.h"

/* Item i of items, each sample_bytes long (2 or 4), a float when is_float. */
static inline float dsp_sample_le(const void *items, size_t i, int sample_bytes, int is_float)
{
	const uint8_t *p = (const uint8_t *)items + i * (size_t)sample_bytes;
	if (is_float) {
		uint32_t u = le_get32(p);
		float v;
		memcpy(&v, &u, 4);
		return v;
	}
	if (sample_bytes == 2)
		return (float)((int16_t)le_get16(p) / 32768.0);
	return (float)((int32_t)le_get32(p) / 2147483648.0);
}

#endif
