/* rbs_paths.c — per-sender agreement of one pair's observations (rbs_paths.h). */
#include "syncd/rbs_paths.h"

#include <math.h>

typedef struct {
	uint32_t sender;
	double mean, m2; /* weighted mean and mean square of the residuals, ns, ns^2 */
	double n;        /* observations, counted up to RBS_PATHS_MEMORY weight */
	guint64 count;   /* observations ever */
	int64_t last_ns;
} stat;

struct rbs_paths {
	int64_t timeout_ns;
	GArray *s; /* stat */
};

rbs_paths *rbs_paths_new(int64_t timeout_ns)
{
	rbs_paths *p = g_new0(rbs_paths, 1);
	p->timeout_ns = timeout_ns;
	p->s = g_array_new(FALSE, TRUE, sizeof(stat));
	return p;
}

void rbs_paths_free(rbs_paths *p)
{
	if (!p)
		return;
	g_array_free(p->s, TRUE);
	g_free(p);
}

void rbs_paths_add(rbs_paths *p, uint32_t sender, double residual_ns, int64_t now_ns)
{
	if (!isfinite(residual_ns))
		return;
	stat *st = NULL;
	for (guint i = 0; i < p->s->len && !st; i++)
		if (g_array_index(p->s, stat, i).sender == sender)
			st = &g_array_index(p->s, stat, i);
	if (!st) {
		stat z = {.sender = sender};
		g_array_append_val(p->s, z);
		st = &g_array_index(p->s, stat, p->s->len - 1);
	}
	/* A running mean while young, exponentially weighted after. */
	if (st->n < RBS_PATHS_MEMORY)
		st->n += 1;
	double a = 1.0 / st->n;
	st->mean += a * (residual_ns - st->mean);
	st->m2 += a * (residual_ns * residual_ns - st->m2);
	st->count++;
	st->last_ns = now_ns;
}

/* The variance of a sender's mean: its residuals' variance times the
 * weight of one observation's share (1/n while young; alpha / (2 - alpha)
 * for the exponential mean). */
static double mean_var(const stat *st)
{
	double var = fmax(st->m2 - st->mean * st->mean, 0.0);
	double share = st->n < RBS_PATHS_MEMORY ? 1.0 / st->n : (1.0 / RBS_PATHS_MEMORY) / (2.0 - 1.0 / RBS_PATHS_MEMORY);
	return var * share;
}

static gboolean usable(const rbs_paths *p, const stat *st, int64_t now_ns)
{
	return st->count >= RBS_PATHS_MIN_OBS && now_ns - st->last_ns <= p->timeout_ns;
}

rbs_paths_verdict rbs_paths_check(const rbs_paths *p, double tolerance_ns, int64_t now_ns)
{
	rbs_paths_verdict v = {0};
	for (guint i = 0; i < p->s->len; i++)
		v.senders += usable(p, &g_array_index(p->s, stat, i), now_ns);
	if (v.senders < 2)
		return v;
	double best = -1;
	for (guint i = 0; i < p->s->len; i++) {
		const stat *a = &g_array_index(p->s, stat, i);
		if (!usable(p, a, now_ns))
			continue;
		/* The others pooled by inverse variance of their means. */
		double w = 0, wm = 0;
		for (guint j = 0; j < p->s->len; j++) {
			const stat *b = &g_array_index(p->s, stat, j);
			if (j == i || !usable(p, b, now_ns))
				continue;
			double vb = fmax(mean_var(b), 1e-6);
			w += 1 / vb;
			wm += b->mean / vb;
		}
		double off = a->mean - wm / w, se = sqrt(mean_var(a) + 1 / w);
		double z = off / fmax(se, 1e-3);
		if (fabs(z) > best) {
			best = fabs(z);
			v.sender = a->sender;
			v.offset_ns = off;
			v.z = z;
		}
	}
	v.flagged = fabs(v.z) > RBS_PATHS_Z && fabs(v.offset_ns) > tolerance_ns;
	return v;
}
