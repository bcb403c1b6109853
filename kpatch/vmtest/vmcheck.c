/* vmcheck — runs inside the kpatch-vmtest VM (see run.sh): drives snd-dummy
 * through alsa-lib and checks what chorus_kpatch recorded.
 *
 * Phase 1, capture: records arrive one per period, in order, no seq gaps,
 *   hw_ptr is the value *after* ALSA's update for that period, and the mean
 *   interval matches period/rate.
 * Phase 1b, the bracket: on snd-dummy the time after the update bounds the
 *   instant of hw_ptr from above, the entry time from below (phase_bracket).
 * Phase 2, overflow: the FIFO (loaded with a small fifo_depth) is left
 *   unread for longer than it holds; the drops must show up as a seq gap
 *   equal to the producer's `dropped` count and the module's own counter.
 * Phase 3, playback: the playback substream is timestamped too, flagged as
 *   playback.
 * Prints "vmcheck: PASS" or "vmcheck: FAIL <reasons>" and exits 0 or 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <alsa/asoundlib.h>

#include "kpatch/reader.h"

#define RATE 48000u
#define CHANNELS 2
#define PERIOD 480u /* frames: 10 ms */
#define MAX_RECS 4096

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("vmcheck: %s: ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Opens hw:0,0 in direction dir with our fixed parameters; returns the PCM
 * or NULL, and the period it got. */
static snd_pcm_t *open_pcm_period(snd_pcm_stream_t dir, snd_pcm_uframes_t *period, snd_pcm_uframes_t want);

static snd_pcm_t *open_pcm(snd_pcm_stream_t dir, snd_pcm_uframes_t *period)
{
	return open_pcm_period(dir, period, PERIOD);
}

/* The same with a period of `want` frames. */
static snd_pcm_t *open_pcm_period(snd_pcm_stream_t dir, snd_pcm_uframes_t *period, snd_pcm_uframes_t want)
{
	snd_pcm_t *pcm;
	snd_pcm_hw_params_t *hw;
	/* 16 periods (160 ms): a loaded host (qemu under TCG, shared cores)
	 * must not overrun the capture, whose hw_ptr would then restart. */
	snd_pcm_uframes_t buffer = 16 * want;
	unsigned int rate = RATE;
	int err;

	*period = want;
	if ((err = snd_pcm_open(&pcm, "hw:0,0", dir, 0)) < 0) {
		printf("vmcheck: snd_pcm_open: %s\n", snd_strerror(err));
		return NULL;
	}
	snd_pcm_hw_params_alloca(&hw);
	snd_pcm_hw_params_any(pcm, hw);
	if ((err = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
	    (err = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE)) < 0 ||
	    (err = snd_pcm_hw_params_set_channels(pcm, hw, CHANNELS)) < 0 ||
	    (err = snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, NULL)) < 0 ||
	    (err = snd_pcm_hw_params_set_period_size_near(pcm, hw, period, NULL)) < 0 ||
	    (err = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer)) < 0 ||
	    (err = snd_pcm_hw_params(pcm, hw)) < 0) {
		printf("vmcheck: hw_params: %s\n", snd_strerror(err));
		snd_pcm_close(pcm);
		return NULL;
	}
	printf("vmcheck: %s rate %u period %lu buffer %lu\n",
	       dir == SND_PCM_STREAM_CAPTURE ? "capture" : "playback", rate,
	       (unsigned long)*period, (unsigned long)buffer);
	return pcm;
}

/* Appends whatever records are waiting to recs[*n]. */
static void drain(struct kpatch_reader *r, struct chorus_kpatch_record *recs,
		  int *n)
{
	int got;

	while (*n < MAX_RECS &&
	       (got = kpatch_reader_read(r, recs + *n, MAX_RECS - *n)) > 0)
		*n += got;
}

