/* test_graph.c — the conversion graph: composition and its variance along
 * chains (exactly, and statistically against seeded clocks with known
 * truth), the cheaper path chosen, aging, validity, and the errors. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <glib.h>

#include "libsync/fit.h"
#include "libsync/graph.h"
#include "libsync/ticker_wire.h"
#include "tests/check_run.h"

#define T0 ((int64_t)1 << 62)
#define NOW 5000000000000LL /* the caller's clock for ages, ns */

static sync_graph *mk(void)
{
	sync_graph_params p;
	sync_graph_params_default(&p);
	sync_graph *g = sync_graph_new(&p);
	ck_assert_ptr_nonnull(g);
	return g;
}

/* A hand-made conversion with a given slope and variance model. */
static sync_conv conv(int64_t x0, int64_t y0, double slope, double var_c, double var_s, int64_t span)
{
	sync_conv c;
	memset(&c, 0, sizeof c);
	c.x0 = x0;
	c.y0 = y0;
	c.slope = slope;
	c.xbar = 0;
	c.var_c = var_c;
	c.var_s = var_s;
	c.rms = sqrt(var_c * 64);
	c.wander = 1e-7;
	c.xmin = x0 - span / 2;
	c.xmax = x0 + span / 2;
	c.updated_ns = NOW;
	c.n = 64;
	return c;
}

static void set(sync_graph *g, sync_clock_id a, sync_clock_id b, sync_conv c)
{
	char why[200];
	ck_assert_msg(sync_graph_set(g, a, b, &c, why, sizeof why) == 0, "%s", why);
}

START_TEST(chains_compose_exactly)
{
	/* node1:audio0 -> node1:cpu -> node2:cpu (three clocks), then on to
	 * node3:cpu, node4:cpu (five).  The composed value is the maps applied
	 * in turn; the variance is sum var_i * prod_{j>i} slope_j^2. */
	sync_graph *g = mk();
	sync_clock_id ck[5] = {sync_clock_audio(1, 0), sync_clock_cpu(1), sync_clock_cpu(2), sync_clock_cpu(3),
			       sync_clock_cpu(4)};
	sync_conv e[4];
	e[0] = conv(1000000, T0, 1e9 / 48000 * (1 + 30e-6), 4e6, 1e-4, 2000000); /* frames -> ns */
	e[1] = conv(T0, T0 + 777777, 1 + 50e-6, 9e6, 1e-12, 20000000000LL);
	e[2] = conv(T0 + 777777, T0 - 5555, 1 - 80e-6, 2.5e7, 4e-12, 20000000000LL);
	e[3] = conv(T0 - 5555, T0 + 3, 1 + 1e-6, 1e6, 1e-13, 20000000000LL);
	for (int k = 0; k < 4; k++)
		set(g, ck[k], ck[k + 1], e[k]);
	ck_assert_uint_eq(sync_graph_nedges(g), 4);
	sync_tval x = {1000000 + 300000, 0.25};
	for (int last = 2; last <= 4; last += 2) {
		sync_tval v = x;
		double var = 0;
		for (int k = 0; k < last; k++) {
			var = var * e[k].slope * e[k].slope + sync_conv_var(&e[k], v);
			v = sync_conv_apply(&e[k], v);
		}
		/* the same sum written the other way: each edge's own variance
		 * times the squared product of the slopes after it */
		double var2 = 0, vv[4];
		sync_tval w = x;
		for (int k = 0; k < last; k++) {
			vv[k] = sync_conv_var(&e[k], w);
			w = sync_conv_apply(&e[k], w);
		}
		for (int k = 0; k < last; k++) {
			double p = 1;
			for (int j = k + 1; j < last; j++)
				p *= e[j].slope;
			var2 += vv[k] * p * p;
		}
		ck_assert(fabs(var - var2) < 1e-12 * var2);
		sync_graph_result r;
		char why[200];
		ck_assert_msg(sync_graph_convert(g, ck[0], ck[last], x, NOW, &r, why, sizeof why) == 0, "%s", why);
		ck_assert_uint_eq(r.hops, (unsigned)last);
		ck_assert_int_eq(r.value.i, v.i);
		ck_assert(fabs(r.value.f - v.f) < 1e-6);
		ck_assert(fabs(r.var - var2) < 1e-12 * var2);
		/* Cached: the same answer again, and back the other way. */
		sync_graph_result r2;
		ck_assert_int_eq(sync_graph_convert(g, ck[0], ck[last], x, NOW, &r2, why, sizeof why), 0);
		ck_assert_mem_eq(&r, &r2, sizeof r);
		sync_graph_result b;
		ck_assert_int_eq(sync_graph_convert(g, ck[last], ck[0], r.value, NOW, &b, why, sizeof why), 0);
		ck_assert(fabs(sync_tval_diff(b.value, x.i) - x.f) < 1e-6); /* frames */
		/* Reverse variance: the forward one over the end-to-end slope^2,
		 * to first order (each edge is evaluated at its own point). */
		double s = 1;
		for (int k = 0; k < last; k++)
			s *= e[k].slope;
		ck_assert(fabs(b.var - r.var / (s * s)) < 1e-6 * b.var);
	}
	sync_graph_free(g);
}
END_TEST

