/* devtime.c — a capture device's frames and the clocks (see devtime.h). */
#include "audiod/devtime.h"

#include <errno.h>
#include <math.h>

int devtime_to_frame(const devtime *dt, sync_clock_id clock, int64_t t, sync_tval *frame, double *var, char *why,
		     size_t len)
{
	char buf[256];
	sync_tval cpu = sync_tval_of(t);
	double var_cpu = 0;
	if (sync_clock_equal(clock, dt->audio_clock)) {
		*frame = cpu;
		*var = 0;
		return 0;
	}
	if (!sync_clock_equal(clock, dt->cpu_clock)) {
		sync_graph_result r;
		int rc = dt->clocks ? sync_client_convert(dt->clocks, clock, dt->cpu_clock, cpu, &r, buf, sizeof buf)
				    : -ENOLINK;
		if (rc < 0) {
			g_snprintf(why, len, "cannot convert to %s: %s", "cpu", dt->clocks ? buf : "no syncd");
			return rc;
		}
		cpu = r.value;
		var_cpu = r.var;
	}
	double var_f;
	int rc = timehist_invert(dt->th, cpu, frame, &var_f, buf, sizeof buf);
	if (rc < 0) {
		g_snprintf(why, len, "cpu time %" G_GINT64_FORMAT " to frame: %s", cpu.i, buf);
		return rc;
	}
	double fpn = dt->rate_hz * 1e-9; /* frames per ns */
	*var = var_f + var_cpu * fpn * fpn + dt->sys_ns * dt->sys_ns * fpn * fpn;
	return 0;
}

/* The first frame the device's own history converts (INT64_MAX with no
 * fit yet). */
static int64_t history_start(const timehist *th)
{
	sync_conv c;
	uint32_t seg;
	int64_t x = timehist_current(th, &c) == 0 ? c.xmin : INT64_MAX;
	for (size_t k = 0; k < timehist_npieces(th); k++)
		if (timehist_piece(th, k, &c, &seg) == 0)
			x = MIN(x, c.xmin);
	return x;
}

/* frame -> cpu with the device's own history, not syncd's pair: that holds
 * only the current run's fit, whose line extrapolated back across a
 * restart is off by the restart's index error, and which refuses frames
 * far outside its range (the VM test's "click by time" said t0=none). */
int devtime_of_frame(const devtime *dt, sync_clock_id clock, int64_t frame, sync_tval *t, double *var, char *why,
		     size_t len)
{
	char buf[160];
	if (sync_clock_equal(clock, dt->audio_clock)) {
		*t = sync_tval_of(frame);
		*var = 0;
		return 0;
	}
	double v;
	int rc = timehist_convert(dt->th, sync_tval_of(frame), t, &v, buf, sizeof buf);
	if (rc < 0 && frame < history_start(dt->th) && dt->clocks) {
		sync_graph_result r;
		if (sync_client_convert(dt->clocks, dt->audio_clock, clock, sync_tval_of(frame), &r, buf, sizeof buf) == 0) {
			*t = r.value;
			*var = r.var;
			return 0;
		}
	}
	if (rc < 0) {
		g_snprintf(why, len, "frame %" G_GINT64_FORMAT " to cpu: %s", frame, buf);
		return rc;
	}
	*var = v + dt->sys_ns * dt->sys_ns;
	if (sync_clock_equal(clock, dt->cpu_clock))
		return 0;
	sync_graph_result r;
	rc = dt->clocks ? sync_client_convert(dt->clocks, dt->cpu_clock, clock, *t, &r, buf, sizeof buf) : -ENOLINK;
	if (rc < 0) {
		g_snprintf(why, len, "cpu to the requested clock: %s", dt->clocks ? buf : "no syncd");
		return rc;
	}
	*t = r.value;
	*var += r.var;
	return 0;
}

int devtime_append_first(const devtime *dt, sync_clock_id clock, int64_t first, GString *out, char *why, size_t len)
{
	char cn[SYNC_CLOCK_NAME_MAX];
	sync_tval a, b;
	double va, vb;
	sync_conv c;
	sync_clock_format(clock, cn, sizeof cn);
	int64_t step = dt->rate_hz;
	int ok = devtime_of_frame(dt, clock, first, &a, &va, why, len) == 0;
	if (ok && devtime_of_frame(dt, clock, first + step, &b, &vb, why, len) < 0) {
		step = -step;
		ok = devtime_of_frame(dt, clock, first + step, &b, &vb, why, len) == 0;
	}
	if (ok && timehist_current(dt->th, &c) < 0) {
		g_strlcpy(why, "no audio fit yet", len);
		ok = 0;
	}
	if (!ok) {
		g_string_append_printf(out, " t0_clock=%s t0=none", cn);
		return -EAGAIN;
	}
	double period = ((double)(b.i - a.i) + b.f - a.f) / (double)step;
	/* i + f as a decimal with three places (|f| <= 0.5, so borrow). */
	int64_t ti = a.i;
	long milli = lround(a.f * 1000.0);
	if (milli < 0) {
		ti--;
		milli += 1000;
	}
	if (milli >= 1000) {
		ti++;
		milli -= 1000;
	}
	g_string_append_printf(out, " t0_clock=%s t0=%" G_GINT64_FORMAT ".%03ld t0_se=%.4g period=%.6f period_se=%.3g", cn,
			       ti, milli, sqrt(va), period, sqrt(c.var_s));
	return 0;
}
