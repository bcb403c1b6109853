/* locate.c — TDOA source localisation: closed form + GSL LM (see locate.h). */
#include "apps/dsp/locate.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#define COND_MAX 1e8
#define AUTO_THICK 0.1

/* One subset, centred: positions relative to the mic centroid, times as
 * ranges c (t_i - t_ref); unknowns (p, tau = c t0), all in metres so the
 * Jacobian's columns are commensurate. */
typedef struct {
	int m, dim;
	double mic_m[DSP_LOC_MAX][3];                                  /* m, centred */
	double ct_m[DSP_LOC_MAX];                                      /* c (t_i - t_ref), m */
	double cs_m[DSP_LOC_MAX];                                      /* c sigma_i, m */
	double aperture;                                               /* largest mic distance from the centroid, m (>= 1) */
	double s_sd;                                                   /* relative s.d. of the speed of sound; 0: c exact, no scale unknown */
	double wind_c[3];                                              /* the wind over c0, in the fit's frame (dimensionless) */
	int np;                                                        /* pairs (dsp_pair): residual rows m .. m + np - 1 */
	double pa_m[DSP_LOC_MAX_PAIRS][3], pb_m[DSP_LOC_MAX_PAIRS][3]; /* m, centred */
	double pct_m[DSP_LOC_MAX_PAIRS], pcs_m[DSP_LOC_MAX_PAIRS];     /* c dt, c sigma, m */
} fitdata;

/* Unknowns: p (dim), tau, and with s_sd > 0 the speed's scale s = c / c0. */
static int n_par(const fitdata *d)
{
	return d->dim + 1 + (d->s_sd > 0);
}

typedef struct {
	int ok;      /* LM converged */
	double x[5]; /* p (dim), tau[, s] */
	double chi2;
	double cov[5][5]; /* of x, m^2 (s: dimensionless) */
	double cond;
} fit;

void dsp_loc_params_default(dsp_loc_params *p)
{
	*p = (dsp_loc_params){.dim = 0, .c_m_s = 343.0, .c_sd_m_s = 0, .wind_m_s = {0, 0, 0}, .alpha = 1e-3, .reject = 1};
}

static double range_to(const fitdata *d, const double *x, const double *q)
{
	double s = 0;
	for (int j = 0; j < d->dim; j++)
		s += (x[j] - q[j]) * (x[j] - q[j]);
	return sqrt(s);
}

static double range(const fitdata *d, const double *x, int i)
{
	return range_to(d, x, d->mic_m[i]);
}

/* Residuals (tau + |p - m_i| - s ct_i) / cs_i, and with an uncertain speed
 * the prior's (s - 1) / s_sd. */
/* The range the sound's travel time stands for: r / (1 + w.u / c0), u the
 * unit vector from the source to the microphone (sound runs faster with the
 * wind, first order in its Mach number). */
static double eff_range_to(const fitdata *d, const double *x, const double *q, double *factor)
{
	double r = range_to(d, x, q), along = 0;
	for (int j = 0; r > 0 && j < d->dim; j++)
		along += d->wind_c[j] * (q[j] - x[j]) / r;
	*factor = 1.0 / (1.0 + along);
	return r * *factor;
}

static double eff_range(const fitdata *d, const double *x, int i, double *factor)
{
	return eff_range_to(d, x, d->mic_m[i], factor);
}

/* Row of the speed's prior: after the arrivals and the pairs. */
static int prior_row(const fitdata *d)
{
	return d->m + d->np;
}

static int f_cb(const gsl_vector *xv, void *vd, gsl_vector *f)
{
	const fitdata *d = vd;
	double x[5];
	for (int j = 0; j < n_par(d); j++)
		x[j] = gsl_vector_get(xv, j);
	double sc = d->s_sd > 0 ? x[d->dim + 1] : 1.0;
	for (int i = 0; i < d->m; i++) {
		double k;
		gsl_vector_set(f, i, (x[d->dim] + eff_range(d, x, i, &k) - sc * d->ct_m[i]) / d->cs_m[i]);
	}
	for (int q = 0; q < d->np; q++) {
		double ka, kb;
		double diff = eff_range_to(d, x, d->pa_m[q], &ka) - eff_range_to(d, x, d->pb_m[q], &kb);
		gsl_vector_set(f, d->m + q, (diff - sc * d->pct_m[q]) / d->pcs_m[q]);
	}
	if (d->s_sd > 0)
		gsl_vector_set(f, prior_row(d), (sc - 1.0) / d->s_sd);
	return GSL_SUCCESS;
}