/* The true clocks of the statistical chain test. */
typedef struct {
	double ra; /* audio frames per true ns */
	int64_t off2, off3;
	double s2, s3;
} world;

START_TEST(chain_variance_statistics)
{
	/* 300 seeded worlds: node1:audio0 -> node1:cpu (period timestamps with
	 * 5 us jitter), node1:cpu -> node2:cpu and node3:cpu -> node2:cpu (RBS
	 * pairs, 3 us), each fitted over 10 s.  Converting an exact frame to
	 * node3:cpu (the last edge used in reverse), the error over its
	 * predicted s.e. must have unit RMS: within 20 % (the RMS of 300 unit
	 * draws has a relative s.d. of 1/sqrt(600) = 4 %, so 20 % fails only a
	 * stated uncertainty that is wrong, not an unlucky seed), and within the
	 * chi-square interval for 300 draws (p = 1e-6) widened for Student's t
	 * with the smallest fit's 62 degrees of freedom. */
	const int seeds = 300;
	gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	sync_fit *fa = sync_fit_new(&fp, NULL), *f2 = sync_fit_new(&fp, NULL), *f3 = sync_fit_new(&fp, NULL);
	sync_graph *g = mk();
	sync_clock_id au = sync_clock_audio(1, 0), c1 = sync_clock_cpu(1), c2 = sync_clock_cpu(2),
		      c3 = sync_clock_cpu(3);
	double s2sum = 0, s2back = 0;
	for (int k = 0; k < seeds; k++) {
		gsl_rng_set(r, 300 + k);
		world w = {48000e-9 * (1 + (gsl_rng_uniform(r) - 0.5) * 2e-4), (int64_t)(gsl_rng_uniform(r) * 1e12),
			   (int64_t)(gsl_rng_uniform(r) * 1e12), (gsl_rng_uniform(r) - 0.5) * 2e-4,
			   (gsl_rng_uniform(r) - 0.5) * 2e-4};
		sync_fit_reset(fa);
		sync_fit_reset(f2);
		sync_fit_reset(f3);
		/* 320 periods and beacons, each fit solved as it goes (as syncd
		 * does), so that its window of 64 states the wander's running
		 * mean, its first window's bound faded (libsync/fit.c
		 * WANDER_FADE_K) */
		sync_conv tmp;
		for (int i = 0; i < 320; i++) {
			if (i % 4 == 3 && i >= 15) {
				sync_fit_solve(fa, &tmp, NULL);
				sync_fit_solve(f2, &tmp, NULL);
				sync_fit_solve(f3, &tmp, NULL);
			}
			/* a period of 7500 frames (~156 ms), its interrupt time jittered */
			int64_t fr = 7500LL * i;
			double t = (double)fr / w.ra;
			sync_fit_add(fa, fr, T0 + (int64_t)llround(t + gsl_ran_gaussian(r, 5000)), NULL);
			/* Reference beacons every ~156 ms: one heard by nodes 1 and
			 * 2, another by nodes 3 and 2.  (Pairs fitted from the same
			 * beacons share node 2's reception noise, which then cancels
			 * along the path: the graph's sum of variances assumes
			 * independent edges — docs/clocks.md.) */
			double tb = i * 1.5625e8 + gsl_rng_uniform(r) * 1e6;
			int64_t t1 = T0 + (int64_t)tb;
			int64_t t2 = T0 + w.off2 + (int64_t)llround(tb * (1 + w.s2) + gsl_ran_gaussian(r, 3000));
			sync_fit_add(f2, t1, t2, NULL);
			tb += 5e7;
			t2 = T0 + w.off2 + (int64_t)llround(tb * (1 + w.s2) + gsl_ran_gaussian(r, 3000));
			int64_t t3 = T0 + w.off3 + (int64_t)llround(tb * (1 + w.s3) + gsl_ran_gaussian(r, 3000));
			sync_fit_add(f3, t3, t2, NULL);
		}
		sync_conv ca, cb, cc;
		ck_assert_int_eq(sync_fit_solve(fa, &ca, NULL), 0);
		ck_assert_int_eq(sync_fit_solve(f2, &cb, NULL), 0);
		ck_assert_int_eq(sync_fit_solve(f3, &cc, NULL), 0);
		ca.updated_ns = cb.updated_ns = cc.updated_ns = NOW;
		set(g, au, c1, ca);
		set(g, c1, c2, cb);
		set(g, c3, c2, cc);
		int64_t fr = 7500LL * (256 + 50) + 1234; /* late in the window: the slope terms count */
		double t = (double)fr / w.ra;
		sync_graph_result res;
		char why[200];
		ck_assert_msg(sync_graph_convert(g, au, c3, sync_tval_of(fr), NOW, &res, why, sizeof why) == 0, "%s",
			      why);
		ck_assert_uint_eq(res.hops, 3);
		double truth = t * (1 + w.s3); /* minus T0 + off3 */
		double e = (double)(res.value.i - T0 - w.off3) + res.value.f - truth;
		s2sum += e * e / res.var;
		/* And from an exact node3:cpu time to frames: here the ns
		 * variances of the first two edges reach the result scaled by
		 * the last slope squared, (4.8e-5 frames/ns)^2. */
		int64_t x3 = T0 + w.off3 + (int64_t)(t * (1 + w.s3));
		double tf = (double)(x3 - T0 - w.off3) / (1 + w.s3) * w.ra; /* true frames */
		ck_assert_int_eq(sync_graph_convert(g, c3, au, sync_tval_of(x3), NOW, &res, why, sizeof why), 0);
		e = (double)res.value.i + res.value.f - tf;
		s2back += e * e / res.var;
	}
	double rms = sqrt(s2sum / seeds), rms_back = sqrt(s2back / seeds);
	double t_rms = sqrt(62.0 / 60.0);
	double lo = sqrt(gsl_cdf_chisq_Pinv(5e-7, seeds) / seeds);
	double hi = t_rms * sqrt(gsl_cdf_chisq_Qinv(5e-7, seeds) / seeds);
	ck_assert_msg(rms > lo && rms < hi && fabs(rms - 1) < 0.2, "chain RMS z %.3f not in [%.3f, %.3f]", rms, lo,
		      hi);
	ck_assert_msg(rms_back > lo && rms_back < hi && fabs(rms_back - 1) < 0.2,
		      "reverse chain RMS z %.3f not in [%.3f, %.3f]", rms_back, lo, hi);
	if (getenv("CHORUS_TEST_VERBOSE"))
		printf("chain RMS z %.3f, reverse %.3f, interval [%.3f, %.3f]\n", rms, rms_back, lo, hi);
	sync_fit_free(fa);
	sync_fit_free(f2);
	sync_fit_free(f3);
	sync_graph_free(g);
	gsl_rng_free(r);
}
END_TEST

