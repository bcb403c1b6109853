/* test_world.c — the world model's truth: propagation delay to the sample,
 * skewed audio clocks, noise and latency statistics, call processes, file
 * sources by band-limited interpolation. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "libsync/now.h"
#include "sim/rng.h"
#include "sim/scenario.h"
#include "apps/dsp/wave.h"
#include "sim/world.h"
#include "tests/check_run.h"
#include "tests/world_fixture.h"

static fixture make(const char *text)
{
	return fixture_make("world-test.ini", text);
}

static void drop(fixture f)
{
	fixture_drop(f);
}

/* Peak position of a sampled Gaussian, in frames: the log of a Gaussian is a
 * parabola, so the 3-point parabola through ln(x) at the maximum is exact. */
static double gaussian_peak(const double *x, int n, int *imax)
{
	int m = 1;
	for (int i = 1; i < n - 1; i++)
		if (x[i] > x[m])
			m = i;
	double a = log(x[m - 1]), b = log(x[m]), c = log(x[m + 1]);
	*imax = m;
	return m + 0.5 * (a - c) / (a - 2 * b + c);
}

static const char *click_scenario =
	"[world]\nnoise_dbfs = -200\nsample_rate_hz = 48000\nspeed_of_sound_m_s = 343\nair_absorption = false\n"
	"[node.4]\nposition_m = 0,0,0\nmics_m = 0,0,0; 0.5,0,0\naudio_skew_ppm = %g\n"
	"[source.1]\nposition_m = 10,0,0\nwaveform = click\nclick_width_us = 100\n"
	"level_dbfs = 0\ncall_times_s = 0.1\n";

/* A click 10 m away (9.5 m from mic 1) shows up at the right fractional
 * frame and with 1/r amplitude, on an exact clock and on a skewed one. */
static void check_click(double skew_ppm)
{
	char *text = g_strdup_printf(click_scenario, skew_ppm);
	fixture f = make(text);
	double rate = 48000;
	for (int mic = 0; mic < 2; mic++) {
		double r = 10.0 - 0.5 * mic;
		double t_peak = 0.1 + 5 * 100e-6 + r / 343.0;
		double f_expect = t_peak * rate * (1 + skew_ppm * 1e-6);
		int64_t base = (int64_t)floor(f_expect) - 20;
		double x[41];
		for (int i = 0; i < 41; i++)
			x[i] = sim_world_sample(f.w, 4, mic, rate, base + i);
		int imax;
		double peak = base + gaussian_peak(x, 41, &imax);
		/* Exact up to rounding: the waveform is analytic. */
		ck_assert_msg(fabs(peak - f_expect) < 1e-6, "mic %d: peak at %.9f, expected %.9f", mic, peak,
			      f_expect);
		ck_assert_double_eq_tol(sim_world_delay_s(f.w, 4, mic, 0), r / 343.0, 1e-15);
		/* Amplitude: 1/r times the Gaussian at that sample's offset; the
		 * -200 dBFS noise (rms 1e-10) is the only difference. */
		double sigma_frames = 100e-6 * rate * (1 + skew_ppm * 1e-6);
		double d = (base + imax) - f_expect;
		ck_assert_double_eq_tol(x[imax], exp(-0.5 * d * d / (sigma_frames * sigma_frames)) / r, 1e-9);
		/* The truth functions agree with each other. */
		ck_assert_double_eq_tol(sim_world_frame_at(f.w, 4, rate, t_peak), f_expect, 1e-7);
		ck_assert_double_eq_tol(sim_world_frame_time_s(f.w, 4, rate, (int64_t)f_expect),
					floor(f_expect) / (rate * (1 + skew_ppm * 1e-6)), 1e-15);
	}
	drop(f);
	g_free(text);
}

START_TEST(click_arrives_at_the_right_fractional_frame)
{
	check_click(0);
}
END_TEST

START_TEST(click_on_a_skewed_audio_clock)
{
	/* +40 ppm moves the peak by 0.128 s * 48000 * 40e-6 = 0.25 frames:
	 * 250000 times the tolerance above. */
	check_click(40);
	check_click(-37.5);
}
END_TEST

