/* simutc.c — a simulated disciplined realtime clock's error (see simutc.h). */
#include "libsync/simutc.h"

#include "libsync/simwander.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#define GRID_PER_TAU 16 /* grid step h = tau / 16 */
#define BLOCK 64        /* grid values computed together */
#define MEMORY 384      /* innovations in each block's first value: a^384 = e^-24 */
#define SLOTS 16        /* per-thread cache of blocks */

/* SplitMix64's finaliser (as simwander.c), for the cache's slots. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The innovation of grid index k (any sign) of the process keyed by seed
 * (salt of its own: the UTC error of a seed shares no draws with its walk). */
static double gauss(uint64_t seed, int64_t k)
{
	return sync_sim_gauss(seed, 0x555443ull, (uint64_t)k);
}

typedef struct {
	int valid;
	uint64_t seed;
	int64_t block;
	double x[BLOCK];
} slot;

static _Thread_local slot t_cache[SLOTS];

/* Block b of the unit process (sigma 1) of seed: grid values 64 b .. 64 b + 63.
 * The first is the recursion run from 0 over the MEMORY innovations before
 * and at it (the moving-average sum truncated at weight e^-24), the others
 * continue the recursion: a pure function of (seed, b). */
static const double *block_of(uint64_t seed, int64_t b)
{
	slot *s = &t_cache[(mix(seed) + (uint64_t)b) % SLOTS];
	if (s->valid && s->seed == seed && s->block == b)
		return s->x;
	const double a = exp(-1.0 / GRID_PER_TAU), c = sqrt(1.0 - a * a);
	int64_t k0 = b * BLOCK;
	double v = 0;
	for (int i = MEMORY - 1; i >= 0; i--)
		v = a * v + c * gauss(seed, k0 - i);
	s->x[0] = v;
	for (int j = 1; j < BLOCK; j++)
		s->x[j] = a * s->x[j - 1] + c * gauss(seed, k0 + j);
	s->valid = 1;
	s->seed = seed;
	s->block = b;
	return s->x;
}

/* Grid value k of the unit process. */
static double knot(uint64_t seed, int64_t k)
{
	int64_t b = k >= 0 ? k / BLOCK : -((-k + BLOCK - 1) / BLOCK);
	return block_of(seed, b)[k - b * BLOCK];
}

/* The four grid values around t and t's place between the middle two:
 * p[0..3] = x[k-1..k+2], *u in [0, 1).  0 when there is nothing to do. */
static int around(const sync_simutc *u, double t_s, double p[4], double *frac)
{
	if (!u || u->kind == SYNC_SIMUTC_NONE || !(u->tau_s > 0) || !isfinite(t_s))
		return 0;
	double x = t_s * GRID_PER_TAU / u->tau_s;
	if (x > 1e15) /* far past any run; keeps k an exact integer */
		x = 1e15;
	else if (x < -1e15)
		x = -1e15;
	double fk = floor(x);
	int64_t k = (int64_t)fk;
	*frac = x - fk;
	for (int i = 0; i < 4; i++)
		p[i] = knot(u->seed, k - 1 + i);
	return 1;
}

double sync_simutc_error_ns(const sync_simutc *u, double t_s)
{
	double p[4], s;
	if (!around(u, t_s, p, &s))
		return 0;
	/* Catmull–Rom: through p1 at s = 0 and p2 at s = 1 with slopes
	 * (p2 - p0) / 2 and (p3 - p1) / 2, so the rate is continuous. */
	double v = 2 * p[1] + (p[2] - p[0]) * s + (2 * p[0] - 5 * p[1] + 4 * p[2] - p[3]) * s * s +
		   (-p[0] + 3 * p[1] - 3 * p[2] + p[3]) * s * s * s;
	return u->sigma_ns * 0.5 * v;
}

double sync_simutc_rate(const sync_simutc *u, double t_s)
{
	double p[4], s;
	if (!around(u, t_s, p, &s))
		return 0;
	double d = (p[2] - p[0]) + 2 * (2 * p[0] - 5 * p[1] + 4 * p[2] - p[3]) * s +
		   3 * (-p[0] + 3 * p[1] - 3 * p[2] + p[3]) * s * s;
	return u->sigma_ns * 0.5 * d * GRID_PER_TAU / u->tau_s;
}