START_TEST(cheaper_path_chosen)
{
	/* A -> B direct (variance 1e6 ns^2) against A -> C -> B (2 x 1e4):
	 * the two-hop path wins; make the direct edge better and the cache
	 * follows the change. */
	sync_graph *g = mk();
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2), c = sync_clock_cpu(3);
	set(g, a, b, conv(T0, T0 + 100, 1.0, 1e6, 0, 20000000000LL));
	set(g, a, c, conv(T0, T0 + 40, 1.0, 1e4, 0, 20000000000LL));
	set(g, c, b, conv(T0 + 40, T0 + 100, 1.0, 1e4, 0, 20000000000LL));
	sync_clock_id ids[4];
	char why[200];
	ck_assert_int_eq(sync_graph_path(g, a, b, sync_tval_of(T0), NOW, ids, 4, why, sizeof why), 3);
	ck_assert(sync_clock_equal(ids[1], c));
	sync_graph_result r;
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW, &r, why, sizeof why), 0);
	ck_assert(fabs(r.var - 2e4) < 1e-6);
	ck_assert_int_eq(r.value.i, T0 + 100);
	set(g, a, b, conv(T0, T0 + 100, 1.0, 1e3, 0, 20000000000LL));
	ck_assert_int_eq(sync_graph_path(g, a, b, sync_tval_of(T0), NOW, ids, 4, why, sizeof why), 2);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW, &r, why, sizeof why), 0);
	ck_assert(fabs(r.var - 1e3) < 1e-6);
	/* Slope scaling decides too: via an audio clock (ns -> frames ->
	 * ns) a variance of 1 frame^2 costs 20833^2 ns^2. */
	sync_clock_id au = sync_clock_audio(1, 0);
	double spf = 1e9 / 48000;
	set(g, a, au, conv(T0, 5000000, 1 / spf, 1.0, 0, 20000000000LL));
	set(g, au, b, conv(5000000, T0 + 100, spf, 0.0, 0, 1000000));
	ck_assert_int_eq(sync_graph_path(g, a, b, sync_tval_of(T0), NOW, ids, 4, why, sizeof why), 2);
	sync_graph_free(g);
}
END_TEST

/* A past time's best path is not the best path now: A -> B direct, noisy
 * now but with a piece of its history before a gap, against A -> C -> B,
 * precise now and with no history (edges learned from advertisements).
 * Now the two-hop path wins; inside the gap, 50 s before C's fits, their
 * wander (1e-7 x 50 s: 5 us a hop) makes the direct bridge the better, and
 * the path cached by the conversion of now must not be reused for it
 * (radio60 in bench/outage: 2-hop past conversions stating 7 us where
 * the direct bridge stated 0.5 us). */