START_TEST(frame_times_and_stream_start)
{
	fixture f = make("[node.1]\nposition_m = 0,0\naudio_skew_ppm = 23.7\n");
	double rate = 44100;
	/* t(F) in ns, rounded, and the first frame at or after a time. */
	for (int64_t ns = 0; ns < 3000000000LL; ns += 123456789) {
		int64_t f0 = sim_world_first_frame_at(f.w, 1, rate, ns);
		ck_assert_int_ge(sim_world_frame_time_ns(f.w, 1, rate, f0), ns);
		ck_assert_int_lt(sim_world_frame_time_ns(f.w, 1, rate, f0 - 1), ns);
	}
	/* A long way in: 10^6 s of frames, still exact to the ns. */
	int64_t big = (int64_t)(1e6 * rate);
	double expect = (double)big * 1e9 / (rate * (1 + 23.7e-6));
	ck_assert_int_le(llabs(sim_world_frame_time_ns(f.w, 1, rate, big) - (int64_t)llround(expect)), 1);
	drop(f);
}
END_TEST

/* Wandering clocks (issue 13 item 3): the walk has the stated diffusion,
 * the temperature cycle its closed form, and the world's frame times, the
 * cpu clock through CHORUS_SIM_CLOCK's text and their inverses agree. */
START_TEST(wandering_clocks)
{
	/* Frequency changes over 1 s and over 64 s: variance q^2 dt (chi^2
	 * with N dof: relative sd sqrt(2/N); 5 of those allowed). */
	sync_wander w = {.rw_ppb = 10, .seed = 12345};
	const int n1 = 20000, n64 = 300;
	double s1 = 0, s64 = 0;
	for (int k = 0; k < n1; k++) {
		double d = (sync_wander_freq(&w, k + 2.0) - sync_wander_freq(&w, k + 1.0)) * 1e9;
		s1 += d * d;
	}
	for (int k = 0; k < n64; k++) {
		double d = (sync_wander_freq(&w, 64.0 * (k + 2)) - sync_wander_freq(&w, 64.0 * (k + 1))) * 1e9;
		s64 += d * d;
	}
	ck_assert_double_le(fabs(s1 / n1 / 100.0 - 1), 5 * sqrt(2.0 / n1));
	ck_assert_double_le(fabs(s64 / n64 / (64 * 100.0) - 1), 5 * sqrt(2.0 / n64));
	/* The phase is the integral of the frequency (midpoint rule, 1 ms). */
	for (double t0 = 3.2; t0 < 4000; t0 *= 3) {
		double integ = 0;
		for (int i = 0; i < 2000; i++)
			integ += sync_wander_freq(&w, t0 + (i + 0.5) * 1e-3) * 1e-3 * 1e9;
		double dw = sync_wander_phase_ns(&w, t0 + 2.0) - sync_wander_phase_ns(&w, t0);
		ck_assert_double_le(fabs(dw - integ), 1e-6 * fabs(integ) + 1e-9);
	}
	ck_assert_double_eq(sync_wander_phase_ns(&w, -5), 0);
	/* The temperature cycle: half a period gains tempco A P / pi. */
	sync_wander tc = {.temp_amp_c = 5, .temp_period_s = 600, .tempco_ppm_per_c = 0.5};
	ck_assert_double_le(fabs(sync_wander_phase_ns(&tc, 300) - 0.5e3 * 5 * 600 / G_PI), 1e-3);
	ck_assert_double_le(fabs(sync_wander_freq(&tc, 150) - 2.5e-6), 1e-15);
	/* A phase shifts the cycle earlier; the phase gained still starts at 0
	 * at the epoch and is the frequency's integral (a quarter period in:
	 * the rate at its peak at t = 0, back to 0 at t = 150 s). */
	sync_wander tp = tc;
	tp.temp_phase_s = 150;
	ck_assert_double_le(fabs(sync_wander_freq(&tp, 1e-9) - 2.5e-6), 1e-15);
	ck_assert_double_le(fabs(sync_wander_freq(&tp, 150)), 1e-15);
	ck_assert_double_le(fabs(sync_wander_freq(&tp, 77) - sync_wander_freq(&tc, 227)), 1e-15);
	ck_assert_double_le(fabs(sync_wander_phase_ns(&tp, 1e-6)), 1e-2);
	ck_assert_double_le(fabs(sync_wander_phase_ns(&tp, 150) - 0.5e3 * 5 * 600 / (2 * G_PI)), 1e-3);

	/* CHORUS_SIM_CLOCK's long form round-trips; apply and invert agree. */
	sync_simclock c = {.skew_ppm = 12.5, .offset_ns = -77, .wander = {.rw_ppb = 10, .temp_amp_c = 5, .temp_period_s = 600, .tempco_ppm_per_c = 0.1, .seed = 99}, .epoch_ns = 1000000000000LL};
	char text[256];
	sync_simclock back;
	const char *why = NULL;
	ck_assert_int_eq(sync_simclock_parse(sync_simclock_format(&c, text, sizeof text), &back, &why), 0);
	ck_assert_int_eq(back.wander.seed, 99);
	ck_assert_int_eq(back.epoch_ns, c.epoch_ns);
	for (int64_t h = c.epoch_ns - 5000000000LL; h < c.epoch_ns + 3600000000000LL; h += 77777777777LL) {
		int64_t x = sync_simclock_apply(&back, h);
		ck_assert_int_eq(x, sync_simclock_apply(&c, h));
		ck_assert_int_le(llabs(sync_simclock_invert(&c, x) - h), 1);
	}
	ck_assert_int_eq(sync_simclock_parse("1,2,3", &back, &why), -EINVAL);
	ck_assert_int_eq(sync_simclock_parse("1,2,-3,0,600,0,1,0", &back, &why), -EINVAL);
	/* The ninth field, the cycle's phase: optional, kept. */
	c.wander.temp_phase_s = 123.25;
	ck_assert_int_eq(sync_simclock_parse(sync_simclock_format(&c, text, sizeof text), &back, &why), 0);
	ck_assert_double_eq(back.wander.temp_phase_s, 123.25);
	ck_assert_int_eq(sync_simclock_parse("12.5,-77,10,5,600,0.1,99,1000000000000", &back, &why), 0);
	ck_assert_double_eq(back.wander.temp_phase_s, 0);
	ck_assert_int_eq(sync_simclock_parse("12.5,-77,10,5,600,0.1,99,1000000000000,x", &back, &why), -EINVAL);

	/* The world: the card's frame times invert, the cpu clock wanders from
	 * the epoch as the text the processes get says. */
	fixture f = make("[node.2]\nposition_m = 0,0\naudio_skew_ppm = 30\naudio_wander_ppb_per_s = 10\n"
			 "cpu_skew_ppm = -20\ncpu_wander_ppb_per_s = 10\ntemperature_cycle = 5, 600, 40\n"
			 "tempco_ppm_per_c = 0.1\naudio_tempco_ppm_per_c = 0.5\n");
	const double rate = 48000;
	for (int64_t fr = 1000; fr < 48000LL * 3600; fr = fr * 3 + 17) {
		double t = sim_world_frame_time_s(f.w, 2, rate, fr);
		ck_assert_double_le(fabs(sim_world_frame_at(f.w, 2, rate, t) - (double)fr), 1e-4);
		int64_t ns = sim_world_frame_time_ns(f.w, 2, rate, fr);
		ck_assert_int_eq(sim_world_first_frame_at(f.w, 2, rate, ns), fr);
	}
	/* 5 °C x 0.5 ppm/°C: over half a cycle the card gains ~2.4 ms (less
	 * or more by its walk, a few us). */
	double gain = sim_world_frame_at(f.w, 2, rate, 300) / rate - 300 * (1 + 30e-6);
	ck_assert_double_le(fabs(gain - 0.5e-6 * 5 * 600 / G_PI), 1e-4);
	const sim_node_cfg *nc = sim_scenario_find_node(f.sc, 2);
	int64_t epoch = 5000000000000LL;
	sim_world_set_epoch(f.w, epoch);
	sync_simclock told = nc->cpu;
	told.epoch_ns = epoch;
	ck_assert_int_eq(sync_simclock_parse(sync_simclock_format(&told, text, sizeof text), &back, &why), 0);
	for (int64_t h = epoch; h < epoch + 1800000000000LL; h += 99999999999LL) {
		ck_assert_int_eq(sim_world_node_cpu_at(f.w, 2, h), sync_simclock_apply(&back, h));
		ck_assert_int_le(llabs(sim_world_true_at_node_cpu(f.w, 2, sync_simclock_apply(&back, h)) - h), 1);
	}
	/* Each clock has its own walk. */
	ck_assert_uint_ne(nc->cpu.wander.seed, nc->audio_wander.seed);
	drop(f);
}
END_TEST

