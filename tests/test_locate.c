/* test_locate.c — the TDOA solver on synthetic arrivals with known truth and
 * Gaussian timing noise: accuracy against its own covariance (Mahalanobis
 * distance over many seeds), chi-square calibration, outlier rejection and
 * honest failure on degenerate geometry. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/dsp/locate.h"
#include "tests/check_run.h"

#define C 343.0
#define SEEDS 400
#define Z_FAIL 4.9 /* two-sided normal quantile for ~1e-6 chance of a spurious failure */

/* Six microphones around a 30 m field, a little height variation (ignored in 2-D). */
static const double MICS[6][3] = {{0, 0, 1.0}, {30, 0, 1.2}, {30, 30, 0.8}, {0, 30, 1.1}, {15, -2, 1.0}, {14, 31, 0.9}};
/* Non-coplanar 3-D array: poles of different heights. */
static const double MICS3[6][3] = {{0, 0, 0}, {30, 0, 4}, {30, 30, 0.5}, {0, 30, 6}, {15, 15, 10}, {10, 25, 1}};

/* Arrivals from src at the mics, emission at t0, Gaussian noise sd sig. */
static void arrivals(gsl_rng *r, const double (*m)[3], int n, const double *src, int dim, double t0,
		     double sig, dsp_arrival *a)
{
	for (int i = 0; i < n; i++) {
		double d2 = 0;
		for (int j = 0; j < dim; j++)
			d2 += (src[j] - m[i][j]) * (src[j] - m[i][j]);
		memcpy(a[i].pos_m, m[i], sizeof a[i].pos_m);
		a[i].sigma_s = sig;
		a[i].t_s = t0 + sqrt(d2) / C + (r ? gsl_ran_gaussian(r, sig) : 0);
	}
}

/* Mahalanobis distance^2 of the position error under the result's covariance. */
static double maha2(const dsp_loc_result *res, const double *src, int dim)
{
	double e[3], A[3][3];
	for (int j = 0; j < dim; j++) {
		e[j] = res->pos_m[j] - src[j];
		for (int k = 0; k < dim; k++)
			A[j][k] = res->cov[j][k];
	}
	if (dim == 2) {
		double det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
		return (A[1][1] * e[0] * e[0] - 2 * A[0][1] * e[0] * e[1] + A[0][0] * e[1] * e[1]) / det;
	}
	/* 3x3: solve by Cramer's rule on the inverse */
	double inv[3][3];
	double det = A[0][0] * (A[1][1] * A[2][2] - A[1][2] * A[2][1]) - A[0][1] * (A[1][0] * A[2][2] - A[1][2] * A[2][0]) +
		     A[0][2] * (A[1][0] * A[2][1] - A[1][1] * A[2][0]);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			int i1 = (j + 1) % 3, i2 = (j + 2) % 3, j1 = (i + 1) % 3, j2 = (i + 2) % 3;
			inv[i][j] = (A[i1][j1] * A[i2][j2] - A[i1][j2] * A[i2][j1]) / det;
		}
	double q = 0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			q += e[i] * inv[i][j] * e[j];
	return q;
}

/* Binomial tolerance on a fraction p over n trials. */
static double tol(double p, int n)
{
	return Z_FAIL * sqrt(p * (1 - p) / n);
}

START_TEST(noiseless_exact)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	double src[3] = {11.3, 17.9, 0};
	dsp_arrival a[6];
	arrivals(NULL, MICS, 6, src, 2, 1234.5678, 1e-6, a);
	dsp_loc_result r;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
	ck_assert_int_eq(r.status, DSP_LOC_OK);
	ck_assert_int_eq(r.dim, 2); /* auto: heights within 0.4 m over 30 m is a flat array */
	ck_assert(fabs(r.pos_m[0] - src[0]) < 1e-6 && fabs(r.pos_m[1] - src[1]) < 1e-6);
	ck_assert(fabs(r.t0_s - 1234.5678) < 1e-9);
	ck_assert(r.chi2 < 1e-6);
	ck_assert_int_eq(r.rejected, -1);
}
END_TEST

