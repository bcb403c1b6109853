/* xrun.c — the provoked overrun (see xrun.h). */
#include "selftest/xrun.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#include "selftest/report.h"

/* The stated time of audiod frame f of device k (a one-frame request by
 * frames).  0, or -1 with the reason in why. */
static int frame_time(int k, int64_t f, tools_reply *r, char *why, size_t len)
{
	if (tools_get(k, NULL, f, f + 1, r, why, len) < 0)
		return -1;
	tools_reply_clear(r);
	if (!r->have_t0) {
		g_snprintf(why, len, "audiod stated no time for frame %" G_GINT64_FORMAT, f);
		return -1;
	}
	return 0;
}

double xrun_provoke(int k, int pid, int stop_ms, const tools_status *s0)
{
	char why[512] = "";
	tools_reply a, b;
	tools_status s1, s2;
	if (stop_ms <= 0)
		stop_ms = (int)(3000.0 * s0->buffer / s0->rate) + 50;
	if (tools_status_read(k, &s1, why, sizeof why) < 0 ||
	    frame_time(k, (int64_t)s1.captured - s1.rate / 4, &a, why, sizeof why) < 0) {
		report_row("xrun", "not provoked", why, REPORT_FAIL);
		return -1;
	}
	if (kill(pid, SIGSTOP) < 0) {
		report_row("xrun", "not provoked", g_strerror(errno), REPORT_FAIL);
		return -1;
	}
	g_usleep((gulong)stop_ms * 1000);
	if (kill(pid, SIGCONT) < 0) {
		report_row("xrun", "cannot resume audiod", g_strerror(errno), REPORT_FAIL);
		return -1;
	}
	g_usleep(2500000);
	if (tools_status_read(k, &s2, why, sizeof why) < 0 ||
	    frame_time(k, (int64_t)s2.captured - s2.rate / 2, &b, why, sizeof why) < 0) {
		report_row("xrun", "no status after", why, REPORT_FAIL);
		return -1;
	}
	report_rowf("xrun: audiod stopped", REPORT_INFO, "%d ms|buffer %.0f ms; SIGSTOP, SIGCONT", stop_ms,
		    1000.0 * s0->buffer / s0->rate);
	report_rowf("xrun: on the status", s2.xruns == s1.xruns + 1 && s2.frames_lost > s1.frames_lost ? REPORT_PASS : REPORT_FAIL,
		    "%" G_GUINT64_FORMAT " xrun, %" G_GUINT64_FORMAT " frames lost|1 xrun, frames lost > 0",
		    s2.xruns - s1.xruns, s2.frames_lost - s1.frames_lost);
	/* Frame b's stated time against the pre-overrun line through frame a:
	 * if the restarted run's index were off by d frames, b's time would
	 * be d periods off the line. */
	double dt = sync_tval_diff(b.t0, a.t0.i) - a.t0.f - (double)(b.first - a.first) * a.period;
	/* The conversions' errors, and the restart's own (audiod states the
	 * s.e. of the restarted run's first frame on its status). */
	double se = sqrt(a.t0_se * a.t0_se + b.t0_se * b.t0_se + pow((double)(b.first - a.first) * a.period_se, 2));
	double se_f = hypot(se / a.period, s2.restart_se_frames);
	report_rowf("xrun: index on real time", fabs(dt / a.period) <= 3 * se_f ? REPORT_PASS : REPORT_FAIL,
		    "%+.3f frames (%+.2f us)|s.e. %.3f fr (restart %.3f); within 3 s.e.", dt / a.period, dt / 1e3, se_f,
		    s2.restart_se_frames);
	return se_f;
}
