/* loopback.c — the known-signal self-test (see loopback.h). */
#include "selftest/loopback.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "selftest/compare.h"
#include "selftest/player.h"
#include "selftest/report.h"
#include "selftest/xrun.h"

/* The signal in audiod's format: a click every half second, off the
 * period grid. */
static int make_sig(const loopback_cfg *cfg, const tools_status *s0, sig_params *sig)
{
	sig->seed = (uint64_t)cfg->seed;
	sig->channels = s0->channels;
	sig->fmt = snd_pcm_format_value(s0->format);
	sig->click_every = s0->rate / 2;
	sig->click_at = s0->rate / 4 + 7;
	return sig_sample_bytes(sig) ? 0 : -1;
}

/* 1 when sample 0 of frame i of a reply is a click (pure). */
static int is_click(const sig_params *sig, const tools_reply *r, int64_t i)
{
	int32_t v = r->samples[i * r->channels];
	return (sig->fmt == SND_PCM_FORMAT_S32_LE ? v >> 16 : sig->fmt == SND_PCM_FORMAT_S24_3LE ? v >> 8
												 : v) == 29491;
}

/* The frame of the first click in a reply, -1 when none (pure). */
static int64_t find_click(const sig_params *sig, const tools_reply *r)
{
	for (int64_t i = 0; i < r->nframes; i++)
		if (is_click(sig, r, i))
			return r->first + i;
	return -1;
}

/* A click's stated s.e. in frames: the reply's own (audiod's global ->
 * frame) with the player's fit (se_p, ns) and synctool's cpu -> global
 * conversion (se_c, ns) (pure). */
static double click_se(const tools_reply *r, double se_p, double se_c)
{
	return sqrt(r->se_frames * r->se_frames + (se_p * se_p + se_c * se_c) / (r->period * r->period));
}

/* Ask for each click by global time, predicted from the player's clock,
 * and find it in the reply.  Each click's error e (frames: where it is
 * minus where audiod's conversion puts the player's time of it) has a
 * stated s.e. (the reply's se_frames, the player's fit, synctool's
 * conversion).  Their mean is the offset of the two clocks: each lower
 * envelope sits on its own stream's least interrupt latency, a floor no
 * fit can see (docs/audiod.md §3), so the (weighted) mean is measured and
 * reported, not tested.  Each click must be in the data at its frame, and
 * the clicks' scatter about their group's mean is tested against their
 * stated s.e. together, by coverage: sum z^2 (z = (e - mean) / s.e.) is
 * chi-square with (clicks - groups) degrees of freedom when the s.e. are
 * right, and fails beyond its 99.9 % point (a per-click 3 s.e. test would
 * fail 2-3 % of good runs of ten clicks; under qemu the errors are also
 * heavy-tailed: RMS z 0.63 over 298 clicks, yet 1 % beyond 3, docs/audiod.md).  The
 * frames after the last gap are where the signal continued (shift), and
 * their clicks form a group of their own: the restarted run's fit is a new
 * segment, on its own least latency (in the VM the floors of two segments
 * differed by up to 0.1 ms).  Rows per click; the mean offset of the first
 * group into *delta_ns +- *delta_se_ns (the mean stated s.e.: the clicks
 * share their fits).  Returns the clicks measured. */