/* Moves audio for secs seconds; reads kpatch records as it goes if recs. */
static int run_stream(snd_pcm_t *pcm, snd_pcm_stream_t dir,
		      snd_pcm_uframes_t period, double secs,
		      struct kpatch_reader *r, struct chorus_kpatch_record *recs,
		      int *n)
{
	static int16_t buf[4096 * CHANNELS];
	double end = now_s() + secs;
	snd_pcm_sframes_t got;

	memset(buf, 0, sizeof(buf));
	if (dir == SND_PCM_STREAM_PLAYBACK) {
		/* Prefill, then the stream starts by itself. */
		snd_pcm_writei(pcm, buf, period);
		snd_pcm_writei(pcm, buf, period);
	} else {
		snd_pcm_start(pcm);
	}
	while (now_s() < end) {
		got = dir == SND_PCM_STREAM_CAPTURE ? snd_pcm_readi(pcm, buf, period)
						    : snd_pcm_writei(pcm, buf, period);
		if (got < 0) {
			printf("vmcheck: %s: %s\n", dir == SND_PCM_STREAM_CAPTURE ? "readi" : "writei",
			       snd_strerror((int)got));
			if (snd_pcm_recover(pcm, (int)got, 1) < 0)
				return -1;
			if (dir == SND_PCM_STREAM_CAPTURE)
				snd_pcm_start(pcm);
		}
		if (recs)
			drain(r, recs, n);
	}
	snd_pcm_drop(pcm);
	return 0;
}