START_TEST(cpu_clock_truth)
{
	fixture f = make("[node.3]\nposition_m = 0,0\ncpu_skew_ppm = -41.5\ncpu_offset_ns = 27182818284\n");
	sync_simclock c = {.skew_ppm = -41.5, .offset_ns = 27182818284LL};
	for (int64_t h = 0; h < 4000000000000LL; h += 77777777777LL) {
		int64_t cpu = sim_world_node_cpu_at(f.w, 3, h);
		ck_assert_int_eq(cpu, sync_simclock_apply(&c, h));
		ck_assert_int_le(llabs(sim_world_true_at_node_cpu(f.w, 3, cpu) - h), 1);
	}
	ck_assert_int_eq(sim_world_node_cpu_at(f.w, 99, 0), INT64_MIN);
	drop(f);
}
END_TEST

START_TEST(noise_is_white_gaussian_at_the_level_and_reproducible)
{
	fixture f = make("[world]\nnoise_dbfs = -40\nseed = 11\n[node.1]\nposition_m = 0,0\nmics_m = 0,0;1,0\n");
	const int n = 100000;
	double sum = 0, sum2 = 0, lag = 0, cross = 0;
	double prev = 0;
	for (int i = 0; i < n; i++) {
		double x = sim_world_sample(f.w, 1, 0, 48000, 1000 + i);
		double y = sim_world_noise(f.w, 1, 1, 1000 + i);
		ck_assert(x == sim_world_noise(f.w, 1, 0, 1000 + i)); /* no sources: noise only */
		sum += x;
		sum2 += x * x;
		lag += x * prev;
		cross += x * y;
		prev = x;
	}
	double sigma = pow(10, -40 / 20.0);
	double rms = sqrt(sum2 / n);
	/* 5-sigma bounds: mean sd = sigma/sqrt(n); rms relative sd = 1/sqrt(2n);
	 * correlations (lag 1, mic to mic) sd = 1/sqrt(n) relative. */
	ck_assert_double_le(fabs(sum / n), 5 * sigma / sqrt(n));
	ck_assert_double_le(fabs(rms / sigma - 1), 5 / sqrt(2.0 * n));
	ck_assert_double_le(fabs(lag / sum2), 5 / sqrt((double)n));
	ck_assert_double_le(fabs(cross / sum2), 5 / sqrt((double)n));
	/* Counter-based: frame k regenerated alone, in any order, is the same. */
	double a = sim_world_noise(f.w, 1, 0, 123456789);
	(void)sim_world_noise(f.w, 1, 0, 5);
	ck_assert(a == sim_world_noise(f.w, 1, 0, 123456789));
	drop(f);
}
END_TEST

