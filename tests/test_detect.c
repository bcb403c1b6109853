/* test_detect.c — detect's own parts: the fft frame codec, profiles (the
 * shipped ones load, mistakes are reported with file:line), the event codec,
 * and the detection pipeline detect runs (tests/detect_rig.h) on synthetic
 * calls of the simulator's waveforms in seeded white noise, against known
 * call times: recall, onsets, false alarms, varied calls' onsets and
 * names.  Overlapping calls: tests/test_detect_overlap.c. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/detect/event.h"
#include "apps/detect/onset_rate.h"
#include "apps/detect/profile.h"
#include "apps/detect/refine.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/stft.h"
#include "apps/fft/frames.h"
#include "apps/dsp/band.h"
#include "apps/dsp/synth.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"
#include "tests/detect_rig.h"


static char *write_tmp(const char *text)
{
	char *path = g_strdup_printf("%s/profile-XXXXXX.ini", g_get_tmp_dir());
	int fd = g_mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	return path;
}

START_TEST(frames_roundtrip_and_rejects)
{
	float P[513], Q[513];
	for (int k = 0; k < 513; k++)
		P[k] = (float)k * 0.5f;
	fft_frame_msg m = {.first = 123456789012LL, .size = 1024, .hop = 256, .nbins = 513, .window = 1, .rate_hz = 48000, .channel = 2, .P = P};
	size_t len = fft_frame_bytes(513);
	uint8_t *buf = g_malloc(len);
	ck_assert_int_eq(fft_frame_encode(&m, buf, len), (int)len);
	fft_frame_msg d;
	const char *why;
	ck_assert_int_eq(fft_frame_decode(buf, len, &d, Q, 513, &why), 0);
	ck_assert(d.first == m.first && d.size == 1024 && d.hop == 256 && d.channel == 2 && d.rate_hz == 48000);
	ck_assert(memcmp(P, Q, sizeof P) == 0);
	/* band sum: bins k with k * 48000/1024 in [1000, 2000] are 22..42 */
	double want = 0;
	for (int k = 22; k <= 42; k++)
		want += P[k];
	ck_assert_double_eq_tol(fft_frame_band(&d, 1000, 2000), want, 1e-9);
	ck_assert_int_eq(fft_frame_decode(buf, len - 1, &d, Q, 513, &why), -EBADMSG);
	ck_assert_int_eq(fft_frame_decode(buf, len, &d, Q, 100, &why), -EMSGSIZE);
	buf[4] = 9; /* version */
	ck_assert_int_eq(fft_frame_decode(buf, len, &d, Q, 513, &why), -EPROTONOSUPPORT);
	memcpy(buf, "XXXX", 4);
	ck_assert_int_eq(fft_frame_decode(buf, len, &d, Q, 513, &why), -EBADMSG);
	g_free(buf);
}
END_TEST

START_TEST(shipped_profiles_load)
{
	const char *files[] = {"apps/profiles/frog.ini", "apps/profiles/bird-chirp.ini"};
	for (int i = 0; i < 2; i++) {
		det_profile p;
		GError *err = NULL;
		ck_assert_msg(det_profile_load(&p, files[i], &err), "%s: %s", files[i], err ? err->message : "");
		int n = det_profile_n_templates(&p);
		ck_assert_int_ge(n, 1);
		for (int t = 0; t < n; t++) {
			size_t m = 0;
			float *h = det_profile_render(&p, t, 48000, &m, &err);
			ck_assert_msg(h && m > 100, "%s template %d", files[i], t + 1);
			g_free(h);
		}
		/* frog.ini states its calls are its templates; bird-chirp.ini
		 * states nothing and gets the key's default, real calls' 3 %. */
		ck_assert_double_eq(p.variation_pct, i == 0 ? 0 : 3);
		ck_assert_str_eq(det_profile_call(&p, 0), ""); /* each template its own call type */
		det_profile_clear(&p);
	}
}
END_TEST