static int df_cb(const gsl_vector *xv, void *vd, gsl_matrix *J)
{
	const fitdata *d = vd;
	double x[5];
	for (int j = 0; j < n_par(d); j++)
		x[j] = gsl_vector_get(xv, j);
	gsl_matrix_set_zero(J);
	/* The wind's factor k is held constant in the position derivatives
	 * (its own derivative is second order in the Mach number). */
	for (int i = 0; i < d->m; i++) {
		double k, r = range(d, x, i);
		eff_range(d, x, i, &k);
		for (int j = 0; j < d->dim; j++)
			gsl_matrix_set(J, i, j, r > 0 ? k * (x[j] - d->mic_m[i][j]) / (r * d->cs_m[i]) : 0);
		gsl_matrix_set(J, i, d->dim, 1.0 / d->cs_m[i]);
		if (d->s_sd > 0)
			gsl_matrix_set(J, i, d->dim + 1, -d->ct_m[i] / d->cs_m[i]);
	}
	for (int q = 0; q < d->np; q++) {
		double ka, kb, ra = range_to(d, x, d->pa_m[q]), rb = range_to(d, x, d->pb_m[q]);
		eff_range_to(d, x, d->pa_m[q], &ka);
		eff_range_to(d, x, d->pb_m[q], &kb);
		for (int j = 0; j < d->dim; j++) {
			double ga = ra > 0 ? ka * (x[j] - d->pa_m[q][j]) / ra : 0, gb = rb > 0 ? kb * (x[j] - d->pb_m[q][j]) / rb : 0;
			gsl_matrix_set(J, d->m + q, j, (ga - gb) / d->pcs_m[q]);
		}
		if (d->s_sd > 0)
			gsl_matrix_set(J, d->m + q, d->dim + 1, -d->pct_m[q] / d->pcs_m[q]);
	}
	if (d->s_sd > 0)
		gsl_matrix_set(J, prior_row(d), d->dim + 1, 1.0 / d->s_sd);
	return GSL_SUCCESS;
}

/* Closed form: |p - m_i|^2 = (ct_i - tau)^2 is linear in (p, tau, R) with
 * R = |p|^2 - tau^2:  -2 m_i.p + 2 ct_i tau + R = ct_i^2 - |m_i|^2.
 * Returns 0 and the start in x, or -EDOM (rank deficient / too few). */
static int closed_form(const fitdata *d, double *x)
{
	int k = d->dim + 2;
	if (d->m < k)
		return -EDOM;
	gsl_matrix *X = gsl_matrix_alloc(d->m, k), *C = gsl_matrix_alloc(k, k);
	gsl_vector *y = gsl_vector_alloc(d->m), *b = gsl_vector_alloc(k);
	gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(d->m, k);
	for (int i = 0; i < d->m; i++) {
		double mm = 0;
		for (int j = 0; j < d->dim; j++) {
			gsl_matrix_set(X, i, j, -2 * d->mic_m[i][j]);
			mm += d->mic_m[i][j] * d->mic_m[i][j];
		}
		gsl_matrix_set(X, i, d->dim, 2 * d->ct_m[i]);
		gsl_matrix_set(X, i, d->dim + 1, 1.0);
		gsl_vector_set(y, i, d->ct_m[i] * d->ct_m[i] - mm);
	}
	size_t rank = 0;
	double chisq;
	int e = gsl_multifit_linear_tsvd(X, y, 1e-10, b, C, &chisq, &rank, w);
	int ok = e == 0 && (int)rank == k;
	for (int j = 0; ok && j <= d->dim; j++) {
		x[j] = gsl_vector_get(b, j);
		ok = isfinite(x[j]);
	}
	gsl_multifit_linear_free(w);
	gsl_matrix_free(X);
	gsl_matrix_free(C);
	gsl_vector_free(y);
	gsl_vector_free(b);
	return ok ? 0 : -EDOM;
}

