/* frames.c — fft/<k>/frames message codec (see frames.h). */
#include "apps/fft/frames.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "libdev/le.h"

/* Every field little-endian through libdev/le.h, whatever the host; the
 * doubles and floats as their IEEE-754 bits. */
static void put_f32(uint8_t *p, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	le_put32(p, u);
}

static float get_f32(const uint8_t *p)
{
	uint32_t u = le_get32(p);
	float v;
	memcpy(&v, &u, 4);
	return v;
}

size_t fft_frame_bytes(uint32_t nbins)
{
	return FFT_FRAME_HDR + (size_t)nbins * sizeof(float);
}

int fft_frame_encode(const fft_frame_msg *m, void *buf, size_t len)
{
	if (m->nbins != m->size / 2 + 1 || len < fft_frame_bytes(m->nbins))
		return -EINVAL;
	uint8_t *b = buf;
	uint64_t rate;
	memcpy(&rate, &m->rate_hz, 8);
	memcpy(b, FFT_FRAME_MAGIC, 4);
	le_put16(b + 4, FFT_FRAME_VERSION);
	le_put16(b + 6, FFT_FRAME_HDR);
	le_put64(b + 8, (uint64_t)m->first);
	le_put32(b + 16, m->size);
	le_put32(b + 20, m->hop);
	le_put32(b + 24, m->nbins);
	le_put32(b + 28, m->window);
	le_put64(b + 32, rate);
	le_put32(b + 40, m->channel);
	le_put32(b + 44, 0);
	for (uint32_t k = 0; k < m->nbins; k++)
		put_f32(b + FFT_FRAME_HDR + 4 * (size_t)k, m->P[k]);
	return (int)fft_frame_bytes(m->nbins);
}

int fft_frame_decode(const void *msg, size_t len, fft_frame_msg *m, float *P, size_t max_bins, const char **why)
{
	const uint8_t *b = msg;
	if (len < FFT_FRAME_HDR || memcmp(b, FFT_FRAME_MAGIC, 4)) {
		*why = "not an fft frame (short or bad magic)";
		return -EBADMSG;
	}
	uint16_t ver = le_get16(b + 4), hdr = le_get16(b + 6);
	if (ver != FFT_FRAME_VERSION) {
		*why = "fft frame of an unknown version";
		return -EPROTONOSUPPORT;
	}
	if (hdr < FFT_FRAME_HDR || hdr > len) {
		*why = "fft frame header length out of range";
		return -EBADMSG;
	}
	uint64_t rate = le_get64(b + 32);
	m->first = (int64_t)le_get64(b + 8);
	m->size = le_get32(b + 16);
	m->hop = le_get32(b + 20);
	m->nbins = le_get32(b + 24);
	m->window = le_get32(b + 28);
	memcpy(&m->rate_hz, &rate, 8);
	m->channel = le_get32(b + 40);
	if (m->nbins != m->size / 2 + 1 || m->hop == 0 || m->hop > m->size || !(m->rate_hz > 0) ||
	    len != hdr + (size_t)m->nbins * sizeof(float)) {
		*why = "fft frame sizes inconsistent (nbins, hop, rate or length)";
		return -EBADMSG;
	}
	if (m->nbins > max_bins) {
		*why = "fft frame has more bins than the reader allows";
		return -EMSGSIZE;
	}
	for (uint32_t k = 0; k < m->nbins; k++)
		P[k] = get_f32(b + hdr + 4 * (size_t)k);
	m->P = P;
	return 0;
}

double fft_frame_band(const fft_frame_msg *m, double f_lo_hz, double f_hi_hz)
{
	double df = m->rate_hz / m->size, s = 0;
	int k0 = (int)ceil(f_lo_hz / df - 1e-9), k1 = (int)floor(f_hi_hz / df + 1e-9);
	if (k0 < 0)
		k0 = 0;
	if (k1 > (int)m->nbins - 1)
		k1 = (int)m->nbins - 1;
	for (int k = k0; k <= k1; k++)
		s += m->P[k];
	return s;
}
