/* test_propagation.c — the harder world of sim/world.c against closed forms:
 * the ground's image path (delay, gain, the porous ground's reflection), air
 * absorption end to end, the wind's delay change, a room's first
 * reflections, a moving source's retarded time (Doppler), call variation,
 * recording segments, and survey error in the positions the apps are told.
 * (tests/test_world.c covers the free-field basics; sim/acoustics.h's own
 * formulas are tests/test_acoustics.c.) */
#include <check.h>
#include <complex.h>
#include <glib.h>
#include <math.h>
#include <sndfile.h>
#include <string.h>

#include "apps/dsp/wave.h"
#include "sim/acoustics.h"
#include "sim/scenario.h"
#include "sim/world.h"
#include "tests/check_run.h"
#include "tests/world_fixture.h"

static fixture make(const char *text)
{
	return fixture_make("prop-test.ini", text);
}

static void drop(fixture f)
{
	fixture_drop(f);
}

static char *load_error(const char *text)
{
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load_data("bad.ini", text, NULL, &err);
	ck_assert_msg(sc == NULL, "loaded: %s", text);
	char *m = g_strdup(err->message);
	g_error_free(err);
	return m;
}

static double dist(const double *a, const double *b)
{
	return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* A click over hard ground: the direct sound and its mirror in z = 0, each
 * at its own delay with 1/r gain; the pressure is exactly their sum. */
START_TEST(hard_ground_adds_the_image_path)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\nground = hard\n"
			 "[node.1]\nposition_m = 0,0,1.5\n"
			 "[source.1]\nposition_m = 12,5,0.4\nwaveform = click\nclick_width_us = 80\nlevel_dbfs = 0\n"
			 "call_times_s = 0.2\n");
	ck_assert_uint_eq(sim_world_n_images(f.w), 2);
	double mic[3] = {0, 0, 1.5}, src[3] = {12, 5, 0.4}, img[3] = {12, 5, -0.4};
	double r0 = dist(mic, src), r1 = dist(mic, img);
	ck_assert_double_eq_tol(sim_world_path_delay_s(f.w, 1, 0, 0, 0), r0 / 343, 1e-15);
	ck_assert_double_eq_tol(sim_world_path_delay_s(f.w, 1, 0, 0, 1), r1 / 343, 1e-15);
	ck_assert_double_eq_tol(creal(sim_world_path_response(f.w, 1, 0, 0, 1, 2000)), 1 / r1, 1e-15);
	dsp_wave_params p = {.kind = DSP_WAVE_CLICK, .click_width_us = 80};
	dsp_wave *click = dsp_wave_new(&p, 48000, NULL);
	for (double t = 0.2 + r0 / 343 - 1e-4; t < 0.2 + r1 / 343 + 1e-3; t += 3.7e-6) {
		double want = dsp_wave_eval(click, t - 0.2 - r0 / 343) / r0 + dsp_wave_eval(click, t - 0.2 - r1 / 343) / r1;
		ck_assert_double_eq_tol(sim_world_pressure(f.w, 1, 0, t), want, 1e-12);
	}
	dsp_wave_free(click);
	drop(f);
}
END_TEST

/* Over grass the image path carries the Delany–Bazley plane-wave reflection
 * coefficient; its FIR (127 taps here) reproduces it from 1 kHz up to
 * within 7 % of the image's spreading gain: near grazing (cos 0.065) R
 * swings from +1 towards -1 below 1 kHz, sharper than the filter follows
 * (measured 6 % at 1 kHz, 2.6 % at 2 kHz, 1.6 % at 4 kHz). */