double sync_simutc_error_at_raw(const sync_simutc *u, int64_t host_raw_ns)
{
	return sync_simutc_error_ns(u, (double)(host_raw_ns - u->epoch_ns) * 1e-9);
}

void sync_simutc_defaults(sync_simutc_kind kind, double *sigma_ns, double *tau_s)
{
	double s = 0, t = 0;
	if (kind == SYNC_SIMUTC_NTP)
		s = 1e6, t = 3600;
	else if (kind == SYNC_SIMUTC_GPS)
		s = 1e3, t = 60;
	if (sigma_ns)
		*sigma_ns = s;
	if (tau_s)
		*tau_s = t;
}

const char *sync_simutc_kind_name(sync_simutc_kind kind)
{
	switch (kind) {
	case SYNC_SIMUTC_NONE:
		return "none";
	case SYNC_SIMUTC_NTP:
		return "ntp";
	case SYNC_SIMUTC_GPS:
		return "gps";
	}
	return "?";
}

/* A finite real in (0, 1e12] from the whole of s. */
static int positive(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = g_ascii_strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || !(v > 0) || v > 1e12)
		return 0;
	*out = v;
	return 1;
}

int sync_simutc_parse(const char *text, sync_simutc *out, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (text && !strcmp(text, "none")) {
		*out = (sync_simutc){.kind = SYNC_SIMUTC_NONE};
		return 0;
	}
	gchar **f = g_strsplit(text ? text : "", ",", -1);
	int rc = -EINVAL;
	sync_simutc u = {0};
	char *end;
	if (g_strv_length(f) != 5) {
		*why = "CHORUS_SIM_UTC must be none or KIND,SIGMA_NS,TAU_S,SEED,EPOCH_NS (KIND ntp or gps)";
		goto out;
	}
	if (!strcmp(f[0], "ntp"))
		u.kind = SYNC_SIMUTC_NTP;
	else if (!strcmp(f[0], "gps"))
		u.kind = SYNC_SIMUTC_GPS;
	else {
		*why = "CHORUS_SIM_UTC: KIND must be ntp or gps";
		goto out;
	}
	if (!positive(f[1], &u.sigma_ns)) {
		*why = "CHORUS_SIM_UTC: SIGMA_NS must be a number > 0 (and <= 1e12)";
		goto out;
	}
	if (!positive(f[2], &u.tau_s)) {
		*why = "CHORUS_SIM_UTC: TAU_S must be a number > 0 (and <= 1e12)";
		goto out;
	}
	errno = 0;
	u.seed = strtoull(f[3], &end, 10);
	if (end == f[3] || *end || errno || f[3][0] == '-' || f[3][0] == '+') {
		*why = "CHORUS_SIM_UTC: SEED must be an unsigned integer";
		goto out;
	}
	errno = 0;
	u.epoch_ns = strtoll(f[4], &end, 10);
	if (end == f[4] || *end || errno) {
		*why = "CHORUS_SIM_UTC: EPOCH_NS must be an integer number of ns";
		goto out;
	}
	*out = u;
	rc = 0;
out:
	g_strfreev(f);
	return rc;
}

char *sync_simutc_format(const sync_simutc *u, char *buf, unsigned len)
{
	if (u->kind == SYNC_SIMUTC_NONE) {
		snprintf(buf, len, "none");
		return buf;
	}
	/* g_ascii_dtostr: the shortest text that reads back exactly, with a
	 * '.' whatever the locale. */
	char s[G_ASCII_DTOSTR_BUF_SIZE], t[G_ASCII_DTOSTR_BUF_SIZE];
	snprintf(buf, len, "%s,%s,%s,%" PRIu64 ",%" PRId64, sync_simutc_kind_name(u->kind),
		 g_ascii_dtostr(s, sizeof s, u->sigma_ns), g_ascii_dtostr(t, sizeof t, u->tau_s), u->seed, u->epoch_ns);
	return buf;
}
