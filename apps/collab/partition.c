/* partition.c — two callers' detections told apart (see partition.h). */
#include "apps/collab/partition.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

/* Assignments weighed at most: 2^COLLAB_PARTITION_UNITS (a node with two
 * detections, or one, is one unit). */
#define COLLAB_PARTITION_UNITS 10
/* The least scale of the onsets' errors against their stated s.e. that
 * their own residuals may give (partition's decision): (1 ms / 5 ms)^2. */
#define COLLAB_PARTITION_SCALE_MIN 0.04

double collab_partition_chi2(const collab_part_obs *obs, int n, int which, double c_m_s, const double box[4], double z_m,
			     int *n_out)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		m += obs[i].side == which;
	*n_out = m;
	if (m < 4)
		return 0;
	double best = INFINITY;
	for (double x = box[0]; x <= box[1]; x += 1)
		for (double y = box[2]; y <= box[3]; y += 1) {
			double sw = 0, swe = 0, swe2 = 0;
			for (int i = 0; i < n; i++) {
				if (obs[i].side != which)
					continue;
				double dx = x - obs[i].pos_m[0], dy = y - obs[i].pos_m[1], dz = z_m - obs[i].pos_m[2];
				double e = obs[i].t_s - sqrt(dx * dx + dy * dy + dz * dz) / c_m_s, w = 1 / (obs[i].se_s * obs[i].se_s);
				sw += w;
				swe += w * e;
				swe2 += w * e * e;
			}
			double chi2 = swe2 - swe * swe / sw;
			if (chi2 < best)
				best = chi2;
		}
	return best;
}

/* Both groups' chi-square summed, and whether each is within its 99.9 %
 * point (*fits); -1 when a group has fewer than four. */
static double both(const collab_part_obs *obs, int n, double c_m_s, const double box[4], double z_m, int *fits)
{
	double sum = 0;
	*fits = 1;
	for (int which = 0; which < 2; which++) {
		int m;
		double chi2 = collab_partition_chi2(obs, n, which, c_m_s, box, z_m, &m);
		if (m < 4)
			return -1;
		sum += chi2;
		*fits &= chi2 <= gsl_cdf_chisq_Qinv(0.001, m - 3);
	}
	return sum;
}

int collab_partition_best(collab_part_obs *obs, int n, double c_m_s, const double box[4], double z_m,
			  double *chi2_before, double *chi2_after)
{
	if (n > COLLAB_PARTITION_MAX || n < 8 || !(c_m_s > 0))
		return -1;
	/* units: each node's detections (one or two, never two in one group) */
	int unit[COLLAB_PARTITION_MAX], first[COLLAB_PARTITION_MAX], nu = 0, doubles = 0;
	for (int i = 0; i < n; i++) {
		if (!(obs[i].se_s > 0) || (obs[i].side != 0 && obs[i].side != 1))
			return -1;
		unit[i] = -1;
		for (int j = 0; j < i; j++)
			if (obs[j].node == obs[i].node) {
				if (obs[j].side == obs[i].side || first[unit[j]] != j)
					return -1; /* a node twice in one group, or thrice */
				unit[i] = unit[j];
				doubles++;
			}
		if (unit[i] < 0) {
			unit[i] = nu;
			first[nu++] = i;
		}
	}
	if (doubles < 4 || nu > COLLAB_PARTITION_UNITS)
		return -1;
	int given[COLLAB_PARTITION_MAX], best_side[COLLAB_PARTITION_MAX], fits;
	for (int i = 0; i < n; i++)
		given[i] = obs[i].side;
	double before = both(obs, n, c_m_s, box, z_m, &fits), best = before;
	if (chi2_before)
		*chi2_before = before;
	if (chi2_after)
		*chi2_after = before;
	for (int i = 0; i < n; i++)
		best_side[i] = given[i];
	/* every assignment (unit u's bit flips its detections' groups; the
	 * first unit stays: the two groups' names do not matter), the best
	 * and the runner-up that fit */
	double runner = INFINITY;
	int dof = 0;
	best = INFINITY;
	for (unsigned mask = 0; mask < (1u << (nu - 1)); mask++) {
		for (int i = 0; i < n; i++)
			obs[i].side = unit[i] > 0 && (mask >> (unit[i] - 1) & 1) ? 1 - given[i] : given[i];
		double sum = both(obs, n, c_m_s, box, z_m, &fits);
		if (!(sum >= 0))
			continue;
		if (sum < best) {
			runner = fits ? best : runner;
			if (fits) {
				best = sum;
				dof = 0;
				for (int i = 0; i < n; i++) {
					best_side[i] = obs[i].side;
					dof++;
				}
				dof -= 6; /* two sources: x, y, emission each */
			} else {
				runner = fmin(runner, sum);
			}
		} else {
			runner = fmin(runner, sum);
		}
	}
	for (int i = 0; i < n; i++)
		obs[i].side = given[i];
	if (!isfinite(best))
		return 0;
	if (chi2_after)
		*chi2_after = best;
	/* The onsets' s.e. is their gate's, with its floor for a template's
	 * misfit: the errors of calls that are their template are far
	 * smaller, and every assignment fits about as well under it.  Their
	 * scale, from the best assignment's own residuals (its reduced
	 * chi-square, no smaller than (COLLAB_PARTITION_SD_FLOOR / the floor)^2,
	 * no larger than 1); the best must beat every other assignment by a
	 * likelihood ratio of 1000 under it, else nothing says which is right
	 * and the groups are left as they are. */
	double s2 = dof > 0 ? best / dof : 1;
	s2 = fmin(1, fmax(s2, COLLAB_PARTITION_SCALE_MIN));
	if ((runner - best) / s2 < 2 * log(1000))
		return 0;
	for (int i = 0; i < n; i++)
		obs[i].side = best_side[i];
	int same = 1;
	for (int i = 0; i < n; i++)
		same &= best_side[i] == given[i];
	return same ? 0 : 1;
}