START_TEST(past_path_searched_afresh)
{
	sync_graph *g = mk();
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2), c = sync_clock_cpu(3);
	const int64_t S = 1000000000LL;
	sync_conv cur = conv(T0 + 115 * S, T0 + 115 * S + 100, 1.0, 1e6, 1e-16, 30 * S); /* data 100-130 s */
	set(g, a, b, cur);
	sync_conv piece = conv(T0 - 15 * S, T0 - 15 * S + 100, 1.0, 1e4, 1e-16, 30 * S); /* data -30-0 s */
	piece.flags = SYNC_CONV_PIECE;
	piece.wander = 1e-27; /* its q2: 1 ppb/sqrt(s) */
	char why[200];
	ck_assert_msg(sync_graph_set_history(g, a, b, &piece, 1, why, sizeof why) == 0, "%s", why);
	set(g, a, c, conv(T0 + 115 * S, T0 + 115 * S + 40, 1.0, 1e4, 1e-16, 30 * S));
	set(g, c, b, conv(T0 + 115 * S + 40, T0 + 115 * S + 100, 1.0, 1e4, 1e-16, 30 * S));
	int64_t now = NOW; /* their ages: 0 */
	sync_graph_result r;
	ck_assert_msg(sync_graph_convert(g, a, b, sync_tval_of(T0 + 129 * S), now, &r, why, sizeof why) == 0, "%s", why);
	ck_assert_uint_eq(r.hops, 2);
	ck_assert_msg(sync_graph_convert(g, a, b, sync_tval_of(T0 + 50 * S), now, &r, why, sizeof why) == 0, "%s", why);
	ck_assert_msg(r.hops == 1 && (r.flags & SYNC_GRAPH_BRIDGED), "hops %u flags %u var %.3g", r.hops, r.flags, r.var);
	double bridged = r.var;
	/* ... and the past path does not stay: now is two hops again. */
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0 + 129 * S), now, &r, why, sizeof why), 0);
	ck_assert_uint_eq(r.hops, 2);
	ck_assert_msg(sync_graph_convert(g, a, b, sync_tval_of(T0 + 50 * S), now, &r, why, sizeof why) == 0, "%s", why);
	ck_assert(r.hops == 1 && r.var == bridged);
	sync_graph_free(g);
}
END_TEST

START_TEST(aging_and_validity)
{
	sync_graph *g = mk();
	sync_clock_id a = sync_clock_cpu(2), b = sync_clock_cpu(5), c = sync_clock_cpu(7);
	sync_conv e = conv(T0, T0 + 100, 1.0, 1e4, 1e-12, 10000000000LL); /* data T0 +- 5 s */
	set(g, a, b, e);
	sync_graph_result r0, r1, r2;
	char why[200];
	/* Further past the data: more variance, by the wander term exactly. */
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0 + 5000000000LL), NOW, &r0, why, sizeof why), 0);
	ck_assert_uint_eq(r0.flags, 0);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0 + 15000000000LL), NOW, &r1, why, sizeof why), 0);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0 + 45000000000LL), NOW, &r2, why, sizeof why), 0);
	ck_assert_uint_eq(r1.flags, SYNC_GRAPH_EXTRAPOLATED);
	ck_assert(r0.var < r1.var && r1.var < r2.var);
	double stat = 1e4 + 1e-12 * 4.5e10 * 4.5e10, wander = pow(1e-7 * 4e10, 2);
	ck_assert(fabs(r2.var - stat - wander) < 1e-9 * r2.var);
	/* Beyond the tolerance (60 s): refused, with the distance. */
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0 + 70000000000LL), NOW, &r2, why, sizeof why),
			 -ERANGE);
	ck_assert_msg(strstr(why, "outside the validity of node2:cpu->node5:cpu by 65.000 s") != NULL, "%s", why);
	/* An edge updated 340 s ago is refused ... */
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW + 340000000000LL, &r2, why, sizeof why),
			 -ESTALE);
	ck_assert_str_eq(why, "node2:cpu->node5:cpu last updated 340 s ago, beyond max age 120 s");
	/* ... and a fresher two-hop path, although noisier, is taken instead. */
	sync_conv f1 = conv(T0, T0 + 60, 1.0, 1e5, 0, 10000000000LL), f2 = conv(T0 + 60, T0 + 100, 1.0, 1e5, 0, 10000000000LL);
	f1.updated_ns = f2.updated_ns = NOW + 300000000000LL;
	set(g, a, c, f1);
	set(g, c, b, f2);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW, &r0, why, sizeof why), 0);
	ck_assert_uint_eq(r0.hops, 1);
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW + 340000000000LL, &r0, why, sizeof why), 0);
	ck_assert_uint_eq(r0.hops, 2);
	ck_assert(fabs(r0.var - 2e5) < 1e-6);
	sync_graph_free(g);
}
END_TEST

