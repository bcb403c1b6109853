/* test_stft.c — the streaming STFT: tones in the right bin with the right
 * power (Parseval), white-noise band power, framing with odd chunk sizes,
 * windows, and the FFTW wisdom file round trip. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/dsp/stft.h"
#include "tests/check_run.h"

#define RATE 48000.0

static dsp_stft *make(int size, int hop, dsp_window w, int64_t first)
{
	dsp_stft_params p;
	dsp_stft_params_default(&p);
	p.size = size;
	p.hop = hop;
	p.window = w;
	p.rate_hz = RATE;
	const char *why = NULL;
	dsp_stft *s = dsp_stft_new(&p, first, &why);
	ck_assert_msg(s != NULL, "%s", why);
	return s;
}

START_TEST(tone_bin_and_parseval)
{
	const int N = 1024, k0 = 53;
	const double A = 0.7;
	for (int wi = DSP_WIN_RECT; wi <= DSP_WIN_BLACKMAN; wi++) {
		dsp_stft *s = make(N, N, (dsp_window)wi, 0);
		float x[1024];
		for (int i = 0; i < N; i++)
			x[i] = (float)(A * sin(2 * M_PI * k0 * i / N + 0.3));
		ck_assert_int_eq(dsp_stft_push(s, x, N), 0);
		dsp_frame f;
		ck_assert_int_eq(dsp_stft_next(s, &f), 1);
		ck_assert_int_eq(dsp_stft_next(s, &f), 0);
		int kmax = 0;
		double m = -1;
		for (int k = 0; k < f.nbins; k++) {
			double v = hypot(f.X[k][0], f.X[k][1]);
			if (v > m) {
				m = v;
				kmax = k;
			}
		}
		ck_assert_int_eq(kmax, k0);
		/* Parseval: full-band power equals the windowed time-domain power */
		const float *w = dsp_stft_window(s);
		double ex = 0, ww = 0;
		for (int i = 0; i < N; i++) {
			ex += (double)x[i] * w[i] * x[i] * w[i];
			ww += (double)w[i] * w[i];
		}
		double full = dsp_stft_bin_power(s, &f, 0, N / 2);
		ck_assert_msg(fabs(full - ex / ww) < 1e-5 * ex / ww, "win %d: %g vs %g", wi, full, ex / ww);
		/* a bin-centred tone: A^2/2 within the main lobe (Blackman: +-3 bins) */
		double df = RATE / N, band = dsp_stft_band_power(s, &f, (k0 - 3) * df, (k0 + 3) * df);
		ck_assert_msg(fabs(band - A * A / 2) < 1e-4, "win %d: band %g want %g", wi, band, A * A / 2);
		/* nothing far from it */
		ck_assert(dsp_stft_band_power(s, &f, 200 * df, 400 * df) < 1e-8);
		dsp_stft_free(s);
	}
}
END_TEST

START_TEST(off_bin_tone)
{
	/* Hann, tone 0.37 bin off centre: the peak bin rounds, the power
	 * within +-4 bins is A^2/2 to within the sidelobe leakage (< 0.1%) */
	const int N = 2048;
	const double A = 1.3, kf = 300.37;
	dsp_stft *s = make(N, N / 4, DSP_WIN_HANN, 0);
	float *x = malloc(N * sizeof *x);
	for (int i = 0; i < N; i++)
		x[i] = (float)(A * cos(2 * M_PI * kf * i / N));
	dsp_stft_push(s, x, N);
	dsp_frame f;
	ck_assert_int_eq(dsp_stft_next(s, &f), 1);
	double best = -1;
	int kmax = 0;
	for (int k = 0; k < f.nbins; k++)
		if (hypot(f.X[k][0], f.X[k][1]) > best) {
			best = hypot(f.X[k][0], f.X[k][1]);
			kmax = k;
		}
	ck_assert_int_eq(kmax, 300);
	double p = dsp_stft_bin_power(s, &f, 296, 304);
	ck_assert_msg(fabs(p / (A * A / 2) - 1) < 1e-3, "power %g", p);
	free(x);
	dsp_stft_free(s);
}
END_TEST

START_TEST(white_noise_band_power)
{
	/* unit-variance white noise: band power = fraction of the band, on
	 * average over frames; tolerance 5 standard errors of the mean */
	const int N = 512, frames = 400;
	dsp_stft *s = make(N, N, DSP_WIN_HAMMING, 0);
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 42);
	float x[512];
	double s1 = 0, s2 = 0, lo = 3000, hi = 9000;
	for (int j = 0; j < frames; j++) {
		for (int i = 0; i < N; i++)
			x[i] = (float)gsl_ran_gaussian(r, 1.0);
		dsp_stft_push(s, x, N);
		dsp_frame f;
		ck_assert_int_eq(dsp_stft_next(s, &f), 1);
		double e = dsp_stft_band_power(s, &f, lo, hi);
		s1 += e;
		s2 += e * e;
	}
	double mean = s1 / frames, sd = sqrt(s2 / frames - mean * mean);
	double df = RATE / N, want = (floor(hi / df) - ceil(lo / df) + 1) * df / (RATE / 2);
	ck_assert_msg(fabs(mean - want) < 5 * sd / sqrt(frames), "mean %g want %g", mean, want);
	gsl_rng_free(r);
	dsp_stft_free(s);
}
END_TEST

