/* test_alsapcm.c — the ALSA PCM `chorus` (alsapcm/pcm_chorus.c) through
 * alsa-lib and through arecord, against the real audiod + syncd on the
 * simulated microphone (tests/audiod_harness.h).
 *
 * Every check is sample-exact against audiod's own data reply: the frames a
 * PCM delivered are found in audiod's ring by searching every start frame
 * the timing allows (the window between two readings of the clock or the
 * ring's end taken before and after the start), and exactly one start must
 * match every sample.  The scenario's noise (-50 dBFS, 16 bits) makes a
 * chance match of a thousand stereo frames impossible (each sample is one
 * of some 20 values), so "exactly one" is a real test of where the stream
 * starts, not only of what it holds.
 *
 *  - live from audiod's next frame, RW interleaved, 2 channels;
 *  - START=-2: two seconds of history, starting where audiod resolves the
 *    start time minus 2 s on the node's cpu clock;
 *  - mmap access, and one channel (audiod's channel 0); non-interleaved
 *    access (one buffer per channel);
 *  - arecord with START=-1, with CHANNELS=1 (audiod's channel 1), through
 *    plug: to S32_LE (every sample shifted left by 16 bits exactly), and a
 *    start older than the ring refused with audiod's reason;
 *  - an audiod restart is -EPIPE after the frames before it (exact: the
 *    world model's samples at the first run's numbering, which audiod was
 *    checked to serve), then prepare and the stream goes on, exact again.
 */
#include <alsa/asoundlib.h>
#include <check.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "libsync/now.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"

#define NODE 2
#define RATE 48000

/* Make this process (and the programs it starts) find pcm.chorus. */
static void use_plugin_conf(void)
{
	const char *old = g_getenv("ALSA_CONFIG_PATH");
	char *p = g_strdup_printf("%s:%s", old ? old : "/usr/share/alsa/alsa.conf", ALSAPCM_CONF_FILE);
	g_setenv("ALSA_CONFIG_PATH", p, TRUE);
	g_free(p);
}

static void start_node(ah_node *h, const char *tag)
{
	ah_start(h, NODE, tag, NULL);
	use_plugin_conf();
}

/* The next frame audiod will capture (the end of its ring). */
static int64_t ring_next(void)
{
	char *s = ah_status();
	const char *p = strstr(s, "ring=[");
	AH_REQUIRE(p, "no ring= in status:\n%s", s);
	p = strchr(p, ',');
	AH_REQUIRE(p, "malformed ring= in status:\n%s", s);
	int64_t v = g_ascii_strtoll(p + 1, NULL, 10);
	g_free(s);
	return v;
}

/* The frame audiod resolves cpu time t to (its reply's first=). */
static int64_t frame_at_cpu(int64_t t)
{
	char params[128];
	g_snprintf(params, sizeof params, "clock=cpu from=%lld to=%lld", (long long)t, (long long)t + 1000000);
	ah_reader *r = ah_read(0, 0, params);
	AH_REQUIRE(!r->err, "%s: %s", params, r->errmsg ? r->errmsg : "");
	int64_t f = r->first;
	ah_reader_free(r);
	return f;
}

/* The one audiod frame F in [lo, hi] from which `n` frames of the given
 * channels (chan[nch] of the device's h->channels) equal x (S16, or S32
 * holding S16 << 16 when `s32`); fails unless exactly one matches. */
