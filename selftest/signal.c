/* signal.c — the known test signal (see signal.h). */
#include "selftest/signal.h"

#include <string.h>

/* splitmix64: a well-mixed 64-bit hash of x, so sample (n, c) needs no
 * state (pure). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

unsigned sig_sample_bytes(const sig_params *p)
{
	switch (p->fmt) {
	case SND_PCM_FORMAT_S16_LE:
		return 2;
	case SND_PCM_FORMAT_S24_3LE:
		return 3;
	case SND_PCM_FORMAT_S32_LE:
		return 4;
	default:
		return 0;
	}
}

int sig_is_click(const sig_params *p, int64_t n)
{
	return n >= 0 && n % p->click_every == p->click_at;
}

int32_t sig_value(const sig_params *p, int64_t n, unsigned c)
{
	int32_t v;
	if (sig_is_click(p, n))
		v = 29491; /* 0.9 of full scale */
	else
		v = (int32_t)(mix(p->seed ^ mix((uint64_t)n * 64 + c)) % 16384) - 8192;
	if (p->fmt == SND_PCM_FORMAT_S32_LE) {
		/* Fill the low bits too, so a converter that drops them shows. */
		uint32_t low = (uint32_t)mix((uint64_t)n * 64 + c + 17) & 0xffffu;
		return (int32_t)(((uint32_t)v << 16) | low);
	}
	if (p->fmt == SND_PCM_FORMAT_S24_3LE) {
		/* 24 bits: the value in the top 16, 8 low bits filled. */
		uint32_t low = (uint32_t)mix((uint64_t)n * 64 + c + 17) & 0xffu;
		return (int32_t)(v * 256 + (int32_t)low);
	}
	return v;
}

void sig_fill(const sig_params *p, int64_t n, size_t count, void *buf)
{
	for (size_t i = 0; i < count; i++)
		for (unsigned c = 0; c < p->channels; c++) {
			int32_t v = sig_value(p, n + (int64_t)i, c);
			if (p->fmt == SND_PCM_FORMAT_S16_LE) {
				int16_t s = (int16_t)v;
				memcpy((uint8_t *)buf + (i * p->channels + c) * 2, &s, 2);
			} else if (p->fmt == SND_PCM_FORMAT_S24_3LE) {
				uint8_t *b = (uint8_t *)buf + (i * p->channels + c) * 3;
				b[0] = (uint8_t)v;
				b[1] = (uint8_t)(v >> 8);
				b[2] = (uint8_t)(v >> 16);
			} else {
				memcpy((uint8_t *)buf + (i * p->channels + c) * 4, &v, 4);
			}
		}
}

int32_t sig_get(const sig_params *p, const void *buf, size_t i, unsigned c)
{
	if (p->fmt == SND_PCM_FORMAT_S16_LE) {
		int16_t s;
		memcpy(&s, (const uint8_t *)buf + (i * p->channels + c) * 2, 2);
		return s;
	}
	if (p->fmt == SND_PCM_FORMAT_S24_3LE) {
		const uint8_t *b = (const uint8_t *)buf + (i * p->channels + c) * 3;
		uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
		return (int32_t)(u ^ 0x800000u) - 0x800000; /* sign-extend 24 bits */
	}
	int32_t v;
	memcpy(&v, (const uint8_t *)buf + (i * p->channels + c) * 4, 4);
	return v;
}
