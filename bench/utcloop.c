/* utcloop.c — syncd's UTC steering loop, modelled clocks (see utcloop.h). */
#include "bench/utcloop.h"

#include <errno.h>
#include <math.h>

#include "syncd/pairs.h"

/* Uniform in [0, 1) from a counter (splitmix64). */
static double uniform(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/* The root's realtime reading at true time t_ns: UTC plus the discipline's
 * error, or for a free-running clock the cpu clock's rate error. */
static int64_t realtime_at(const utcloop_cfg *c, int64_t t_ns)
{
	if (c->utc.kind == SYNC_SIMUTC_NONE)
		return sync_simclock_apply(&c->cpu, t_ns) - c->cpu.offset_ns;
	return t_ns + (int64_t)llround(sync_simutc_error_ns(&c->utc, (double)t_ns * 1e-9));
}

int utcloop_run(const utcloop_cfg *c, utcloop_result *out)
{
	if (c->duration_s <= 0 || c->sample_s <= 0 || (c->steering && c->utc.kind == SYNC_SIMUTC_NONE))
		return -EINVAL;
	syncd_pairs_cfg pc = {.window = 64, .reject_k = 3.5, .wander = 1e-8, .max_span_ns = 600000000000LL, .expire_ns = 120000000000LL};
	syncd_pairs *pairs = syncd_pairs_new(&pc);
	sync_clock_id cpu = sync_clock_cpu(1), rtc = sync_clock_realtime(1);
	const char *why;
	syncd_pairs_configure(pairs, cpu, rtc, SYNC_FIT_MEAN, 1.0, &why);
	syncd_timescale *ts = syncd_timescale_new();
	double sigma = c->utc.kind == SYNC_SIMUTC_NONE ? NAN : c->utc.sigma_ns;
	syncd_steer_state st = syncd_steer_start(0);
	double s_d2 = 0, s_z2 = 0;
	*out = (utcloop_result){0};
	unsigned nz = 0;
	uint64_t k = 0;
	double next_sample = c->warmup_s;
	for (double t = 1.0; t <= c->duration_s; t += 1.0, k++) {
		int64_t t_ns = (int64_t)llround(t * 1e9);
		/* The sandwich: cpu before and after, realtime read somewhere inside. */
		double w = c->sandwich_ns, u = uniform(c->seed, k);
		int64_t a = sync_simclock_apply(&c->cpu, t_ns - (int64_t)llround(u * w));
		int64_t b = sync_simclock_apply(&c->cpu, t_ns + (int64_t)llround((1.0 - u) * w));
		int64_t x = a + (b - a) / 2, y = realtime_at(c, t_ns);
		if (syncd_pairs_observe(pairs, cpu, rtc, x, y, x, &why) < 0)
			syncd_pairs_reset(pairs, cpu, rtc);
		sync_conv fit;
		int have_fit = syncd_pairs_conv(pairs, cpu, rtc, &fit) == 0 && fit.n >= 4;
		if (!syncd_timescale_count(ts)) {
			if (!have_fit)
				continue;
			/* Root taken: global = realtime now, at UTC's rate when disciplined. */
			syncd_timescale_start(ts, 1, x, y, c->steering ? fit.slope : 1.0);
			st = syncd_steer_start(x);
		} else if (c->steering && have_fit) {
			sync_conv uc = syncd_steer_utc_conv(&fit, sigma);
			syncd_steer_result r;
			if (syncd_steer_step(ts, &st, &uc, &c->steer, x, &r) == 1) {
				out->segments++;
				double corr = fabs(r.slope / r.f - 1.0) * 1e6;
				if (corr > out->max_corr_ppm)
					out->max_corr_ppm = corr;
			}
		}
		if (t < next_sample)
			continue;
		next_sample += c->sample_s;
		/* Truth at cpu x (true time t_ns, to within the sandwich's ns). */
		int64_t xt = sync_simclock_apply(&c->cpu, t_ns);
		sync_tval g = syncd_timescale_at(ts, xt);
		double diff = (double)(g.i - t_ns) + g.f;
		out->n++;
		s_d2 += diff * diff;
		if (fabs(diff) > out->max_diff_ns)
			out->max_diff_ns = fabs(diff);
		if (!isnan(sigma)) {
			out->max_diff_sd = fmax(out->max_diff_sd, fabs(diff) / sigma);
			out->diff_beyond5 += fabs(diff) > 5 * sigma;
		}
		if (c->steering && have_fit) {
			sync_conv uc = syncd_steer_utc_conv(&fit, sigma);
			sync_tval uh = sync_conv_apply(&uc, sync_tval_of(xt));
			double claimed = (double)(g.i - uh.i) + (g.f - uh.f);
			double z = (claimed - diff) / sqrt(sync_conv_var(&uc, sync_tval_of(xt)));
			s_z2 += z * z;
			nz++;
			out->beyond5 += fabs(z) > 5;
		}
	}
	out->rms_diff_ns = out->n ? sqrt(s_d2 / out->n) : NAN;
	out->rms_z = nz ? sqrt(s_z2 / nz) : NAN;
	out->sum_z2 = s_z2;
	syncd_timescale_free(ts);
	syncd_pairs_free(pairs);
	return 0;
}
