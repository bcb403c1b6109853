/* warmup.c — the solver run once at start (warmup.h). */
#include "apps/collab/warmup.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "apps/collab/tdoa.h"
#include "apps/dsp/wave.h"
#include "apps/dsp/xcorr.h"

#define WARM_N 5

int collab_warm_up(char *why, size_t wlen)
{
	static const double mic[WARM_N][3] = {{0, 0, 1}, {20, 0, 1}, {20, 20, 1}, {0, 20, 1}, {9, 12, 1.5}};
	const double R = 16000, c = 343, src[3] = {7, 8, 1};
	dsp_wave_params wp = {.kind = DSP_WAVE_CHIRP, .f0_hz = 1200, .f1_hz = 2400, .sweep = DSP_SWEEP_EXPONENTIAL, .length_ms = 150, .taper_ms = 10};
	dsp_wave *w = dsp_wave_new(&wp, R, NULL);
	if (!w) {
		g_snprintf(why, wlen, "warm-up: no waveform");
		return -1;
	}
	tdoa_input in[WARM_N];
	float *x[WARM_N];
	const int64_t E = 1000000000000LL; /* the emission, ns */
	for (int j = 0; j < WARM_N; j++) {
		double r = sqrt(pow(src[0] - mic[j][0], 2) + pow(src[1] - mic[j][1], 2) + pow(src[2] - mic[j][2], 2));
		double arrive = r / c, start = arrive - 0.03;
		size_t n = (size_t)(0.25 * R);
		x[j] = g_new(float, n);
		/* a deterministic dither, so that no bin is empty */
		guint32 h = 2166136261u + (guint32)j;
		for (size_t i = 0; i < n; i++) {
			h = h * 1664525u + 1013904223u;
			x[j][i] = (float)(0.1 * dsp_wave_eval(w, start + (double)i / R - arrive) + 1e-4 * ((double)(h >> 8) / (1 << 24) - 0.5));
		}
		double st = start * 1e9;
		in[j] = (tdoa_input){.node = (uint32_t)(j + 1),
				     .x = x[j],
				     .n = n,
				     .rate_hz = R,
				     .t0_ns = E + (int64_t)floor(st),
				     .t0_frac_ns = st - floor(st),
				     .t0_se_ns = 100,
				     .onset_ns = E + (int64_t)llround(arrive * 1e9),
				     .onset_se_ns = 1000,
				     .snr_db = 30 - r};
		memcpy(in[j].mic_m, mic[j], sizeof in[j].mic_m);
	}
	tdoa_params p;
	tdoa_params_default(&p);
	p.f_lo_hz = 1100;
	p.f_hi_hz = 2600;
	p.c_m_s = c;
	p.source_z_m = src[2];
	tdoa_result r;
	int rc = tdoa_locate(in, WARM_N, &p, &r);
	for (int j = 0; j < WARM_N; j++)
		g_free(x[j]);
	dsp_wave_free(w);
	dsp_fft_forget();
	if (rc < 0 || r.loc.status != DSP_LOC_OK) {
		g_snprintf(why, wlen, "warm-up: a clean synthetic call was not located (%s)", *r.why ? r.why : "status not ok");
		return -1;
	}
	double e = hypot(r.loc.pos_m[0] - src[0], r.loc.pos_m[1] - src[1]);
	if (!(e < 0.05)) {
		g_snprintf(why, wlen, "warm-up: a clean synthetic call was located %.3f m off", e);
		return -1;
	}
	return 0;
}