/* Coverage of the 95% ellipse (and chi-square calibration) over SEEDS
 * sources in or around the array. */
static void coverage(const double (*m)[3], int n, int dim, double sig, double lo, double hi)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	p.dim = dim;
	p.reject = 0; /* pure statistics: no rejection */
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int inside = 0, chi_bad = 0;
	double q95 = gsl_cdf_chisq_Pinv(0.95, dim);
	for (int seed = 1; seed <= SEEDS; seed++) {
		gsl_rng_set(g, (unsigned long)seed);
		double src[3] = {lo + (hi - lo) * gsl_rng_uniform(g), lo + (hi - lo) * gsl_rng_uniform(g),
				 dim == 3 ? 0.5 + 3 * gsl_rng_uniform(g) : 0};
		dsp_arrival a[DSP_LOC_MAX];
		arrivals(g, m, n, src, dim, 100 * gsl_rng_uniform(g), sig, a);
		dsp_loc_result r;
		ck_assert_int_eq(dsp_locate(a, n, &p, &r), 0);
		ck_assert_msg(r.status == DSP_LOC_OK || r.status == DSP_LOC_INCONSISTENT, "seed %d status %d", seed, r.status);
		ck_assert_int_eq(r.dim, dim);
		inside += maha2(&r, src, dim) <= q95;
		chi_bad += r.p_value < 0.05;
	}
	double fin = (double)inside / SEEDS, fbad = (double)chi_bad / SEEDS;
	fprintf(stderr, "locate dim %d sig %g box [%g,%g]: inside 95%% ellipse %.3f, chi2 p<0.05 %.3f\n", dim, sig, lo, hi, fin, fbad);
	ck_assert_msg(fabs(fin - 0.95) <= tol(0.95, SEEDS), "coverage %g", fin);
	ck_assert_msg(fabs(fbad - 0.05) <= tol(0.05, SEEDS), "chi2 false-fail rate %g", fbad);
	gsl_rng_free(g);
}

START_TEST(coverage_2d_inside)
{
	coverage(MICS, 6, 2, 10e-6, 0, 30);
	coverage(MICS, 6, 2, 1e-6, 0, 30);
}
END_TEST

START_TEST(coverage_2d_outside)
{
	/* sources 30-60 m beyond the array: nonlinear, wider ellipses */
	coverage(MICS, 6, 2, 10e-6, 60, 90);
}
END_TEST

START_TEST(coverage_3d)
{
	coverage(MICS3, 6, 3, 10e-6, 0, 30);
}
END_TEST

START_TEST(outlier_rejected)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	for (int seed = 1; seed <= 50; seed++) {
		gsl_rng_set(g, (unsigned long)seed);
		double src[3] = {30 * gsl_rng_uniform(g), 30 * gsl_rng_uniform(g), 0};
		dsp_arrival a[6];
		arrivals(g, MICS, 6, src, 2, 5.0, 10e-6, a);
		int bad = (int)gsl_rng_uniform_int(g, 6);
		a[bad].t_s += (gsl_rng_uniform(g) < 0.5 ? -1 : 1) * 1e-3; /* 100 sigma: a wrong peak */
		dsp_loc_result r;
		ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
		ck_assert_msg(r.rejected == bad, "seed %d rejected %d, bad %d", seed, r.rejected, bad);
		ck_assert_int_eq(r.status, DSP_LOC_OK);
		ck_assert_int_eq(r.n_used, 5);
		ck_assert_int_eq(r.dof, 2);
		/* 1e-6 chance bound on the Mahalanobis distance */
		ck_assert(maha2(&r, src, 2) < gsl_cdf_chisq_Qinv(1e-6, 2));
	}
	gsl_rng_free(g);
}
END_TEST

