/* le.h — little-endian integers in byte buffers, for every chorus wire format
 * (libdev messages, the ticker, the network protocol).  Header-only, pure;
 * the caller checks lengths before calling. */
#ifndef CHORUS_LE_H
#define CHORUS_LE_H

#include <stdint.h>

/* Store v at p, least significant byte first. */
static inline void le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void le_put32(uint8_t *p, uint32_t v)
{
	le_put16(p, (uint16_t)v);
	le_put16(p + 2, (uint16_t)(v >> 16));
}
static inline void le_put64(uint8_t *p, uint64_t v)
{
	le_put32(p, (uint32_t)v);
	le_put32(p + 4, (uint32_t)(v >> 32));
}

/* Load the value stored at p. */
static inline uint16_t le_get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le_get32(const uint8_t *p) { return le_get16(p) | (uint32_t)le_get16(p + 2) << 16; }
static inline uint64_t le_get64(const uint8_t *p) { return le_get32(p) | (uint64_t)le_get32(p + 4) << 32; }

#endif