#define MAX_CLICKS 16
static int check_clicks(const loopback_cfg *cfg, const sig_params *sig, player *pl, int64_t played,
			const cmp_capture *cap, const cmp_result *cr, unsigned rate, double *delta_ns, double *delta_se_ns)
{
	char why[512];
	int n = 0, untimed = 0;
	double e[MAX_CLICKS], se[MAX_CLICKS], per = 1e9 / rate;
	int64_t c[MAX_CLICKS], at[MAX_CLICKS];
	int64_t last_gap_end = cap->ngaps ? cap->gaps[2 * cap->ngaps - 1] : INT64_MAX;
	for (int64_t p = sig->click_at; p < played - rate / 2 && n < MAX_CLICKS; p += sig->click_every) {
		int64_t ck = p + cr->offset;
		if (ck >= last_gap_end)
			ck += cr->shift;
		if (p < rate || cmp_in_gap(cap, ck) || cmp_in_gap(cap, ck - rate) || cmp_in_gap(cap, ck + rate / 2))
			continue;
		double t_cpu, se_p, se_c;
		sync_tval tg;
		if (player_time(pl, p, &t_cpu, &se_p, why, sizeof why) < 0) {
			untimed++; /* e.g. before the player's fit had settled */
			continue;
		}
		sync_tval tc = {(int64_t)floor(t_cpu), t_cpu - floor(t_cpu)};
		if (tools_convert("cpu", "global", tc, &tg, &se_c, why, sizeof why) < 0) {
			report_row("click by time", "no global time", why, REPORT_FAIL);
			continue;
		}
		/* The frames around the click's converted time: 16 periods each
		 * side; when the click is not among them and the conversion's
		 * stated s.e. is wider (young fits after the gap state tens of
		 * frames), again over 6 of its s.e. each side, so that a click
		 * within its stated error is found (one audioget more, only
		 * then: each is a process, heavy in the VM). */
		tools_reply r;
		int got = tools_get(cfg->device, "global", tg.i - (int64_t)(16 * per), tg.i + (int64_t)(16 * per), &r,
				    why, sizeof why);
		double hw = got == 0 && r.have_t0 && find_click(sig, &r) < 0 ? 6 * click_se(&r, se_p, se_c) : 0;
		if (hw > 16) {
			tools_reply_clear(&r);
			got = tools_get(cfg->device, "global", tg.i - (int64_t)(hw * per), tg.i + (int64_t)(hw * per), &r,
					why, sizeof why);
		}
		if (got == 0 && !r.have_t0)
			g_snprintf(why, sizeof why, "frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]: no time stated for the first frame (audiod's log says why)",
				   (gint64)r.first, (gint64)r.last);
		if (got < 0 || !r.have_t0) {
			report_row("click by time", got < 0 ? "request refused" : "no time in the reply", why, REPORT_FAIL);
			tools_reply_clear(&r);
			continue;
		}
		/* Where audiod's conversion puts the player's time of the
		 * click, in frames, and where the click is. */
		double x = (double)r.first + (sync_tval_diff(tg, r.t0.i) - r.t0.f) / r.period;
		at[n] = find_click(sig, &r);
		c[n] = ck;
		e[n] = (double)ck - x;
		se[n] = click_se(&r, se_p, se_c);
		per = r.period;
		n++;
		tools_reply_clear(&r);
	}
	/* Group 0 before the last gap, group 1 after it.  A group's offset is
	 * the inverse-variance weighted mean of its clicks' errors (they share
	 * one fit, whose slope error makes the errors of clicks far from the
	 * fit's centre larger and alike); it is stated with the least s.e. of
	 * the group, a single conversion's, which correlated errors cannot
	 * beat by averaging. */
	double mean[2] = {0, 0}, wsum[2] = {0, 0}, mse[2] = {INFINITY, INFINITY};
	int cnt[2] = {0, 0};
	for (int i = 0; i < n; i++) {
		int g = c[i] >= last_gap_end;
		double w = 1 / (se[i] * se[i]);
		mean[g] += w * e[i];
		wsum[g] += w;
		mse[g] = MIN(mse[g], se[i]);
		cnt[g]++;
	}
	for (int g = 0; g < 2; g++)
		mean[g] = cnt[g] ? mean[g] / wsum[g] : 0;
	double chi2 = 0, zmax = 0;
	int dof = 0;
	for (int i = 0; i < n; i++) {
		char item[64];
		int g = c[i] >= last_gap_end;
		double z = (e[i] - mean[g]) / se[i];
		if (cnt[g] >= 2) {
			chi2 += z * z;
			zmax = MAX(zmax, fabs(z));
		}
		g_snprintf(item, sizeof item, "click at frame %" G_GINT64_FORMAT "%s", c[i], g ? " (after gap)" : "");
		report_rowf(item, at[i] == c[i] ? REPORT_PASS : REPORT_FAIL,
			    "found at %" G_GINT64_FORMAT "; e %+.2f, -mean %+.2f fr (z %+.2f)|s.e. %.2f fr (%.1f us); "
			    "found at its frame",
			    at[i], e[i], e[i] - mean[g], cnt[g] >= 2 ? z : 0.0, se[i], se[i] * per / 1e3);
	}
	for (int g = 0; g < 2; g++)
		dof += cnt[g] >= 2 ? cnt[g] - 1 : 0;
	if (dof > 0) {
		double lim = gsl_cdf_chisq_Pinv(0.999, dof);
		report_rowf("clicks' scatter vs stated s.e.", chi2 <= lim ? REPORT_PASS : REPORT_FAIL,
			    "sum z^2 %.1f (RMS z %.2f, largest %.2f)|chi-square, %d d.o.f.: at most %.1f (99.9 %%)", chi2,
			    sqrt(chi2 / (dof + (cnt[0] >= 2) + (cnt[1] >= 2))), zmax, dof, lim);
	}
	if (cnt[1])
		report_rowf("clock offset after the gap", REPORT_INFO, "%+.2f us|weighted mean of %d clicks, s.e. %.2f us", mean[1] * per / 1e3,
			    cnt[1], mse[1] * per / 1e3);
	if (untimed)
		report_rowf("clicks the player cannot time", REPORT_INFO, "%d|before its fit's history", untimed);
	*delta_ns = mean[0] * per;
	*delta_se_ns = cnt[0] ? mse[0] * per : 0;
	return cnt[0];
}