START_TEST(past_reach)
{
	/* sync_graph_convert_past (issue 16: a node cut off from its very
	 * start has no fit before its first observations after the outage).
	 * Exactly: the edge's line extrapolated back, the variance its own
	 * statistics at that distance plus the wander term, grown as a ramp
	 * of the rate measured as that wander would grow it (conv.h
	 * sync_conv_ramp_factor: 2 D / (3 T) + 2/3 for D = 120 s before data
	 * of span T = 10 s). */
	sync_graph *g = mk();
	sync_clock_id a = sync_clock_cpu(2), b = sync_clock_cpu(5);
	sync_conv e = conv(T0, T0 + 100, 1.0, 1e4, 1e-12, 10000000000LL); /* data T0 +- 5 s */
	set(g, a, b, e);
	sync_graph_result r;
	char why[200];
	sync_tval x = sync_tval_of(T0 - 125000000000LL); /* 120 s before the data */
	ck_assert_int_eq(sync_graph_convert(g, a, b, x, NOW, &r, why, sizeof why), -ERANGE);
	ck_assert_int_eq(sync_graph_convert_past(g, a, b, x, NOW, 30000000000LL, &r, why, sizeof why), -ERANGE);
	ck_assert_msg(sync_graph_convert_past(g, a, b, x, NOW, 3600000000000LL, &r, why, sizeof why) == 0, "%s", why);
	ck_assert_uint_eq(r.flags, SYNC_GRAPH_EXTRAPOLATED);
	ck_assert_int_eq(r.value.i, T0 - 125000000000LL + 100);
	double ramp = 2.0 * 120 / (3.0 * 10) + 2.0 / 3.0;
	ck_assert_double_eq_tol(sync_conv_ramp_factor(&e, x), ramp, 1e-12);
	/* ... and the ramp its data could not show: 8 s.e. of its slope over
	 * its span, carried (D^2 + D T) / 2. */
	double unseen = pow(4 * 1e-6 / 1e10 * (1.2e11 * 1.2e11 + 1.2e11 * 1e10), 2);
	ck_assert_double_eq_tol(sync_conv_unresolved_ramp_var(&e, x) / unseen, 1.0, 1e-12);
	double stat = 1e4 + 1e-12 * 1.25e11 * 1.25e11 + unseen, wander = pow(1e-7 * 1.2e11 * ramp, 2);
	ck_assert_msg(fabs(r.var - stat - wander) < 1e-9 * r.var, "var %g, want %g", r.var, stat + wander);
	/* The reach was for that call alone, and for the past alone. */
	ck_assert_int_eq(sync_graph_convert(g, a, b, x, NOW, &r, why, sizeof why), -ERANGE);
	ck_assert_int_eq(sync_graph_convert_past(g, a, b, sync_tval_of(T0 + 70000000000LL), NOW, 3600000000000LL, &r,
						 why, sizeof why),
			 -ERANGE);
	sync_graph_free(g);

	/* Statistically: 300 seeded worlds, an RBS-like pair fitted from a
	 * window of 64 beacons over 10 s (3 us reception noise, a constant
	 * skew; 320 beacons fed, so that the wander's bound a window states
	 * while its first estimate weighs most has faded: libsync/fit.c
	 * WANDER_FADE_K), converted 300 s before the first beacon fed.  The world has no wander, so with the
	 * conversion's wander term off the fit's own slope error, carried that
	 * far back, must be the whole error: RMS z of the stated variance less
	 * the unseen ramp's in the chi-square interval of test
	 * chain_variance_statistics (62 d.o.f.), and within 20 %; the whole
	 * stated variance (the ramp a constant rate does not have) is then
	 * conservative. */
	const int seeds = 300;
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	sync_fit *f = sync_fit_new(&fp, NULL);
	double s2sum = 0;
	for (int k = 0; k < seeds; k++) {
		gsl_rng_set(rng, 9000 + k);
		double skew = (gsl_rng_uniform(rng) - 0.5) * 2e-4;
		int64_t off = (int64_t)(gsl_rng_uniform(rng) * 1e12);
		sync_fit_reset(f);
		sync_conv tmp;
		for (int i = 0; i < 320; i++) {
			if (i % 4 == 3 && i >= 15)
				sync_fit_solve(f, &tmp, NULL);
			double tb = i * 1.5625e8 + gsl_rng_uniform(rng) * 1e6;
			sync_fit_add(f, T0 + (int64_t)tb,
				     T0 + off + (int64_t)llround(tb * (1 + skew) + gsl_ran_gaussian(rng, 3000)), NULL);
		}
		sync_conv c;
		ck_assert_int_eq(sync_fit_solve(f, &c, NULL), 0);
		c.updated_ns = NOW;
		c.wander = 0;
		g = mk();
		set(g, a, b, c);
		double back = -300e9;
		ck_assert_msg(sync_graph_convert_past(g, a, b, sync_tval_of(T0 + (int64_t)back), NOW, 3600000000000LL, &r,
						      why, sizeof why) == 0,
			      "%s", why);
		double err = (double)(r.value.i - T0 - off) + r.value.f - back * (1 + skew);
		double unseen_k = sync_conv_unresolved_ramp_var(&c, sync_tval_of(T0 + (int64_t)back));
		ck_assert(unseen_k > 0 && unseen_k < r.var);
		s2sum += err * err / (r.var - unseen_k);
		sync_graph_free(g);
	}
	double rms = sqrt(s2sum / seeds);
	double lo = sqrt(gsl_cdf_chisq_Pinv(5e-7, seeds) / seeds);
	double hi = sqrt(62.0 / 60.0) * sqrt(gsl_cdf_chisq_Qinv(5e-7, seeds) / seeds);
	ck_assert_msg(rms > lo && rms < hi && fabs(rms - 1) < 0.2, "RMS z %.3f 300 s back not in [%.3f, %.3f]", rms, lo,
		      hi);
	if (getenv("CHORUS_TEST_VERBOSE"))
		printf("300 s back: RMS z %.3f, interval [%.3f, %.3f]\n", rms, lo, hi);
	sync_fit_free(f);
	gsl_rng_free(rng);
}
END_TEST

