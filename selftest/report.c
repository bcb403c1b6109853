/* report.c — the self-test's table (see report.h). */
#include "selftest/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int failures;
static char label[128];

void report_begin(const char *l)
{
	g_strlcpy(label, l, sizeof label);
	failures = 0;
	printf("selftest: == %s\n", label);
	printf("selftest: %-34s | %-34s | %-46s | %s\n", "item", "measured", "stated / criterion", "verdict");
}

void report_row(const char *item, const char *measured, const char *stated, report_verdict v)
{
	static const char *names[] = {"", "ok", "FAIL"};
	printf("selftest: %-34s | %-34s | %-46s | %s\n", item, measured, stated, names[v]);
	if (v == REPORT_FAIL)
		failures++;
}

void report_rowf(const char *item, report_verdict v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	char *bar = strchr(s, '|');
	if (bar)
		*bar = 0;
	report_row(item, s, bar ? bar + 1 : "", v);
	g_free(s);
}

#define RATE_BOUND_SE 4.0

void report_status(const tools_status *s0, const tools_status *s9, const char *expect, int nominal, int xruns)
{
	int kp = strcmp(s9->source, "alsa") != 0;
	report_rowf("timestamp source", !expect || !strcmp(expect, s9->source) ? REPORT_PASS : REPORT_FAIL, "%s|%s%s",
		    s9->source, expect ? "expected " : "any", expect ? expect : "");
	if (kp)
		report_rowf("timestamp records", s9->lost == 0 && s9->malformed == 0 ? REPORT_PASS : REPORT_FAIL,
			    "%" G_GUINT64_FORMAT " (+%" G_GUINT64_FORMAT "), lost %" G_GUINT64_FORMAT ", malformed %" G_GUINT64_FORMAT
			    "|none lost, none malformed",
			    s9->records, s9->records - s0->records, s9->lost, s9->malformed);
	else
		report_rowf("timestamp records", REPORT_INFO, "%" G_GUINT64_FORMAT " ALSA observations|systematic term %.3f us stated",
			    s9->records, s9->systematic_us);
	if (kp && s9->updated)
		report_rowf("records' bracket p50/p99/max", REPORT_INFO,
			    "%.1f / %.1f / %.1f us|entry to after the hw_ptr update, %" G_GUINT64_FORMAT " records", s9->bracket_p50_us,
			    s9->bracket_p99_us, s9->bracket_max_us, s9->updated);
	report_rowf("overruns", s9->xruns - s0->xruns == (uint64_t)xruns ? REPORT_PASS : REPORT_FAIL,
		    "%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " frames lost|%d provoked", s9->xruns - s0->xruns,
		    s9->frames_lost - s0->frames_lost, xruns);
	/* The lower envelope's error is heavier-tailed than a normal one: on
	 * delays like these records' (qemu), 1.7 % of its rates lie beyond 3
	 * stated s.e. and 0.43 % beyond 4 (docs/clocks.md §4, "Sparse floors"),
	 * so the bound is its measured 99.6 % point, 4 s.e. */
	double dev_ppm = (s9->fit_rate / s9->rate - 1) * 1e6;
	report_rowf("rate vs MONOTONIC_RAW", nominal ? (fabs(dev_ppm) <= RATE_BOUND_SE * s9->rate_se_ppm ? REPORT_PASS : REPORT_FAIL) : REPORT_INFO,
		    "%.6f Hz (%+.3f ppm)|s.e. %.4f ppm%s", s9->fit_rate, dev_ppm, s9->rate_se_ppm,
		    nominal ? "; nominal within 4 s.e." : "");
	report_rowf("fit residual (RMS, lower envelope)", REPORT_INFO, "%.1f ns|n=%u, segment %u", s9->residual_ns, s9->fit_n,
		    s9->segment);
	report_rowf("wakeup latency p50/p99/max", REPORT_INFO, "%.1f / %.1f / %.1f us|rt=%s", s9->lat_p50_us, s9->lat_p99_us,
		    s9->lat_max_us, s9->rt ? "yes" : "no");
}

int report_end(void)
{
	if (failures)
		printf("CHORUS-SELFTEST: FAIL %s (%d check%s failed)\n", label, failures, failures == 1 ? "" : "s");
	else
		printf("CHORUS-SELFTEST: PASS %s\n", label);
	return failures ? 1 : 0;
}
