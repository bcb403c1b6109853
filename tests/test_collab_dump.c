/* test_collab_dump.c — a solve's inputs kept and read back
 * (apps/collab/dump.h): every field and every sample comes back exactly,
 * so the replay answers bit for bit what the solve answered; a case with a
 * clip missing or a key malformed is refused with the file, group and key
 * named.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/collab/dump.h"
#include "apps/collab/tdoa.h"
#include "apps/dsp/wave.h"
#include "tests/check_run.h"
#include "tests/tmpdir.h"

#define NM 5

static const double mics[NM][3] = {{0, 0, 1}, {20, 0, 1.2}, {20, 20, 0.8}, {0, 20, 1}, {9, 11, 1.5}};

/* A pulse train from src heard by the NM microphones in white noise,
 * clips as collab cuts them; in[].x allocated (g_free). */
static void make_case(gsl_rng *g, const double src[3], tdoa_input in[NM], tdoa_params *p)
{
	const double R = 16000, c = 343;
	dsp_wave_params pa = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 6};
	dsp_wave *w = dsp_wave_new(&pa, R, NULL);
	const int64_t E = 1796000000000000000LL;
	for (int j = 0; j < NM; j++) {
		double r = sqrt(pow(src[0] - mics[j][0], 2) + pow(src[1] - mics[j][1], 2) + pow(src[2] - mics[j][2], 2));
		double arrive = r / c, start = arrive - 0.05 - gsl_rng_uniform(g) / R;
		size_t n = (size_t)(0.3 * R);
		float *x = g_new(float, n);
		for (size_t i = 0; i < n; i++)
			x[i] = (float)(0.1 * dsp_wave_eval(w, start + i / R - arrive) + gsl_ran_gaussian(g, 0.003));
		double st = start * 1e9;
		in[j] = (tdoa_input){.node = (uint32_t)(j + 1), .x = x, .n = n, .rate_hz = R, .rate_eff_hz = R * (1 + 1e-6 * j), .t0_ns = E + (int64_t)floor(st), .t0_frac_ns = st - floor(st), .t0_se_ns = 200 + j, .onset_ns = E + (int64_t)llround(arrive * 1e9), .onset_se_ns = 60.25, .onset_crb_se_ns = 1.0 / 3, .snr_db = 20 - r / 5};
		memcpy(in[j].mic_m, mics[j], sizeof in[j].mic_m);
	}
	dsp_wave_free(w);
	tdoa_params_default(p);
	p->f_lo_hz = 1400;
	p->f_hi_hz = 2200.5;
	p->c_sd_m_s = 0.6;
	p->pos_sd_m = 0.01;
	p->wind_m_s[0] = 0.1;
	p->weighting = DSP_GCC_SCOT;
}