/* --save and --compare: the offset of this run's source and an earlier
 * run's, and their difference against the combined stated error. */
static void save_compare(const loopback_cfg *cfg, const char *source, double d, double se)
{
	if (cfg->save) {
		FILE *f = fopen(cfg->save, "w");
		if (!f || fprintf(f, "%s %.3f %.3f %s\n", source, d, se, cfg->label ? cfg->label : "-") < 0 ||
		    fclose(f) != 0)
			report_row("save offset", cfg->save, g_strerror(errno), REPORT_FAIL);
	}
	if (cfg->compare) {
		char s[32];
		double d0, se0;
		FILE *f = fopen(cfg->compare, "r");
		if (!f || fscanf(f, "%31s %lf %lf", s, &d0, &se0) != 3) {
			report_row("offset between sources", cfg->compare, "cannot read the earlier run", REPORT_FAIL);
			if (f)
				fclose(f);
			return;
		}
		fclose(f);
		double diff = d - d0, cse = sqrt(se * se + se0 * se0);
		char item[80];
		g_snprintf(item, sizeof item, "%s minus %s", source, s);
		report_rowf(item, REPORT_INFO, "%+.2f us|combined s.e. %.2f us: %s", diff / 1e3, cse / 1e3,
			    fabs(diff) <= 3 * cse ? "agree within 3 s.e."
						  : "differ: the measured systematic offset");
	}
}