static int64_t locate(const ah_node *h, const void *x, size_t n, unsigned nch, const unsigned *chan, int s32,
		      int64_t lo, int64_t hi)
{
	ah_reader *r = ah_read(lo, hi + (int64_t)n, NULL);
	AH_REQUIRE(r->ended && !r->err && r->gaps == 0, "audiod's data [%lld, %lld): err %d %s, %d gaps", (long long)lo,
		   (long long)(hi + (int64_t)n), r->err, r->errmsg ? r->errmsg : "", r->gaps);
	AH_REQUIRE(r->first == lo, "audiod served from %lld, not %lld", (long long)r->first, (long long)lo);
	const int16_t *ring = (const int16_t *)r->data->data;
	int found = 0;
	int64_t at = -1;
	for (int64_t F = lo; F <= hi; F++) {
		size_t i;
		for (i = 0; i < n; i++) {
			unsigned c;
			for (c = 0; c < nch; c++) {
				int16_t want = ring[(size_t)(F - lo + (int64_t)i) * h->channels + chan[c]];
				int ok = s32 ? ((const int32_t *)x)[i * nch + c] == (int32_t)((uint32_t)(uint16_t)want << 16)
					     : ((const int16_t *)x)[i * nch + c] == want;
				if (!ok)
					break;
			}
			if (c < nch)
				break;
		}
		if (i == n) {
			found++;
			at = F;
		}
	}
	ah_reader_free(r);
	AH_REQUIRE(found == 1, "%d start frames in [%lld, %lld] match the PCM's %zu frames sample for sample", found,
		   (long long)lo, (long long)hi, n);
	return at;
}

static snd_pcm_t *open_pcm(const char *name, snd_pcm_access_t access, unsigned channels)
{
	snd_pcm_t *pcm;
	int rc = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, 0);
	ck_assert_msg(rc == 0, "snd_pcm_open %s: %s", name, snd_strerror(rc));
	/* 100 ms of buffer in 10 ms periods: smaller than two seconds of
	 * history, so the history has to come through flow control. */
	rc = snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, access, channels, RATE, 0, 100000);
	ck_assert_msg(rc == 0, "snd_pcm_set_params %s: %s", name, snd_strerror(rc));
	return pcm;
}

/* Read n frames (RW or mmap) into buf; returns the frames read before an
 * error (*err gets it, else 0). */
static size_t read_frames(snd_pcm_t *pcm, int16_t *buf, size_t n, unsigned nch, int mmap, int *err)
{
	size_t got = 0;
	*err = 0;
	while (got < n) {
		snd_pcm_sframes_t k = mmap ? snd_pcm_mmap_readi(pcm, buf + got * nch, n - got)
					   : snd_pcm_readi(pcm, buf + got * nch, n - got);
		if (k < 0) {
			*err = (int)k;
			break;
		}
		got += (size_t)k;
	}
	return got;
}

static void live(int mmap, unsigned nch)
{
	ah_node h;
	start_node(&h, mmap ? "live-mmap" : "live");
	snd_pcm_t *pcm = open_pcm("chorus:0", mmap ? SND_PCM_ACCESS_MMAP_INTERLEAVED : SND_PCM_ACCESS_RW_INTERLEAVED,
				  nch);
	const size_t n = RATE / 2;
	int16_t *buf = g_new(int16_t, n * nch);
	int64_t before = ring_next();
	ck_assert_int_eq(snd_pcm_start(pcm), 0);
	int err;
	size_t got = read_frames(pcm, buf, n, nch, mmap, &err);
	ck_assert_msg(got == n, "read %zu of %zu frames: %s", got, n, snd_strerror(err));
	/* FROM_NEXT: audiod's next frame when it took the request, after
	 * `before` and before the frames it has sent since. */
	int64_t after = ring_next() - (int64_t)n;
	unsigned chan[2] = {0, 1};
	int64_t F = locate(&h, buf, n, nch, chan, 0, before, after);
	printf("live %s %u ch: %zu frames from audiod frame %lld (window [%lld, %lld]), exact\n", mmap ? "mmap" : "rw",
	       nch, n, (long long)F, (long long)before, (long long)after);
	snd_pcm_close(pcm);
	g_free(buf);
	ah_stop(&h);
}

START_TEST(live_rw_exact)
{
	live(0, 2);
}
END_TEST

/* Non-interleaved access: the plugin scatters audiod's interleaved frames
 * into one buffer per channel. */
