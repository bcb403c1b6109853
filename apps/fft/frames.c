/* frames.c — fft/<k>/frames message codec (see frames.h). */
#include "apps/fft/frames.h"

#include <errno.h>
#include <math.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the wire is little-endian; add byte swapping for this host");

size_t fft_frame_bytes(uint32_t nbins)
{
	return FFT_FRAME_HDR + (size_t)nbins * sizeof(float);
}

int fft_frame_encode(const fft_frame_msg *m, void *buf, size_t len)
{
	if (m->nbins != m->size / 2 + 1 || len < fft_frame_bytes(m->nbins))
		return -EINVAL;
	uint8_t *b = buf;
	uint16_t ver = FFT_FRAME_VERSION, hdr = FFT_FRAME_HDR;
	uint32_t zero = 0;
	memcpy(b, FFT_FRAME_MAGIC, 4);
	memcpy(b + 4, &ver, 2);
	memcpy(b + 6, &hdr, 2);
	memcpy(b + 8, &m->first, 8);
	memcpy(b + 16, &m->size, 4);
	memcpy(b + 20, &m->hop, 4);
	memcpy(b + 24, &m->nbins, 4);
	memcpy(b + 28, &m->window, 4);
	memcpy(b + 32, &m->rate_hz, 8);
	memcpy(b + 40, &m->channel, 4);
	memcpy(b + 44, &zero, 4);
	memcpy(b + FFT_FRAME_HDR, m->P, (size_t)m->nbins * sizeof(float));
	return (int)fft_frame_bytes(m->nbins);
}

int fft_frame_decode(const void *msg, size_t len, fft_frame_msg *m, float *P, size_t max_bins, const char **why)
{
	const uint8_t *b = msg;
	uint16_t ver, hdr;
	if (len < FFT_FRAME_HDR || memcmp(b, FFT_FRAME_MAGIC, 4)) {
		*why = "not an fft frame (short or bad magic)";
		return -EBADMSG;
	}
	memcpy(&ver, b + 4, 2);
	memcpy(&hdr, b + 6, 2);
	if (ver != FFT_FRAME_VERSION) {
		*why = "fft frame of an unknown version";
		return -EPROTONOSUPPORT;
	}
	if (hdr < FFT_FRAME_HDR || hdr > len) {
		*why = "fft frame header length out of range";
		return -EBADMSG;
	}
	memcpy(&m->first, b + 8, 8);
	memcpy(&m->size, b + 16, 4);
	memcpy(&m->hop, b + 20, 4);
	memcpy(&m->nbins, b + 24, 4);
	memcpy(&m->window, b + 28, 4);
	memcpy(&m->rate_hz, b + 32, 8);
	memcpy(&m->channel, b + 40, 4);
	if (m->nbins != m->size / 2 + 1 || m->hop == 0 || m->hop > m->size || !(m->rate_hz > 0) ||
	    len != hdr + (size_t)m->nbins * sizeof(float)) {
		*why = "fft frame sizes inconsistent (nbins, hop, rate or length)";
		return -EBADMSG;
	}
	if (m->nbins > max_bins) {
		*why = "fft frame has more bins than the reader allows";
		return -EMSGSIZE;
	}
	memcpy(P, b + hdr, (size_t)m->nbins * sizeof(float));
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