/* A Poisson source never calls over itself: each call starts at least
 * call_gap_s after the previous one ended; with call_gap_s = 0 calls may
 * still abut but never overlap.  At 5 calls/s of 0.2-s calls a plain
 * Poisson process would overlap about 1 - e^-1 = 63 % of its calls. */
START_TEST(a_source_never_overlaps_its_own_calls)
{
	const double gaps[] = {0.25, 0};
	for (size_t i = 0; i < G_N_ELEMENTS(gaps); i++) {
		char text[256];
		g_snprintf(text, sizeof text,
			   "[world]\nduration_s = 100\nseed = 5\n[node.1]\nposition_m = 0,0\n"
			   "[source.1]\nposition_m = 1,1\ncall_rate_hz = 5\npulses = 8\n"
			   "pulse_interval_ms = 25\ncall_gap_s = %g\n",
			   gaps[i]);
		fixture f = make(text);
		size_t n = sim_world_n_calls(f.w, 0);
		double sum = 0;
		for (size_t k = 1; k < n; k++) {
			double prev = sim_world_call_time_s(f.w, 0, k - 1);
			double len = sim_world_call_length_s(f.w, 0, k - 1);
			ck_assert_msg(sim_world_call_time_s(f.w, 0, k) >= prev + len + gaps[i] - 1e-9,
				      "call %zu starts %.4f s after call %zu (length %.3f s, gap %g s)", k,
				      sim_world_call_time_s(f.w, 0, k) - prev, k - 1, len, gaps[i]);
			sum += len;
		}
		/* The mean interval is d + e^(-rate d) / rate, d = length + gap:
		 * the count is 100 s over it, within 5 of its Poisson-like s.d. */
		double d = (n > 1 ? sum / (double)(n - 1) : 0) + gaps[i];
		double expect = 100.0 / (d + exp(-5.0 * d) / 5.0);
		ck_assert_msg(fabs((double)n - expect) <= 5 * sqrt(expect), "%zu calls, expected %.0f", n, expect);
		drop(f);
	}
}
END_TEST