START_TEST(global_and_errors)
{
	sync_graph *g = mk();
	sync_clock_id gl = sync_clock_global(), root = sync_clock_cpu(1), n3 = sync_clock_cpu(3),
		      au = sync_clock_audio(3, 0), n9 = sync_clock_cpu(9), n8 = sync_clock_cpu(8);
	/* global = root cpu + a fixed UTC offset: exact, never ages. */
	sync_conv fx = sync_conv_fixed(T0, 1700000000000000000LL, 1.0);
	set(g, root, gl, fx);
	set(g, root, n3, conv(T0, T0 + 5, 1 + 2e-5, 1e4, 0, 10000000000LL));
	set(g, n3, au, conv(T0 + 5, 100000, 48000e-9, 0.01, 0, 10000000000LL));
	set(g, n9, n8, conv(T0, T0, 1.0, 1.0, 0, 10000000000LL));
	sync_graph_result r;
	char why[200];
	ck_assert_int_eq(sync_graph_convert(g, gl, n3, sync_tval_of(1700000000000000000LL + 1000), NOW, &r, why,
					    sizeof why),
			 0);
	ck_assert_int_eq(r.value.i, T0 + 5 + 1000);
	ck_assert(fabs(r.value.f - 0.02) < 1e-6);
	ck_assert(fabs(r.var - 1e4) < 1e-6); /* the fixed edge adds nothing */
	/* Far in the future the fixed edge still converts (no validity, no age). */
	ck_assert_int_eq(sync_graph_convert(g, root, gl, sync_tval_of(T0 + 1000000000000000LL), NOW * 10, &r, why,
					    sizeof why),
			 0);
	ck_assert_int_eq(sync_graph_convert(g, au, n9, sync_tval_of(100000), NOW, &r, why, sizeof why), -ENOLINK);
	ck_assert_str_eq(why, "no path from node3:audio0 to node9:cpu");
	ck_assert_int_eq(sync_graph_convert(g, au, sync_clock_cpu(4), sync_tval_of(100000), NOW, &r, why, sizeof why),
			 -ENOENT);
	ck_assert_str_eq(why, "unknown clock node4:cpu (no conversion involves it)");
	ck_assert_int_eq(sync_graph_set(g, n3, n3, &fx, why, sizeof why), -EINVAL);
	sync_conv bad = fx;
	bad.slope = NAN;
	ck_assert_int_eq(sync_graph_set(g, n3, n9, &bad, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "slope") != NULL, "%s", why);
	/* The same clock: identity. */
	ck_assert_int_eq(sync_graph_convert(g, n3, n3, sync_tval_of(42), NOW, &r, why, sizeof why), 0);
	ck_assert(r.value.i == 42 && r.var == 0 && r.hops == 0);
	/* Removing an edge breaks the path (and the cached one). */
	ck_assert_int_eq(sync_graph_convert(g, au, gl, sync_tval_of(100000), NOW, &r, why, sizeof why), 0);
	ck_assert_int_eq(sync_graph_remove(g, n3, root), 0);
	ck_assert_int_eq(sync_graph_remove(g, n3, root), -ENOENT);
	ck_assert_int_eq(sync_graph_convert(g, au, gl, sync_tval_of(100000), NOW, &r, why, sizeof why), -ENOLINK);
	sync_graph_clear(g);
	ck_assert_uint_eq(sync_graph_nedges(g), 0);
	ck_assert_int_eq(sync_graph_convert(g, au, gl, sync_tval_of(100000), NOW, &r, why, sizeof why), -ENOENT);
	sync_graph_free(g);
}
END_TEST