START_TEST(live_noninterleaved_exact)
{
	ah_node h;
	start_node(&h, "live-ni");
	snd_pcm_t *pcm = open_pcm("chorus:0", SND_PCM_ACCESS_RW_NONINTERLEAVED, 2);
	const size_t n = RATE / 4;
	int16_t *ch0 = g_new(int16_t, n), *ch1 = g_new(int16_t, n), *x = g_new(int16_t, 2 * n);
	int64_t before = ring_next();
	size_t got = 0;
	while (got < n) {
		void *bufs[2] = {ch0 + got, ch1 + got};
		snd_pcm_sframes_t k = snd_pcm_readn(pcm, bufs, n - got);
		ck_assert_msg(k > 0, "readn after %zu frames: %s", got, snd_strerror((int)k));
		got += (size_t)k;
	}
	int64_t after = ring_next() - (int64_t)n;
	for (size_t i = 0; i < n; i++) {
		x[2 * i] = ch0[i];
		x[2 * i + 1] = ch1[i];
	}
	unsigned chan[2] = {0, 1};
	int64_t F = locate(&h, x, n, 2, chan, 0, before, after);
	printf("live non-interleaved: %zu frames from audiod frame %lld, exact\n", n, (long long)F);
	snd_pcm_close(pcm);
	g_free(ch0);
	g_free(ch1);
	g_free(x);
	ah_stop(&h);
}
END_TEST

START_TEST(live_mmap_one_channel_exact)
{
	live(1, 1);
}
END_TEST

START_TEST(history_exact)
{
	ah_node h;
	start_node(&h, "history");
	ah_wait_frames(3 * RATE); /* two seconds of history and some */
	snd_pcm_t *pcm = open_pcm("chorus:DEV=0,START=-2", SND_PCM_ACCESS_RW_INTERLEAVED, 2);
	const size_t n = 3 * RATE;
	int16_t *buf = g_new(int16_t, n * 2);
	int64_t t0 = sync_now(SYNC_KIND_CPU);
	ck_assert_int_eq(snd_pcm_start(pcm), 0);
	int64_t t1 = sync_now(SYNC_KIND_CPU);
	int err;
	size_t got = read_frames(pcm, buf, n, 2, 0, &err);
	ck_assert_msg(got == n, "read %zu of %zu frames: %s", got, n, snd_strerror(err));
	/* The plugin asked for (its now) - 2 s, read between t0 and t1; audiod
	 * resolves a time to the first whole frame at or after it, with the
	 * same timehist it answers these two requests with. */
	int64_t lo = frame_at_cpu(t0 - 2000000000), hi = frame_at_cpu(t1 - 2000000000);
	unsigned chan[2] = {0, 1};
	int64_t F = locate(&h, buf, n, 2, chan, 0, lo, hi);
	printf("START=-2: %zu frames (2 s history, 1 s live) from audiod frame %lld (window [%lld, %lld]), exact\n", n,
	       (long long)F, (long long)lo, (long long)hi);
	snd_pcm_close(pcm);
	g_free(buf);
	ah_stop(&h);
}
END_TEST