START_TEST(outlier_with_four_is_flagged)
{
	/* 4 arrivals in 2-D: one degree of freedom, nothing to spare for a
	 * rejection — the fit must say it is inconsistent. */
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	double src[3] = {12, 9, 0};
	dsp_arrival a[4];
	arrivals(NULL, MICS, 4, src, 2, 0.0, 10e-6, a);
	a[2].t_s += 1e-3;
	dsp_loc_result r;
	ck_assert_int_eq(dsp_locate(a, 4, &p, &r), 0);
	ck_assert_int_eq(r.status, DSP_LOC_INCONSISTENT);
	ck_assert_int_eq(r.rejected, -1);
	ck_assert_ptr_nonnull(r.why);
}
END_TEST

/* A node's second microphone, 20 cm from its first (bench/field's nodes 2
 * and 5): the pair's arrival difference, Gaussian noise sd sig. */
static void pair_of(gsl_rng *r, const double *b, const double *off, const double *src, double sig, dsp_pair *q)
{
	double ra = 0, rb = 0;
	for (int j = 0; j < 3; j++) {
		q->b_m[j] = b[j];
		q->a_m[j] = b[j] + off[j];
	}
	for (int j = 0; j < 2; j++) {
		ra += (src[j] - q->a_m[j]) * (src[j] - q->a_m[j]);
		rb += (src[j] - q->b_m[j]) * (src[j] - q->b_m[j]);
	}
	q->dt_s = (sqrt(ra) - sqrt(rb)) / C + (r ? gsl_ran_gaussian(r, sig) : 0);
	q->sigma_s = sig;
}

/* Four arrivals in the plane and two nodes' microphone pairs: the pairs
 * add a degree of freedom each (no unknown), the answer's ellipse covers
 * at 95 % and the chi-square is calibrated over SEEDS sources; and a
 * bearing the arrivals contradict fails the test.  Without the pairs the
 * same four arrivals have one degree of freedom. */
START_TEST(pairs_add_degrees_of_freedom)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	p.dim = 2;
	p.reject = 0;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	const double off5[3] = {0, 0.2, 0}, off2[3] = {0.2, 0, 0};
	int inside = 0, chi_bad = 0;
	double q95 = gsl_cdf_chisq_Pinv(0.95, 2), sig = 2e-6;
	for (int seed = 1; seed <= SEEDS; seed++) {
		gsl_rng_set(g, (unsigned long)(5000 + seed));
		double src[3] = {3 + 24 * gsl_rng_uniform(g), 3 + 24 * gsl_rng_uniform(g), 0};
		dsp_arrival a[4];
		dsp_pair q[2];
		arrivals(g, MICS, 4, src, 2, 10 * gsl_rng_uniform(g), sig, a);
		pair_of(g, MICS[4], off5, src, sig, &q[0]);
		pair_of(g, MICS[1], off2, src, sig, &q[1]);
		dsp_loc_result r;
		ck_assert_int_eq(dsp_locate_pairs(a, 4, q, 2, &p, &r), 0);
		ck_assert_int_eq(r.dof, 3);
		ck_assert_msg(r.status == DSP_LOC_OK || r.status == DSP_LOC_INCONSISTENT, "seed %d status %d", seed, r.status);
		inside += maha2(&r, src, 2) <= q95;
		chi_bad += r.p_value < 0.05;
	}
	double fin = (double)inside / SEEDS, fbad = (double)chi_bad / SEEDS;
	fprintf(stderr, "locate with two pairs: inside 95%% ellipse %.3f, chi2 p<0.05 %.3f\n", fin, fbad);
	ck_assert_msg(fabs(fin - 0.95) <= tol(0.95, SEEDS), "coverage %g", fin);
	ck_assert_msg(fabs(fbad - 0.05) <= tol(0.05, SEEDS), "chi2 false-fail rate %g", fbad);

	/* A source 1.5 m from where the pairs point: the four arrivals say
	 * (12, 9), node 5's pair hears it from (13.5, 9). */
	double src[3] = {12, 9, 0}, wrong[3] = {13.5, 9, 0};
	dsp_arrival a[4];
	dsp_pair q[1];
	arrivals(NULL, MICS, 4, src, 2, 0.0, sig, a);
	pair_of(NULL, MICS[4], off2, wrong, sig, &q[0]);
	dsp_loc_result r0, r1;
	ck_assert_int_eq(dsp_locate_pairs(a, 4, NULL, 0, &p, &r0), 0);
	ck_assert_int_eq(r0.dof, 1);
	ck_assert_int_eq(r0.status, DSP_LOC_OK);
	ck_assert_int_eq(dsp_locate_pairs(a, 4, q, 1, &p, &r1), 0);
	ck_assert_int_eq(r1.dof, 2);
	ck_assert_int_eq(r1.status, DSP_LOC_INCONSISTENT);
	/* and a bad pair is refused */
	q[0].sigma_s = 0;
	ck_assert_int_eq(dsp_locate_pairs(a, 4, q, 1, &p, &r1), -EINVAL);
	gsl_rng_free(g);
}
END_TEST