/* Two forms of one call named one call type; the events carry it. */
START_TEST(templates_of_one_call_type)
{
	char *path = write_tmp("[template.1]\nwaveform = tone\nfreq_hz = 2000\ncall = trill\n"
			       "[template.3]\nwaveform = tone\nfreq_hz = 2100\ncall = trill\n"
			       "[template.4]\nwaveform = chirp\n");
	det_profile p;
	GError *err = NULL;
	ck_assert_msg(det_profile_load(&p, path, &err), "%s", err ? err->message : "");
	ck_assert_int_eq(det_profile_n_templates(&p), 3);
	ck_assert_str_eq(det_profile_call(&p, 0), "trill");
	ck_assert_str_eq(det_profile_call(&p, 1), "trill"); /* [template.3]: the second configured */
	ck_assert_str_eq(det_profile_call(&p, 2), "");
	ck_assert_str_eq(det_profile_call(&p, 7), "");
	det_profile_clear(&p);
	unlink(path);
	g_free(path);
}
END_TEST

START_TEST(profile_errors_name_the_line)
{
	struct {
		const char *text, *want;
	} cases[] = {
		{"[detector]\nf_lo_hz = 1000\non_db = abc\n", ":3:"},
		{"[detector]\nbogus = 1\n", ":2:"},
		{"[nosuchgroup]\nx = 1\n", ":1:"},
		{"[template.1]\nwaveform = pulse_train\npulses = 0\n", ":3:"},
		{"[template.2]\nwaveform = squiggle\n", "waveform"},
		{"[detector]\non_db = 3\noff_db = 6\n", "off_db"},
		{"[template.1]\nwaveform = tone\ncall = two words\n", ":3:"},
		{"[template.1]\nwaveform = tone\ncall = a_name_of_thirty_two_characters_\n", "call"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		char *path = write_tmp(cases[i].text);
		det_profile p;
		GError *err = NULL;
		ck_assert_msg(!det_profile_load(&p, path, &err), "case %zu accepted", i);
		ck_assert_msg(strstr(err->message, cases[i].want), "case %zu: \"%s\" lacks \"%s\"", i, err->message,
			      cases[i].want);
		g_error_free(err);
		det_profile_clear(&p);
		unlink(path);
		g_free(path);
	}
}
END_TEST

START_TEST(event_roundtrip_and_rejects)
{
	det_event e = {.node = 7, .dev = 1, .seq = 42, .onset_frame = 123456.7891, .onset_se = 0.0123, .rate_hz = 48000, .cpu_ns = 5000000000123LL, .cpu_se_ns = 250.5, .has_global = TRUE, .global_ns = 1796000000123456789LL, .global_se_ns = 300.25, .duration_s = 0.25, .f_lo_hz = 1000, .f_hi_hz = 3200, .snr_db = 17.5, .enr_db = 44.4, .template_id = 2};
	g_strlcpy(e.profile, "frog", sizeof e.profile);
	GString *s = g_string_new(NULL);
	char why[160];
	det_event_format(&e, s);
	det_event d;
	ck_assert_int_eq(det_event_parse(s->str, s->len, &d, why, sizeof why), 0);
	ck_assert(d.node == 7 && d.dev == 1 && d.seq == 42 && d.cpu_ns == e.cpu_ns && d.global_ns == e.global_ns);
	ck_assert(d.has_global && d.template_id == 2 && !strcmp(d.profile, "frog"));
	ck_assert_double_eq_tol(d.onset_frame, e.onset_frame, 1e-4);
	ck_assert(!strstr(s->str, "sim")); /* nothing of a simulation in the format */
	/* Without the bound alone (an older detect, or none below the
	 * whole), it is the whole; with it, it comes through. */
	ck_assert(!strstr(s->str, "onset_crb_se"));
	ck_assert_double_eq(d.onset_crb_se, d.onset_se);
	e.onset_crb_se = 0.0011;
	g_string_truncate(s, 0);
	det_event_format(&e, s);
	ck_assert_int_eq(det_event_parse(s->str, s->len, &d, why, sizeof why), 0);
	ck_assert_double_eq_tol(d.onset_crb_se, 0.0011, 1e-7);
	ck_assert_double_eq_tol(d.onset_se, 0.0123, 1e-7);
	/* without global time */
	e.has_global = FALSE;
	g_string_truncate(s, 0);
	det_event_format(&e, s);
	ck_assert_int_eq(det_event_parse(s->str, s->len, &d, why, sizeof why), 0);
	ck_assert(!d.has_global);
	/* the call type: absent (its template alone), then named */
	ck_assert(!strstr(s->str, "call=") && !d.call[0]);
	g_strlcpy(e.call, "advert.B-2", sizeof e.call);
	g_string_truncate(s, 0);
	det_event_format(&e, s);
	ck_assert_int_eq(det_event_parse(s->str, s->len, &d, why, sizeof why), 0);
	ck_assert_str_eq(d.call, "advert.B-2");
	/* the other starts the match left open: none, then three */
	ck_assert(!strstr(s->str, "onset_alt") && d.n_alt == 0);
	e.n_alt = 3;
	e.onset_alt[0] = -752.25;
	e.onset_alt[1] = 326.5;
	e.onset_alt[2] = 1500;
	g_string_truncate(s, 0);
	det_event_format(&e, s);
	ck_assert_ptr_nonnull(strstr(s->str, " onset_alt=-752.25,326.50,1500.00"));
	ck_assert_int_eq(det_event_parse(s->str, s->len, &d, why, sizeof why), 0);
	ck_assert_int_eq(d.n_alt, 3);
	ck_assert_double_eq_tol(d.onset_alt[0], -752.25, 1e-9);
	ck_assert_double_eq_tol(d.onset_alt[2], 1500, 1e-9);
	const char *bad[] = {"v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none onset_alt=1,2,3,4,5,6,7",
			     "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none onset_alt=1,x",
			     "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none onset_alt=1,",
			     "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none onset_alt=200000000000",
			     "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none onset_alt=nan", "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none call=a/b",
			     "v=1 node=1 onset_frame=1 rate=48000 cpu_ns=1 global_ns=none call=a_name_of_thirty_two_characters_",
			     "", "v=2 node=1 onset_frame=1 rate=1 cpu_ns=1 global_ns=none", "v=1 node=x",
			     "v=1 node=1 onset_frame=1 rate=0 cpu_ns=1 global_ns=none", "garbage",
			     "v=1 node=1 onset_frame=1 rate=1 cpu_ns=1 global_ns=5",
			     "v=1 node=1 onset_frame=1 onset_se=1 onset_crb_se=-1 rate=48000 cpu_ns=1 global_ns=none"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		ck_assert_msg(det_event_parse(bad[i], strlen(bad[i]), &d, why, sizeof why) == -EINVAL, "accepted \"%s\"", bad[i]);
	g_string_free(s, TRUE);
}
END_TEST

/* ---- the pipeline on synthetic calls ------------------------------------ */


/* Calls up to 3 % off their templates (every duration and frequency scaled
 * by 1 + s, s uniform in +-3 %: what the profile's variation_pct = 3
 * states), each of the frog profile's three at 20 dB (energy over the
 * call's length against the noise), 60 seeds each: the refined onsets'
 * errors against their stated s.e. — none beyond 5, at most 2 % beyond 3
 * (slipped alignments are discrete, so more than a normal's 0.3 %), while
 * the bound alone is beyond 3 for most of them; with variation_pct = 0
 * the same calls are stated far too precisely (the statement is the
 * profile's, so it must be the user's to make). */
START_TEST(varied_calls_onsets_covered)
{
	rig r;
	rig_init(&r);
	/* frog.ini says 0: the simulator's calls are its templates; these are
	 * not, and a user who knows it says 3 (the key's default). */
	ck_assert_double_eq(r.prof.variation_pct, 0);
	ck_assert_int_eq(det_refiner_set_variation(r.ref, 0.03), 0);
	ck_assert_int_eq(det_refiner_set_variation(r.ref, 0.9), -EINVAL);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int total = 0, beyond3 = 0, beyond5 = 0, crb_beyond3 = 0;
	double worst = 0;
	for (int t = 0; t < 3; t++) {
		double len = dsp_wave_length_s(r.wave[t]), amp = sqrt(100.0 / rig_wave_power(&r, t));
		fprintf(stderr, "template %d: onset error under 3 %% variation %.2f ms\n", t + 1,
			det_refiner_variation_bias(r.ref, t + 1) / RATE * 1e3);
		for (int seed = 1; seed <= 60; seed++) {
			gsl_rng_set(g, (unsigned long)(1000 * t + seed));
			double s = 0.03 * (2 * gsl_rng_uniform(g) - 1), start = 0.2 + 0.01 * gsl_rng_uniform(g);
			size_t n = (size_t)((start + len * 1.05 + 0.2) * RATE);
			float *x = g_new(float, n);
			for (size_t i = 0; i < n; i++)
				x[i] = (float)gsl_ran_gaussian(g, 1.0);
			for (size_t i = (size_t)(start * RATE); i < n; i++)
				x[i] += (float)(amp * dsp_wave_eval(r.wave[t], (i / RATE - start) / (1 + s)));
			det_refine_result all[DET_REFINE_MAX];
			int lo = (int)((start - 0.03) * RATE), hi = (int)((start + 0.03) * RATE);
			ck_assert_int_eq(det_refine_all(r.ref, x, n, lo, hi, all), 3);
			ck_assert_int_eq(all[t].template_id, t + 1);
			double e = all[t].r.tau - start * RATE, z = fabs(e) / all[t].r.se;
			total++;
			beyond3 += z > 3;
			beyond5 += z > 5;
			crb_beyond3 += fabs(e) > 3 * all[t].r.se_crb;
			worst = fmax(worst, z);
			g_free(x);
		}
	}
	fprintf(stderr, "varied calls: %d onsets, %d beyond 3 s.e., %d beyond 5 (worst %.2f); the bound alone: %d beyond 3\n",
		total, beyond3, beyond5, worst, crb_beyond3);
	ck_assert_int_eq(beyond5, 0);
	ck_assert_int_le(beyond3, total / 50);
	ck_assert_int_ge(crb_beyond3, total / 2);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

/* A sound card 40 ppm fast or slow records every call 40 ppm longer or
 * shorter in frames; the matched filter aligns the call's weight, not its
 * start, so its onset moves by eps * det_refiner_rate_shift (a pulse train
 * ~0.13 s: 5 us; the exponential chirp ~0.7 s, its sweep trading time for
 * frequency).  At 40 dB, the frog profile's three templates, 8 calls each
 * at +-40 ppm: the onsets as matched are beyond 5 s.e. of their bound
 * (bench/field's exact row: 21 of 186 onsets 10-30 s.e. off before), and
 * moved back by det_onset_rate_correct with the card's true rate (what
 * detect measures against global) they are within 3 s.e., RMS z <= 1.5. */
START_TEST(a_fast_card_moves_the_matched_onset)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int total = 0, raw_beyond5 = 0, beyond3 = 0;
	double z2 = 0;
	for (int t = 0; t < 3; t++) {
		double len = dsp_wave_length_s(r.wave[t]), amp = sqrt(1e4 / rig_wave_power(&r, t));
		double shift = det_refiner_rate_shift(r.ref, t + 1);
		fprintf(stderr, "template %d: a card 40 ppm fast moves its matched onset %.2f us\n", t + 1,
			40e-6 * shift / RATE * 1e6);
		ck_assert(shift > 0.05 * len * RATE && shift < 5 * len * RATE);
		for (int k = 0; k < 16; k++) {
			rig_card_skew = (k % 2 ? 40e-6 : -40e-6);
			gsl_rng_set(g, (unsigned long)(500 + 100 * t + k));
			double start = 0.2 + 0.01 * gsl_rng_uniform(g), fs = RATE * (1 + rig_card_skew);
			size_t n = (size_t)((start + len + 0.2) * RATE);
			float *x = g_new(float, n);
			rig_noise(g, x, n, 1.0);
			rig_add_call(&r, x, n, t, amp, start);
			det_refine_result all[DET_REFINE_MAX];
			int lo = (int)((start - 0.03) * fs), hi = (int)((start + 0.03) * fs);
			ck_assert_int_eq(det_refine_all(r.ref, x, n, lo, hi, all), 3);
			det_event e = {.onset_frame = all[t].r.tau, .onset_se = all[t].r.se, .rate_hz = RATE};
			double raw = (e.onset_frame / fs - start) / (e.onset_se / fs);
			det_onset_rate_correct(&e, 1 + rig_card_skew, shift, 0);
			double z = (e.onset_frame / fs - start) / (e.onset_se / fs);
			total++;
			raw_beyond5 += fabs(raw) > 5;
			beyond3 += fabs(z) > 3;
			z2 += z * z;
			g_free(x);
		}
	}
	rig_card_skew = 0;
	fprintf(stderr, "a card +-40 ppm: %d onsets, %d beyond 5 s.e. as matched; moved back: RMS z %.2f, %d beyond 3\n",
		total, raw_beyond5, sqrt(z2 / total), beyond3);
	ck_assert_int_ge(raw_beyond5, total / 2);
	ck_assert_int_eq(beyond3, 0);
	ck_assert(sqrt(z2 / total) <= 1.5);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

/* A caller moving at up to 5 m/s along the line to the microphone:
 * the Doppler effect stretches its call by -v_r / c (uniform over +-1.5 %
 * here), which moves the matched onset by milliseconds: a pulse train a
 * pulse early or late, the chirp (its sweep trading time for frequency)
 * 0.4 ms per m/s.  The profile's `[refine] max_speed_m_s` states it as a
 * stretch of up to v/c, measured as the stated variation is
 * (det_profile_stretch): at 30 dB, 12 calls of each template, none beyond
 * 3 s.e., where the onsets' own errors (variation 0) leave the chirp's
 * beyond 5. */
START_TEST(a_moving_caller_stretches_its_call)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	det_profile p = r.prof;
	p.variation_pct = 0;
	p.max_speed_m_s = 5.0;
	double stretch = det_profile_stretch(&p);
	ck_assert_double_eq_tol(stretch, 5.0 / 343, 1e-12);
	int total = 0, bare_beyond5 = 0, beyond3 = 0;
	double worst = 0;
	for (int pass = 0; pass < 2; pass++) {
		ck_assert_int_eq(det_refiner_set_variation(r.ref, pass ? stretch : 0), 0);
		for (int t = 0; t < 3; t++) {
			double len = dsp_wave_length_s(r.wave[t]), amp = sqrt(1e3 / rig_wave_power(&r, t));
			for (int k = 0; k < 12; k++) {
				gsl_rng_set(g, (unsigned long)(900 + 100 * t + k));
				double vr = p.max_speed_m_s * (2 * gsl_rng_uniform(g) - 1), s = 1 - vr / 343.0;
				double start = 0.2 + 0.01 * gsl_rng_uniform(g);
				size_t n = (size_t)((start + len * 1.02 + 0.2) * RATE);
				float *x = g_new(float, n);
				rig_noise(g, x, n, 1.0);
				for (size_t i = (size_t)(start * RATE); i < n; i++)
					x[i] += (float)(amp * dsp_wave_eval(r.wave[t], (i / RATE - start) / s));
				det_refine_result all[DET_REFINE_MAX];
				int lo = (int)((start - 0.03) * RATE), hi = (int)((start + 0.03) * RATE);
				ck_assert_int_eq(det_refine_all(r.ref, x, n, lo, hi, all), 3);
				double z = fabs(all[t].r.tau - start * RATE) / all[t].r.se;
				if (pass) {
					beyond3 += z > 3;
					worst = fmax(worst, z);
					total++;
				} else
					bare_beyond5 += t == 2 && z > 5;
				g_free(x);
			}
		}
	}
	fprintf(stderr, "a caller at up to %.0f m/s: %d onsets, none of them stated: %d chirps beyond 5 s.e.; stated: %d "
			"beyond 3 (worst %.2f)\n",
		p.max_speed_m_s, total, bare_beyond5, beyond3, worst);
	ck_assert_int_ge(bare_beyond5, 6);
	ck_assert_int_eq(beyond3, 0);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

/* Pulse trains that vary as the simulator's `variation = 0.05` makes them
 * (carrier, pulse length, interval each x (1 + 0.05 g), the pulse count
 * rounded from 10 or 20 x (1 + 0.05 g)), 80 calls of each of the frog
 * profile's two pulse-train templates at 10-30 dB, in the clip detect
 * fetches (the coarse onset up to half a frame off): the template alone
 * matches a pulse or two early or late at some of them (bench/field's
 * variation row: onsets 30-90 ms apart at the nodes of one call); started
 * near the sound's leading edge, at most 4 % do (where the start-aligned
 * match is 10 dB below the slipped one, the edge is not believed; their
 * stated errors say so), and the stated errors cover (none beyond 5 s.e.).
 * Measured: 126 of 160 slip by the template alone, 4 at the edge. */
START_TEST(varied_pulse_trains_start_at_the_edge)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int total = 0, slipped[2] = {0}, at_edge = 0, beyond5 = 0, right = 0;
	double worst = 0;
	for (int t = 0; t < 2; t++) {
		double carrier = t ? 2600 : 1800, pulse = t ? 0.003 : 0.006, interval = t ? 0.012 : 0.030, pulses = t ? 20 : 10;
		for (int seed = 1; seed <= 80; seed++) {
			gsl_rng_set(g, (unsigned long)(7000 + 100 * t + seed));
			double v[4];
			for (int k = 0; k < 4; k++)
				v[k] = 1 + 0.05 * fmax(-3, fmin(3, gsl_ran_gaussian(g, 1.0)));
			dsp_frog f = {.carrier_hz = carrier * v[0], .pulse_s = pulse * v[1], .interval_s = interval * v[2], .pulses = (int)fmax(1, lround(pulses * v[3]))};
			f.pulse_s = fmin(f.pulse_s, f.interval_s);
			double snr = 10 + 20 * gsl_rng_uniform(g);
			double duty = f.pulses * f.pulse_s / dsp_frog_length(&f), band = (r.prof.f_hi_hz - r.prof.f_lo_hz) / (RATE / 2);
			double amp = sqrt(pow(10, snr / 10) * band / (dsp_frog_pulse_power(&f) * duty));
			/* the clip: the coarse onset at SIZE + pre, the call within
			 * half a frame of it */
			int pre = 128;
			double start = SIZE + pre + (gsl_rng_uniform(g) - 0.5) * SIZE + gsl_rng_uniform(g);
			size_t n = (size_t)(start + dsp_frog_length(&f) * RATE + 2 * SIZE);
			float *x = g_new(float, n);
			for (size_t i = 0; i < n; i++)
				x[i] = (float)gsl_ran_gaussian(g, 1.0);
			dsp_frog_render(&f, amp, start / RATE, RATE, x, n);
			for (int edge = 0; edge < 2; edge++) {
				det_refine_result rr;
				const char *why;
				int found = 0, rc = edge ? det_refine_clip(r.ref, x, n, pre / 2, SIZE * 3 / 2 + pre, (size_t)(SIZE / 2 + pre - HOP),
									   SIZE, r.prof.f_lo_hz, r.prof.f_hi_hz, -INFINITY, &rr, &found, &why)
							 : det_refine(r.ref, x, n, pre / 2, SIZE * 3 / 2 + pre, -INFINITY, &rr, &why);
				ck_assert_msg(rc == 0, "template %d seed %d: %s", t + 1, seed, why);
				double e = rr.r.tau - start;
				slipped[edge] += fabs(e) > 0.5 * interval * RATE;
				if (edge) {
					total++;
					right += rr.template_id == t + 1;
					at_edge += rr.at_edge;
					beyond5 += fabs(e) > 5 * rr.r.se;
					worst = fmax(worst, fabs(e) / rr.r.se);
				}
			}
			g_free(x);
		}
	}
	fprintf(stderr,
		"varied pulse trains: %d calls (%d labelled right); slipped by half an interval or more: %d by the template alone, %d started at the edge "
		"(%d at the edge); beyond 5 s.e. %d (worst %.2f)\n",
		total, right, slipped[0], slipped[1], at_edge, beyond5, worst);
	ck_assert_int_ge(slipped[0], total / 20);
	ck_assert_int_le(slipped[1], total / 25);
	ck_assert_int_ge(at_edge, total * 9 / 10);
	ck_assert_int_eq(beyond5, 0);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST


/* SNR convention (docs/localization.md): the call's mean power over its
 * length over the noise power in the detector band. */
START_TEST(pipeline_recall_onsets_false_alarms)
{
	rig r;
	rig_init(&r);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 20261130);
	const double minutes = 2.0, snr_db = 10;
	size_t n = (size_t)(minutes * 60 * RATE);
	float *x = g_new(float, n);
	double sigma = 0.01, band_noise = sigma * sigma * (r.prof.f_hi_hz - r.prof.f_lo_hz) / (RATE / 2);
	rig_noise(g, x, n, sigma);
	/* a call every 1.5-2.5 s, the three templates in turn, fractional starts */
	double t[200];
	int tm[200], nc = 0;
	for (double s = 2.0; s < minutes * 60 - 1.5 && nc < 200; s += 1.5 + gsl_rng_uniform(g)) {
		tm[nc] = nc % 3;
		t[nc] = s + gsl_rng_uniform(g) / RATE * 7;
		double amp = sqrt(pow(10, snr_db / 10) * band_noise / rig_wave_power(&r, tm[nc]));
		rig_add_call(&r, x, n, tm[nc], amp, t[nc]);
		nc++;
	}
	rig_found f[400];
	int nf = rig_run(&r, x, n, f, 400);
	int hit = 0, right_tmpl = 0, fa = 0;
	double se2 = 0, err2 = 0;
	for (int k = 0; k < nf; k++) {
		int best = -1;
		for (int c = 0; c < nc; c++)
			if (fabs(f[k].onset / RATE - t[c]) < 0.05)
				best = c;
		if (best < 0) {
			fa++;
			continue;
		}
		hit++;
		right_tmpl += f[k].tmpl == tm[best] + 1;
		double e = f[k].onset - t[best] * RATE;
		err2 += e * e;
		se2 += f[k].se * f[k].se;
	}
	double rms = sqrt(err2 / hit), pred = sqrt(se2 / hit);
	fprintf(stderr, "pipeline: %d calls at %.0f dB, %d found (%d right template), %d false; onset RMS %.4f vs "
			"predicted %.4f samples\n",
		nc, snr_db, hit, right_tmpl, fa, rms, pred);
	/* Bounds: recall >= 0.95, <= 1 false alarm per minute, the right
	 * template (>= 0.95) and sub-sample onsets within 3x the Cramer-Rao
	 * prediction plus a 0.02-sample floor (float rounding of the clip). */
	ck_assert_int_ge(hit, (int)ceil(0.95 * nc));
	ck_assert_int_le(fa, (int)minutes);
	ck_assert_int_ge(right_tmpl, (int)ceil(0.95 * hit));
	ck_assert_double_le(rms, 3 * pred + 0.02);
	ck_assert_double_lt(rms, 0.5);

	/* Pure noise: the same two minutes without calls. */
	rig_noise(g, x, n, sigma);
	nf = rig_run(&r, x, n, f, 400);
	fprintf(stderr, "pipeline: %d false alarms in %.0f minutes of noise\n", nf, minutes);
	ck_assert_int_le(nf, (int)minutes);
	g_free(x);
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST


/* Calls varied as the simulator's `variation = 0.05` varies them (every
 * parameter x (1 + 0.05 g), g normal, truncated at 3: carrier or sweep
 * ends, pulse length, interval, pulse count, length), 60 of each of the
 * frog profile's three call types at 10-30 dB, in the clip detect fetches:
 * the template detect names is the call's type.  A pulse train a per cent
 * off its template keeps none of its matched filter's coherence (its ENR
 * drops 20-25 dB, to where the chirp's partial match of its band wins), so
 * the largest ENR alone named 97 of 160 varied pulse trains right (the
 * test below); the envelope's shape over scales of +-6 % names >= 90 %
 * (59, 57, 60 of 60).
 * Exact calls are named by the ENR as before (the pipeline test). */
/* The team states its calls' variation (5 %, as they are drawn here; the
 * profile's variation_pct): the envelope's scales then span 2.5 of it
 * (refine.c DET_CLASSIFY_SIGMAS), so a train drawn 9 % faster is still its
 * template stretched.  _i 0: stated as 0 (the fixed 6 %), 1: stated. */
START_TEST(varied_calls_named_by_their_envelope)
{
	rig r;
	rig_init(&r);
	if (_i)
		ck_assert_int_eq(det_refiner_set_variation(r.ref, 0.05), 0);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int right[3] = {0}, total[3] = {0};
	for (int t = 0; t < 3; t++) {
		for (int seed = 1; seed <= 60; seed++) {
			gsl_rng_set(g, (unsigned long)(9000 + 100 * t + seed));
			dsp_wave *wave = rig_varied_wave(g, t, 0.05);
			double len = dsp_wave_length_s(wave), p = 0;
			for (int i = 0; i < (int)(len * RATE); i++)
				p += pow(dsp_wave_eval(wave, i / RATE), 2);
			p /= (int)(len * RATE);
			double snr = 10 + 20 * gsl_rng_uniform(g), band = (r.prof.f_hi_hz - r.prof.f_lo_hz) / (RATE / 2);
			double amp = sqrt(pow(10, snr / 10) * band / p);
			int pre = 128;
			double start = SIZE + pre + (gsl_rng_uniform(g) - 0.5) * SIZE + gsl_rng_uniform(g);
			size_t n = (size_t)(start + len * RATE + 2 * SIZE);
			float *x = g_new(float, n);
			for (size_t i = 0; i < n; i++)
				x[i] = (float)gsl_ran_gaussian(g, 1.0) + (float)(amp * dsp_wave_eval(wave, (i - start) / RATE));
			ck_assert_int_eq(dsp_band_pass(x, n, RATE, r.prof.f_lo_hz, r.prof.f_hi_hz), 0);
			det_refine_result rr;
			const char *why;
			ck_assert_int_eq(det_refine_clip(r.ref, x, n, pre / 2, SIZE * 3 / 2 + pre, (size_t)(SIZE / 2 + pre - HOP), SIZE,
							 r.prof.f_lo_hz, r.prof.f_hi_hz, -INFINITY, &rr, NULL, &why),
					 0);
			right[t] += rr.template_id == t + 1;
			total[t]++;
			g_free(x);
			dsp_wave_free(wave);
		}
	}
	fprintf(stderr, "varied calls named right, variation stated %s: %d/%d, %d/%d, %d/%d (the envelope chose %d times)\n",
		_i ? "5 %" : "0", right[0], total[0], right[1], total[1], right[2], total[2], det_refiner_classified(r.ref));
	for (int t = 0; t < 3; t++)
		ck_assert_int_ge(right[t], (int)ceil((_i ? 0.95 : 0.9) * total[t]));
	gsl_rng_free(g);
	rig_free(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("detect");
	TCase *tc = tcase_create("detect");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, frames_roundtrip_and_rejects);
	tcase_add_test(tc, shipped_profiles_load);
	tcase_add_test(tc, profile_errors_name_the_line);
	tcase_add_test(tc, templates_of_one_call_type);
	tcase_add_test(tc, event_roundtrip_and_rejects);
	tcase_add_test(tc, pipeline_recall_onsets_false_alarms);
	tcase_add_test(tc, varied_calls_onsets_covered);
	tcase_add_test(tc, a_fast_card_moves_the_matched_onset);
	tcase_add_test(tc, a_moving_caller_stretches_its_call);
	tcase_add_test(tc, varied_pulse_trains_start_at_the_edge);
	tcase_add_loop_test(tc, varied_calls_named_by_their_envelope, 0, 2);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