/* Run arecord with args; its stderr in *errtext (g_free); the exit status. */
static int arecord(char **args, char **errtext)
{
	char *prog = g_find_program_in_path("arecord");
	ck_assert_msg(prog, "arecord is not on PATH");
	GPtrArray *argv = g_ptr_array_new();
	g_ptr_array_add(argv, prog);
	for (char **a = args; *a; a++)
		g_ptr_array_add(argv, *a);
	g_ptr_array_add(argv, NULL);
	/* Under SANITIZE the plugin is instrumented and arecord is not: the
	 * sanitizer runtimes must come first (as in tests/test_simpcm.c). */
	char **envp = g_get_environ();
	if (*ALSAPCM_PRELOAD) {
		envp = g_environ_setenv(envp, "LD_PRELOAD", ALSAPCM_PRELOAD, TRUE);
		envp = g_environ_setenv(envp, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
	}
	int status;
	GError *err = NULL;
	gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, NULL, errtext, &status,
				   &err);
	g_strfreev(envp);
	ck_assert_msg(ok, "spawn arecord: %s", err ? err->message : "");
	g_ptr_array_free(argv, TRUE);
	g_free(prog);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* arecord into a raw file of n frames of nch channels of `bytes` each; the
 * samples (g_free) and the cpu times before and after. */
static void *arecord_raw(ah_node *h, const char *dev, const char *fmt, unsigned nch, size_t n, size_t bytes,
			 int64_t *t0, int64_t *t1)
{
	char path[600], cs[8], ns[16];
	g_snprintf(path, sizeof path, "%s/arecord.raw", h->run);
	g_snprintf(cs, sizeof cs, "%u", nch);
	g_snprintf(ns, sizeof ns, "%zu", n);
	char *args[] = {"-q", "-D", (char *)dev, "-t", "raw", "-f", (char *)fmt, "-r", "48000", "-c", cs, "-s", ns, path,
			NULL};
	char *errtext = NULL;
	*t0 = sync_now(SYNC_KIND_CPU);
	int rc = arecord(args, &errtext);
	*t1 = sync_now(SYNC_KIND_CPU);
	ck_assert_msg(rc == 0, "arecord -D %s failed (%d): %s", dev, rc, errtext);
	g_free(errtext);
	gchar *data;
	gsize len;
	ck_assert(g_file_get_contents(path, &data, &len, NULL));
	ck_assert_msg(len == n * nch * bytes, "arecord -D %s wrote %zu bytes, not %zu", dev, (size_t)len,
		      n * nch * bytes);
	return data;
}

START_TEST(arecord_exact)
{
	ah_node h;
	start_node(&h, "arecord");
	ah_wait_frames(2 * RATE);
	const size_t n = RATE / 2;
	int64_t t0, t1;
	/* One second back, stereo, S16_LE: audiod's own format. */
	int16_t *x = arecord_raw(&h, "chorus:DEV=0,START=-1", "S16_LE", 2, n, 2, &t0, &t1);
	unsigned both[2] = {0, 1}, one[1] = {1};
	int64_t lo = frame_at_cpu(t0 - 1000000000), hi = frame_at_cpu(t1 - 1000000000);
	int64_t F = locate(&h, x, n, 2, both, 0, lo, hi);
	printf("arecord START=-1: %zu frames from audiod frame %lld (window [%lld, %lld]), exact\n", n, (long long)F,
	       (long long)lo, (long long)hi);
	g_free(x);
	/* audiod's channel 1 alone. */
	x = arecord_raw(&h, "chorus:DEV=0,START=-1,CHANNELS=1", "S16_LE", 1, n, 2, &t0, &t1);
	lo = frame_at_cpu(t0 - 1000000000);
	hi = frame_at_cpu(t1 - 1000000000);
	F = locate(&h, x, n, 1, one, 0, lo, hi);
	printf("arecord CHANNELS=1: from audiod frame %lld, exact\n", (long long)F);
	g_free(x);
	/* ALSA's plug converts to S32_LE: exactly each sample << 16. */
	x = arecord_raw(&h, "plug:'chorus:DEV=0,START=-1'", "S32_LE", 2, n, 4, &t0, &t1);
	lo = frame_at_cpu(t0 - 1000000000);
	hi = frame_at_cpu(t1 - 1000000000);
	F = locate(&h, x, n, 2, both, 1, lo, hi);
	printf("arecord plug: S32_LE: from audiod frame %lld, exact\n", (long long)F);
	g_free(x);
	/* A start older than the ring: refused, with audiod's reason. */
	char path[600];
	g_snprintf(path, sizeof path, "%s/refused.raw", h.run);
	char *args[] = {"-q", "-D", "chorus:DEV=0,START=-3600", "-t", "raw", "-f", "S16_LE", "-r", "48000", "-c", "2",
			"-s", "100", path, NULL};
	char *errtext = NULL;
	int rc = arecord(args, &errtext);
	ck_assert_msg(rc != 0, "arecord with START=-3600 succeeded");
	ck_assert_msg(strstr(errtext, "before the history kept"), "the refusal does not say why: %s", errtext);
	printf("START=-3600 refused: %s", errtext);
	g_free(errtext);
	ah_stop(&h);
}
END_TEST

START_TEST(restart_is_xrun)
{
	ah_node h;
	start_node(&h, "restart");
	ah_find_f0(&h);
	snd_pcm_t *pcm = open_pcm("chorus", SND_PCM_ACCESS_RW_INTERLEAVED, 2);
	const size_t n = RATE / 4, cap = 60 * RATE;
	int16_t *buf = g_new(int16_t, cap * 2);
	int64_t before = ring_next();
	int err;
	size_t got = read_frames(pcm, buf, n, 2, 0, &err);
	ck_assert_msg(got == n, "read %zu of %zu frames: %s", got, n, snd_strerror(err));
	int64_t after = ring_next() - (int64_t)n;
	unsigned chan[2] = {0, 1};
	int64_t F = locate(&h, buf, n, 2, chan, 0, before, after);
	ah_restart_audiod(&h);
	/* Read on: what comes before -EPIPE is audiod's frames from F on, with
	 * nothing left out; then -EPIPE.  (Bounded by `cap`: 60 s of reading
	 * without the xrun fails the test.) */
	size_t more = read_frames(pcm, buf + n * 2, cap - n, 2, 0, &err);
	ck_assert_msg(err == -EPIPE, "after %zu more frames: %s, not -EPIPE", more, err ? snd_strerror(err) : "no error");
	ck_assert_int_eq(snd_pcm_state(pcm), SND_PCM_STATE_XRUN);
	/* The frames up to the xrun go on from F without a hole: the world's
	 * samples at audiod's numbering of the first run (which audiod served
	 * for the first n, located above; the restarted run may number
	 * afresh, so its ring is no reference for them). */
	long bad = ah_mismatch(&h, buf, n + more, 2, NULL, h.f0 + F);
	ck_assert_msg(bad < 0, "frame %ld of %zu before the xrun differs from audiod's frame %lld", bad, n + more,
		      (long long)(F + bad));
	printf("restart: %zu frames, then -EPIPE; ", n + more);
	ah_wait_frames(1); /* audiod is back */
	ck_assert_int_eq(snd_pcm_prepare(pcm), 0);
	before = ring_next();
	got = read_frames(pcm, buf, n, 2, 0, &err);
	ck_assert_msg(got == n, "after prepare: read %zu of %zu frames: %s", got, n, snd_strerror(err));
	after = ring_next() - (int64_t)n;
	int64_t G = locate(&h, buf, n, 2, chan, 0, before, after);
	printf("after prepare %zu frames from audiod frame %lld, exact\n", n, (long long)G);
	snd_pcm_close(pcm);
	g_free(buf);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	if (!g_file_test(ALSAPCM_CONF_FILE, G_FILE_TEST_EXISTS)) {
		fprintf(stderr, "test_alsapcm: %s is not built\n", ALSAPCM_CONF_FILE);
		return 1;
	}
	Suite *s = suite_create("alsapcm");
	TCase *tc = tcase_create("pcm");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, live_rw_exact);
	tcase_add_test(tc, live_mmap_one_channel_exact);
	tcase_add_test(tc, live_noninterleaved_exact);
	tcase_add_test(tc, history_exact);
	tcase_add_test(tc, restart_is_xrun);
	char *arecord_prog = g_find_program_in_path("arecord");
	if (arecord_prog)
		tcase_add_test(tc, arecord_exact);
	suite_add_tcase(s, tc);
	int failed = tu_check_run(s);
	if (!failed && !arecord_prog) {
		printf("SKIP: arecord_exact (arecord is not installed; make deps installs alsa-utils)\n");
		return 77;
	}
	g_free(arecord_prog);
	return failed ? 1 : 0;
}