START_TEST(poisson_calls_have_the_rate)
{
	fixture f = make("[world]\nduration_s = 1000\nseed = 3\n[node.1]\nposition_m = 0,0\n"
			 "[source.1]\nposition_m = 1,1\ncall_rate_hz = 0.4\ncall_start_s = 100\n");
	size_t n = sim_world_n_calls(f.w, 0);
	/* Poisson(0.4 * 900 = 360): 5 sigma = 95. */
	ck_assert_int_le(labs((long)n - 360), 95);
	for (size_t k = 0; k < n; k++) {
		double t = sim_world_call_time_s(f.w, 0, k);
		ck_assert(t >= 100 && t < 1000);
		if (k)
			ck_assert(t > sim_world_call_time_s(f.w, 0, k - 1));
	}
	drop(f);
	/* Explicit lists are sorted and kept exactly. */
	f = make("[node.1]\nposition_m = 0,0\n[source.7]\nposition_m = 1,1\ncall_times_s = 3, 1.5, 2\n");
	ck_assert_int_eq(sim_world_n_calls(f.w, 0), 3);
	ck_assert(sim_world_call_time_s(f.w, 0, 0) == 1.5 && sim_world_call_time_s(f.w, 0, 2) == 3);
	drop(f);
}
END_TEST

static double mean_latency(const sim_world *w, int node, int n, double *max, int64_t cap)
{
	double s = 0;
	*max = 0;
	for (int i = 0; i < n; i++) {
		double l = (double)sim_world_irq_latency_ns(w, node, 480 * (int64_t)(i + 1), cap);
		ck_assert(l >= 0);
		s += l;
		if (l > *max)
			*max = l;
	}
	return s / n;
}

