/* continuity.c — the drift of a continued timescale (continuity.h). */
#include "syncd/continuity.h"

#include <math.h>

/* Empty the samples, keeping the unit. */
static void empty(syncd_continuity *h)
{
	h->n = 0;
	h->head = 0;
	h->root = 0;
}

void syncd_continuity_init(syncd_continuity *h, double unit_ns)
{
	h->unit_ns = unit_ns > 0 ? unit_ns : 1.0;
	empty(h);
}

/* An interval of t ns in x's unit (at least 1). */
static int64_t in_x(const syncd_continuity *h, int64_t t_ns)
{
	if (!(h->unit_ns > 0) || h->unit_ns == 1.0)
		return t_ns;
	double v = (double)t_ns / h->unit_ns;
	return v < 1 ? 1 : (int64_t)llround(v);
}

/* An interval of v x units in ns. */
static int64_t in_ns(const syncd_continuity *h, int64_t v)
{
	return h->unit_ns > 0 && h->unit_ns != 1.0 ? (int64_t)llround((double)v * h->unit_ns) : v;
}

void syncd_continuity_reset(syncd_continuity *h)
{
	syncd_continuity_init(h, 1.0);
}

static size_t at(const syncd_continuity *h, size_t i)
{
	return (h->head + i) % SYNCD_CONTINUITY_SAMPLES;
}

void syncd_continuity_note(syncd_continuity *h, uint32_t root, int64_t cpu_ns, int64_t global_ns, double se_ns)
{
	if (h->n && (root != h->root || cpu_ns < h->x[at(h, h->n - 1)]))
		empty(h);
	if (h->n && cpu_ns - h->x[at(h, h->n - 1)] < in_x(h, SYNCD_CONTINUITY_SPACING_NS))
		return;
	h->root = root;
	if (h->n == SYNCD_CONTINUITY_SAMPLES) {
		h->x[h->head] = cpu_ns;
		h->g[h->head] = global_ns;
		h->se[h->head] = se_ns;
		h->head = (h->head + 1) % SYNCD_CONTINUITY_SAMPLES;
		return;
	}
	size_t k = at(h, h->n++);
	h->x[k] = cpu_ns;
	h->g[k] = global_ns;
	h->se[k] = se_ns;
}

/* The first sample at or after index i whose time is >= x (n: none). */
static size_t first_from(const syncd_continuity *h, size_t i, int64_t x)
{
	while (i < h->n && h->x[at(h, i)] < x)
		i++;
	return i;
}

/* The line's rate between samples i and j (global ns per cpu ns, minus 1:
 * the differences are small and exact in int64; y per x minus 1 for
 * another pair). */
static double rate(const syncd_continuity *h, size_t i, size_t j)
{
	size_t a = at(h, i), b = at(h, j);
	return (double)((h->g[b] - h->g[a]) - (h->x[b] - h->x[a])) / (double)(h->x[b] - h->x[a]);
}

/* From sample i, k consecutive spans of about tau: p[0] = i and p[s] the
 * first sample tau or more after p[s - 1].  Returns 1 when every span lies
 * within [tau, 1.25 tau] (t[s] its length), 0 when one is longer (a gap in
 * the samples: skip this start), -1 when the history ends first (stop). */
static int spans_from(const syncd_continuity *h, size_t i, int64_t tau, int k, size_t *p, double *t)
{
	p[0] = i;
	for (int s = 1; s <= k; s++) {
		p[s] = first_from(h, p[s - 1] + 1, h->x[at(h, p[s - 1])] + tau);
		if (p[s] >= h->n)
			return -1;
	}
	int ok = 1;
	for (int s = 0; s < k; s++) {
		int64_t span = h->x[at(h, p[s + 1])] - h->x[at(h, p[s])];
		ok = ok && span <= tau + tau / 4;
		t[s] = (double)span;
	}
	return ok;
}

/* What independent sample errors e0, e1, e2 give the difference of the
 * rates over consecutive spans a and b, squared (its expectation). */
static double diff_noise(double e0, double e1, double e2, double a, double b)
{
	return e0 * e0 / (a * a) + e1 * e1 * (1 / a + 1 / b) * (1 / a + 1 / b) + e2 * e2 / (b * b);
}

/* The mean of 1.5 ((s_b - s_a)^2 - N) / tau over consecutive span pairs of
 * about tau (each within [tau, 1.25 tau]: a gap in the samples is
 * skipped), clipped at 0, and the number of pairs in *pairs. */
