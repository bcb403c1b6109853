/* simwander.c — a simulated clock's frequency wander (see simwander.h). */
#include "libsync/simwander.h"

#include <math.h>

#include <glib.h>

/* The walk of one seed: B and its integral at whole seconds 0..n-1. */
typedef struct {
	uint64_t seed;
	size_t n, cap;
	double *b, *ib;
} walk;

static GMutex g_lock;
static GHashTable *g_walks; /* seed (gint64 *) -> walk */

static uint64_t mix(uint64_t z)
{
	/* SplitMix64's finaliser (Steele, Lea, Flood 2014), as sim/rng.h. */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unit(uint64_t h)
{
	return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double sync_sim_gauss(uint64_t seed, uint64_t salt, uint64_t k)
{
	uint64_t h = mix(mix(seed ^ salt) + k * 0x9e3779b97f4a7c15ull);
	double u1 = unit(h), u2 = unit(mix(h + 0x9e3779b97f4a7c15ull));
	return sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2);
}

/* The k-th standard normal increment of the walk keyed by seed. */
static double gauss(uint64_t seed, uint64_t k)
{
	return sync_sim_gauss(seed, 0x5741ull, k);
}

static void walk_free(gpointer p)
{
	walk *w = p;
	g_free(w->b);
	g_free(w->ib);
	g_free(w);
}

/* The walk of `seed` covering second `k` + 1; call with g_lock held. */
static walk *walk_to(uint64_t seed, size_t k)
{
	if (!g_walks)
		g_walks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, walk_free);
	walk *w = g_hash_table_lookup(g_walks, &seed);
	if (!w) {
		w = g_new0(walk, 1);
		w->seed = seed;
		w->cap = 4096;
		w->b = g_new(double, w->cap);
		w->ib = g_new(double, w->cap);
		w->b[0] = w->ib[0] = 0;
		w->n = 1;
		g_hash_table_insert(g_walks, &w->seed, w);
	}
	while (w->n <= k + 1) {
		if (w->n == w->cap) {
			w->cap *= 2;
			w->b = g_renew(double, w->b, w->cap);
			w->ib = g_renew(double, w->ib, w->cap);
		}
		size_t i = w->n++;
		w->b[i] = w->b[i - 1] + gauss(seed, i - 1);
		w->ib[i] = w->ib[i - 1] + 0.5 * (w->b[i - 1] + w->b[i]); /* exact for a linear B */
	}
	return w;
}

int sync_wander_active(const sync_wander *w)
{
	return w && (w->rw_ppb != 0 || (w->temp_amp_c != 0 && w->tempco_ppm_per_c != 0));
}

/* q B(t) (sign 0) or q ∫0^t B (sign 1), in ppb resp. ppb s. */
static double walk_eval(const sync_wander *w, double t_s, int integral)
{
	if (w->rw_ppb == 0)
		return 0;
	double fk = floor(t_s);
	if (fk > 1e9) /* 30 years: past any run */
		fk = 1e9;
	size_t k = (size_t)fk;
	double u = t_s - fk;
	g_mutex_lock(&g_lock);
	walk *wk = walk_to(w->seed, k);
	double b0 = wk->b[k], b1 = wk->b[k + 1], ib = wk->ib[k];
	g_mutex_unlock(&g_lock);
	double v = integral ? ib + b0 * u + 0.5 * (b1 - b0) * u * u : b0 + (b1 - b0) * u;
	return w->rw_ppb * v;
}

/* The temperature cycle's angular frequency (rad/s) and its angle at the
 * epoch (rad): the cycle is sin(om t + ph). */
static double cycle_omega(const sync_wander *w, double *ph)
{
	double om = 2.0 * G_PI / w->temp_period_s;
	*ph = om * w->temp_phase_s;
	return om;
}

double sync_wander_phase_ns(const sync_wander *w, double t_s)
{
	if (!(t_s > 0) || !sync_wander_active(w))
		return 0;
	/* ppb * s = ns */
	double ns = walk_eval(w, t_s, 1);
	if (w->temp_amp_c != 0 && w->tempco_ppm_per_c != 0) {
		double ph, om = cycle_omega(w, &ph);
		ns += w->tempco_ppm_per_c * 1e3 * w->temp_amp_c * (cos(ph) - cos(om * t_s + ph)) / om;
	}
	return ns;
}

double sync_wander_freq(const sync_wander *w, double t_s)
{
	if (!(t_s > 0) || !sync_wander_active(w))
		return 0;
	double y = walk_eval(w, t_s, 0) * 1e-9;
	if (w->temp_amp_c != 0 && w->tempco_ppm_per_c != 0) {
		double ph, om = cycle_omega(w, &ph);
		y += w->tempco_ppm_per_c * 1e-6 * w->temp_amp_c * sin(om * t_s + ph);
	}
	return y;
}
