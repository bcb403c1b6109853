/* test_kpatch_bracket — which time of a kpatch record audiod's lower-envelope
 * fit may take (kpatch/record.h kpatch_record_update_time), on a model of a
 * driver that reads its DMA position when ALSA asks (snd-dummy's hrtimer,
 * snd-aloop, an HDA position register).
 *
 * The model, per period interrupt k of a card at the nominal rate: the
 * interrupt comes late by a latency L (5 us + exponential 20 us); the module
 * takes its entry time there; the driver reads the position d1 later
 * (draw_read: the sizes vmcheck measured under qemu), so hw_ptr is the
 * frames reached at that read; the module takes the update time d2 after
 * it (30 us + exponential 20 us, 3 % stalls of up to
 * 2 ms).  The frame hw_ptr was reached at the read: the entry time precedes
 * it (early), the update time follows it (late, as the envelope expects).
 *
 * The fit is audiod's (audiod/device.c: timehist, lower envelope, window
 * 256, nominal slope) over 10 s of 1024-frame periods at 48 kHz.  Over 200
 * seeded runs the fitted rate's z-score against the truth, (slope - true) /
 * stated s.e., must be honest with the update times: |z| <= 3 in at least
 * 97 % of the runs (a Gaussian gives 99.7 %; 97 % leaves room for the
 * envelope's heavier tails, and 200 runs resolve it to about 1.2 %), RMS z
 * at most 1.5.  The entry times' coverage is printed beside it, and in
 * this model it is as good: delays drawn independently for each record, of
 * the sizes vmcheck measured, do not pull the envelope through the entry
 * times either.  What failed in the VM with entry times (kpatch/README.md
 * "Tests": the index after an overrun 21 and 64 frames off against 3 and
 * 12 stated) is in what the model leaves out; make vmtest's bracketfit
 * fits the same envelope through the VM's own records both ways.
 */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>

#include "kpatch/record.h"
#include "timehist/timehist.h"

#define RATE 48000
#define PERIOD 1024
#define RECORDS 470 /* 10 s */
#define RUNS 200

/* floor + exponential(mean), and with probability p_stall a stall uniform
 * up to stall_max instead of the exponential part; ns. */
static double draw(gsl_rng *r, double floor_ns, double mean_ns, double p_stall, double stall_max_ns)
{
	if (gsl_rng_uniform(r) < p_stall)
		return floor_ns + stall_max_ns * gsl_rng_uniform(r);
	return floor_ns - mean_ns * log(1.0 - gsl_rng_uniform(r));
}

/* The delay from the entry to the position read, ns: as vmcheck measured
 * it under qemu (kpatch/README.md "Tests": the entry times' spread below
 * their latest p50 14-17 us, p90 23-25, p99 46-66, max 87-250 us over 470
 * records): 8 us + |N(0, 10 us)|, and 1 % uniform up to 250 us. */
static double draw_read(gsl_rng *r)
{
	if (gsl_rng_uniform(r) < 0.01)
		return 8e3 + 250e3 * gsl_rng_uniform(r);
	double g = gsl_ran_gaussian(r, 10e3);
	return 8e3 + fabs(g);
}

/* One run: the z-scores of the fitted slope through the entry times and
 * through the update times. */
static void one_run(unsigned seed, double *z_entry, double *z_update)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(r, seed);
	const double nspf = 1e9 / RATE;
	const int64_t t0 = 1000000000000LL; /* cpu time of frame 0, ns */
	timehist_params tp;
	timehist_params_default(&tp);
	tp.fit.mode = SYNC_FIT_LOWER;
	tp.fit.window = 256;
	tp.fit.nominal_slope = nspf;
	tp.jump_min = 1e6;
	tp.tolerance = (int64_t)RATE * 600;
	const char *why = NULL;
	timehist *he = timehist_new(&tp, &why), *hu = timehist_new(&tp, &why);
	ck_assert_msg(he && hu, "%s", why);
	for (int k = 1; k <= RECORDS; k++) {
		double entry = (double)k * PERIOD * nspf + draw(r, 5e3, 20e3, 0, 0);
		double read = entry + draw_read(r);
		double after = read + draw(r, 30e3, 20e3, 0.03, 2e6);
		struct chorus_kpatch_record rec;
		kpatch_record_init(&rec);
		rec.seq = (uint64_t)k - 1;
		rec.hw_ptr = (uint64_t)floor(read / nspf); /* the frames reached at the read */
		rec.time_ns = t0 + (int64_t)llround(entry);
		rec.flags = CHORUS_KPATCH_F_CAPTURE | CHORUS_KPATCH_F_UPDATE_TIME;
		rec.update_ns = (uint32_t)llround(after - entry);
		ck_assert_ptr_null(kpatch_record_problem(&rec));
		char w[128];
		ck_assert_int_ge(timehist_add(he, (int64_t)rec.hw_ptr, rec.time_ns, w, sizeof w), 0);
		ck_assert_int_ge(timehist_add(hu, (int64_t)rec.hw_ptr, kpatch_record_update_time(&rec), w, sizeof w), 0);
	}
	sync_conv ce, cu;
	ck_assert_int_eq(timehist_current(he, &ce), 0);
	ck_assert_int_eq(timehist_current(hu, &cu), 0);
	*z_entry = (ce.slope - nspf) / sqrt(ce.var_s);
	*z_update = (cu.slope - nspf) / sqrt(cu.var_s);
	timehist_free(he);
	timehist_free(hu);
	gsl_rng_free(r);
}

START_TEST(update_time_gives_an_honest_rate)
{
	int in_e = 0, in_u = 0;
	double ss_e = 0, ss_u = 0;
	for (unsigned s = 0; s < RUNS; s++) {
		double ze, zu;
		one_run(1000 + s, &ze, &zu);
		in_e += fabs(ze) <= 3;
		in_u += fabs(zu) <= 3;
		ss_e += ze * ze;
		ss_u += zu * zu;
	}
	double rms_e = sqrt(ss_e / RUNS), rms_u = sqrt(ss_u / RUNS);
	printf("test_kpatch_bracket: rate within 3 stated s.e.: update times %d of %d (RMS z %.2f), entry times %d of %d "
	       "(RMS z %.2f)\n",
	       in_u, RUNS, rms_u, in_e, RUNS, rms_e);
	ck_assert_msg(in_u >= 0.97 * RUNS, "update times: %d of %d within 3 s.e.", in_u, RUNS);
	ck_assert_msg(rms_u <= 1.5, "update times: RMS z %.2f", rms_u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kpatch_bracket");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, update_time_gives_an_honest_rate);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? 1 : 0;
}