START_TEST(interrupt_latency_distributions)
{
	fixture f = make("[node.1]\nposition_m = 0,0\nirq_latency = exponential\nirq_latency_mean_us = 20\n"
			 "[node.2]\nposition_m = 0,0\nirq_latency = uniform\nirq_latency_mean_us = 30\nirq_latency_sd_us = 10\n"
			 "[node.3]\nposition_m = 0,0\nirq_latency = constant\nirq_latency_mean_us = 7\n"
			 "[node.4]\nposition_m = 0,0\nirq_latency = normal\nirq_latency_mean_us = 50\nirq_latency_sd_us = 5\n"
			 "[node.5]\nposition_m = 0,0\nirq_latency = mixture\nirq_latency_mean_us = 10\n"
			 "irq_latency_mix_fraction = 0.1\nirq_latency_mix_mean_us = 200\nirq_latency_floor_us = 3\n");
	const int n = 50000;
	double max;
	/* exponential: sd = mean, 5-sigma bound on the sample mean */
	ck_assert_double_le(fabs(mean_latency(f.w, 1, n, &max, -1) - 20000), 5 * 20000 / sqrt(n));
	/* uniform on 30 ± sqrt(3) 10 µs */
	ck_assert_double_le(fabs(mean_latency(f.w, 2, n, &max, -1) - 30000), 5 * 10000 / sqrt(n));
	ck_assert_double_le(max, 30000 + sqrt(3) * 10000 + 1);
	ck_assert_double_eq(mean_latency(f.w, 3, 100, &max, -1), 7000);
	ck_assert_double_le(fabs(mean_latency(f.w, 4, n, &max, -1) - 50000), 5 * 5000 / sqrt(n));
	/* mixture 0.9 exp(10 us) + 0.1 exp(200 us) on a 3 us floor: mean 3 + 9 + 20 us,
	 * variance of the mixture 0.9 * 2 * 10^2 + 0.1 * 2 * 200^2 - 29^2 us^2 */
	double mix_sd = sqrt(0.9 * 2 * 100 + 0.1 * 2 * 40000 - 29.0 * 29.0) * 1e3;
	ck_assert_double_le(fabs(mean_latency(f.w, 5, n, &max, -1) - 32000), 5 * mix_sd / sqrt(n));
	double lo = 1e18;
	for (int i = 0; i < n; i++)
		lo = fmin(lo, (double)sim_world_irq_latency_ns(f.w, 5, 480 * (int64_t)(i + 1), -1));
	ck_assert_double_ge(lo, 3000);
	ck_assert_double_le(lo, 3000 + 10000 * 20.0 / n); /* the floor is reached: min of 45000 exp(10 us) */
	/* the cap holds */
	mean_latency(f.w, 1, n, &max, 30000);
	ck_assert_double_eq(max, 30000);
	drop(f);
}
END_TEST

START_TEST(synthetic_waveforms_are_the_formulas)
{
	dsp_wave_params p;
	memset(&p, 0, sizeof p);
	p.kind = DSP_WAVE_PULSE_TRAIN;
	p.carrier_hz = 2000;
	p.pulse_ms = 4;
	p.pulse_interval_ms = 25;
	p.pulses = 3;
	dsp_wave *w = dsp_wave_new(&p, 48000, NULL);
	ck_assert_double_eq_tol(dsp_wave_length_s(w), 0.054, 1e-15);
	double tau = 0.025 + 0.0013; /* second pulse */
	double env = sin(M_PI * 0.0013 / 0.004);
	ck_assert_double_eq_tol(dsp_wave_eval(w, tau), env * env * sin(2 * M_PI * 2000 * 0.0013), 1e-12);
	ck_assert_double_eq(dsp_wave_eval(w, 0.010), 0); /* between pulses */
	ck_assert_double_eq(dsp_wave_eval(w, 0.06), 0);  /* after the call */
	dsp_wave_free(w);

	memset(&p, 0, sizeof p);
	p.kind = DSP_WAVE_CHIRP;
	p.f0_hz = 1000;
	p.f1_hz = 4000;
	p.length_ms = 200;
	p.taper_ms = 5;
	w = dsp_wave_new(&p, 48000, NULL);
	tau = 0.1; /* middle: untapered, f = 2500 Hz, phase 2 pi (1000 tau + 3000 tau^2 / 0.4) */
	ck_assert_double_eq_tol(dsp_wave_eval(w, tau), sin(2 * M_PI * (100 + 3000 * 0.01 / 0.4)), 1e-9);
	dsp_wave_free(w);
	p.sweep = DSP_SWEEP_EXPONENTIAL;
	w = dsp_wave_new(&p, 48000, NULL);
	/* f(tau) = 1000 * 4^(tau / 0.2): phase 2 pi 1000 (4^(tau/0.2) - 1) 0.2 / ln 4 */
	ck_assert_double_eq_tol(dsp_wave_eval(w, tau), sin(2 * M_PI * 1000 * (2 - 1) * 0.2 / log(4)), 1e-9);
	dsp_wave_free(w);
}
END_TEST

