/* test_rbs_paths.c — one pair's beacon senders compared (syncd/rbs_paths.c):
 * a delayed link is flagged with its sender and its delay, honest links
 * are not (the false-alarm rate of the z test measured with no tolerance),
 * a delay under the tolerance is not (the bound of what it sees), two
 * senders cannot tell which, a silent sender leaves the comparison. */
#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>

#include "syncd/rbs_paths.h"
#include "tests/check_run.h"

#define S_NS 1000000000LL

/* Feed `rounds` beacons of each of senders 3.. 3+k-1 (one a second each,
 * interleaved) with residual noise sd_ns; sender `late` (0: none) gets
 * delay_ns added from round `from` on.  Checks after every observation;
 * returns the round at which the first flag came (-1: never), the last
 * verdict in *v. */
static int feed(rbs_paths *p, gsl_rng *r, int k, int rounds, double sd_ns, uint32_t late, double delay_ns, int from,
		double tol_ns, rbs_paths_verdict *v)
{
	int first = -1;
	for (int i = 0; i < rounds; i++)
		for (int s = 0; s < k; s++) {
			uint32_t sender = 3 + (uint32_t)s;
			int64_t now = (int64_t)(i * k + s) * S_NS / k;
			double res = gsl_ran_gaussian(r, sd_ns) + (sender == late && i >= from ? delay_ns : 0);
			rbs_paths_add(p, sender, res, now);
			*v = rbs_paths_check(p, tol_ns, now);
			if (v->flagged && first < 0)
				first = i;
		}
	return first;
}

START_TEST(delayed_link_flagged)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	rbs_paths *p = rbs_paths_new(10 * S_NS);
	rbs_paths_verdict v;
	/* Four senders, 1 us of receive jitter, sender 5's link 20 us late from
	 * round 100: flagged within a few memories, with its sender and
	 * (the exponential mean having forgotten the honest part) its delay
	 * within 5 of the comparison's standard error. */
	int at = feed(p, r, 4, 300, 1000, 5, 20000, 100, 5000, &v);
	fprintf(stderr, "delayed 20 us: flagged at round %d; sender %u offset %+.0f ns z %+.1f of %u senders\n", at,
		v.sender, v.offset_ns, v.z, v.senders);
	ck_assert_int_ge(at, 100);
	ck_assert_int_le(at, 100 + 2 * (int)RBS_PATHS_MEMORY);
	ck_assert(v.flagged);
	ck_assert_uint_eq(v.sender, 5);
	ck_assert_uint_eq(v.senders, 4);
	double se = fabs(v.offset_ns / v.z);
	ck_assert_msg(fabs(v.offset_ns - 20000) <= 5 * se, "offset %.0f ns, se %.0f", v.offset_ns, se);
	rbs_paths_free(p);
	/* Under the tolerance it is not flagged, however sure the z. */
	p = rbs_paths_new(10 * S_NS);
	ck_assert_int_eq(feed(p, r, 4, 300, 1000, 5, 3000, 100, 5000, &v), -1);
	ck_assert_uint_eq(v.sender, 5);
	ck_assert(fabs(v.z) > RBS_PATHS_Z);
	rbs_paths_free(p);
	/* Two senders: flagged, and the verdict says there were two. */
	p = rbs_paths_new(10 * S_NS);
	ck_assert_int_ge(feed(p, r, 2, 200, 1000, 3, 20000, 50, 5000, &v), 50);
	ck_assert(v.flagged && v.senders == 2);
	rbs_paths_free(p);
	gsl_rng_free(r);
}
END_TEST

START_TEST(honest_links_quiet)
{
	/* No delay and no tolerance: only the z test stands between noise and
	 * an alarm.  The z of an exponential mean against the others' rests
	 * on variances estimated from ~32 observations (Student-like tails):
	 * over 200 runs of 300 rounds of 4 senders (240,000 correlated
	 * checks) none may pass |z| > 6; the largest |z| is printed. */
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	int alarms = 0;
	double worst = 0;
	for (int run = 0; run < 200; run++) {
		gsl_rng_set(r, 100 + (unsigned long)run);
		rbs_paths *p = rbs_paths_new(10 * S_NS);
		rbs_paths_verdict v;
		for (int i = 0; i < 300; i++)
			for (int s = 0; s < 4; s++) {
				int64_t now = (int64_t)(i * 4 + s) * S_NS / 4;
				rbs_paths_add(p, 3 + (uint32_t)s, gsl_ran_gaussian(r, 1000), now);
				v = rbs_paths_check(p, 0, now);
				if (v.senders >= 2 && fabs(v.z) > worst)
					worst = fabs(v.z);
				if (v.flagged) {
					alarms++;
					goto next;
				}
			}
	next:
		rbs_paths_free(p);
	}
	fprintf(stderr, "honest links: %d of 200 runs alarmed, largest |z| %.2f\n", alarms, worst);
	ck_assert_int_eq(alarms, 0);
	gsl_rng_free(r);
}
END_TEST

START_TEST(silent_sender_leaves)
{
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	rbs_paths *p = rbs_paths_new(10 * S_NS);
	rbs_paths_verdict v;
	/* Too few observations: nothing compared. */
	for (int i = 0; i < RBS_PATHS_MIN_OBS - 1; i++) {
		rbs_paths_add(p, 3, 0, i * S_NS);
		rbs_paths_add(p, 4, 50000, i * S_NS);
	}
	v = rbs_paths_check(p, 0, RBS_PATHS_MIN_OBS * S_NS);
	ck_assert_uint_eq(v.senders, 0);
	ck_assert(!v.flagged);
	rbs_paths_free(p);
	/* Sender 5 went silent long ago (beyond the timeout): left out. */
	p = rbs_paths_new(10 * S_NS);
	feed(p, r, 3, 100, 1000, 5, 0, 0, 5000, &v);
	ck_assert_uint_eq(v.senders, 3);
	for (int i = 100; i < 150; i++) {
		rbs_paths_add(p, 3, gsl_ran_gaussian(r, 1000), i * S_NS);
		rbs_paths_add(p, 4, gsl_ran_gaussian(r, 1000), i * S_NS);
	}
	v = rbs_paths_check(p, 5000, 150 * S_NS);
	ck_assert_uint_eq(v.senders, 2);
	/* A NaN residual is not counted. */
	rbs_paths_add(p, 3, NAN, 150 * S_NS);
	v = rbs_paths_check(p, 5000, 150 * S_NS);
	ck_assert(isfinite(v.z));
	rbs_paths_free(p);
	gsl_rng_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rbs_paths");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, delayed_link_flagged);
	tcase_add_test(tc, honest_links_quiet);
	tcase_add_test(tc, silent_sender_leaves);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
