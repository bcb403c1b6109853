/* now.c — reading clocks, real or simulated (see now.h). */
#include "libsync/now.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <inttypes.h>
#include <sys/timex.h>

#include <glib.h>

static int g_state; /* 0 = not read, 1 = real, 2 = simulated */
static sync_simclock g_sim;
static sync_simutc g_utc;      /* kind none: the realtime clock follows g_sim */
static int64_t g_rt_minus_raw; /* host realtime - raw at init, ns */

static int64_t host_read(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int sync_simclock_parse(const char *text, sync_simclock *out, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	gchar **f = g_strsplit(text, ",", -1);
	guint n = g_strv_length(f);
	int rc = -EINVAL;
	sync_simclock c = {0};
	char *end;
	if (n != 2 && n != 8 && n != 9) {
		*why = "CHORUS_SIM_CLOCK must be SKEW_PPM,OFFSET_NS or SKEW_PPM,OFFSET_NS,RW_PPB,TEMP_AMP_C,"
		       "TEMP_PERIOD_S,TEMPCO_PPM_PER_C,SEED,EPOCH_NS[,TEMP_PHASE_S]";
		goto out;
	}
	errno = 0;
	c.skew_ppm = strtod(f[0], &end);
	if (end == f[0] || *end || errno || !isfinite(c.skew_ppm) || fabs(c.skew_ppm) > 1e5) {
		*why = "CHORUS_SIM_CLOCK must be SKEW_PPM,OFFSET_NS with |skew| <= 1e5 ppm";
		goto out;
	}
	errno = 0;
	c.offset_ns = strtoll(f[1], &end, 10);
	if (end == f[1] || *end || errno) {
		*why = "CHORUS_SIM_CLOCK offset must be an integer number of ns";
		goto out;
	}
	if (n >= 8) {
		double v[4];
		for (int i = 0; i < 4; i++) {
			errno = 0;
			v[i] = strtod(f[2 + i], &end);
			if (end == f[2 + i] || *end || errno || !isfinite(v[i]) || fabs(v[i]) > 1e9) {
				*why = "CHORUS_SIM_CLOCK wander fields (RW_PPB,TEMP_AMP_C,TEMP_PERIOD_S,TEMPCO_PPM_PER_C) "
				       "must be finite numbers";
				goto out;
			}
		}
		if (v[0] < 0 || (v[1] != 0 && !(v[2] > 0))) {
			*why = "CHORUS_SIM_CLOCK: RW_PPB must be >= 0 and TEMP_PERIOD_S > 0 with a temperature cycle";
			goto out;
		}
		c.wander = (sync_wander){.rw_ppb = v[0], .temp_amp_c = v[1], .temp_period_s = v[2], .tempco_ppm_per_c = v[3]};
		errno = 0;
		c.wander.seed = strtoull(f[6], &end, 10);
		if (end == f[6] || *end || errno) {
			*why = "CHORUS_SIM_CLOCK seed must be an unsigned integer";
			goto out;
		}
		errno = 0;
		c.epoch_ns = strtoll(f[7], &end, 10);
		if (end == f[7] || *end || errno) {
			*why = "CHORUS_SIM_CLOCK epoch must be an integer number of ns";
			goto out;
		}
		if (n == 9) {
			errno = 0;
			c.wander.temp_phase_s = strtod(f[8], &end);
			if (end == f[8] || *end || errno || !isfinite(c.wander.temp_phase_s) ||
			    fabs(c.wander.temp_phase_s) > 1e9) {
				*why = "CHORUS_SIM_CLOCK TEMP_PHASE_S must be a finite number of s";
				goto out;
			}
		}
	}
	*out = c;
	rc = 0;
out:
	g_strfreev(f);
	return rc;
}

char *sync_simclock_format(const sync_simclock *c, char *buf, unsigned len)
{
	if (!sync_wander_active(&c->wander))
		snprintf(buf, len, "%.17g,%" PRId64, c->skew_ppm, c->offset_ns);
	else
		snprintf(buf, len, "%.17g,%" PRId64 ",%.17g,%.17g,%.17g,%.17g,%" PRIu64 ",%" PRId64 ",%.17g", c->skew_ppm,
			 c->offset_ns, c->wander.rw_ppb, c->wander.temp_amp_c, c->wander.temp_period_s,
			 c->wander.tempco_ppm_per_c, c->wander.seed, c->epoch_ns, c->wander.temp_phase_s);
	return buf;
}

/* The wander's phase at host raw time h, ns. */
static double wander_ns(const sync_simclock *c, int64_t h)
{
	return sync_wander_active(&c->wander) ? sync_wander_phase_ns(&c->wander, (double)(h - c->epoch_ns) * 1e-9) : 0;
}

int64_t sync_simclock_apply(const sync_simclock *c, int64_t h)
{
	return h + c->offset_ns + (int64_t)llround((double)h * c->skew_ppm * 1e-6 + wander_ns(c, h));
}

int64_t sync_simclock_invert(const sync_simclock *c, int64_t node_ns)
{
	/* h = (node - off) / (1 + s); then correction steps (the wander's rate
	 * is far below 1, so each gains several digits). */
	int64_t h = (int64_t)llround((double)(node_ns - c->offset_ns) / (1.0 + c->skew_ppm * 1e-6));
	for (int i = 0; i < 3; i++) {
		int64_t d = node_ns - sync_simclock_apply(c, h);
		if (!d)
			break;
		h += d;
	}
	return h;
}

int sync_now_init(const char **why)
{
	const char *env = getenv("CHORUS_SIM_CLOCK"), *utc = getenv("CHORUS_SIM_UTC");
	if (g_state)
		return 0;
	int sim_clock = env && *env;
	sync_simutc u = {.kind = SYNC_SIMUTC_NONE};
	if (utc && *utc && sync_simutc_parse(utc, &u, why) < 0)
		return -EINVAL;
	if (!sim_clock && u.kind == SYNC_SIMUTC_NONE) {
		g_state = 1;
		return 0;
	}
	sync_simclock c = {0}; /* only CHORUS_SIM_UTC: the host's raw clock */
	if (sim_clock && sync_simclock_parse(env, &c, why) < 0)
		return -EINVAL;
	g_sim = c;
	g_utc = u;
	/* Tightest of a few raw-realtime-raw sandwiches. */
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t a = host_read(CLOCK_MONOTONIC_RAW);
		int64_t r = host_read(CLOCK_REALTIME);
		int64_t b = host_read(CLOCK_MONOTONIC_RAW);
		if (b - a < best) {
			best = b - a;
			g_rt_minus_raw = r - (a + (b - a) / 2);
		}
	}
	g_state = 2;
	return 0;
}