START_TEST(grass_reflects_by_its_impedance)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\nground = grass\n"
			 "[node.1]\nposition_m = 0,0,1\n"
			 "[source.1]\nposition_m = 20,0,0.3\ncall_times_s = 1\n");
	double mic[3] = {0, 0, 1}, img[3] = {20, 0, -0.3}, r1 = dist(mic, img), cos_t = 1.3 / r1;
	double g = pow(10, -20 / 20.0) / r1; /* level_dbfs -20 at 1 m */
	for (double fr = 1000; fr <= 8000; fr *= 1.19) {
		double complex want = g * sim_reflection(sim_ground_impedance(fr, SIM_SIGMA_GRASS), cos_t);
		double complex got = sim_world_path_response(f.w, 1, 0, 0, 1, fr);
		ck_assert_msg(cabs(got - want) < 0.07 * g, "%.0f Hz: got %g%+gi, want %g%+gi", fr, creal(got), cimag(got),
			      creal(want), cimag(want));
	}
	drop(f);
}
END_TEST

/* A steady 6 kHz tone 80 m away arrives 10^(-alpha r / 20) weaker than
 * spreading alone makes it (ISO 9613-1 at 20 °C, 50 %: 4.5 dB at 80 m): the
 * RMS over 0.2 s of the world's pressure, to the FIR's in-band 0.5 %. */
START_TEST(air_absorbs_high_frequencies)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\ntemperature_c = 20\nhumidity_pct = 50\n"
			 "[node.1]\nposition_m = 0,0,0\n"
			 "[source.1]\nposition_m = 80,0,0\nwaveform = tone\nfreq_hz = 6000\nlength_ms = 1000\n"
			 "taper_ms = 10\nlevel_dbfs = 0\ncall_times_s = 0\n");
	double a = pow(10, -sim_air_absorption_db_m(6000, 20, 50) * 80 / 20);
	ck_assert_double_lt(a, 0.65);
	double s2 = 0;
	int n = 0;
	for (double t = 80 / 343.0 + 0.3; t < 80 / 343.0 + 0.5; t += 1 / 48000.0, n++)
		s2 += pow(sim_world_pressure(f.w, 1, 0, t), 2);
	double rms = sqrt(s2 / n), want = a / 80 / sqrt(2);
	ck_assert_msg(fabs(rms / want - 1) < 0.005, "rms %g, want %g", rms, want);
	ck_assert_double_eq_tol(cabs(sim_world_path_response(f.w, 1, 0, 0, 0, 6000)), a / 80, 0.005 * a / 80);
	drop(f);
}
END_TEST

/* Wind from the east (90°) blows towards -x: sound from a source east of the
 * mic travels with it, r / (c + w); from the west, against it. */
START_TEST(wind_speeds_sound_along_it)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 340\nwind = 8, 90\n"
			 "[node.1]\nposition_m = 0,0,0\n[node.2]\nposition_m = 100,0,0\n"
			 "[source.1]\nposition_m = 50,0,0\ncall_times_s = 1\n");
	ck_assert_double_eq_tol(sim_world_delay_s(f.w, 1, 0, 0), 50 / 348.0, 1e-12);
	ck_assert_double_eq_tol(sim_world_delay_s(f.w, 2, 0, 0), 50 / 332.0, 1e-12);
	drop(f);
}
END_TEST

/* In a shoebox room the six first-order images sit at the mirrors of the
 * source in the six walls, each with gain sqrt(1 - a) / r. */
START_TEST(room_first_reflections)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\n"
			 "[room]\nsize = 6, 5, 3\nabsorption = 0.36\nmax_order = 1\n"
			 "[node.1]\nposition_m = 2,1.5,1.2\n"
			 "[source.1]\nposition_m = 4,3,1\nlevel_dbfs = 0\ncall_times_s = 1\n");
	ck_assert_uint_eq(sim_world_n_images(f.w), 7);
	double mic[3] = {2, 1.5, 1.2}, src[3] = {4, 3, 1}, L[3] = {6, 5, 3};
	int matched = 0;
	for (int wall = 0; wall < 6; wall++) {
		double img[3] = {src[0], src[1], src[2]};
		int ax = wall / 2;
		img[ax] = wall % 2 ? 2 * L[ax] - src[ax] : -src[ax];
		double r = dist(mic, img);
		for (size_t i = 1; i < 7; i++)
			if (fabs(sim_world_path_delay_s(f.w, 1, 0, 0, i) - r / 343) < 1e-12) {
				ck_assert_double_eq_tol(creal(sim_world_path_response(f.w, 1, 0, 0, i, 1000)), 0.8 / r, 1e-12);
				matched++;
				break;
			}
	}
	ck_assert_int_eq(matched, 6);
	ck_assert_double_eq_tol(sim_world_path_delay_s(f.w, 1, 0, 0, 0), dist(mic, src) / 343, 1e-15);
	drop(f);
}
END_TEST