/* LM from the start x0 (tau re-derived from the ranges). */
static void lm(fitdata *d, const double *x0, fit *out)
{
	int p = n_par(d), nres = d->m + d->np + (d->s_sd > 0);
	gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
	fp.trs = gsl_multifit_nlinear_trs_lm;
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nres, p);
	gsl_multifit_nlinear_fdf fdf = {.f = f_cb, .df = df_cb, .fvv = NULL, .n = nres, .p = p, .params = d};
	gsl_vector *x = gsl_vector_alloc(p);
	double xs[5] = {0};
	memcpy(xs, x0, 4 * sizeof xs[0]);
	if (d->s_sd > 0)
		xs[d->dim + 1] = 1.0;
	/* tau from the start position: the mean of ct_i - r_i */
	double tau = 0;
	for (int i = 0; i < d->m; i++)
		tau += d->ct_m[i] - range(d, xs, i);
	xs[d->dim] = tau / d->m;
	for (int j = 0; j < p; j++)
		gsl_vector_set(x, j, xs[j]);
	out->ok = 0;
	out->chi2 = INFINITY;
	int info;
	if (gsl_multifit_nlinear_init(x, &fdf, w) == GSL_SUCCESS &&
	    gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 0.0, NULL, NULL, &info, w) == GSL_SUCCESS) {
		gsl_vector *sol = gsl_multifit_nlinear_position(w), *f = gsl_multifit_nlinear_residual(w);
		gsl_matrix *J = gsl_multifit_nlinear_jac(w);
		double chi2;
		gsl_blas_ddot(f, f, &chi2);
		gsl_matrix *cov = gsl_matrix_alloc(p, p), *U = gsl_matrix_alloc(nres, p), *V = gsl_matrix_alloc(p, p);
		gsl_vector *s = gsl_vector_alloc(p), *work = gsl_vector_alloc(p);
		gsl_multifit_nlinear_covar(J, 0.0, cov);
		gsl_matrix_memcpy(U, J);
		gsl_linalg_SV_decomp(U, V, s, work);
		double smin = gsl_vector_get(s, p - 1), smax = gsl_vector_get(s, 0);
		out->cond = smin > 0 ? smax / smin : INFINITY;
		out->chi2 = chi2;
		out->ok = isfinite(chi2);
		for (int j = 0; j < p; j++) {
			out->x[j] = gsl_vector_get(sol, j);
			for (int k = 0; k < p; k++)
				out->cov[j][k] = gsl_matrix_get(cov, j, k);
		}
		gsl_matrix_free(cov);
		gsl_matrix_free(U);
		gsl_matrix_free(V);
		gsl_vector_free(s);
		gsl_vector_free(work);
	}
	gsl_vector_free(x);
	gsl_multifit_nlinear_free(w);
}

static double pval(double chi2, int dof)
{
	return dof > 0 ? gsl_cdf_chisq_Q(chi2, dof) : 1.0;
}

/* Best fit of one subset: closed form, then multi-start if needed. */
static void solve(fitdata *d, double alpha, fit *best)
{
	double x0[5] = {0};
	best->ok = 0;
	best->chi2 = INFINITY;
	int dof = d->m + d->np - d->dim - 1;
	if (closed_form(d, x0) == 0) {
		lm(d, x0, best);
		if (best->ok && pval(best->chi2, dof) >= alpha)
			return;
	}
	/* Poor or no start (sources far outside the array, noise): LM from the
	 * centroid and rings at 1, 3 and 10 apertures. */
	static const double rings[] = {1, 3, 10};
	int nz = d->dim == 3 ? 3 : 1;
	for (int ri = -1; ri < 3; ri++) {
		for (int a = 0; a < (ri < 0 ? 1 : 8); a++) {
			for (int z = 0; z < (ri < 0 ? 1 : nz); z++) {
				double rad = ri < 0 ? 0 : rings[ri] * d->aperture, th = a * M_PI / 4;
				double s[4] = {rad * cos(th), rad * sin(th), (z - 1) * rad * 0.5, 0};
				fit f;
				lm(d, s, &f);
				if (f.ok && f.chi2 < best->chi2 - 1e-9)
					*best = f;
			}
		}
	}
}