START_TEST(degenerate_geometry)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	dsp_loc_result r;
	double src[3] = {10, 7, 0};
	/* five collinear mics: mirror ambiguity */
	double line[5][3] = {{0, 0, 0}, {5, 5, 0}, {10, 10, 0}, {20, 20, 0}, {30, 30, 0}};
	dsp_arrival a[6];
	arrivals(NULL, (const double(*)[3])line, 5, src, 2, 0, 1e-6, a);
	ck_assert_int_eq(dsp_locate(a, 5, &p, &r), -EDOM);
	ck_assert_int_eq(r.status, DSP_LOC_DEGENERATE);
	ck_assert(isinf(r.cov[0][0]) && isinf(r.cov[1][1]));
	ck_assert_ptr_nonnull(r.why);
	/* three mics in 2-D: no redundancy */
	arrivals(NULL, MICS, 3, src, 2, 0, 1e-6, a);
	ck_assert_int_eq(dsp_locate(a, 3, &p, &r), -EDOM);
	ck_assert_int_eq(r.status, DSP_LOC_TOO_FEW);
	ck_assert(isinf(r.cov[0][0]));
	/* 3-D asked of a flat array */
	double flat[6][3] = {{0, 0, 1}, {30, 0, 1}, {30, 30, 1}, {0, 30, 1}, {15, 15, 1}, {5, 20, 1}};
	arrivals(NULL, (const double(*)[3])flat, 6, src, 3, 0, 1e-6, a);
	p.dim = 3;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), -EDOM);
	ck_assert_int_eq(r.status, DSP_LOC_DEGENERATE);
	/* Auto dimension: for the flat array 2-D first; with the source 1 m
	 * below the microphones' plane (1 us arrivals) that fails the test, and
	 * the folded 3-D solve in the array's frame finds it, its z reported
	 * below the plane (the mirror image above shares x and y). */
	p.dim = 0;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
	ck_assert_int_eq(r.status, DSP_LOC_OK);
	ck_assert_int_eq(r.dim, 3);
	ck_assert_msg(fabs(r.pos_m[0] - 10) < 1e-4 && fabs(r.pos_m[1] - 7) < 1e-4 && fabs(r.pos_m[2]) < 1e-2,
		      "folded: (%g, %g, %g)", r.pos_m[0], r.pos_m[1], r.pos_m[2]);
	ck_assert_int_eq(dsp_loc_rank(a, 6), 2);
	/* a source in the plane: 2-D passes and stays the answer */
	double inplane[3] = {10, 7, 1};
	arrivals(NULL, (const double(*)[3])flat, 6, inplane, 3, 0, 1e-6, a);
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
	ck_assert_int_eq(r.status, DSP_LOC_OK);
	ck_assert_int_eq(r.dim, 2);
	double s3[3] = {12, 14, 2};
	arrivals(NULL, MICS3, 6, s3, 3, 0, 1e-6, a);
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
	ck_assert_int_eq(r.dim, 3);
	ck_assert(fabs(r.pos_m[2] - 2) < 1e-6);
}
END_TEST