void loopback_run(const loopback_cfg *cfg, const tools_status *s0)
{
	char why[512] = "";
	double xrun_se = -1;
	sig_params sig;
	if (make_sig(cfg, s0, &sig) < 0) {
		report_rowf("known signal", REPORT_FAIL, "not played|format %s: the signal is made in S16_LE, S24_3LE or S32_LE", s0->format);
		return;
	}
	tools_follow *fol = tools_follow_start(cfg->device, why, sizeof why);
	if (!fol) {
		report_row("audioget --follow", "did not start", why, REPORT_FAIL);
		return;
	}
	for (int i = 0; i < 100 && tools_follow_first(fol) < 0; i++)
		g_usleep(50000);
	player_cfg pc = {.pcm = cfg->play, .rate_hz = s0->rate, .period = s0->period, .periods = 16, .frames = (int64_t)cfg->seconds * s0->rate, .rt_priority = cfg->rt, .sig = sig};
	GError *err = NULL;
	player *pl = player_start(&pc, &err);
	if (!pl) {
		report_row("player", "did not start", err->message, REPORT_FAIL);
		g_error_free(err);
	} else if (cfg->xrun_pid > 0) {
		g_usleep((gulong)cfg->seconds * 400000);
		xrun_se = xrun_provoke(cfg->device, cfg->xrun_pid, cfg->stop_ms, s0);
	}
	player_stats ps = {0};
	if (pl)
		player_join(pl, &ps);
	g_usleep(500000);
	uint8_t *data;
	size_t bytes;
	int64_t first, *gaps;
	int ngaps;
	int frc = tools_follow_stop(fol, &data, &bytes, &first, &gaps, &ngaps);
	if (!pl) {
		g_free(data);
		g_free(gaps);
		return;
	}
	report_rowf("player", ps.underruns || *ps.error ? REPORT_FAIL : REPORT_PASS,
		    "%" G_GINT64_FORMAT " frames, %" G_GUINT64_FORMAT " underruns|%s; %s timestamps, %" G_GUINT64_FORMAT
		    " (lost %" G_GUINT64_FORMAT ")%s",
		    ps.played, ps.underruns, *ps.error ? ps.error : cfg->play, ps.source, ps.records, ps.records_lost,
		    ps.rt ? ", rt" : "");
	size_t fb = sig_sample_bytes(&sig) * sig.channels;
	cmp_capture cap = {.data = data, .frames = bytes / fb, .first = first, .gaps = gaps, .ngaps = ngaps};
	report_rowf("audioget --follow", frc == 0 && first >= 0 && bytes % fb == 0 ? REPORT_PASS : REPORT_FAIL,
		    "%zu frames from %" G_GINT64_FORMAT ", %d gap%s|exit %d", cap.frames, first, ngaps, ngaps == 1 ? "" : "s",
		    frc);
	cmp_result cr;
	cmp_run(&sig, ps.played, &cap, s0->buffer, &cr);
	report_rowf("samples bit-exact", cr.found && cr.mismatched == 0 && cr.missing == 0 && cr.compared > 0 ? REPORT_PASS : REPORT_FAIL,
		    "%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " differ|offset %" G_GINT64_FORMAT "; %" G_GINT64_FORMAT
		    " in gaps, %" G_GINT64_FORMAT " missing; first bad %" G_GINT64_FORMAT,
		    cr.mismatched, cr.compared, cr.offset, cr.in_gaps, cr.missing, cr.first_bad);
	int want_gaps = cfg->xrun_pid > 0 ? 1 : 0;
	report_rowf("gaps in the stream", ngaps == want_gaps ? REPORT_PASS : REPORT_FAIL, "%d|%d overrun%s provoked", ngaps,
		    want_gaps, want_gaps == 1 ? "" : "s");
	if (ngaps) {
		/* Where the signal continues after the gap, against where the
		 * index says it should: the restart's prediction, within its
		 * stated error (xrun.h). */
		int ok = cr.shift_found && xrun_se >= 0 && fabs((double)cr.shift) <= 3 * xrun_se;
		report_rowf("after the gap: signal offset", ok ? REPORT_PASS : REPORT_FAIL,
			    "%s%+" G_GINT64_FORMAT " frames|stated s.e. %.3f frames; within 3 s.e.",
			    cr.shift_found ? "" : "not found ", cr.shift, xrun_se);
	}
	double d = 0, dse = 0;
	tools_status s1;
	int nclick = check_clicks(cfg, &sig, pl, ps.played, &cap, &cr, s0->rate, &d, &dse);
	if (nclick && tools_status_read(cfg->device, &s1, why, sizeof why) == 0) {
		report_rowf("clock offset audiod - player", REPORT_INFO, "%+.2f us|weighted mean of %d clicks, s.e. %.2f us (%s vs %s); the latency floors' difference",
			    d / 1e3, nclick, dse / 1e3, s1.source, ps.source);
		save_compare(cfg, s1.source, d, dse);
	} else if (!nclick) {
		report_row("clicks by time", "none measured", "at least one wanted", REPORT_FAIL);
	}
	player_free(pl);
	g_free(data);
	g_free(gaps);
}