/* A WAV source at 44.1 kHz played into a 48 kHz world: band-limited
 * interpolation reproduces the tone at arbitrary fractional times. */
START_TEST(file_source_is_interpolated)
{
	const char *run = g_getenv("CHORUS_RUN");
	char *path = g_build_filename(run ? run : g_get_tmp_dir(), "tone.wav", NULL);
	SF_INFO info = {.samplerate = 44100, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open(path, SFM_WRITE, &info);
	ck_assert_msg(sf, "%s", sf_strerror(NULL));
	const int n = 44100 / 2;
	float *buf = g_new(float, 2 * n);
	for (int i = 0; i < n; i++) {
		buf[2 * i] = 0;
		buf[2 * i + 1] = (float)(0.5 * sin(2 * M_PI * 1234.5 * i / 44100.0));
	}
	ck_assert_int_eq(sf_writef_float(sf, buf, n), n);
	sf_close(sf);
	g_free(buf);

	char *text = g_strdup_printf("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\n"
				     "[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,0\n"
				     "waveform = file\nfile = tone.wav\nfile_channel = 1\ncall_times_s = 0\n");
	fixture f = make(text);
	double worst = 0;
	/* Away from the edges (the kernel reaches 16 samples), at times that are
	 * on neither sample grid; float samples carry 6e-8 relative error. */
	for (double t = 0.01; t < 0.49; t += 0.0007319) {
		double exp_v = 0.5 * sin(2 * M_PI * 1234.5 * t) * pow(10, -20 / 20.0); /* 1 m, -20 dBFS */
		double got = sim_world_pressure(f.w, 1, 0, t + 1.0 / 343.0);
		worst = fmax(worst, fabs(got - exp_v));
	}
	/* Blackman-windowed sinc, 16 half-width: passband ripple < 1e-3 of 0.05. */
	ck_assert_msg(worst < 0.05 * 2e-3, "worst interpolation error %g", worst);
	drop(f);
	g_free(text);
	g_free(path);
}
END_TEST

START_TEST(rng_is_uniform_and_keyed)
{
	/* Distinct keys give distinct outputs; unit() stays inside (0, 1). */
	ck_assert(sim_rng_hash(1, 1, 0, 0, 0) != sim_rng_hash(1, 1, 0, 0, 1));
	ck_assert(sim_rng_hash(1, 1, 0, 0, 0) != sim_rng_hash(2, 1, 0, 0, 0));
	ck_assert(sim_rng_hash(1, 1, 1, 0, 0) != sim_rng_hash(1, 1, 0, 1, 0));
	const int n = 100000, bins = 10;
	int count[10] = {0};
	for (int i = 0; i < n; i++) {
		double u = sim_rng_unit(sim_rng_hash(5, 9, 0, 0, (uint64_t)i));
		ck_assert(u > 0 && u < 1);
		count[(int)(u * bins)]++;
	}
	/* Chi-square with 9 dof: P(> 27.9) = 0.001. */
	double chi2 = 0, e = (double)n / bins;
	for (int b = 0; b < bins; b++)
		chi2 += (count[b] - e) * (count[b] - e) / e;
	ck_assert_double_lt(chi2, 27.9);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("world");
	TCase *tc = tcase_create("truth");
	tcase_add_test(tc, click_arrives_at_the_right_fractional_frame);
	tcase_add_test(tc, click_on_a_skewed_audio_clock);
	tcase_add_test(tc, frame_times_and_stream_start);
	tcase_add_test(tc, cpu_clock_truth);
	tcase_add_test(tc, wandering_clocks);
	tcase_add_test(tc, noise_is_white_gaussian_at_the_level_and_reproducible);
	tcase_add_test(tc, poisson_calls_have_the_rate);
	tcase_add_test(tc, a_source_never_overlaps_its_own_calls);
	tcase_add_test(tc, interrupt_latency_distributions);
	tcase_add_test(tc, synthetic_waveforms_are_the_formulas);
	tcase_add_test(tc, file_source_is_interpolated);
	tcase_add_test(tc, rng_is_uniform_and_keyed);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