static void ensure_init(void)
{
	const char *why = NULL;
	if (!g_state && sync_now_init(&why) < 0) {
		fprintf(stderr, "chorus: %s\n", why);
		abort();
	}
}

int sync_now_simulated(void)
{
	ensure_init();
	return g_state == 2;
}

int64_t sync_host_to_node(sync_kind kind, int64_t host_ns)
{
	ensure_init();
	if (g_state != 2)
		return host_ns;
	if (kind == SYNC_KIND_CPU)
		return sync_simclock_apply(&g_sim, host_ns);
	if (kind == SYNC_KIND_REALTIME && g_utc.kind != SYNC_SIMUTC_NONE)
		return host_ns + (int64_t)llround(sync_simutc_error_at_raw(&g_utc, host_ns - g_rt_minus_raw));
	if (kind == SYNC_KIND_REALTIME)
		return host_ns + (int64_t)llround((double)(host_ns - g_rt_minus_raw) * g_sim.skew_ppm * 1e-6 +
						  wander_ns(&g_sim, host_ns - g_rt_minus_raw));
	return host_ns;
}

int64_t sync_node_to_host_cpu(int64_t node_ns)
{
	ensure_init();
	return g_state == 2 ? sync_simclock_invert(&g_sim, node_ns) : node_ns;
}

int64_t sync_now(sync_kind kind)
{
	if (kind == SYNC_KIND_CPU)
		return sync_host_to_node(kind, host_read(CLOCK_MONOTONIC_RAW));
	if (kind == SYNC_KIND_REALTIME)
		return sync_host_to_node(kind, host_read(CLOCK_REALTIME));
	return INT64_MIN;
}

int sync_utc_status(sync_utc *out)
{
	const char *why = NULL;
	*out = (sync_utc){.source = "none"};
	if (!g_state && sync_now_init(&why) < 0) {
		out->why = why;
		return -EINVAL;
	}
	if (g_state == 2 && g_utc.kind != SYNC_SIMUTC_NONE) {
		*out = (sync_utc){.synced = 1,
				  .est_error_ns = g_utc.sigma_ns,
				  .max_error_ns = 4 * g_utc.sigma_ns,
				  .source = g_utc.kind == SYNC_SIMUTC_GPS ? "simulated gps" : "simulated ntp"};
		return 0;
	}
	if (g_state == 2) {
		out->source = "simulated none";
		out->why = "the scenario gives this node no UTC source";
		return 0;
	}
	/* modes = 0: a read, allowed to anyone. */
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	out->source = "adjtimex";
	int st = adjtimex(&tx);
	if (st < 0) {
		int e = errno;
		out->why = "adjtimex() failed (the kernel's NTP state cannot be read here)";
		return -(e ? e : EIO);
	}
	out->est_error_ns = (double)tx.esterror * 1e3;
	out->max_error_ns = (double)tx.maxerror * 1e3;
	if (tx.status & STA_UNSYNC) {
		out->why = "the kernel says STA_UNSYNC (no NTP daemon has synchronised the clock)";
		return 0;
	}
	if (st == TIME_ERROR) {
		out->why = "the kernel says TIME_ERROR (STA_CLOCKERR, or a PPS signal the discipline uses is missing "
			   "or noisy)";
		return 0;
	}
	out->synced = 1;
	if (!(out->est_error_ns > 0)) /* systemd-timesyncd, linuxptp: esterror left 0 (now.h) */
		out->est_error_ns = out->max_error_ns > 0 ? out->max_error_ns / 3 : 1e6;
	if (out->max_error_ns < out->est_error_ns)
		out->max_error_ns = out->est_error_ns;
	return 0;
}