static void phase_capture(void)
{
	static struct chorus_kpatch_record recs[MAX_RECS];
	struct kpatch_reader_stats st;
	struct kpatch_reader *r;
	snd_pcm_uframes_t period;
	snd_pcm_t *pcm;
	double secs = 4.0, sx = 0, sy = 0, sxx = 0, sxy = 0, mean, sd = 0, maxdt = 0;
	int n = 0, i, rc, one_period = 0, no_period = 0, in_order = 1, post_update = 1;
	double expect_dt, slope;

	pcm = open_pcm(SND_PCM_STREAM_CAPTURE, &period);
	if (!pcm) {
		check(0, "open capture");
		return;
	}
	rc = kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r);
	check(rc == 0, "open kpatch reader for hw:0,0 capture (%s)", rc ? strerror(-rc) : "ok");
	if (rc)
		return;
	{
		/* One consumer per FIFO: a second reader is refused. */
		struct kpatch_reader *r2 = NULL;

		rc = kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r2);
		check(rc == -EBUSY, "second reader of the same substream fails with EBUSY (%s)",
		      strerror(-rc));
		kpatch_reader_free(r2);
	}
	run_stream(pcm, SND_PCM_STREAM_CAPTURE, period, secs, r, recs, &n);
	drain(r, recs, &n);
	kpatch_reader_get_stats(r, &st);
	snd_pcm_close(pcm);
	kpatch_reader_free(r);

	expect_dt = (double)period * 1e9 / RATE;
	{
		/* Periods the records cover (the stream ran secs), and at
		 * least half as many records (the rest coalesced by a late
		 * timer; see below). */
		double periods = n ? (double)(recs[n - 1].hw_ptr / period) : 0;

		check(periods >= 0.9 * secs * RATE / period && periods <= 1.1 * secs * RATE / period &&
			      n >= 0.5 * periods,
		      "%d records covering %.0f periods in %.1f s (expect %.0f periods)", n, periods, secs,
		      secs * RATE / period);
	}
	if (n < 10)
		return;
	check(st.seq.seq_gaps == 0 && st.seq.overflows == 0 && st.malformed == 0 &&
		      st.foreign == 0 && st.seq.seq_resets == 0,
	      "no loss: gaps %" PRIu64 ", overflow %" PRIu64 ", malformed %" PRIu64
	      ", foreign %" PRIu64 ", resets %" PRIu64,
	      st.seq.seq_gaps,
	      st.seq.overflows, st.malformed, st.foreign, st.seq.seq_resets);
	check(recs[0].seq == 0, "first record has seq 0 (got %" PRIu64 ")", recs[0].seq);
	for (i = 0; i < n; i++) {
		double dt = i ? (double)(recs[i].time_ns - recs[i - 1].time_ns) : 0;

		if (i && (recs[i].seq != recs[i - 1].seq + 1 || dt <= 0 ||
			  recs[i].hw_ptr < recs[i - 1].hw_ptr))
			in_order = 0;
		/* snd-dummy computes hw_ptr from the time its timer actually
		 * ran, so each value is a period boundary plus the timer's
		 * lateness: a record per snd_pcm_period_elapsed() call means
		 * the count of boundaries crossed goes up by one, or by more
		 * when the timer ran more than a period late (the host was
		 * busy: under qemu's software emulation on a loaded machine,
		 * 5 % of the calls), never by none. */
		if (i && recs[i].hw_ptr / period == recs[i - 1].hw_ptr / period + 1)
			one_period++;
		if (i && recs[i].hw_ptr / period == recs[i - 1].hw_ptr / period)
			no_period++;
		/* After the update of period i, at least i+1 periods have
		 * passed; before it, only i. */
		if (recs[i].hw_ptr + period / 2 < (uint64_t)(i + 1) * period)
			post_update = 0;
		if (dt > maxdt)
			maxdt = dt;
		if (i) {
			sd += (dt - expect_dt) * (dt - expect_dt);
		}
		sx += (double)(recs[i].hw_ptr - recs[0].hw_ptr);
		sy += (double)(recs[i].time_ns - recs[0].time_ns);
	}
	check(in_order, "records in order (seq +1, time and hw_ptr increasing)");
	check(post_update, "hw_ptr is the post-update value (first: %" PRIu64 " frames, period %lu)",
	      recs[0].hw_ptr, (unsigned long)period);
	check(recs[0].period_frames == period && (recs[0].flags & CHORUS_KPATCH_F_CAPTURE),
	      "period_frames %u, capture flag", recs[0].period_frames);
	check(no_period == 0, "a record per period interrupt: %d of %d crossed one period boundary, %d more than one "
			      "(the timer ran over a period late), %d none",
	      one_period, n - 1, n - 1 - one_period - no_period, no_period);
	/* The rate itself is the least-squares fit's below: an interval's
	 * mean moves with the host's load, the fit's slope does not. */
	mean = (double)(recs[n - 1].time_ns - recs[0].time_ns) / (n - 1);
	sd = sqrt(sd / (n - 1));
	printf("vmcheck: info: mean interval %.1f us (period %.1f us); rms deviation %.1f us, max %.1f us\n",
	       mean / 1e3, expect_dt / 1e3, sd / 1e3, maxdt / 1e3);
	/* Least-squares ns per frame over the whole run. */
	sx /= n;
	sy /= n;
	for (i = 0; i < n; i++) {
		double x = (double)(recs[i].hw_ptr - recs[0].hw_ptr) - sx;
		double y = (double)(recs[i].time_ns - recs[0].time_ns) - sy;

		sxx += x * x;
		sxy += x * y;
	}
	slope = sxy / sxx;
	check(fabs(slope - 1e9 / RATE) < 0.01 * 1e9 / RATE,
	      "fit: %.2f ns/frame (expect %.2f, tol 1%%)", slope, 1e9 / RATE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantile q of the n sorted values v. */
static double quantile(const double *v, int n, double q)
{
	int i = (int)(q * (n - 1) + 0.5);

	return v[i < 0 ? 0 : i >= n ? n - 1
				    : i];
}

/* Prints "p50 p90 p99 max" of v[0..n) in us (sorts v). */
static void print_quantiles(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	printf("vmcheck: bracket: %s us: p50 %.1f p90 %.1f p99 %.1f max %.1f\n", what,
	       quantile(v, n, 0.5) / 1e3, quantile(v, n, 0.9) / 1e3, quantile(v, n, 0.99) / 1e3, v[n - 1] / 1e3);
}

/* The slope (ppm from nominal) of the least e over each half of the run:
 * what a lower envelope through e (ns, per record) finds, crudely. */
static double halves_ppm(const double *e, const struct chorus_kpatch_record *recs, int n)
{
	double m1 = 1e300, m2 = 1e300, x1 = 0, x2 = 0;
	int i;

	for (i = 0; i < n; i++) {
		double x = (double)(recs[i].hw_ptr - recs[0].hw_ptr) * 1e9 / RATE;

		if (i < n / 2 && e[i] < m1) {
			m1 = e[i];
			x1 = x;
		} else if (i >= n / 2 && e[i] < m2) {
			m2 = e[i];
			x2 = x;
		}
	}
	return x2 > x1 ? (m2 - m1) / (x2 - x1) * 1e6 : 0;
}

/*
 * Phase 1b, the bracket (record version 2): on snd-dummy, whose pointer
 * is the time its hrtimer callback reads (hw_ptr = frames since the start
 * at that instant, rounded up), the frame hw_ptr was reached between the
 * record's time (the entry of snd_pcm_period_elapsed) and its update time
 * (after ALSA's update).  Against the nominal line u = hw_ptr / rate,
 * every entry time's offset must lie at or below every update time's
 * (within a frame of the rounding): the bracket holds.  Prints how wide
 * the bracket is, how early the entry times lie below their own latest
 * (what a lower envelope through them cannot see: it sits on the
 * earliest), how late the update times lie above their earliest (what it
 * expects), and the slope each envelope finds.
 */
static void phase_bracket(snd_pcm_uframes_t want, double secs)
{
	static struct chorus_kpatch_record recs[MAX_RECS];
	static double ent[MAX_RECS], aft[MAX_RECS], v[MAX_RECS];
	struct kpatch_reader *r;
	snd_pcm_uframes_t period;
	snd_pcm_t *pcm;
	double max_ent = -1e300, min_aft = 1e300, frame_ns = 1e9 / RATE;
	int n = 0, i, rc, with_update = 0;

	char *id = NULL;

	/* snd-dummy's pointer is its time; snd-aloop's (arm64's card 0,
	 * cross/vm-kpatch-arm64.sh) moves in jiffies: no line to hold it to. */
	if (snd_card_get_name(0, &id) < 0 || !id || strcmp(id, "Dummy") != 0) {
		printf("vmcheck: bracket: skipped (card 0 is %s, not snd-dummy)\n", id ? id : "unknown");
		free(id);
		return;
	}
	free(id);
	pcm = open_pcm_period(SND_PCM_STREAM_CAPTURE, &period, want);
	if (!pcm) {
		check(0, "open capture");
		return;
	}
	rc = kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r);
	check(rc == 0, "open kpatch reader (%s)", rc ? strerror(-rc) : "ok");
	if (rc)
		return;
	run_stream(pcm, SND_PCM_STREAM_CAPTURE, period, secs, r, recs, &n);
	drain(r, recs, &n);
	snd_pcm_close(pcm);
	kpatch_reader_free(r);
	if (n < 20) {
		check(0, "bracket: %d records", n);
		return;
	}
	for (i = 0; i < n; i++) {
		double u = (double)(recs[i].hw_ptr - recs[0].hw_ptr) * frame_ns;

		with_update += kpatch_record_has_update(&recs[i]);
		ent[i] = (double)(recs[i].time_ns - recs[0].time_ns) - u;
		aft[i] = (double)(kpatch_record_update_time(&recs[i]) - recs[0].time_ns) - u;
		if (ent[i] > max_ent)
			max_ent = ent[i];
		if (aft[i] < min_aft)
			min_aft = aft[i];
	}
	check(with_update == n, "bracket: period %lu, %.0f s: %d of %d records carry the update time", (unsigned long)period,
	      secs, with_update, n);
	check(max_ent <= min_aft + frame_ns,
	      "bracket: the latest entry time lies %.1f us before the earliest update time against the nominal line "
	      "(must be >= -%.1f us: one frame of the pointer's rounding)",
	      (min_aft - max_ent) / 1e3, frame_ns / 1e3);
	/* The raw records, for fits off line (not shown by the host's
	 * verdict; build/kpatch/vmtest/console.log keeps them). */
	for (i = 0; i < n; i++)
		printf("vmdata: bracket %" PRIu64 " %" PRId64 " %" PRIu32 "\n", recs[i].hw_ptr, recs[i].time_ns,
		       recs[i].update_ns);
	for (i = 0; i < n; i++)
		v[i] = (double)recs[i].update_ns;
	print_quantiles("width (update_ns)", v, n);
	for (i = 0; i < n; i++)
		v[i] = max_ent - ent[i];
	print_quantiles("entry times early (below their latest)", v, n);
	for (i = 0; i < n; i++)
		v[i] = aft[i] - min_aft;
	print_quantiles("update times late (above their earliest)", v, n);
	printf("vmcheck: bracket: lower envelope's slope from nominal (least of each half): entry %+.2f ppm, "
	       "update %+.2f ppm, over %d records\n",
	       halves_ppm(ent, recs, n), halves_ppm(aft, recs, n), n);
}