static double q2_at(const syncd_continuity *h, int64_t tau, size_t *pairs)
{
	double sum = 0;
	size_t m = 0;
	for (size_t i = 0; i < h->n; i++) {
		size_t p[3];
		double t[2];
		int r = spans_from(h, i, tau, 2, p, t);
		if (r < 0)
			break;
		if (!r)
			continue;
		double d = rate(h, p[1], p[2]) - rate(h, p[0], p[1]);
		double noise = diff_noise(h->se[at(h, p[0])], h->se[at(h, p[1])], h->se[at(h, p[2])], t[0], t[1]);
		sum += 1.5 * (d * d - noise) / (0.5 * (t[0] + t[1]));
		m++;
	}
	*pairs = m;
	return m && sum > 0 ? sum / (double)m : 0;
}

double syncd_continuity_q2(const syncd_continuity *h, int64_t *span_ns, int64_t *tau_ns)
{
	if (span_ns)
		*span_ns = h->n ? in_ns(h, h->x[at(h, h->n - 1)] - h->x[at(h, 0)]) : 0;
	double best = 0;
	int64_t best_tau = 0;
	for (int64_t tau = 32000000000LL; tau <= 256000000000LL; tau *= 2) {
		size_t pairs;
		double q = q2_at(h, in_x(h, tau), &pairs);
		if (pairs && (!best_tau || q > best)) {
			best = q;
			best_tau = tau;
		}
	}
	if (tau_ns)
		*tau_ns = best_tau;
	return best;
}

int64_t syncd_continuity_tau_max(const syncd_continuity *h)
{
	int64_t longest = 0;
	for (int64_t tau = 32000000000LL; tau <= 256000000000LL; tau *= 2) {
		size_t pairs;
		q2_at(h, in_x(h, tau), &pairs);
		if (pairs)
			longest = tau;
	}
	return longest;
}

/* Over consecutive span triples of about tau (each within [tau, 1.25
 * tau]): the mean of the rates' second difference squared, less what a
 * random walk of the frequency gives it (1.5 times the mean of the two
 * first differences squared: for a walk E[dd^2] = q2 tau and E[d^2] =
 * (2/3) q2 tau), each less its samples' noise, over tau^4; clipped at 0.
 * The number of triples in *triples. */
static double jerk2_at(const syncd_continuity *h, int64_t tau, size_t *triples)
{
	double sum = 0;
	size_t m = 0;
	for (size_t i = 0; i < h->n; i++) {
		size_t p[4];
		double t[3], e[4];
		int r = spans_from(h, i, tau, 3, p, t);
		if (r < 0)
			break;
		if (!r)
			continue;
		for (int s = 0; s < 4; s++)
			e[s] = h->se[at(h, p[s])];
		double s0 = rate(h, p[0], p[1]), s1 = rate(h, p[1], p[2]), s2 = rate(h, p[2], p[3]);
		double d1 = s1 - s0, d2 = s2 - s1, dd = d2 - d1;
		/* Each sample's noise through the differences (independent). */
		double n1 = diff_noise(e[0], e[1], e[2], t[0], t[1]), n2 = diff_noise(e[1], e[2], e[3], t[1], t[2]);
		double c1 = 1 / t[0] + 2 / t[1], c2 = 2 / t[1] + 1 / t[2];
		double ndd = e[0] * e[0] / (t[0] * t[0]) + e[1] * e[1] * c1 * c1 + e[2] * e[2] * c2 * c2 +
			     e[3] * e[3] / (t[2] * t[2]);
		double tm = (t[0] + t[1] + t[2]) / 3;
		sum += ((dd * dd - ndd) - 0.75 * ((d1 * d1 - n1) + (d2 * d2 - n2))) / (tm * tm * tm * tm);
		m++;
	}
	*triples = m;
	return m && sum > 0 ? sum / (double)m : 0;
}

double syncd_continuity_jerk2(const syncd_continuity *h, int64_t *tau_ns)
{
	/* Spans of 32 s times powers of sqrt(2), up to a third of the
	 * longest history: the longest that fits a triple is kept. */
	double best = 0;
	int64_t best_tau = 0;
	for (int k = 0; k <= 8; k++) {
		int64_t tau = (int64_t)llround(32e9 * pow(2.0, k / 2.0));
		size_t triples;
		double j = jerk2_at(h, in_x(h, tau), &triples);
		if (triples) {
			best = j;
			best_tau = tau;
		}
	}
	if (tau_ns)
		*tau_ns = best_tau;
	return best;
}

double syncd_continuity_var(double se0_ns, double rate_var, double q2, double tau_ns, double jerk2, double dt_ns)
{
	double dt = fabs(dt_ns);
	double ramp = tau_ns > 0 ? fmax(1.0, dt / (2.0 * tau_ns)) : 1.0;
	return se0_ns * se0_ns + rate_var * dt * dt + q2 * dt * dt * dt / 3.0 * ramp + jerk2 * pow(dt, 6) / 36.0;
}