/* A tone source flying at 10 m/s towards a mic: at every receive time t the
 * world plays the tone as emitted at the retarded time te, te + |p(te) - m|
 * / c = t (solved here by bisection), with 1/|p(te) - m| gain.  That is
 * Doppler: the received frequency is f c / (c - v). */
START_TEST(moving_source_is_heard_at_its_retarded_time)
{
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\n"
			 "[node.1]\nposition_m = 60,0,0\n"
			 "[source.1]\npath = 0,0,0 @ 0; 40,0,0 @ 4\nwaveform = tone\nfreq_hz = 500\nlength_ms = 3000\n"
			 "taper_ms = 0\nlevel_dbfs = 0\ncall_times_s = 0.5\n");
	double pos[3];
	ck_assert(sim_world_call_pos(f.w, 0, 0, pos));
	ck_assert_double_eq_tol(pos[0], 5.0, 1e-12);
	ck_assert_double_eq_tol(sim_world_arrival_s(f.w, 1, 0, 0, 0), 0.5 + 55 / 343.0, 1e-12);
	for (double t = 0.8; t < 3.2; t += 0.01371) {
		double lo = t - 1, hi = t;
		for (int i = 0; i < 200; i++) {
			double mid = (lo + hi) / 2, x = 10 * mid;
			if (mid + (60 - x) / 343 < t)
				lo = mid;
			else
				hi = mid;
		}
		double te = (lo + hi) / 2, r = 60 - 10 * te;
		double want = sin(2 * M_PI * 500 * (te - 0.5)) / r;
		ck_assert_msg(fabs(sim_world_pressure(f.w, 1, 0, t) - want) < 1e-9, "t %g: got %g want %g", t,
			      sim_world_pressure(f.w, 1, 0, t), want);
	}
	drop(f);
}
END_TEST

/* Each call draws its parameters afresh: with variation 0.05 the lengths of
 * a 20-pulse train spread by ~7 % (pulses ±5 %, interval ±5 %); without,
 * every call is the template. */
START_TEST(calls_vary_per_call)
{
	const char *base = "[world]\nduration_s = 400\nseed = 5\n[node.1]\nposition_m = 0,0\n"
			   "[source.1]\nposition_m = 5,0\ncarrier_hz = 2600\npulse_ms = 3\npulse_interval_ms = 12\n"
			   "pulses = 20\ncall_rate_hz = 1\n%s";
	char *t0 = g_strdup_printf(base, ""), *t1 = g_strdup_printf(base, "variation = 0.05\n");
	fixture a = make(t0), b = make(t1);
	size_t n = sim_world_n_calls(b.w, 0);
	ck_assert_uint_gt(n, 300);
	double nominal = 19 * 12e-3 + 3e-3, s = 0, s2 = 0;
	for (size_t k = 0; k < n; k++) {
		ck_assert_double_eq_tol(sim_world_call_length_s(a.w, 0, k), nominal, 1e-15);
		double r = sim_world_call_length_s(b.w, 0, k) / nominal - 1;
		s += r;
		s2 += r * r;
	}
	double mean = s / n, sd = sqrt(s2 / n - mean * mean);
	/* Relative sd of (pulses - 1) * interval: sqrt(0.05^2 + 0.05^2) with
	 * rounding of the pulse count; 5-sigma band on the sd for n calls. */
	ck_assert_msg(sd > 0.06 && sd < 0.085, "relative sd of call lengths %g", sd);
	ck_assert_double_lt(fabs(mean), 5 * 0.075 / sqrt((double)n));
	drop(a);
	drop(b);
	g_free(t0);
	g_free(t1);
}
END_TEST

