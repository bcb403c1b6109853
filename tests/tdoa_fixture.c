/* tdoa_fixture.c — one node's clip as collab hands it over (see
 * tdoa_fixture.h). */
#include "tests/tdoa_fixture.h"

#include <math.h>
#include <string.h>

#include "apps/dsp/air.h"

tdoa_input tdoa_fixture_input(int node, const float *x, size_t len, double rate_hz, double start_s, double onset_s,
			      double se_s, double snr_db, const double mic[3])
{
	double st = start_s * 1e9;
	tdoa_input in = {.node = (uint32_t)node,
			 .x = x,
			 .n = len,
			 .rate_hz = rate_hz,
			 .t0_ns = TDOA_FIXTURE_T0_NS + (int64_t)floor(st),
			 .t0_frac_ns = st - floor(st),
			 .t0_se_ns = 500,
			 .onset_ns = TDOA_FIXTURE_T0_NS + llround(onset_s * 1e9),
			 .onset_se_ns = se_s * 1e9,
			 .onset_crb_se_ns = 2000,
			 .snr_db = snr_db};
	memcpy(in.mic_m, mic, sizeof in.mic_m);
	return in;
}

void tdoa_fixture_chirp_params(tdoa_params *p)
{
	tdoa_params_default(p);
	p->f_lo_hz = 1121;
	p->f_hi_hz = 2552;
	double dc_dt;
	p->c_m_s = dsp_speed_of_sound_m_s(20, &dc_dt);
	p->c_sd_m_s = 10 * dc_dt;
}