/* A flat array (six microphones at z = 1 m) and sources on the ground 1 m
 * below, 1 us arrivals, the dimension chosen automatically: the 2-D solve
 * fails its test and the folded 3-D one answers; its x, y ellipses cover
 * like any other (same tolerance as coverage()). */
START_TEST(coverage_flat_array_folded)
{
	static const double flat[6][3] = {{0, 0, 1}, {30, 0, 1}, {30, 30, 1}, {0, 30, 1}, {15, 5, 1}, {15, 25, 1}};
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	p.reject = 0;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int inside = 0, folded = 0;
	double q95 = gsl_cdf_chisq_Pinv(0.95, 2);
	for (int seed = 1; seed <= SEEDS; seed++) {
		gsl_rng_set(g, (unsigned long)seed + 1000);
		double src[3] = {3 + 24 * gsl_rng_uniform(g), 3 + 24 * gsl_rng_uniform(g), 0};
		dsp_arrival a[6];
		arrivals(g, flat, 6, src, 3, 10 * gsl_rng_uniform(g), 1e-6, a);
		dsp_loc_result r;
		ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
		folded += r.dim == 3 && r.status == DSP_LOC_OK;
		inside += r.status == DSP_LOC_OK && maha2(&r, src, 2) <= q95;
	}
	double fin = (double)inside / SEEDS;
	fprintf(stderr, "locate flat array, sources 1 m below: %d of %d folded 3-D, inside 95%% ellipse %.3f\n", folded,
		SEEDS, fin);
	ck_assert_int_ge(folded, SEEDS * 99 / 100);
	ck_assert_msg(fabs(fin - 0.95) <= tol(0.95, SEEDS), "coverage %g", fin);
	gsl_rng_free(g);
}
END_TEST

/* Wind of 8 m/s from the west (blowing towards +x): arrivals made with the
 * moving-medium travel time r / (c + w.u).  Told the wind, the solve's 95 %
 * ellipses cover (same tolerance as coverage()); in still air the same
 * arrivals put the source centimetres off, far outside its ellipse. */
START_TEST(wind_is_in_the_model)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	p.dim = 2;
	p.reject = 0;
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	int inside = 0, inside_still = 0;
	double q95 = gsl_cdf_chisq_Pinv(0.95, 2), w[3] = {8, 0, 0};
	for (int seed = 1; seed <= SEEDS; seed++) {
		gsl_rng_set(g, (unsigned long)seed + 2000);
		double src[3] = {30 * gsl_rng_uniform(g), 30 * gsl_rng_uniform(g), 0};
		dsp_arrival a[6];
		for (int i = 0; i < 6; i++) {
			double u[2] = {MICS[i][0] - src[0], MICS[i][1] - src[1]}, r = hypot(u[0], u[1]);
			memcpy(a[i].pos_m, MICS[i], sizeof a[i].pos_m);
			a[i].sigma_s = 1e-6;
			a[i].t_s = 5 + r / (C + (w[0] * u[0] + w[1] * u[1]) / r) + gsl_ran_gaussian(g, 1e-6);
		}
		dsp_loc_result r;
		memcpy(p.wind_m_s, w, sizeof w);
		ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
		inside += maha2(&r, src, 2) <= q95;
		memset(p.wind_m_s, 0, sizeof p.wind_m_s);
		ck_assert_int_eq(dsp_locate(a, 6, &p, &r), 0);
		inside_still += maha2(&r, src, 2) <= q95;
	}
	double fin = (double)inside / SEEDS;
	fprintf(stderr, "locate with 8 m/s wind: inside 95%% ellipse %.3f told, %.3f in still air\n", fin,
		(double)inside_still / SEEDS);
	ck_assert_msg(fabs(fin - 0.95) <= tol(0.95, SEEDS), "coverage %g", fin);
	ck_assert_int_lt(inside_still, SEEDS / 2);
	gsl_rng_free(g);
}
END_TEST