/* Issue 13 item 4: the degrees of freedom of a composed variance
 * (Welch-Satterthwaite over the edges, n - 2 each; exact edges add none) and
 * the t-quantile rule that young fits' errors are judged by. */
START_TEST(dof_and_tail_rule)
{
	sync_graph *g = mk();
	sync_clock_id a = sync_clock_cpu(1), b = sync_clock_cpu(2), c = sync_clock_cpu(3), gl = sync_clock_global();
	sync_conv young = conv(T0, T0, 1.0, 100.0, 0, 10000000000LL);
	young.n = 8;
	set(g, a, b, young);
	set(g, b, c, conv(T0, T0, 1.0, 100.0, 0, 10000000000LL)); /* n = 64 */
	set(g, a, gl, sync_conv_fixed(T0, 1700000000000000000LL, 1.0));
	sync_graph_result r;
	char why[200];
	ck_assert_int_eq(sync_graph_convert(g, a, b, sync_tval_of(T0), NOW, &r, why, sizeof why), 0);
	ck_assert_double_eq_tol(r.dof, 6.0, 1e-9);
	ck_assert_int_eq(sync_graph_convert(g, a, c, sync_tval_of(T0), NOW, &r, why, sizeof why), 0);
	/* (100 + 100)^2 / (100^2 / 6 + 100^2 / 62) */
	ck_assert_double_eq_tol(r.dof, 40000.0 / (1e4 / 6 + 1e4 / 62), 1e-6);
	ck_assert_int_eq(sync_graph_convert(g, a, gl, sync_tval_of(T0), NOW, &r, why, sizeof why), 0);
	ck_assert(isinf(r.dof));
	sync_graph_free(g);

	/* sync_tail_k: the same two-sided tail probability as k Gaussian s.e. */
	ck_assert_double_eq(sync_tail_k(INFINITY, 5.0), 5.0);
	for (int i = 0; i < 4; i++) {
		double dof = (double[]){3, 6, 20, 200}[i], k = sync_tail_k(dof, 5.0);
		double p = gsl_cdf_tdist_Q(k * sqrt(dof / (dof - 2)), dof);
		ck_assert_msg(fabs(p / gsl_cdf_ugaussian_Q(5.0) - 1) < 1e-6, "dof %g: k %g, tail %g", dof, k, p);
		ck_assert(k > 5.0);
	}
	/* Drawn: t with 6 dof scaled to unit variance (the error of an 8-point
	 * fit over its stated s.e.) passes 3 s.e. by the rule as often as a
	 * Gaussian passes 3: within 5 binomial s.d. of N * 2Q(3). */
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(rng, 13);
	const int N = 200000;
	double k3 = sync_tail_k(6, 3.0), p3 = 2 * gsl_cdf_ugaussian_Q(3.0);
	int beyond = 0, beyond_plain = 0;
	for (int i = 0; i < N; i++) {
		double z = gsl_ran_tdist(rng, 6) / sqrt(1.5);
		beyond += fabs(z) > k3;
		beyond_plain += fabs(z) > 3.0;
	}
	gsl_rng_free(rng);
	double want = N * p3, sd = sqrt(N * p3 * (1 - p3));
	ck_assert_msg(fabs(beyond - want) < 5 * sd, "%d beyond %.2f s.e., expected %.0f +- %.0f", beyond, k3, want, sd);
	ck_assert_msg(beyond_plain > want + 5 * sd, "plain 3 s.e.: %d (t tails should show)", beyond_plain);
}
END_TEST


/* A steered timescale (issue 16 item 5): segment k of root cpu -> global
 * from its start on, with the slope the steering chose; conversions of
 * past times use the segment that was in force then, both ways, also
 * through other edges and when loaded from ticker entries. */
static sync_conv segment(int64_t start, int64_t y, double slope)
{
	sync_conv c = sync_conv_fixed(start, y, slope);
	c.xmin = start;
	return c;
}