static void phase_overflow(void)
{
	static struct chorus_kpatch_record recs[MAX_RECS];
	struct chorus_kpatch_stats ks;
	struct kpatch_reader_stats st;
	struct kpatch_reader *r;
	snd_pcm_uframes_t period;
	snd_pcm_t *pcm;
	int n = 0, rc;

	pcm = open_pcm(SND_PCM_STREAM_CAPTURE, &period);
	if (!pcm) {
		check(0, "open capture");
		return;
	}
	rc = kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r);
	check(rc == 0, "re-open kpatch reader (%s)", rc ? strerror(-rc) : "ok");
	if (rc)
		return;
	/* 1.5 s unread = 150 periods into a FIFO of fifo_depth (64). */
	run_stream(pcm, SND_PCM_STREAM_CAPTURE, period, 1.5, NULL, NULL, NULL);
	drain(r, recs, &n);
	rc = kpatch_reader_kernel_stats(r, &ks);
	check(rc == 0 && ks.dropped > 0 && (int)ks.fifo_depth == n,
	      "module counted %u drops, FIFO held %d of %u", ks.dropped, n, ks.fifo_depth);
	/* The drop count reaches the reader with the next queued record. */
	snd_pcm_prepare(pcm);
	run_stream(pcm, SND_PCM_STREAM_CAPTURE, period, 0.3, r, recs, &n);
	drain(r, recs, &n);
	kpatch_reader_get_stats(r, &st);
	check(st.seq.overflows == ks.dropped && st.seq.seq_lost == ks.dropped &&
		      st.seq.seq_gaps == 1,
	      "reader saw overflow %" PRIu64 " and a seq gap of %" PRIu64 " (module: %u)",
	      st.seq.overflows, st.seq.seq_lost, ks.dropped);
	snd_pcm_close(pcm);
	kpatch_reader_free(r);
}