/* Singular values of the centred positions, largest first (sv[3]), and
 * (dirs non-NULL) the principal directions as rows dirs[k] (dirs[2]: the
 * normal of the best-fitting plane) and the centroid cen. */
static void frame(const dsp_arrival *a, int n, double *sv, double dirs[3][3], double cen[3])
{
	sv[0] = sv[1] = sv[2] = 0;
	if (n < 2)
		return;
	double c[3] = {0};
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
			c[j] += a[i].pos_m[j] / n;
	int rows = n < 3 ? 3 : n;
	gsl_matrix *A = gsl_matrix_calloc(rows, 3), *V = gsl_matrix_alloc(3, 3);
	gsl_vector *s = gsl_vector_alloc(3), *w = gsl_vector_alloc(3);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
			gsl_matrix_set(A, i, j, a[i].pos_m[j] - c[j]);
	gsl_linalg_SV_decomp(A, V, s, w);
	for (int j = 0; j < 3; j++) {
		sv[j] = gsl_vector_get(s, j);
		for (int k = 0; dirs && k < 3; k++)
			dirs[j][k] = gsl_matrix_get(V, k, j);
		if (cen)
			cen[j] = c[j];
	}
	gsl_matrix_free(A);
	gsl_matrix_free(V);
	gsl_vector_free(s);
	gsl_vector_free(w);
}

static void spread(const dsp_arrival *a, int n, double *sv)
{
	frame(a, n, sv, NULL, NULL);
}

int dsp_loc_rank(const dsp_arrival *a, int n)
{
	double sv[3];
	spread(a, n, sv);
	int r = 0;
	for (int j = 0; j < 3; j++)
		if (sv[0] > 0 && sv[j] > 1e-6 * sv[0])
			r++;
	return r;
}

/* Fill d from the arrivals (skip = index to leave out, or -1) and the np
 * pairs pr (positions as the arrivals', centred on cen). */
static void load(fitdata *d, const dsp_arrival *a, int n, int skip, const dsp_pair *pr, int np, int dim, double c,
		 double c_sd, double *cen, double t_ref)
{
	d->np = np;
	for (int q = 0; q < np; q++) {
		for (int j = 0; j < 3; j++) {
			d->pa_m[q][j] = j < dim ? pr[q].a_m[j] - cen[j] : 0;
			d->pb_m[q][j] = j < dim ? pr[q].b_m[j] - cen[j] : 0;
		}
		d->pct_m[q] = c * pr[q].dt_s;
		d->pcs_m[q] = c * pr[q].sigma_s;
	}
	d->m = 0;
	d->s_sd = c_sd > 0 ? c_sd / c : 0;
	memset(d->wind_c, 0, sizeof d->wind_c);
	d->dim = dim;
	d->aperture = 1.0;
	for (int i = 0; i < n; i++) {
		if (i == skip)
			continue;
		double r2 = 0;
		for (int j = 0; j < 3; j++) {
			d->mic_m[d->m][j] = j < dim ? a[i].pos_m[j] - cen[j] : 0;
			r2 += d->mic_m[d->m][j] * d->mic_m[d->m][j];
		}
		if (sqrt(r2) > d->aperture)
			d->aperture = sqrt(r2);
		d->ct_m[d->m] = c * (a[i].t_s - t_ref);
		d->cs_m[d->m] = c * a[i].sigma_s;
		d->m++;
	}
}

static void set_inf(dsp_loc_result *r)
{
	for (int j = 0; j < 4; j++)
		for (int k = 0; k < 4; k++)
			r->cov[j][k] = INFINITY;
}

/* Fill out from the fit of (p, tau[, s]) in a frame centred on cen with
 * axes dirs (rows; NULL: the world's axes): position, emission time, the
 * fitted speed, the covariance of (p, t0) in world axes, chi-square and
 * status. */