START_TEST(a_kept_case_replays_bit_for_bit)
{
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 7);
	tdoa_input in[NM], back[TDOA_MAX];
	tdoa_params p, q;
	const double src[3] = {7, 12, 0.5};
	make_case(g, src, in, &p);
	tdoa_result r1, r2;
	ck_assert_int_eq(tdoa_locate(in, NM, &p, &r1), 0);
	ck_assert_int_eq(r1.loc.status, DSP_LOC_OK);
	ck_assert_double_lt(hypot(r1.loc.pos_m[0] - src[0], r1.loc.pos_m[1] - src[1]), 0.5);
	char *dir = tu_tmpdir("dump-XXXXXX");
	char *sub = g_build_filename(dir, "kept", NULL); /* made by the writer */
	GError *e = NULL;
	ck_assert_msg(tdoa_dump_write(sub, "call-1", in, NM, &p, &r1, &e) == 0, "%s", e ? e->message : "");
	char *ini = g_build_filename(sub, "call-1.ini", NULL);
	int n = 0;
	ck_assert_msg(tdoa_dump_read(ini, back, &n, &q, &e) == 0, "%s", e ? e->message : "");
	ck_assert_int_eq(n, NM);
	const double pv[] = {p.f_lo_hz, p.beta, p.onset_floor_s, p.margin_m, p.ambiguity_ratio, p.ambiguity_radius_m,
			     p.dominance_ratio, p.depth_m, p.c_m_s, p.c_sd_m_s, p.pos_sd_m, p.alpha};
	const double qv[] = {q.f_lo_hz, q.beta, q.onset_floor_s, q.margin_m, q.ambiguity_ratio, q.ambiguity_radius_m,
			     q.dominance_ratio, q.depth_m, q.c_m_s, q.c_sd_m_s, q.pos_sd_m, q.alpha};
	for (size_t k = 0; k < G_N_ELEMENTS(pv); k++)
		ck_assert_double_eq(qv[k], pv[k]);
	ck_assert_int_eq(q.separate, p.separate);
	ck_assert_double_eq(q.f_hi_hz, p.f_hi_hz);
	ck_assert_int_eq(q.weighting, DSP_GCC_SCOT);
	ck_assert_double_eq(q.wind_m_s[0], 0.1);
	ck_assert(isnan(q.source_z_m));
	for (int j = 0; j < NM; j++) {
		ck_assert_uint_eq(back[j].node, in[j].node);
		ck_assert_uint_eq(back[j].n, in[j].n);
		ck_assert(memcmp(back[j].x, in[j].x, in[j].n * sizeof *in[j].x) == 0);
		ck_assert(memcmp(back[j].mic_m, in[j].mic_m, sizeof in[j].mic_m) == 0);
		ck_assert_double_eq(back[j].rate_eff_hz, in[j].rate_eff_hz);
		ck_assert_int_eq(back[j].t0_ns, in[j].t0_ns);
		ck_assert_double_eq(back[j].t0_frac_ns, in[j].t0_frac_ns);
		ck_assert_int_eq(back[j].onset_ns, in[j].onset_ns);
		ck_assert_double_eq(back[j].onset_crb_se_ns, in[j].onset_crb_se_ns);
		ck_assert_double_eq(back[j].snr_db, in[j].snr_db);
	}
	ck_assert_int_eq(tdoa_locate(back, n, &q, &r2), 0);
	ck_assert_int_eq(r2.loc.status, r1.loc.status);
	for (int k = 0; k < 3; k++)
		ck_assert_double_eq(r2.loc.pos_m[k], r1.loc.pos_m[k]);
	for (int j = 0; j < NM; j++)
		ck_assert_double_eq(r2.a_s[j], r1.a_s[j]);
	tdoa_dump_free(back, n);

	/* A clip gone: refused, naming the group and the file. */
	char *wav = g_build_filename(sub, "call-1-3.wav", NULL);
	ck_assert_int_eq(unlink(wav), 0);
	ck_assert_int_eq(tdoa_dump_read(ini, back, &n, &q, &e), -1);
	ck_assert_ptr_nonnull(strstr(e->message, "[clip.3] samples"));
	ck_assert_ptr_nonnull(strstr(e->message, "call-1-3.wav"));
	ck_assert_int_eq(n, 0);
	g_clear_error(&e);
	/* A malformed key: refused, naming the file, group and key. */
	char *text = NULL;
	ck_assert(g_file_get_contents(ini, &text, NULL, NULL));
	char *bad = strstr(text, "onset_se_ns=");
	ck_assert_ptr_nonnull(bad);
	bad[strlen("onset_se_ns=")] = 'x';
	ck_assert(g_file_set_contents(ini, text, -1, NULL));
	g_free(text);
	ck_assert_int_eq(tdoa_dump_read(ini, back, &n, &q, &e), -1);
	ck_assert_ptr_nonnull(strstr(e->message, ini));
	ck_assert_ptr_nonnull(strstr(e->message, "] onset_se_ns"));
	g_clear_error(&e);

	for (int j = 0; j < NM; j++)
		g_free((float *)in[j].x);
	g_free(wav);
	g_free(ini);
	tu_rm_rf(sub);
	g_free(sub);
	tu_rm_rf(dir);
	g_free(dir);
	gsl_rng_free(g);
}
END_TEST

START_TEST(an_unwritable_directory_is_an_error)
{
	tdoa_input in[1] = {{.node = 1, .x = (float[]){0, 1}, .n = 2, .rate_hz = 16000}};
	tdoa_params p;
	tdoa_params_default(&p);
	GError *e = NULL;
	ck_assert_int_eq(tdoa_dump_write("/proc/chorus-no-such-dir", "x", in, 1, &p, NULL, &e), -1);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(strstr(e->message, "/proc/chorus-no-such-dir"));
	g_error_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("collab_dump");
	TCase *tc = tcase_create("collab_dump");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_kept_case_replays_bit_for_bit);
	tcase_add_test(tc, an_unwritable_directory_is_an_error);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