static void phase_playback(void)
{
	static struct chorus_kpatch_record recs[MAX_RECS];
	struct kpatch_reader_stats st;
	struct kpatch_reader *r;
	snd_pcm_uframes_t period;
	snd_pcm_t *pcm;
	int n = 0, rc;

	pcm = open_pcm(SND_PCM_STREAM_PLAYBACK, &period);
	if (!pcm) {
		check(0, "open playback");
		return;
	}
	rc = kpatch_reader_open_for_pcm(0, 0, 0, CHORUS_KPATCH_STREAM_PLAYBACK, &r);
	check(rc == 0, "open kpatch reader for playback (%s)", rc ? strerror(-rc) : "ok");
	if (rc)
		return;
	run_stream(pcm, SND_PCM_STREAM_PLAYBACK, period, 1.0, r, recs, &n);
	drain(r, recs, &n);
	kpatch_reader_get_stats(r, &st);
	check(n >= 80 && n <= 120 && st.seq.seq_gaps == 0 &&
		      !(recs[0].flags & CHORUS_KPATCH_F_CAPTURE),
	      "playback: %d records in 1 s, %" PRIu64 " gaps, playback flag", n,
	      st.seq.seq_gaps);
	snd_pcm_close(pcm);
	kpatch_reader_free(r);
}

int main(void)
{
	struct kpatch_reader *r;
	int rc;

	struct stat sb;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Root and (through the udev rule) the audio group only. */
	memset(&sb, 0, sizeof(sb));
	rc = stat(CHORUS_KPATCH_DEV_PATH, &sb);
	check(rc == 0 && S_ISCHR(sb.st_mode) &&
		      (sb.st_mode & 07777) == 0640,
	      "%s is a character device, mode %04o", CHORUS_KPATCH_DEV_PATH,
	      (unsigned)(sb.st_mode & 07777));
	rc = kpatch_reader_open_for_pcm(7, 0, 0, CHORUS_KPATCH_STREAM_CAPTURE, &r);
	check(rc == -ENODEV, "selecting a card that does not exist fails with ENODEV (%s)",
	      strerror(-rc));
	phase_capture();
	phase_bracket(1024, 20.0);
	phase_overflow();
	phase_playback();
	if (failures)
		printf("vmcheck: FAIL (%d checks failed)\n", failures);
	else
		printf("vmcheck: PASS\n");
	return failures ? 1 : 0;
}
