/* survey.c — node positions from many calls (see survey.h). */
#include "apps/collab/survey.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>

typedef struct {
	int call, node; /* call index, node index */
	double a_s, sigma_s;
} obs;

struct survey {
	survey_params p;
	GArray *obs;   /* obs */
	GArray *start; /* double x, y per call */
	int n_calls;
};

survey *survey_new(const survey_params *p, const char **why)
{
	if (p->n_nodes < 1 || p->n_nodes > SURVEY_MAX_NODES || !(p->pos_sd_m > 0) || !(p->c_m_s > 0) ||
	    !(p->c_sd_m_s >= 0)) {
		*why = "survey: 1 to 64 nodes, a survey s.d. > 0 and a speed of sound > 0";
		return NULL;
	}
	survey *s = g_new0(survey, 1);
	s->p = *p;
	s->obs = g_array_new(FALSE, FALSE, sizeof(obs));
	s->start = g_array_new(FALSE, FALSE, sizeof(double));
	return s;
}

void survey_free(survey *s)
{
	if (!s)
		return;
	g_array_free(s->obs, TRUE);
	g_array_free(s->start, TRUE);
	g_free(s);
}

static int node_index(const survey *s, uint32_t id)
{
	for (int i = 0; i < s->p.n_nodes; i++)
		if (s->p.id[i] == id)
			return i;
	return -1;
}

int survey_add(survey *s, const uint32_t *node, const double *a_s, const double *sigma_s, int m, double x_m,
	       double y_m)
{
	if (m < 4 || !isfinite(x_m) || !isfinite(y_m))
		return -EINVAL;
	for (int i = 0; i < m; i++)
		if (node_index(s, node[i]) < 0 || !(sigma_s[i] > 0) || !isfinite(a_s[i]))
			return -EINVAL;
	for (int i = 0; i < m; i++) {
		obs o = {.call = s->n_calls, .node = node_index(s, node[i]), .a_s = a_s[i], .sigma_s = sigma_s[i]};
		g_array_append_val(s->obs, o);
	}
	g_array_append_val(s->start, x_m);
	g_array_append_val(s->start, y_m);
	s->n_calls++;
	return 0;
}

int survey_calls(const survey *s)
{
	return s->n_calls;
}

/* Unknowns: [0] speed scale c / c0; [1 + 2j, 2 + 2j] node j's shift from
 * its survey, m; [1 + 2N + 3k ...] call k's x, y (m) and emission (s). */
#define NODE(j) (1 + 2 * (j))
#define CALL(s, k) (1 + 2 * (s)->p.n_nodes + 3 * (k))

static double range(const survey *s, const gsl_vector *x, int call, int node)
{
	const double *m = s->p.pos_m[node];
	double dx = gsl_vector_get(x, CALL(s, call)) - (m[0] + gsl_vector_get(x, NODE(node)));
	double dy = gsl_vector_get(x, CALL(s, call) + 1) - (m[1] + gsl_vector_get(x, NODE(node) + 1));
	double dz = isfinite(s->p.source_z_m) ? s->p.source_z_m - m[2] : 0;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *f)
{
	const survey *s = data;
	double c = gsl_vector_get(x, 0) * s->p.c_m_s;
	size_t r = 0;
	for (guint i = 0; i < s->obs->len; i++) {
		const obs *o = &g_array_index(s->obs, obs, i);
		double t0 = gsl_vector_get(x, CALL(s, o->call) + 2);
		gsl_vector_set(f, r++, (o->a_s - (t0 + range(s, x, o->call, o->node) / c)) / o->sigma_s);
	}
	for (int j = 0; j < s->p.n_nodes; j++) {
		gsl_vector_set(f, r++, gsl_vector_get(x, NODE(j)) / s->p.pos_sd_m);
		gsl_vector_set(f, r++, gsl_vector_get(x, NODE(j) + 1) / s->p.pos_sd_m);
	}
	/* An exact speed: a prior a millionth wide. */
	double rel = fmax(s->p.c_sd_m_s / s->p.c_m_s, 1e-6);
	gsl_vector_set(f, r, (gsl_vector_get(x, 0) - 1) / rel);
	return GSL_SUCCESS;
}

int survey_solve(survey *s, survey_result *out, const char **why)
{
	memset(out, 0, sizeof *out);
	if (s->n_calls == 0) {
		*why = "survey: no call";
		return -EDOM;
	}
	size_t np = (size_t)CALL(s, s->n_calls), nr = s->obs->len + 2 * (size_t)s->p.n_nodes + 1;
	gsl_vector *x = gsl_vector_alloc(np);
	gsl_vector_set_zero(x);
	gsl_vector_set(x, 0, 1);
	/* Each call starts at its own solution; its emission at the mean of
	 * arrival minus travel over its nodes. */
	for (int k = 0; k < s->n_calls; k++) {
		gsl_vector_set(x, CALL(s, k), g_array_index(s->start, double, 2 * k));
		gsl_vector_set(x, CALL(s, k) + 1, g_array_index(s->start, double, 2 * k + 1));
	}
	double *sum = g_new0(double, s->n_calls);
	int *cnt = g_new0(int, s->n_calls);
	for (guint i = 0; i < s->obs->len; i++) {
		const obs *o = &g_array_index(s->obs, obs, i);
		sum[o->call] += o->a_s - range(s, x, o->call, o->node) / s->p.c_m_s;
		cnt[o->call]++;
	}
	for (int k = 0; k < s->n_calls; k++)
		gsl_vector_set(x, CALL(s, k) + 2, sum[k] / cnt[k]);
	g_free(sum);
	g_free(cnt);
	gsl_multifit_nlinear_fdf fdf = {.f = residuals, .df = NULL, .n = nr, .p = np, .params = s};
	gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
	fp.trs = gsl_multifit_nlinear_trs_lm;
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nr, np);
	if (!w) {
		gsl_vector_free(x);
		*why = "survey: out of memory";
		return -ENOMEM;
	}
	int rc = 0, info;
	if (gsl_multifit_nlinear_init(x, &fdf, w) != GSL_SUCCESS ||
	    gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w) != GSL_SUCCESS) {
		*why = "survey: Levenberg-Marquardt did not converge";
		rc = -EDOM;
	} else {
		const gsl_vector *xs = gsl_multifit_nlinear_position(w);
		gsl_matrix *cov = gsl_matrix_alloc(np, np);
		gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov);
		double chi2;
		gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chi2);
		out->n_calls = s->n_calls;
		out->n_obs = (int)s->obs->len;
		out->chi2 = chi2;
		out->dof = (int)nr - (int)np;
		out->c_m_s = gsl_vector_get(xs, 0) * s->p.c_m_s;
		out->c_sd_m_s = sqrt(gsl_matrix_get(cov, 0, 0)) * s->p.c_m_s;
		for (int j = 0; j < s->p.n_nodes; j++) {
			out->pos_m[j][0] = s->p.pos_m[j][0] + gsl_vector_get(xs, NODE(j));
			out->pos_m[j][1] = s->p.pos_m[j][1] + gsl_vector_get(xs, NODE(j) + 1);
			out->pos_m[j][2] = s->p.pos_m[j][2];
			out->sd_m[j][0] = sqrt(gsl_matrix_get(cov, NODE(j), NODE(j)));
			out->sd_m[j][1] = sqrt(gsl_matrix_get(cov, NODE(j) + 1, NODE(j) + 1));
		}
		gsl_matrix_free(cov);
	}
	gsl_multifit_nlinear_free(w);
	gsl_vector_free(x);
	return rc;
}