START_TEST(timescale_segments)
{
	const int64_t G0 = 1700000000000000000LL, S = 100000000000LL; /* 100 s */
	sync_clock_id gl = sync_clock_global(), root = sync_clock_cpu(1), n3 = sync_clock_cpu(3);
	sync_conv seg[3];
	seg[0] = segment(T0, G0, 1.0);
	seg[1] = segment(T0 + S, G0 + S, 1.0 + 1e-6);
	seg[2] = segment(T0 + 2 * S, G0 + 2 * S + 100000, 1.0 - 2e-6);
	sync_graph *g = mk();
	char why[200];
	ck_assert_msg(sync_graph_set_segments(g, root, gl, seg, 3, why, sizeof why) == 0, "%s", why);
	ck_assert_uint_eq(sync_graph_nedges(g), 1);
	set(g, n3, root, conv(T0, T0 + 7, 1.0, 4.0, 0, 10 * S));
	sync_graph_result r;
	struct {
		int64_t x, want;
	} cases[] = {
		{T0 - S, G0 - S},                           /* before the first: the first */
		{T0 + S / 2, G0 + S / 2},                   /* inside the first */
		{T0 + S + S / 2, G0 + S + S / 2 + 50000},   /* the second: +1 ppm over 50 s */
		{T0 + 2 * S, G0 + 2 * S + 100000},          /* the third's start */
		{T0 + 3 * S, G0 + 3 * S + 100000 - 200000}, /* the third: -2 ppm over 100 s */
	};
	for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
		ck_assert_int_eq(sync_graph_convert(g, root, gl, sync_tval_of(cases[k].x), NOW, &r, why, sizeof why), 0);
		ck_assert_msg(llabs(r.value.i - cases[k].want) <= 1, "case %zu: %" PRId64 " want %" PRId64, k, r.value.i,
			      cases[k].want);
		ck_assert(r.var == 0.0);
		/* Back again, exactly. */
		ck_assert_int_eq(sync_graph_convert(g, gl, root, r.value, NOW, &r, why, sizeof why), 0);
		ck_assert_msg(llabs(r.value.i - cases[k].x) <= 1, "case %zu back: %" PRId64, k, r.value.i);
		/* Through another edge: n3's time maps to root's time + 7 first. */
		ck_assert_int_eq(sync_graph_convert(g, n3, gl, sync_tval_of(cases[k].x - 7), NOW, &r, why, sizeof why),
				 0);
		ck_assert_msg(llabs(r.value.i - cases[k].want) <= 1, "case %zu via n3: %" PRId64, k, r.value.i);
		ck_assert(fabs(r.var - 4.0) < 1e-3);
	}
	/* The same from ticker entries: consecutive exact entries of the pair. */
	sync_ticker_entry e[5] = {
		{n3, root, conv(T0, T0 + 7, 1.0, 4.0, 0, 10 * S)},
		{root, gl, seg[0]},
		{root, gl, seg[1]},
		{root, gl, seg[2]},
		{sync_clock_cpu(4), sync_clock_cpu(5), conv(T0, T0, 1.0, 1.0, 0, S)},
	};
	size_t skipped = 9;
	ck_assert_int_eq(sync_ticker_entries_to_graph(e, 5, g, &skipped, why, sizeof why), 5);
	ck_assert_uint_eq(skipped, 0);
	ck_assert_uint_eq(sync_graph_nedges(g), 3);
	ck_assert_int_eq(sync_graph_convert(g, n3, gl, sync_tval_of(T0 + S + S / 2 - 7), NOW, &r, why, sizeof why), 0);
	ck_assert_msg(llabs(r.value.i - (G0 + S + S / 2 + 50000)) <= 1, "%" PRId64, r.value.i);
	/* Refused: starts out of order, an inexact segment. */
	sync_conv bad[2] = {seg[1], seg[0]};
	ck_assert_int_eq(sync_graph_set_segments(g, root, gl, bad, 2, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "increasing order") != NULL, "%s", why);
	bad[0] = seg[0];
	bad[1] = conv(T0 + S, G0 + S, 1.0, 1.0, 0, S);
	ck_assert_int_eq(sync_graph_set_segments(g, root, gl, bad, 2, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "FIXED") != NULL, "%s", why);
	/* Replacing and removing a timescale frees its segments (ASan sees leaks). */
	ck_assert_int_eq(sync_graph_set_segments(g, root, gl, seg, 3, why, sizeof why), 0);
	set(g, root, gl, sync_conv_fixed(T0, G0, 1.0));
	ck_assert_int_eq(sync_graph_set_segments(g, root, gl, seg, 2, why, sizeof why), 0);
	ck_assert_int_eq(sync_graph_remove(g, root, gl), 0);
	ck_assert_int_eq(sync_graph_set_segments(g, root, gl, seg, 3, why, sizeof why), 0);
	sync_graph_free(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graph");
	TCase *tc = tcase_create("graph");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, chains_compose_exactly);
	tcase_add_test(tc, chain_variance_statistics);
	tcase_add_test(tc, cheaper_path_chosen);
	tcase_add_test(tc, past_path_searched_afresh);
	tcase_add_test(tc, aging_and_validity);
	tcase_add_test(tc, past_reach);
	tcase_add_test(tc, global_and_errors);
	tcase_add_test(tc, dof_and_tail_rule);
	tcase_add_test(tc, timescale_segments);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
