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
	return p->fmt == SND_PCM_FORMAT_S16_LE ? 2 : p->fmt == SND_PCM_FORMAT_S32_LE ? 4
										     : 0;
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
	int32_t v;
	memcpy(&v, (const uint8_t *)buf + (i * p->channels + c) * 4, 4);
	return v;
}