static void finish(dsp_loc_result *out, const fit *best, int dim, const double cen[3], const double dirs[3][3],
		   double t_ref, int dof, const dsp_loc_params *p)
{
	out->dim = dim;
	out->dof = dof;
	out->chi2 = best->chi2;
	out->p_value = pval(best->chi2, dof);
	out->cond = best->cond;
	/* (p, tau[, s]) -> (p, t0): t0 = t_ref + tau / (s c0), to first order
	 * (gradient g of t0 over the unknowns). */
	int np = dim + 1 + (p->c_sd_m_s > 0);
	double sc = p->c_sd_m_s > 0 ? best->x[dim + 1] : 1.0, g[5] = {0}, local[4][4];
	out->c_m_s = sc * p->c_m_s;
	out->t0_s = t_ref + best->x[dim] / out->c_m_s;
	g[dim] = 1.0 / out->c_m_s;
	if (np > dim + 1)
		g[dim + 1] = -best->x[dim] / (sc * out->c_m_s);
	for (int j = 0; j <= dim; j++)
		for (int k = 0; k <= dim; k++) {
			double v = 0;
			if (j < dim && k < dim)
				v = best->cov[j][k];
			else
				for (int a2 = 0; a2 < np; a2++)
					for (int b2 = 0; b2 < np; b2++) {
						double wa = j < dim ? (a2 == j) : g[a2], wb = k < dim ? (b2 == k) : g[b2];
						v += wa * wb * best->cov[a2][b2];
					}
			local[j][k] = v;
		}
	/* Back to world axes: p = cen + D^T x (D the rows dirs), so the
	 * position block turns by D^T and its cross terms with t0 by D^T. */
	double D[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
	if (dirs)
		memcpy(D, dirs, sizeof D);
	for (int j = 0; j < 3; j++) {
		if (dirs) {
			out->pos_m[j] = cen[j];
			for (int k = 0; k < dim; k++)
				out->pos_m[j] += D[k][j] * best->x[k];
		} else {
			out->pos_m[j] = j < dim ? best->x[j] + cen[j] : 0;
		}
	}
	for (int j = 0; j <= dim; j++)
		for (int k = 0; k <= dim; k++) {
			double v = 0;
			for (int a2 = 0; a2 <= dim; a2++)
				for (int b2 = 0; b2 <= dim; b2++) {
					double wa = j == dim ? (a2 == dim) : a2 == dim ? 0
										       : D[a2][j];
					double wb = k == dim ? (b2 == dim) : b2 == dim ? 0
										       : D[b2][k];
					v += wa * wb * local[a2][b2];
				}
			out->cov[j][k] = v;
		}
	if (!(best->cond <= COND_MAX)) {
		out->status = DSP_LOC_ILL_CONDITIONED;
		out->why = "locate: the geometry barely constrains the source (Jacobian condition > 1e8)";
	} else if (out->p_value < p->alpha) {
		out->status = DSP_LOC_INCONSISTENT;
		out->why = "locate: arrivals inconsistent with one source (chi-square test fails)";
	} else {
		out->status = DSP_LOC_OK;
		out->why = NULL;
	}
}

/* A flat array cannot tell a source above its plane from the mirror image
 * below, but it does see how far off the plane the source is: the ranges
 * bend with the height h as sqrt(d^2 + h^2).  3-D solve in the array's own
 * frame (the plane's axes and its normal), the height folded to one side.
 * Used only where the mirror images share their horizontal position to a
 * tenth of its standard error (a near-horizontal array), since which image
 * is true the arrivals cannot say; the one below the plane is reported (the
 * z of a folded answer is ambiguous, x and y are not).  No rejection here.
 * Returns 0 and *out when the folded solve passes the test, else -1. */
static int folded(const dsp_arrival *a, int n, const dsp_pair *pr, int np, const dsp_loc_params *p, double t_ref,
		  dsp_loc_result *out)
{
	double sv[3], D[3][3], cen[3];
	frame(a, n, sv, D, cen);
	dsp_arrival rot[DSP_LOC_MAX];
	dsp_pair prot[DSP_LOC_MAX_PAIRS];
	for (int i = 0; i < n; i++) {
		rot[i] = a[i];
		for (int k = 0; k < 3; k++) {
			rot[i].pos_m[k] = 0;
			for (int j = 0; j < 3; j++)
				rot[i].pos_m[k] += D[k][j] * (a[i].pos_m[j] - cen[j]);
		}
	}
	for (int q = 0; q < np; q++) {
		prot[q] = pr[q];
		for (int k = 0; k < 3; k++) {
			prot[q].a_m[k] = prot[q].b_m[k] = 0;
			for (int j = 0; j < 3; j++) {
				prot[q].a_m[k] += D[k][j] * (pr[q].a_m[j] - cen[j]);
				prot[q].b_m[k] += D[k][j] * (pr[q].b_m[j] - cen[j]);
			}
		}
	}
	double zero[3] = {0, 0, 0};
	fitdata d;
	fit best;
	load(&d, rot, n, -1, prot, np, 3, p->c_m_s, p->c_sd_m_s, zero, t_ref);
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 3; j++)
			d.wind_c[k] += D[k][j] * p->wind_m_s[j] / p->c_m_s;
	solve(&d, p->alpha, &best);
	if (!best.ok)
		return -1;
	/* Fold to the image below the plane (the normal's world z < 0 side). */
	double side = D[2][2] > 0 ? -1.0 : 1.0;
	if (best.x[2] * side < 0) {
		best.x[2] = -best.x[2];
		for (int k = 0; k < 5; k++) {
			best.cov[2][k] = -best.cov[2][k];
			best.cov[k][2] = -best.cov[k][2];
		}
	}
	memset(out, 0, sizeof *out);
	out->rejected = -1;
	out->n_used = n;
	out->n_pairs = np;
	finish(out, &best, 3, cen, (const double(*)[3])D, t_ref, n + np - 4, p);
	/* The mirror image's horizontal offset: 2 h times the normal's
	 * horizontal part. */
	double off = 2 * fabs(best.x[2]) * hypot(D[2][0], D[2][1]);
	double sdxy = sqrt(out->cov[0][0] + out->cov[1][1]);
	if (out->status != DSP_LOC_OK || !(off <= 0.1 * sdxy))
		return -1;
	return 0;
}