/* file_start / file_length play a segment of a recording. */
START_TEST(file_segment_is_played)
{
	const char *run = g_getenv("CHORUS_RUN");
	char *path = g_build_filename(run ? run : g_get_tmp_dir(), "ramp.wav", NULL);
	SF_INFO info = {.samplerate = 48000, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	SNDFILE *sf = sf_open(path, SFM_WRITE, &info);
	ck_assert(sf);
	const int n = 48000;
	float *x = g_new(float, n);
	for (int i = 0; i < n; i++)
		x[i] = (float)(0.5 * sin(2 * M_PI * 700 * i / 48000.0));
	ck_assert_int_eq(sf_writef_float(sf, x, n), n);
	ck_assert_int_eq(sf_close(sf), 0);
	g_free(x);
	fixture f = make("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\nnoise_dbfs = -200\n"
			 "[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,0\nlevel_dbfs = 0\n"
			 "waveform = file\nfile = ramp.wav\nfile_start = 0.25\nfile_length = 0.5\ncall_times_s = 0\n");
	ck_assert_double_eq_tol(sim_world_call_length_s(f.w, 0, 0), 0.5, 1e-12);
	double worst = 0;
	for (double t = 0.01; t < 0.49; t += 0.000731)
		worst = fmax(worst, fabs(sim_world_pressure(f.w, 1, 0, t + 1 / 343.0) - 0.5 * sin(2 * M_PI * 700 * (t + 0.25))));
	ck_assert_msg(worst < 1e-3, "worst %g", worst); /* the interpolator's ripple, as for whole files */
	ck_assert_double_eq(sim_world_pressure(f.w, 1, 0, 0.6), 0);
	drop(f);
	/* The same tone as FLAC (lossless: the same samples) and Ogg/Vorbis
	 * (lossy: its length, and the tone within the codec's error). */
	static const struct {
		const char *name;
		int format;
		double tol;
	} codecs[] = {{"tone.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 1e-3},
		      {"tone.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, 0.05}};
	for (size_t c = 0; c < G_N_ELEMENTS(codecs); c++) {
		char *cp = g_build_filename(run ? run : g_get_tmp_dir(), codecs[c].name, NULL);
		SF_INFO ci = {.samplerate = 48000, .channels = 1, .format = codecs[c].format};
		SNDFILE *cf = sf_open(cp, SFM_WRITE, &ci);
		ck_assert_msg(cf, "%s: %s", codecs[c].name, sf_strerror(NULL));
		float *y = g_new(float, n);
		for (int i = 0; i < n; i++)
			y[i] = (float)(0.5 * sin(2 * M_PI * 700 * i / 48000.0));
		ck_assert_int_eq(sf_writef_float(cf, y, n), n);
		ck_assert_int_eq(sf_close(cf), 0);
		g_free(y);
		char *text = g_strdup_printf("[world]\nspeed_of_sound_m_s = 343\nair_absorption = false\n"
					     "[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,0\nlevel_dbfs = 0\n"
					     "waveform = file\nfile = %s\ncall_times_s = 0\n",
					     codecs[c].name);
		fixture fc = make(text);
		ck_assert_double_eq_tol(sim_world_call_length_s(fc.w, 0, 0), 1.0, 1e-9);
		double w2 = 0;
		for (double t = 0.1; t < 0.9; t += 0.000731)
			w2 = fmax(w2, fabs(sim_world_pressure(fc.w, 1, 0, t + 1 / 343.0) - 0.5 * sin(2 * M_PI * 700 * t)));
		ck_assert_msg(w2 < codecs[c].tol, "%s: worst %g", codecs[c].name, w2);
		drop(fc);
		g_free(text);
		g_free(cp);
	}
	char *e = load_error("[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,0\nwaveform = file\n"
			     "file = /nonexistent/x.wav\ncall_times_s = 0\n");
	ck_assert_ptr_nonnull(strstr(e, "[source.1] file: cannot open"));
	g_free(e);
	g_free(path);
}
END_TEST

/* The told positions differ from the true ones by N(0, S^2) per axis,
 * seeded: the same on every load, the sample sd within 5 sigma of S. */
START_TEST(survey_error_moves_the_told_positions)
{
	GString *t = g_string_new("[world]\nseed = 77\n");
	for (int i = 1; i <= 60; i++)
		g_string_append_printf(t, "[node.%d]\nposition_m = %d,0,1\nsurvey_error_m = 0.1\n", i, i);
	fixture f = make(t->str), g = make(t->str);
	double s2 = 0;
	for (size_t i = 0; i < sim_scenario_n_nodes(f.sc); i++) {
		const sim_node_cfg *n = sim_scenario_node(f.sc, i);
		double a[3], b[3];
		sim_node_told_position(f.sc, n, a);
		sim_node_told_position(g.sc, sim_scenario_node(g.sc, i), b);
		for (int k = 0; k < 3; k++) {
			ck_assert(a[k] == b[k]);
			s2 += (a[k] - n->pos_m[k]) * (a[k] - n->pos_m[k]);
		}
	}
	double sd = sqrt(s2 / 180);
	ck_assert_msg(fabs(sd / 0.1 - 1) < 5 / sqrt(2.0 * 180), "sd %g", sd);
	drop(f);
	drop(g);
	g_string_free(t, TRUE);
}
END_TEST

START_TEST(new_keys_are_validated)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[world]\nwind = 5\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] wind: give SPEED_MPS, DIRECTION_DEG"},
		{"[world]\nground = sand\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] ground: "},
		{"[world]\nground = hard\nground_reflection = 0.5\n[node.1]\nposition_m = 0,0\n",
		 "bad.ini:3: [world] ground_reflection: give either ground or ground_reflection"},
		{"[room]\nsize = 5,5,3\n[node.1]\nposition_m = 7,1,1\n", "bad.ini:3: [node.1] a microphone (7, 1, 1) m is outside the [room]"},
		{"[room]\nsize = 5,5,3\nabsorption = 0.1, 0.2\n[node.1]\nposition_m = 1,1,1\n",
		 "bad.ini:3: [room] absorption: give one value for every wall or six"},
		{"[node.1]\nposition_m = 0,0\n[source.1]\npath = 0,0,0 @ 1; 1,0,0 @ 0.5\ncall_times_s = 1\n",
		 "bad.ini:4: [source.1] path: waypoint 2: time 0.5 s is not after"},
		{"[node.1]\nposition_m = 0,0\n[source.1]\npath = 0,0 @ 1\ncall_times_s = 1\n",
		 "bad.ini:4: [source.1] path: waypoint 1 ('0,0 @ 1'): expected x,y,z @ t"},
		{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\npath = 0,0,0 @ 1\ncall_times_s = 1\n",
		 "[source.1] path: give either position_m"},
		{"[node.1]\nposition_m = 0,0\n[source.1]\nposition_m = 1,1\nvariation = 0.3\ncall_times_s = 1\n",
		 "bad.ini:5: [source.1] variation: 0.3 is out of range [0, 0.2]"},
		{"[world]\nbackground_dbfs = -40\n[node.1]\nposition_m = 0,0\n", "bad.ini:2: [world] background_dbfs: set background"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		char *m = load_error(bad[i].text);
		ck_assert_msg(strstr(m, bad[i].want) != NULL, "case %zu: got\n%s\nwant %s", i, m, bad[i].want);
		g_free(m);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("propagation");
	TCase *tc = tcase_create("closed forms");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hard_ground_adds_the_image_path);
	tcase_add_test(tc, grass_reflects_by_its_impedance);
	tcase_add_test(tc, air_absorbs_high_frequencies);
	tcase_add_test(tc, wind_speeds_sound_along_it);
	tcase_add_test(tc, room_first_reflections);
	tcase_add_test(tc, moving_source_is_heard_at_its_retarded_time);
	tcase_add_test(tc, calls_vary_per_call);
	tcase_add_test(tc, file_segment_is_played);
	tcase_add_test(tc, survey_error_moves_the_told_positions);
	tcase_add_test(tc, new_keys_are_validated);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
