/* srp.c — pairwise correlations and steered response power (see srp.h). */
#include "apps/dsp/srp.h"
#include "apps/dsp/srp_heap.h"
#include "apps/dsp/srp_prior.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/xcorr.h"

#define OS 4 /* oversampling of the stored correlations */

/* Squares of 8 m, 2 m, 50 cm, 12.5 cm and 3.1 cm; points 8 mm apart.  The
 * speed of sound, when uncertain, is split with them: c +- 4 s.d. in as
 * few first cells as make the finest 0.25 sample over the aperture. */
#define LEVELS 6

typedef struct {
	int i, j, ok;
	fftwf_complex *psi; /* weighted cross spectrum, nfft/2 + 1 bins */
	size_t nfft, L;
	int k_lo, k_hi;
	double off;      /* (t0_j - t0_i) R: correlation lag = arrival difference x R - off */
	double lo;       /* correlation lag of stored point 0, samples */
	int m;           /* stored points, 1/OS sample apart */
	float *re, *env; /* normalised correlation and envelope */
	float *pool;     /* bounds of the levels but the last, (LEVELS - 1) x m */
} pair;

struct dsp_srp {
	dsp_srp_params p;
	int n, np;
	dsp_srp_clip c[DSP_SRP_MAX];
	pair pr[DSP_SRP_MAX * (DSP_SRP_MAX - 1) / 2];
	double box[4];     /* x0, x1, y0, y1 of the searched area, m */
	double c_min;      /* slowest speed of sound the prior allows, m/s */
	double cw0;        /* width of the coarsest speed cells, m/s (0: the speed is exact) */
	int nc0;           /* how many of them cover c +- 4 s.d. */
	double aperture_m; /* largest distance between two microphones, m */
	int zsearch;       /* the heights are searched too (cubes), from z_lo_m to z_hi_m */
	srp_heap *heap;    /* the search's squares, kept between searches (their pages stay mapped) */
};

void dsp_srp_params_default(dsp_srp_params *p)
{
	memset(p, 0, sizeof *p);
	dsp_gcc_params_default(&p->gcc);
	p->c_m_s = 343;
	p->margin_m = 10;
}

void dsp_srp_free(dsp_srp *s)
{
	if (!s)
		return;
	for (int k = 0; k < s->np; k++) {
		fftwf_free(s->pr[k].psi);
		free(s->pr[k].re);
		free(s->pr[k].env);
		free(s->pr[k].pool);
	}
	srp_heap_release(s->heap);
	free(s);
}