int dsp_locate(const dsp_arrival *a, int n, const dsp_loc_params *p, dsp_loc_result *out)
{
	return dsp_locate_pairs(a, n, NULL, 0, p, out);
}

int dsp_locate_pairs(const dsp_arrival *a, int n, const dsp_pair *pr, int np, const dsp_loc_params *p,
		     dsp_loc_result *out)
{
	memset(out, 0, sizeof *out);
	out->rejected = -1;
	set_inf(out);
	if (n < 1 || n > DSP_LOC_MAX || !(p->c_m_s > 0) || !isfinite(p->c_m_s) || p->dim < 0 || p->dim > 3 || p->dim == 1) {
		out->why = "locate: need 1..64 arrivals, c > 0, dim 0, 2 or 3";
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		int ok = isfinite(a[i].t_s) && a[i].sigma_s > 0 && isfinite(a[i].sigma_s);
		for (int j = 0; j < 3; j++)
			ok = ok && isfinite(a[i].pos_m[j]);
		if (!ok) {
			out->why = "locate: an arrival has a non-finite time or position, or sigma <= 0";
			return -EINVAL;
		}
	}
	if (np < 0 || np > DSP_LOC_MAX_PAIRS || (np > 0 && !pr)) {
		out->why = "locate: 0..16 pairs";
		return -EINVAL;
	}
	for (int q = 0; q < np; q++) {
		int ok = isfinite(pr[q].dt_s) && pr[q].sigma_s > 0 && isfinite(pr[q].sigma_s);
		for (int j = 0; j < 3; j++)
			ok = ok && isfinite(pr[q].a_m[j]) && isfinite(pr[q].b_m[j]);
		if (!ok) {
			out->why = "locate: a pair has a non-finite difference or position, or sigma <= 0";
			return -EINVAL;
		}
	}
	/* Auto: 3-D only when the array is thick — out-of-plane spread at least
	 * AUTO_THICK of the in-plane one — else z is barely observable and 2-D
	 * (z ignored) is the better answer. */
	double sv[3];
	spread(a, n, sv);
	int dim = p->dim ? p->dim : (n >= 5 && sv[2] >= AUTO_THICK * sv[0] ? 3 : 2);
	out->dim = dim;
	out->n_used = n;
	if (n < dim + 2) {
		out->status = DSP_LOC_TOO_FEW;
		out->why = dim == 2 ? "locate: 2-D with unknown emission time needs 4 arrivals (3 give no check and up to two answers)"
				    : "locate: 3-D with unknown emission time needs 5 arrivals";
		return -EDOM;
	}
	/* In 2-D only x and y count: the rank of the projected positions. */
	dsp_arrival flat[DSP_LOC_MAX];
	for (int i = 0; i < n; i++) {
		flat[i] = a[i];
		if (dim == 2)
			flat[i].pos_m[2] = 0;
	}
	if (dsp_loc_rank(flat, n) < dim) {
		out->status = DSP_LOC_DEGENERATE;
		out->why = dim == 2 ? "locate: microphones are collinear (mirror-image ambiguity)"
				    : "locate: microphones are coplanar (3-D needs them not to be)";
		return -EDOM;
	}
	double cen[3] = {0}, t_ref = a[0].t_s;
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < 3; j++)
			cen[j] += (j < dim ? a[i].pos_m[j] : 0) / n;
		if (a[i].t_s < t_ref)
			t_ref = a[i].t_s;
	}
	fitdata d;
	fit best;
	load(&d, a, n, -1, pr, np, dim, p->c_m_s, p->c_sd_m_s, cen, t_ref);
	for (int j = 0; j < 3; j++)
		d.wind_c[j] = p->wind_m_s[j] / p->c_m_s;
	solve(&d, p->alpha, &best);
	int dof = n + np - dim - 1, used = n;
	if (best.ok && pval(best.chi2, dof) < p->alpha && p->reject && n >= dim + 3) {
		/* Leave each arrival out in turn; keep the most consistent subset
		 * if it passes. */
		fit sub, bsub = {.ok = 0};
		int bj = -1;
		double bp = -1;
		for (int j = 0; j < n; j++) {
			dsp_arrival rest[DSP_LOC_MAX];
			int m = 0;
			for (int i = 0; i < n; i++)
				if (i != j)
					rest[m++] = flat[i];
			if (dsp_loc_rank(rest, m) < dim)
				continue;
			load(&d, a, n, j, pr, np, dim, p->c_m_s, p->c_sd_m_s, cen, t_ref);
			for (int k = 0; k < 3; k++)
				d.wind_c[k] = p->wind_m_s[k] / p->c_m_s;
			solve(&d, p->alpha, &sub);
			double pv = sub.ok ? pval(sub.chi2, dof - 1) : -1;
			if (pv > bp) {
				bp = pv;
				bj = j;
				bsub = sub;
			}
		}
		if (bj >= 0 && bp >= p->alpha) {
			best = bsub;
			out->rejected = bj;
			used = n - 1;
			dof--;
		}
	}
	out->n_used = used;
	out->n_pairs = np;
	out->dof = dof;
	if (!best.ok) {
		out->status = DSP_LOC_NO_CONVERGENCE;
		out->why = "locate: Levenberg-Marquardt did not converge from any start";
		return 0;
	}
	finish(out, &best, dim, cen, NULL, t_ref, dof, p);
	/* A thin array (every microphone near one plane) is solved in 2-D,
	 * which ignores how far the source is off that plane; when that fails
	 * the test, the folded 3-D solve may explain the arrivals. */
	if (p->dim == 0 && dim == 2 && n >= 5 && out->status == DSP_LOC_INCONSISTENT) {
		dsp_loc_result f3;
		if (folded(a, n, pr, np, p, t_ref, &f3) == 0)
			*out = f3;
	}
	return 0;
}

int dsp_loc_ellipse(const dsp_loc_result *r, double prob, double *major, double *minor, double *angle)
{
	double a = r->cov[0][0], b = r->cov[0][1], c = r->cov[1][1];
	if (!isfinite(a) || !isfinite(b) || !isfinite(c) || !(a > 0) || !(c > 0) || !(prob > 0 && prob < 1))
		return -EDOM;
	double tr = 0.5 * (a + c), dis = sqrt(0.25 * (a - c) * (a - c) + b * b);
	double l1 = tr + dis, l2 = tr - dis;
	if (!(l2 > 0))
		return -EDOM;
	double k = sqrt(gsl_cdf_chisq_Pinv(prob, 2));
	*major = k * sqrt(l1);
	*minor = k * sqrt(l2);
	*angle = 0.5 * atan2(2 * b, a - c);
	return 0;
}
