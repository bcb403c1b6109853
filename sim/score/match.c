/* match.c — greedy-by-distance one-to-one matching of times (see match.h). */
#include "sim/score/match.h"

#include <assert.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>

static int by_distance(const void *x, const void *y)
{
	const score_cand *p = x, *q = y;
	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	if (p->d != q->d)
		return p->d < q->d ? -1 : 1;
	if (p->i != q->i)
		return p->i < q->i ? -1 : 1;
	return p->j < q->j ? -1 : p->j > q->j;
}

static int by_value(const void *x, const void *y, void *data)
{
	const double *v = data;
	double p = v[*(const size_t *)x], q = v[*(const size_t *)y];
	return p < q ? -1 : p > q;
}

size_t score_match_greedy(score_cand *c, size_t n, size_t na, size_t nb, int *a_to_b, int *b_to_a)
{
	for (size_t i = 0; i < na; i++)
		a_to_b[i] = -1;
	for (size_t j = 0; j < nb; j++)
		b_to_a[j] = -1;
	if (n)
		qsort(c, n, sizeof *c, by_distance);
	size_t pairs = 0;
	for (size_t k = 0; k < n; k++) {
		assert(c[k].i < na && c[k].j < nb);
		if (a_to_b[c[k].i] >= 0 || b_to_a[c[k].j] >= 0)
			continue;
		a_to_b[c[k].i] = (int)c[k].j;
		b_to_a[c[k].j] = (int)c[k].i;
		pairs++;
	}
	return pairs;
}

size_t score_match_times(const double *a, size_t na, const double *b, size_t nb, double tol, int *a_to_b, int *b_to_a)
{
	if (!na || !nb || !(tol >= 0))
		return score_match_greedy(NULL, 0, na, nb, a_to_b, b_to_a);
	/* b's finite times in ascending order, so each a scans only its window. */
	size_t *ob = g_new(size_t, nb), m = 0;
	for (size_t j = 0; j < nb; j++)
		if (isfinite(b[j]))
			ob[m++] = j;
	g_qsort_with_data(ob, (gint)m, sizeof *ob, by_value, (gpointer)b);
	GArray *c = g_array_new(FALSE, FALSE, sizeof(score_cand));
	for (size_t i = 0; i < na; i++) {
		if (!isfinite(a[i]))
			continue;
		/* first b >= a_i - tol (binary search) */
		size_t lo = 0, hi = m;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b[ob[mid]] < a[i] - tol)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < m && b[ob[k]] <= a[i] + tol; k++) {
			score_cand x = {i, ob[k], fabs(a[i] - b[ob[k]]), 0};
			g_array_append_val(c, x);
		}
	}
	size_t pairs = score_match_greedy((score_cand *)(void *)c->data, c->len, na, nb, a_to_b, b_to_a);
	g_array_free(c, TRUE);
	g_free(ob);
	return pairs;
}