START_TEST(far_source_not_confident)
{
	/* A 1 m array and a source 3 km away: the bearing is known, the range
	 * is not — the covariance must say so (or the status must). */
	double small[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.5, 0.2, 0}};
	double src[3] = {3000, 1500, 0};
	dsp_arrival a[5];
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 11);
	arrivals(g, (const double(*)[3])small, 5, src, 2, 0, 10e-6, a);
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	dsp_loc_result r;
	ck_assert_int_eq(dsp_locate(a, 5, &p, &r), 0);
	double err = hypot(r.pos_m[0] - src[0], r.pos_m[1] - src[1]);
	double sd = sqrt(r.cov[0][0] + r.cov[1][1]);
	fprintf(stderr, "far source: status %d err %g sd %g cond %g\n", r.status, err, sd, r.cond);
	ck_assert(r.status == DSP_LOC_ILL_CONDITIONED || r.status == DSP_LOC_NO_CONVERGENCE || !(sd < 100));
	gsl_rng_free(g);
}
END_TEST

START_TEST(bad_input_and_ellipse)
{
	dsp_loc_params p;
	dsp_loc_params_default(&p);
	dsp_loc_result r;
	double src[3] = {10, 7, 0};
	dsp_arrival a[6];
	arrivals(NULL, MICS, 6, src, 2, 0, 1e-6, a);
	a[3].sigma_s = 0;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), -EINVAL);
	ck_assert_ptr_nonnull(r.why);
	a[3].sigma_s = 1e-6;
	a[1].t_s = NAN;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), -EINVAL);
	p.c_m_s = 0;
	a[1].t_s = 0.01;
	ck_assert_int_eq(dsp_locate(a, 6, &p, &r), -EINVAL);
	/* ellipse of a known covariance: axes 2 and 1 (sd), rotated 30 degrees */
	dsp_loc_result e = {0};
	double th = M_PI / 6, l1 = 4, l2 = 1, c = cos(th), s = sin(th);
	e.cov[0][0] = l1 * c * c + l2 * s * s;
	e.cov[1][1] = l1 * s * s + l2 * c * c;
	e.cov[0][1] = e.cov[1][0] = (l1 - l2) * c * s;
	double M, m, ang;
	ck_assert_int_eq(dsp_loc_ellipse(&e, 0.95, &M, &m, &ang), 0);
	double k = sqrt(-2 * log(0.05)); /* chi2(2) quantile in closed form */
	ck_assert(fabs(M - 2 * k) < 1e-9 && fabs(m - k) < 1e-9 && fabs(ang - th) < 1e-9);
	e.cov[0][0] = INFINITY;
	ck_assert_int_eq(dsp_loc_ellipse(&e, 0.95, &M, &m, &ang), -EDOM);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("locate");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, noiseless_exact);
	tcase_add_test(tc, coverage_2d_inside);
	tcase_add_test(tc, coverage_2d_outside);
	tcase_add_test(tc, coverage_3d);
	tcase_add_test(tc, coverage_flat_array_folded);
	tcase_add_test(tc, wind_is_in_the_model);
	tcase_add_test(tc, outlier_rejected);
	tcase_add_test(tc, outlier_with_four_is_flagged);
	tcase_add_test(tc, degenerate_geometry);
	tcase_add_test(tc, pairs_add_degrees_of_freedom);
	tcase_add_test(tc, far_source_not_confident);
	tcase_add_test(tc, bad_input_and_ellipse);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