static double dist(const double *a, const double *b)
{
	return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Travel time from p to microphone k, s (first order in the Mach number). */
static double travel_c(const dsp_srp *s, const double *p, int k, double c)
{
	const double *m = s->c[k].pos_m;
	double r = dist(p, m);
	if (!(r > 0))
		return 0;
	double wu = 0;
	for (int a = 0; a < 3; a++)
		wu += s->p.wind_m_s[a] * (m[a] - p[a]) / r;
	return r / (c + wu);
}

double dsp_srp_predict(const dsp_srp *s, int i, int j, const double p[3], double c_m_s)
{
	double c = c_m_s > 0 ? c_m_s : s->p.c_m_s;
	return (travel_c(s, p, j, c) - travel_c(s, p, i, c)) * s->p.gcc.rate_hz;
}

/* The analytic correlation of pair k, oversampled, into re/env over its lag
 * range.  z: scratch of N = OS nfft complex values, plan its backward c2c. */
static int store(pair *q, fftwf_complex *z, fftwf_plan plan, size_t N, double wsum, int lag_lo, int lag_hi)
{
	memset(z, 0, N * sizeof *z);
	for (int k = q->k_lo; k <= q->k_hi; k++) {
		z[k][0] = 2 * q->psi[k][0];
		z[k][1] = 2 * q->psi[k][1];
	}
	fftwf_execute(plan);
	q->lo = lag_lo;
	q->m = (lag_hi - lag_lo) * OS + 1;
	q->re = malloc((size_t)q->m * sizeof *q->re);
	q->env = malloc((size_t)q->m * sizeof *q->env);
	if (!q->re || !q->env)
		return -ENOMEM;
	for (int u = 0; u < q->m; u++) {
		long t = (long)lag_lo * OS + u;
		size_t idx = (size_t)(t >= 0 ? t : t + (long)N);
		q->re[u] = (float)(z[idx][0] / wsum);
		q->env[u] = (float)(hypot(z[idx][0], z[idx][1]) / wsum);
	}
	return 0;
}

static int pool_levels(dsp_srp *s);

static dsp_srp *fail(dsp_srp *s, const char **why, const char *msg)
{
	*why = msg;
	dsp_srp_free(s);
	return NULL;
}

dsp_srp *dsp_srp_new(const dsp_srp_clip *c, int n, const dsp_srp_params *p, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (n < 2 || n > DSP_SRP_MAX)
		return fail(NULL, why, "srp: 2 to DSP_SRP_MAX (64) clips");
	double wind = sqrt(p->wind_m_s[0] * p->wind_m_s[0] + p->wind_m_s[1] * p->wind_m_s[1] + p->wind_m_s[2] * p->wind_m_s[2]);
	double c_min = p->c_m_s - 4 * p->c_sd_m_s - wind;
	if (!(p->gcc.rate_hz > 0) || !(c_min > 0) || !(p->pos_sd_m >= 0) || !(p->margin_m >= 0))
		return fail(NULL, why, "srp: rate and speed of sound (less 4 s.d. and the wind) must be > 0");
	if (p->use_prior && !(p->prior_k > 0))
		return fail(NULL, why, "srp: the onsets' gate needs prior_k > 0");
	dsp_srp *s = calloc(1, sizeof *s);
	if (!s)
		return fail(NULL, why, "srp: out of memory");
	s->p = *p;
	s->n = n;
	s->c_min = c_min;
	memcpy(s->c, c, (size_t)n * sizeof *c);
	/* The speed as a third dimension when uncertain: its finest cells
	 * (LEVELS - 1 splits by 4) move the aperture's travel time by 0.25
	 * sample. */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			s->aperture_m = fmax(s->aperture_m, dist(c[i].pos_m, c[j].pos_m));
	if (p->c_sd_m_s > 0 && s->aperture_m > 0) {
		double fine = 0.25 * p->c_m_s * p->c_m_s / (s->aperture_m * p->gcc.rate_hz);
		s->nc0 = (int)ceil(8 * p->c_sd_m_s / (fine * pow(4, LEVELS - 1)));
		s->cw0 = 8 * p->c_sd_m_s / s->nc0;
	} else {
		s->nc0 = 1;
	}
	s->zsearch = p->z_hi_m > p->z_lo_m;
	s->box[0] = s->box[2] = INFINITY;
	s->box[1] = s->box[3] = -INFINITY;
	for (int i = 0; i < n; i++) {
		if (!c[i].x || c[i].n == 0)
			return fail(s, why, "srp: an empty clip");
		s->box[0] = fmin(s->box[0], c[i].pos_m[0] - p->margin_m);
		s->box[1] = fmax(s->box[1], c[i].pos_m[0] + p->margin_m);
		s->box[2] = fmin(s->box[2], c[i].pos_m[1] - p->margin_m);
		s->box[3] = fmax(s->box[3], c[i].pos_m[1] + p->margin_m);
	}
	dsp_xcorr *xc = dsp_xcorr_new();
	fftwf_complex *z = NULL;
	fftwf_plan plan = NULL;
	size_t zN = 0;
	const char *err = NULL;
	double R = p->gcc.rate_hz;
	for (int i = 0; i < n && !err; i++)
		for (int j = i + 1; j < n && !err; j++) {
			pair *q = &s->pr[s->np++];
			q->i = i;
			q->j = j;
			q->off = (c[j].t0_s - c[i].t0_s) * R;
			double b = dist(c[i].pos_m, c[j].pos_m) / c_min + 4 * M_SQRT2 * p->pos_sd_m / c_min +
				   4 * sqrt(c[i].t0_sd_s * c[i].t0_sd_s + c[j].t0_sd_s * c[j].t0_sd_s);
			int lag_lo = (int)floor(-b * R - q->off) - 2, lag_hi = (int)ceil(b * R - q->off) + 2;
			if (lag_lo < -(int)c[i].n + 1)
				lag_lo = -(int)c[i].n + 1;
			if (lag_hi > (int)c[j].n - 1)
				lag_hi = (int)c[j].n - 1;
			if (!xc || dsp_xcorr_cross(xc, c[i].x, c[i].n, c[j].x, c[j].n, 0) < 0) {
				err = "srp: out of memory";
				break;
			}
			q->nfft = dsp_xcorr_nfft(xc);
			q->L = c[i].n > c[j].n ? c[i].n : c[j].n;
			if (dsp_gcc_band(&p->gcc, q->nfft, &q->k_lo, &q->k_hi) < 0) {
				err = "srp: the band holds no frequency bin at this clip length";
				break;
			}
			fftwf_complex *Rk = dsp_xcorr_spec(xc);
			double wsum;
			int rc = dsp_gcc_weigh(&p->gcc, Rk, dsp_xcorr_spec_a(xc), dsp_xcorr_spec_b(xc), q->nfft, q->k_lo,
					       q->k_hi, &wsum);
			if (rc == -ENOMEM) {
				err = "srp: out of memory";
				break;
			}
			if (rc < 0 || lag_lo > lag_hi)
				continue; /* no common signal: the pair scores 0 */
			size_t nb = q->nfft / 2 + 1;
			q->psi = fftwf_alloc_complex(nb);
			if (!q->psi) {
				err = "srp: out of memory";
				break;
			}
			memcpy(q->psi, Rk, nb * sizeof *Rk);
			size_t N = OS * q->nfft;
			if (N != zN) {
				if (plan)
					fftwf_destroy_plan(plan);
				fftwf_free(z);
				z = fftwf_alloc_complex(N);
				plan = z ? fftwf_plan_dft_1d((int)N, z, z, FFTW_BACKWARD, FFTW_ESTIMATE) : NULL;
				zN = plan ? N : 0;
				if (!plan) {
					err = "srp: out of memory";
					break;
				}
			}
			if (store(q, z, plan, N, wsum, lag_lo, lag_hi) < 0) {
				err = "srp: out of memory";
				break;
			}
			q->ok = 1;
		}
	if (plan)
		fftwf_destroy_plan(plan);
	fftwf_free(z);
	dsp_xcorr_free(xc);
	if (!err && pool_levels(s) < 0)
		err = "srp: out of memory";
	if (err)
		return fail(s, why, err);
	return s;
}

/* Index (fractional, in stored points) of correlation lag g of pair q. */
static double index_of(const pair *q, double g)
{
	return (g - q->lo) * OS;
}

static double interp(const float *v, int m, double u)
{
	if (u <= 0)
		return v[0];
	if (u >= m - 1)
		return v[m - 1];
	int a = (int)u;
	double f = u - a;
	return v[a] + f * (v[a + 1] - v[a]);
}

/* S at the 3-D point p and speed c. */
static double power3(const dsp_srp *s, const double p[3], double c)
{
	double t[DSP_SRP_MAX], sum = 0;
	for (int k = 0; k < s->n; k++)
		t[k] = travel_c(s, p, k, c) * s->p.gcc.rate_hz;
	for (int k = 0; k < s->np; k++) {
		const pair *q = &s->pr[k];
		if (q->ok)
			sum += interp(q->re, q->m, index_of(q, t[q->j] - t[q->i] - q->off));
	}
	return s->np ? sum / s->np : 0;
}

static double power_c(const dsp_srp *s, const double p[3], double c)
{
	double q3[3] = {p[0], p[1], s->p.z_m};
	return power3(s, q3, c);
}

double dsp_srp_power(const dsp_srp *s, const double p[3])
{
	return power_c(s, p, s->p.c_m_s);
}

/* out[u] = max of v over [u - w, u + w] (a monotone deque: O(m)). */
static void slide_max(const float *v, int m, int w, float *out, int *dq)
{
	int head = 0, tail = 0, next = 0;
	for (int u = 0; u < m; u++) {
		int hi = u + w < m - 1 ? u + w : m - 1;
		for (; next <= hi; next++) {
			while (tail > head && v[dq[tail - 1]] <= v[next])
				tail--;
			dq[tail++] = next;
		}
		while (dq[head] < u - w)
			head++;
		out[u] = v[dq[head]];
	}
}

#define MAX_POPS 20000 /* squares split at most per search */

static double side(int level)
{
	return 8.0 / pow(4, level);
}

/* Bound of a square of `level` centred at (x, y): the pooled values of
 * that level at the centre's lags; at the last level the power itself. */
/* Ranges r[k] from (x, y, z_m) to every microphone and the wind along
 * them, wu[k]: the part of the travel times that does not depend on c. */
static void ranges(const dsp_srp *s, double x, double y, double z, double *r, double *wu)
{
	double p[3] = {x, y, z};
	for (int k = 0; k < s->n; k++) {
		const double *m = s->c[k].pos_m;
		r[k] = dist(p, m);
		wu[k] = 0;
		for (int a = 0; a < 3 && r[k] > 0; a++)
			wu[k] += s->p.wind_m_s[a] * (m[a] - p[a]) / r[k];
	}
}

static double bound(const dsp_srp *s, const double *r, const double *wu, double c, int level)
{
	double t[DSP_SRP_MAX], sum = 0, R = s->p.gcc.rate_hz;
	for (int k = 0; k < s->n; k++)
		t[k] = r[k] / (c + wu[k]) * R;
	for (int k = 0; k < s->np; k++) {
		const pair *q = &s->pr[k];
		if (!q->ok)
			continue;
		double g = index_of(q, t[q->j] - t[q->i] - q->off);
		if (level == LEVELS - 1) {
			sum += interp(q->re, q->m, g);
			continue;
		}
		long u = (long)floor(g + 0.5);
		const float *pool = q->pool + (size_t)level * (size_t)q->m;
		sum += pool[u < 0 ? 0 : u >= q->m ? q->m - 1
						  : u];
	}
	return s->np ? sum / s->np : 0;
}

/* Each pair's bound arrays, one per level but the last: the largest |z|
 * (squares over 10 cm) or Re z within the lags a square's points reach (a
 * point is at most side / sqrt(2) from the centre; a range difference
 * changes by at most twice the distance moved). */
static int pool_levels(dsp_srp *s)
{
	int maxm = 0;
	for (int k = 0; k < s->np; k++)
		if (s->pr[k].m > maxm)
			maxm = s->pr[k].m;
	int *dq = malloc(((size_t)maxm + 1) * sizeof *dq);
	if (!dq)
		return -ENOMEM;
	double R = s->p.gcc.rate_hz;
	for (int k = 0; k < s->np; k++) {
		pair *q = &s->pr[k];
		if (!q->ok)
			continue;
		q->pool = malloc((size_t)(LEVELS - 1) * (size_t)q->m * sizeof *q->pool);
		if (!q->pool) {
			free(dq);
			return -ENOMEM;
		}
		for (int l = 0; l < LEVELS - 1; l++) {
			/* plus the speed's half-width: a travel difference of at most
			 * the aperture / c changes by that times dc / c */
			double h = side(l), dc = s->cw0 / pow(4, l) / 2, diag = s->zsearch ? sqrt(3.0) : M_SQRT2;
			int w = (int)ceil((diag * h + s->aperture_m * dc / s->c_min) * R / s->c_min * OS) + 1;
			slide_max(h > 0.1 ? q->env : q->re, q->m, w, q->pool + (size_t)l * (size_t)q->m, dq);
		}
	}
	free(dq);
	return 0;
}

/* Outside the onsets' gate, for a cell reaching `reach` m from (x, y, z):
 * each onset minus the travel time from there is an estimate of the
 * emission; more than prior_outliers of them farther from their median
 * than prior_k s.d. (plus what the cell's reach can change) is out
 * (srp_prior.h). */
static int gated(const dsp_srp *s, double x, double y, double z, double reach)
{
	if (!s->p.use_prior)
		return 0;
	double q[3] = {x, y, z}, e[DSP_SRP_MAX];
	for (int k = 0; k < s->n; k++)
		e[k] = s->p.prior_s[k] - travel_c(s, q, k, s->p.c_m_s);
	return dsp_srp_prior_misfits(&s->p, s->n, e, 2 * reach / s->c_min) > s->p.prior_outliers;
}

double dsp_srp_gate_chi2(const dsp_srp *s, const double p[3], double c_m_s, int drop, int *dof)
{
	const dsp_srp_params *pp = &s->p;
	double c = c_m_s > 0 ? c_m_s : pp->c_m_s, e[DSP_SRP_MAX];
	*dof = 0;
	if (!pp->use_prior)
		return NAN;
	for (int k = 0; k < s->n; k++)
		e[k] = pp->prior_s[k] - travel_c(s, p, k, c);
	return dsp_srp_prior_chi2(pp, s->n, e, drop, dof);
}

/* A square (cube) of side h centred at (x, y, z) that does not reach into
 * the searched box (and heights): left out, as the first level's squares
 * overhang it. */
static int outside(const dsp_srp *s, double x, double y, double z, double h)
{
	double r = h / 2;
	if (x + r < s->box[0] || x - r > s->box[1] || y + r < s->box[2] || y - r > s->box[3])
		return 1;
	return s->zsearch && (z + r < s->p.z_lo_m || z - r > s->p.z_hi_m);
}

/* Whether a square centred at (x, y) reaching `reach` is left out of the
 * search: radius > 0, its centre within radius of avoid (x, y); radius <
 * 0, all of it farther than -radius from avoid (the search kept near it). */
static int avoided(double x, double y, double reach, const double *avoid, double radius)
{
	if (!avoid)
		return 0;
	double d = hypot(x - avoid[0], y - avoid[1]);
	return radius >= 0 ? d < radius : d - reach > -radius;
}

/* Called for each child of a square (its bound computed); a non-zero
 * return ends the walk and is returned by for_children. */
typedef int (*child_fn)(void *user, const cell *k);

/* Walk the children of square c (4 x 4 squares, x 4 heights when the
 * height is searched, x 4 speeds when the speed is) that reach into the
 * searched box, pass the gate and are not avoided, calling fn with each.
 * Returns 0, or the first non-zero fn returned. */
static int for_children(const dsp_srp *s, const cell *c, const double *avoid, double radius, child_fn fn, void *user)
{
	double q = side(c->level) / 4, qc = s->cw0 / pow(4, c->level) / 4;
	double reach = q * (s->zsearch ? sqrt(3.0) : M_SQRT2) / 2;
	int csplit = s->cw0 > 0 ? 4 : 1, zsplit = s->zsearch ? 4 : 1;
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			for (int f = 0; f < zsplit; f++) {
				double x = c->x + (a - 1.5) * q, y = c->y + (b - 1.5) * q;
				double z = zsplit > 1 ? c->z + (f - 1.5) * q : c->z;
				if (outside(s, x, y, z, q) || gated(s, x, y, z, reach) || avoided(x, y, reach, avoid, radius))
					continue;
				double r[DSP_SRP_MAX], wu[DSP_SRP_MAX];
				ranges(s, x, y, z, r, wu);
				for (int e = 0; e < csplit; e++) {
					double cc = csplit > 1 ? c->c + (e - 1.5) * qc : c->c;
					cell k = {x, y, z, cc, bound(s, r, wu, cc, c->level + 1), c->level + 1};
					int rc = fn(user, &k);
					if (rc)
						return rc;
				}
			}
	return 0;
}

/* child_fn: keep the child with the largest bound in *(cell *)user. */
static int keep_best(void *user, const cell *k)
{
	cell *best = user;
	if (k->v > best->v)
		*best = *k;
	return 0;
}

/* The child of square c with the largest bound (c itself, marked
 * -INFINITY at the finest level, when every child is gated or avoided). */
static cell best_child(const dsp_srp *s, const cell *c, const double *avoid, double radius)
{
	cell best = {c->x, c->y, c->z, c->c, -INFINITY, LEVELS - 1};
	for_children(s, c, avoid, radius, keep_best, &best);
	return best;
}

/* The search's state as its children are met: the heap of squares to
 * split and the incumbent. */
typedef struct {
	srp_heap *h;
	cell *top;
} split_state;

/* child_fn: a child that beats the incumbent replaces it (a point of the
 * finest level) or is pushed to be split (a square); 0 or -ENOMEM. */
static int push_or_take(void *user, const cell *k)
{
	split_state *st = user;
	if (!(k->v > st->top->v))
		return 0;
	if (k->level == LEVELS - 1) {
		*st->top = *k;
		return 0;
	}
	return srp_heap_push(st->h, *k);
}

/* Best-first branch and bound.  The incumbent is the best point of the
 * finest level seen so far (with a floor, the floor itself at first; without
 * one, the point a greedy descent from the best first-level square
 * reaches); a square whose bound does not beat it is never pushed (no point
 * in it can), points of the finest level are never pushed (they only
 * replace the incumbent), and the search ends when the largest bound left
 * does not beat the incumbent: it is then the maximum.  With a floor, the
 * first point of the finest level at or above it ends the search.  After
 * MAX_POPS splits, a greedy descent from the best square left is the last
 * candidate.  Returns 0 (*best found), -ENOENT (no point: the gate or the
 * floor leaves none), -EAGAIN (out of splits, nothing at the floor found:
 * undecided), -ENOMEM. */
static int search(dsp_srp *s, const double *avoid, double radius, double floor_v, dsp_srp_source *best)
{
	if (!s->heap && !(s->heap = srp_heap_take()))
		return -ENOMEM;
	srp_heap *hp = s->heap;
	srp_heap_clear(hp);
	double h0 = side(0), cfirst = s->p.c_m_s - 4 * s->p.c_sd_m_s;
	int nx = (int)ceil((s->box[1] - s->box[0]) / h0), ny = (int)ceil((s->box[3] - s->box[2]) / h0);
	int rc = 0, undecided = 0;
	int nz = s->zsearch ? (int)ceil((s->p.z_hi_m - s->p.z_lo_m) / h0) : 1;
	double reach0 = h0 * (s->zsearch ? sqrt(3.0) : M_SQRT2) / 2;
	int floored = isfinite(floor_v);
	for (int a = 0; a < nx && !rc; a++)
		for (int b = 0; b < ny && !rc; b++)
			for (int iz = 0; iz < nz && !rc; iz++) {
				double x = s->box[0] + (a + 0.5) * h0, y = s->box[2] + (b + 0.5) * h0;
				double z = s->zsearch ? s->p.z_lo_m + (iz + 0.5) * h0 : s->p.z_m;
				if (gated(s, x, y, z, reach0) || avoided(x, y, reach0, avoid, radius))
					continue;
				double r[DSP_SRP_MAX], wu[DSP_SRP_MAX];
				ranges(s, x, y, z, r, wu);
				for (int k = 0; k < s->nc0 && !rc; k++) {
					double c = s->cw0 > 0 ? cfirst + (k + 0.5) * s->cw0 : s->p.c_m_s;
					cell e = {x, y, z, c, bound(s, r, wu, c, 0), 0};
					if (!floored || e.v >= floor_v)
						rc = srp_heap_push(hp, e);
				}
			}
	/* the incumbent: the floor (just below it: a point at it qualifies),
	 * or the greedy descent's point */
	cell top = {0, 0, 0, 0, floored ? nextafter(floor_v, -INFINITY) : -INFINITY, -1};
	if (!rc && srp_heap_size(hp) > 0 && !floored) {
		cell g = srp_heap_top(hp);
		while (g.level < LEVELS - 1)
			g = best_child(s, &g, avoid, radius);
		if (g.v > top.v)
			top = g;
	}
	for (int pops = 0; !rc && srp_heap_size(hp) > 0 && !(floored && top.level >= 0); pops++) {
		cell c = srp_heap_pop(hp);
		if (!(c.v > top.v))
			break;
		if (pops >= MAX_POPS) {
			while (c.level < LEVELS - 1)
				c = best_child(s, &c, avoid, radius);
			if (c.v > top.v)
				top = c;
			undecided = floored && top.level < 0;
			break;
		}
		split_state st = {hp, &top};
		rc = for_children(s, &c, avoid, radius, push_or_take, &st);
	}
	if (rc)
		return rc;
	if (top.level < 0 || !(top.v > -INFINITY))
		return undecided ? -EAGAIN : -ENOENT;
	*best = (dsp_srp_source){.pos_m = {top.x, top.y, top.z}, .c_m_s = top.c, .power = top.v};
	return 0;
}

int dsp_srp_search(dsp_srp *s, dsp_srp_source *best)
{
	int rc = search(s, NULL, 0, NAN, best);
	return rc == -ENOENT ? -EDOM : rc;
}

int dsp_srp_search_avoiding(dsp_srp *s, const double avoid[2], double radius, dsp_srp_source *best)
{
	int rc = search(s, avoid, radius, NAN, best);
	return rc == -ENOENT ? -EDOM : rc;
}

int dsp_srp_search_above(dsp_srp *s, const double avoid[2], double radius, double floor_v, int ungated,
			 dsp_srp_source *found)
{
	if (!isfinite(floor_v))
		return -EINVAL;
	int gate = s->p.use_prior;
	if (ungated)
		s->p.use_prior = 0;
	int rc = search(s, avoid, radius, floor_v, found);
	s->p.use_prior = gate;
	return rc;
}

int dsp_srp_search_above_within(dsp_srp *s, const double avoid[2], double radius, double floor_v, const double *sd_s,
				double k, int outliers, dsp_srp_source *found)
{
	if (!isfinite(floor_v) || !(k > 0) || !s->p.use_prior || !sd_s)
		return -EINVAL;
	double sd[DSP_SRP_MAX], k0 = s->p.prior_k;
	int out0 = s->p.prior_outliers;
	memcpy(sd, s->p.prior_sd_s, sizeof sd);
	for (int i = 0; i < s->n; i++)
		s->p.prior_sd_s[i] = sd_s[i];
	s->p.prior_k = k;
	s->p.prior_outliers = outliers;
	int rc = search(s, avoid, radius, floor_v, found);
	memcpy(s->p.prior_sd_s, sd, sizeof sd);
	s->p.prior_k = k0;
	s->p.prior_outliers = out0;
	return rc;
}

int dsp_srp_search_near(dsp_srp *s, const double near[2], double radius, int ungated, dsp_srp_source *found)
{
	if (!(radius > 0) || !near)
		return -EINVAL;
	int gate = s->p.use_prior;
	if (ungated)
		s->p.use_prior = 0;
	int rc = search(s, near, -radius, NAN, found);
	s->p.use_prior = gate;
	return rc == -ENOENT ? -EDOM : rc;
}

int dsp_srp_delay_at(const dsp_srp *s, int i, int j, const double p[3], double c_m_s, double half,
		     dsp_srp_delay *out)
{
	if (i == j || i < 0 || j < 0 || i >= s->n || j >= s->n)
		return -EINVAL;
	return dsp_srp_delay_near(s, i, j, dsp_srp_predict(s, i, j, p, c_m_s), half, out);
}

int dsp_srp_delay_near(const dsp_srp *s, int i, int j, double lag, double half, dsp_srp_delay *out)
{
	if (i == j || i < 0 || j < 0 || i >= s->n || j >= s->n)
		return -EINVAL;
	int sign = 1;
	if (i > j) {
		int t = i;
		i = j;
		j = t;
		sign = -1;
		lag = -lag;
	}
	const pair *q = NULL;
	for (int k = 0; k < s->np; k++)
		if (s->pr[k].i == i && s->pr[k].j == j)
			q = &s->pr[k];
	if (!q || !q->ok)
		return -EDOM;
	double g = lag - q->off;
	int u0 = (int)floor(index_of(q, g - half)), u1 = (int)ceil(index_of(q, g + half));
	if (u0 < 1)
		u0 = 1;
	if (u1 > q->m - 2)
		u1 = q->m - 2;
	int best = -1;
	for (int u = u0; u <= u1; u++)
		if (q->re[u] >= q->re[u - 1] && q->re[u] >= q->re[u + 1] && (best < 0 || q->re[u] > q->re[best]))
			best = u;
	if (best < 0)
		return -EDOM;
	double second = 0;
	for (int u = u0; u <= u1; u++)
		if (abs(u - best) > OS && q->re[u] >= q->re[u - 1] && q->re[u] >= q->re[u + 1] && q->re[u] > second)
			second = q->re[u];
	/* Newton on the exact band-limited correlation, within +-0.75 sample. */
	double t0 = q->lo + (double)best / OS, tau = t0, r = 0, d1 = 0, d2 = 0;
	for (int it = 0; it < 30; it++) {
		dsp_spec_eval(q->psi, q->nfft, tau, q->k_lo, q->k_hi, &r, &d1, &d2);
		if (!(d2 < 0))
			break;
		double nt = fmin(fmax(tau - d1 / d2, t0 - 0.75), t0 + 0.75), step = nt - tau;
		tau = nt;
		if (fabs(step) < 1e-10)
			break;
	}
	dsp_spec_eval(q->psi, q->nfft, tau, q->k_lo, q->k_hi, &r, &d1, &d2);
	if (!(d2 < 0))
		return -EDOM;
	double delay = tau + q->off;
	out->delay = sign * delay;
	out->se = dsp_gcc_se(q->psi, q->nfft, q->k_lo, q->k_hi, tau, q->L);
	out->peak = q->re[best];
	out->second = q->re[best] > 0 && second > 0 ? second / q->re[best] : 0;
	return 0;
}

/* The best point of a grid around (x0, y0) over the heights [z_lo, z_hi]
 * at speed c: x and y within +-half_m in steps of dxy, z in steps of dz. */
static void grid3(const dsp_srp *s, double x0, double y0, double half_m, double dxy, double z_lo, double z_hi, double dz,
		  double c, dsp_srp_source *best)
{
	int nxy = (int)lround(half_m / dxy), nz = (int)lround((z_hi - z_lo) / dz);
	for (int iz = 0; iz <= nz; iz++)
		for (int ix = -nxy; ix <= nxy; ix++)
			for (int iy = -nxy; iy <= nxy; iy++) {
				double p[3] = {x0 + ix * dxy, y0 + iy * dxy, z_lo + iz * dz};
				double v = power3(s, p, c);
				if (v > best->power)
					*best = (dsp_srp_source){.pos_m = {p[0], p[1], p[2]}, .c_m_s = c, .power = v};
			}
}

int dsp_srp_refine_height(const dsp_srp *s, const dsp_srp_source *in, double depth_m, dsp_srp_source *out)
{
	if (!(depth_m >= 0))
		return -EINVAL;
	*out = *in;
	out->power = power3(s, in->pos_m, in->c_m_s);
	double z_lo = s->p.z_m - depth_m, z_hi = s->p.z_m;
	/* Coarse: +-40 cm in 4 cm steps, heights 10 cm apart; then +-4 cm in
	 * 5 mm steps, heights +-10 cm in 1 cm steps. */
	grid3(s, in->pos_m[0], in->pos_m[1], 0.4, 0.04, z_lo, z_hi, 0.1, in->c_m_s, out);
	dsp_srp_source mid = *out;
	grid3(s, mid.pos_m[0], mid.pos_m[1], 0.04, 0.005, fmax(z_lo, mid.pos_m[2] - 0.1), fmin(z_hi, mid.pos_m[2] + 0.1),
	      0.01, mid.c_m_s, out);
	return 0;
}