START_TEST(framing_odd_chunks)
{
	/* Random data pushed in odd chunk sizes: frames start at s0 + k hop and
	 * equal a one-shot transform of the same samples bit for bit. */
	const int N = 256, H = 96;
	const int64_t s0 = 1234567890123LL;
	const size_t total = 20011;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, 9);
	float *x = malloc(total * sizeof *x);
	for (size_t i = 0; i < total; i++)
		x[i] = (float)gsl_ran_gaussian(r, 1.0);
	dsp_stft *s = make(N, H, DSP_WIN_BLACKMAN, s0), *ref = make(N, N, DSP_WIN_BLACKMAN, 0);
	size_t at = 0;
	int64_t k = 0;
	static const size_t chunks[] = {1, 7, 255, 257, 97, 3, 1000, 13};
	for (int c = 0; at < total; c++) {
		size_t m = chunks[c % 8];
		if (m > total - at)
			m = total - at;
		ck_assert_int_eq(dsp_stft_push(s, x + at, m), 0);
		at += m;
		ck_assert_int_eq(dsp_stft_next_index(s), s0 + (int64_t)at);
		dsp_frame f;
		while (dsp_stft_next(s, &f)) {
			ck_assert_int_eq(f.first, s0 + k * H);
			ck_assert(f.first - s0 + N <= (int64_t)at);
			fftwf_complex X[N / 2 + 1];
			memcpy(X, f.X, sizeof X);
			dsp_frame g;
			dsp_stft_reset(ref, 0);
			dsp_stft_push(ref, x + (f.first - s0), N);
			ck_assert_int_eq(dsp_stft_next(ref, &g), 1);
			ck_assert(memcmp(X, g.X, sizeof X) == 0);
			k++;
		}
	}
	ck_assert_int_eq(k, (int64_t)((total - N) / H + 1));
	/* after a gap the stream restarts at the given index */
	dsp_stft_reset(s, 5000000);
	dsp_stft_push(s, x, N);
	dsp_frame f;
	ck_assert_int_eq(dsp_stft_next(s, &f), 1);
	ck_assert_int_eq(f.first, 5000000);
	free(x);
	gsl_rng_free(r);
	dsp_stft_free(s);
	dsp_stft_free(ref);
}
END_TEST

START_TEST(windows)
{
	dsp_stft *s = make(64, 16, DSP_WIN_HANN, 0);
	const float *w = dsp_stft_window(s);
	ck_assert(fabsf(w[0]) < 1e-7f && fabsf(w[32] - 1) < 1e-7f && fabsf(w[16] - 0.5f) < 1e-6f);
	dsp_stft_free(s);
	s = make(64, 16, DSP_WIN_HAMMING, 0);
	w = dsp_stft_window(s);
	ck_assert(fabsf(w[0] - 0.08f) < 1e-6f && fabsf(w[32] - 1) < 1e-6f);
	dsp_stft_free(s);
	s = make(64, 16, DSP_WIN_BLACKMAN, 0);
	w = dsp_stft_window(s);
	ck_assert(fabsf(w[0]) < 1e-6f && fabsf(w[32] - 1) < 1e-6f);
	dsp_stft_free(s);
}
END_TEST

START_TEST(wisdom_round_trip)
{
	const char *run = getenv("CHORUS_RUN");
	char path[4096];
	snprintf(path, sizeof path, "%s/wisdom-%d", run && *run ? run : "/tmp", (int)getpid());
	unlink(path);
	dsp_stft_params p;
	dsp_stft_params_default(&p);
	p.size = 720; /* 2^4 3^2 5: a size nobody else here plans */
	p.hop = 180;
	p.plan = DSP_PLAN_MEASURE;
	p.wisdom = path;
	const char *why = NULL;
	dsp_stft *s = dsp_stft_new(&p, 0, &why);
	ck_assert_msg(s != NULL, "%s", why);
	dsp_stft_free(s);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(st.st_size > 0);
	/* forget everything: WISDOM_ONLY must fail without the file ... */
	fftwf_forget_wisdom();
	p.plan = DSP_PLAN_WISDOM_ONLY;
	p.wisdom = NULL;
	ck_assert_ptr_null(dsp_stft_new(&p, 0, &why));
	ck_assert_ptr_nonnull(why);
	/* ... and succeed with it */
	p.wisdom = path;
	s = dsp_stft_new(&p, 0, &why);
	ck_assert_msg(s != NULL, "%s", why);
	dsp_stft_free(s);
	ck_assert_int_eq(dsp_wisdom_load("/nonexistent/wisdom"), -ENOENT);
	FILE *f = fopen(path, "w");
	fputs("not wisdom\n", f);
	fclose(f);
	ck_assert_int_eq(dsp_wisdom_load(path), -EINVAL);
	unlink(path);
}
END_TEST

START_TEST(bad_params)
{
	dsp_stft_params p;
	dsp_stft_params_default(&p);
	const char *why = NULL;
	p.hop = 0;
	ck_assert_ptr_null(dsp_stft_new(&p, 0, &why));
	ck_assert_ptr_nonnull(why);
	dsp_stft_params_default(&p);
	p.hop = p.size + 1;
	ck_assert_ptr_null(dsp_stft_new(&p, 0, &why));
	dsp_stft_params_default(&p);
	p.size = 4;
	ck_assert_ptr_null(dsp_stft_new(&p, 0, &why));
	dsp_stft_params_default(&p);
	p.window = (dsp_window)9;
	ck_assert_ptr_null(dsp_stft_new(&p, 0, &why));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stft");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, tone_bin_and_parseval);
	tcase_add_test(tc, off_bin_tone);
	tcase_add_test(tc, white_noise_band_power);
	tcase_add_test(tc, framing_odd_chunks);
	tcase_add_test(tc, windows);
	tcase_add_test(tc, wisdom_round_trip);
	tcase_add_test(tc, bad_params);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
