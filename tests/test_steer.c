/* test_steer.c — the global timescale steered to UTC (issue 16 item 5):
 * segments that continue one another and are noted once, and syncd's loop
 * on modelled clocks (bench/utcloop.h) keeping global - UTC within the
 * source's stated error for hours with the root's crystal 50 ppm off. */
#include <check.h>
#include <errno.h>
#include <math.h>

#include "bench/utcloop.h"
#include "libsync/graph.h"
#include "syncd/timescale.h"
#include "tests/check_run.h"

#define X0 5000000000000LL

START_TEST(segments_continue)
{
	syncd_timescale *ts = syncd_timescale_new();
	syncd_timescale_start(ts, 1, X0, 1700000000000000000LL, 1.0 - 50e-6);
	int64_t x = X0;
	for (int k = 1; k <= SYNCD_TIMESCALE_KEEP + 5; k++) {
		int64_t nx = x + 16000000000LL;
		sync_tval before = sync_conv_apply(syncd_timescale_current(ts), sync_tval_of(nx));
		ck_assert_int_eq(syncd_timescale_steer(ts, nx, 1.0 - 50e-6 + (k % 3 - 1) * 1e-6), 0);
		sync_tval after = syncd_timescale_at(ts, nx);
		/* No step: the new segment starts where the old one was. */
		ck_assert(fabs((double)(after.i - before.i) + after.f - before.f) < 1e-3);
		x = nx;
	}
	ck_assert_uint_eq(syncd_timescale_count(ts), SYNCD_TIMESCALE_KEEP);
	ck_assert_int_eq(syncd_timescale_steer(ts, x, 1.0), -EINVAL); /* not after the current start */
	ck_assert_int_eq(syncd_timescale_steer(ts, x + 1, NAN), -EINVAL);
	/* Published oldest first; loaded as one timescale, past times exact. */
	sync_ticker_entry e[SYNCD_TIMESCALE_KEEP];
	size_t n = syncd_timescale_entries(ts, e, SYNCD_TIMESCALE_KEEP);
	ck_assert_uint_eq(n, SYNCD_TIMESCALE_KEEP);
	for (size_t k = 1; k < n; k++)
		ck_assert(e[k].conv.xmin > e[k - 1].conv.xmin);
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g = sync_graph_new(&gp);
	char why[200];
	size_t bad = 1;
	ck_assert_int_eq(sync_ticker_entries_to_graph(e, n, g, &bad, why, sizeof why), (int)n);
	ck_assert_uint_eq(bad, 0);
	for (int64_t q = e[0].conv.xmin; q < x + 100000000000LL; q += 7000000001LL) {
		sync_graph_result r;
		ck_assert_int_eq(
			sync_graph_convert(g, sync_clock_cpu(1), sync_clock_global(), sync_tval_of(q), q, &r, why, sizeof why),
			0);
		sync_tval want = syncd_timescale_at(ts, q);
		ck_assert(fabs((double)(r.value.i - want.i) + r.value.f - want.f) < 1e-3);
	}
	sync_graph_free(g);
	/* A follower notes each segment once; another root starts afresh. */
	syncd_timescale *f = syncd_timescale_new();
	ck_assert_int_eq(syncd_timescale_note(f, 1, &e[0].conv), 1);
	ck_assert_int_eq(syncd_timescale_note(f, 1, &e[0].conv), 0);
	ck_assert_int_eq(syncd_timescale_note(f, 1, &e[2].conv), 1);
	ck_assert_int_eq(syncd_timescale_note(f, 1, &e[1].conv), 0); /* older: ignored */
	ck_assert_uint_eq(syncd_timescale_count(f), 2);
	ck_assert_int_eq(syncd_timescale_note(f, 4, &e[3].conv), 1);
	ck_assert_uint_eq(syncd_timescale_count(f), 1);
	ck_assert_uint_eq(syncd_timescale_root(f), 4);
	sync_conv inexact = e[3].conv;
	inexact.flags = 0;
	ck_assert_int_eq(syncd_timescale_note(f, 4, &inexact), -EINVAL);
	syncd_timescale_free(f);
	syncd_timescale_free(ts);
}
END_TEST

static utcloop_cfg gps_root(int steering, double hours)
{
	double sigma, tau;
	sync_simutc_defaults(SYNC_SIMUTC_GPS, &sigma, &tau);
	return (utcloop_cfg){
		.cpu = {.skew_ppm = 50.0, .offset_ns = 1000000000000LL, .wander = {.rw_ppb = 1.0, .temp_amp_c = 5, .temp_period_s = 86400, .tempco_ppm_per_c = 0.2, .seed = 3}},
		.utc = {.kind = SYNC_SIMUTC_GPS, .sigma_ns = sigma, .tau_s = tau, .seed = 11},
		.steer = {.interval_s = 16, .tau_s = 64, .max_slew_ppm = 100},
		.steering = steering,
		.duration_s = hours * 3600,
		.warmup_s = 600,
		.sample_s = 10,
		.sandwich_ns = 200,
		.seed = 5,
	};
}

/* Four hours of a GPS-disciplined root: global - UTC never beyond 5 of the
 * source's stated s.e. (1 us) and the root's claim of it honest: RMS z
 * over ~240 correlation times of the source within 1 +- 0.3. */
START_TEST(gps_root_tracks_utc)
{
	utcloop_cfg c = gps_root(1, 4);
	utcloop_result r;
	ck_assert_int_eq(utcloop_run(&c, &r), 0);
	ck_assert_uint_gt(r.n, 1000);
	ck_assert_msg(r.diff_beyond5 == 0, "global - UTC beyond 5 us %u times (max %.2f us)", r.diff_beyond5,
		      r.max_diff_ns * 1e-3);
	ck_assert_msg(r.beyond5 == 0 && r.rms_z > 0.7 && r.rms_z < 1.3, "claim rms_z %.2f, %u beyond 5 s.e.", r.rms_z,
		      r.beyond5);
	ck_assert_uint_gt(r.segments, 100);
	/* Not steered, the same root's global gains 50 ppm: the checks above fail. */
	c = gps_root(0, 1);
	ck_assert_int_eq(utcloop_run(&c, &r), 0);
	ck_assert_uint_gt(r.diff_beyond5, r.n / 2);
	ck_assert(fabs(r.max_diff_ns - 50e-6 * 3600e9) < 0.05 * 50e-6 * 3600e9);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("steer");
	TCase *tc = tcase_create("steer");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, segments_continue);
	tcase_add_test(tc, gps_root_tracks_utc);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
