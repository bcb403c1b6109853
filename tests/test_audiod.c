/* test_audiod.c — the real audiod (with the real syncd) on the simulated
 * microphone, through its devices: every check compares with the world
 * model's truth (sim/world.h), none depends on timing.
 *
 *  - past ranges equal the simulator's samples exactly, with channel selection;
 *  - requests by node cpu time and by global time resolve to the true frame
 *    within the stated uncertainty;
 *  - 2 and 20 clients at once get identical, correct data;
 *  - a client that stops reading does not hold up a streaming one or the
 *    capture, and gets a GAP when it resumes after falling out of the ring;
 *  - malformed and out-of-range requests get errors while capture goes on;
 *  - a bulk reader's mapping of the ring equals the sensor device's data;
 *  - audioget writes WAV/FLAC files holding exactly the range it reports;
 *  - one audiod serves two devices, each exact, each on the ticker.
 * Overruns: test_audiod_xrun.c.
 */
#include <check.h>
#include <glib/gstdio.h>
#include <sys/wait.h>
#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "audiod/ringserver.h"
#include "libsync/client.h"
#include "libsync/now.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"

#define NODE 2
#define RATE 48000

/* A ring of 1 s (the minimum): a stalled client falls out of it quickly.
 * 64 periods (640 ms) of ALSA buffer, as in every test here: a capture
 * thread descheduled on a loaded machine must not overrun. */
static const char small_ring_conf[] = "[device.0]\nring_s = 1\nperiods = 64\n";

static void check_range(const ah_node *h, ah_reader *r, int64_t first, int64_t n)
{
	ck_assert_msg(r->ended && !r->err, "read [%lld, +%lld): %d %s", (long long)first, (long long)n, r->err,
		      r->errmsg ? r->errmsg : "");
	ck_assert_int_eq(r->first, first);
	ck_assert_int_eq(r->gaps, 0);
	ck_assert_int_eq(r->out_of_order, 0);
	ck_assert_uint_eq(r->data->len, (guint)(n * h->channels * 2));
	long bad = ah_mismatch(h, (const int16_t *)r->data->data, (size_t)n, h->channels, NULL, h->f0 + first);
	ck_assert_msg(bad < 0, "frame %lld differs from the world model", (long long)(first + bad));
}

START_TEST(past_range_exact)
{
	ah_node h;
	ah_start(&h, NODE, "past", NULL);
	ah_find_f0(&h);
	ah_wait_frames(RATE + 2000);
	/* One second, sample for sample. */
	ah_reader *r = ah_read(1000, 1000 + RATE, NULL);
	check_range(&h, r, 1000, RATE);
	ck_assert_ptr_nonnull(strstr(r->reply, "rate=48000 channels=2 format=S16_LE"));
	ah_reader_free(r);
	/* Channels selected and reordered. */
	r = ah_read(7000, 12000, "channels=1,0");
	ck_assert(r->ended && !r->err);
	ck_assert_uint_eq(r->item_size, 4);
	static const uint16_t swap[] = {1, 0};
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)r->data->data, 5000, 2, swap, h.f0 + 7000), 0);
	ah_reader_free(r);
	r = ah_read(7000, 12000, "channels=1");
	ck_assert_uint_eq(r->data->len, 5000 * 2);
	static const uint16_t one[] = {1};
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)r->data->data, 5000, 1, one, h.f0 + 7000), 0);
	ah_reader_free(r);
	ah_stop(&h);
}
END_TEST

/* Request [T, T + 10 ms) on `clock` (params text) for the node cpu time T;
 * check the first frame against the world's truth at T: |error| <= 5 se + 1. */
static void check_time_request(const ah_node *h, const char *clock, int64_t t, int64_t cpu_truth, double *err_out)
{
	char params[160];
	g_snprintf(params, sizeof params, "clock=%s from=%lld to=%lld", clock, (long long)t, (long long)(t + 10000000));
	ah_reader *r = ah_read(0, 0, params);
	ck_assert_msg(r->ended && !r->err, "%s: %d %s", params, r->err, r->errmsg ? r->errmsg : "");
	const char *p = strstr(r->reply, "se_frames=");
	ck_assert_msg(p, "no se_frames in reply \"%s\"", r->reply);
	double se = g_ascii_strtod(p + 10, NULL);
	int64_t host = sim_world_true_at_node_cpu(h->w, h->node, cpu_truth);
	double truth = sim_world_frame_at(h->w, h->node, h->rate_hz, (double)(host - h->epoch_ns) * 1e-9) - (double)h->f0;
	double err = (double)r->first - truth; /* the reply is the first whole frame at or after T */
	ck_assert_msg(fabs(err) <= 5 * se + 1, "%s: first=%lld, truth %.3f (error %.3f frames, se %.4g)", params,
		      (long long)r->first, truth, err, se);
	ck_assert_msg(se < 0.5, "%s: se %.4g frames", params, se);
	/* The reply states its own time: frame `first` on the request's clock
	 * (cpu here), within 5 of its stated s.e. (plus 1 ns for the digits) of
	 * the world's truth, and the frame period within 5 s.e. of the true. */
	if (!strcmp(clock, "cpu")) {
		const char *t0 = strstr(r->reply, " t0=");
		ck_assert_msg(t0 && strstr(r->reply, "t0_clock=node") && strstr(r->reply, " t0_se=") &&
				      strstr(r->reply, " period_se="),
			      "reply \"%s\"", r->reply);
		double t0v = g_ascii_strtod(t0 + 4, NULL), t0se = g_ascii_strtod(strstr(r->reply, " t0_se=") + 7, NULL);
		double per = g_ascii_strtod(strstr(r->reply, " period=") + 8, NULL);
		double perse = g_ascii_strtod(strstr(r->reply, " period_se=") + 11, NULL);
		int64_t ft = sim_world_node_cpu_at(h->w, h->node,
						   h->epoch_ns + sim_world_frame_time_ns(h->w, h->node, h->rate_hz, h->f0 + r->first));
		const sim_node_cfg *nc = sim_scenario_find_node(h->sc, h->node);
		double per_true = 1e9 / h->rate_hz / (1 + nc->audio_skew_ppm * 1e-6) * (1 + nc->cpu.skew_ppm * 1e-6);
		/* t0 is a double of ~1e13 ns: 2 ns of its digits are not there */
		ck_assert_msg(fabs(t0v - (double)ft) <= 5 * t0se + 2, "t0 %.3f, truth %lld, se %.3g", t0v, (long long)ft,
			      t0se);
		ck_assert_msg(fabs(per - per_true) <= 5 * perse + 1e-6, "period %.6f, truth %.6f, se %.3g", per, per_true,
			      perse);
	}
	/* 10 ms of data, and it is what the world had at those frames. */
	int64_t n = r->last - r->first;
	ck_assert_int_ge(n, 479);
	ck_assert_int_le(n, 481);
	ck_assert_uint_eq(r->data->len, (guint)(n * h->channels * 2));
	ck_assert_int_lt(ah_mismatch(h, (const int16_t *)r->data->data, (size_t)n, h->channels, NULL, h->f0 + r->first), 0);
	*err_out = err;
	ah_reader_free(r);
}

/* audiod restarts while syncd runs on: the new run numbers its frames on
 * from the last one (so indices keep meaning the same instants), a reader
 * streaming across the restart resumes by itself with a gap for the outage
 * and exact data after it. */
static gboolean streaming(void *user)
{
	ah_reader *r = user;
	return r->data && r->data->len > 0 && r->next > 0;
}

static gboolean got_past(void *user)
{
	ah_reader *r = user;
	return r->err || (r->gaps > 0 && r->next > r->gap_to_last + RATE / 2);
}

/* audiod's own fit of its frame clock, rate_se_ppm from audio/0/status
 * (INFINITY before there is one). */
static double rate_se_ppm(void)
{
	char *st = ah_status();
	const char *p = strstr(st, "rate_se_ppm=");
	double v = p ? g_ascii_strtod(p + 12, NULL) : INFINITY;
	g_free(st);
	return v;
}

START_TEST(restart_numbers_on)
{
	ah_node h;
	ah_start(&h, NODE, "restart", NULL);
	ah_find_f0(&h);
	int64_t before = ah_wait_frames(RATE);
	/* audiod numbers on only when syncd's line, extrapolated over the
	 * restart (about 1 s), is within 0.25 frames (5 us at 48 kHz): a slope
	 * good to ~1 ppm.  A young fit under load can be 0.8 frames wide, and
	 * then audiod rightly starts afresh (tests/test_numbering covers that
	 * path), so wait for the fit to be good to 0.5 ppm (syncd's fit of the
	 * same stamps is as good) before restarting: up to 30 s, as the
	 * envelope fit states its error conservatively for light tails. */
	for (int i = 0; i < 600 && !(rate_se_ppm() < 0.5); i++)
		g_usleep(50000);
	ck_assert_msg(rate_se_ppm() < 0.5, "audiod's clock fit did not reach 0.5 ppm in 30 s");
	GMainContext *ctx = g_main_context_new();
	ah_reader *live = ah_reader_new(ctx, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL);
	ah_spin(ctx, streaming, live);
	ah_restart_audiod(&h);
	ah_spin(ctx, got_past, live);
	ck_assert_msg(!live->err, "resumed stream refused: %d %s", live->err, live->errmsg ? live->errmsg : "");
	/* The outage is one gap; nothing out of order; the data after it is
	 * the world's at the same numbering as before the restart. */
	ck_assert_int_eq(live->out_of_order, 0);
	ck_assert_int_ge(live->gap_from, before);
	int64_t after = live->gap_to_last;
	ck_assert_int_gt(after, live->gap_from);
	ah_reader_free(live);
	g_main_context_unref(ctx);
	char *st = ah_status();
	const char *ring = strstr(st, "ring=[");
	ck_assert_ptr_nonnull(ring);
	int64_t oldest = g_ascii_strtoll(ring + 6, NULL, 10);
	g_free(st);
	ck_assert_int_ge(oldest, before); /* not renumbered from 0 */
	ah_reader *r = ah_read(after + 100, after + 100 + RATE / 4, NULL);
	check_range(&h, r, after + 100, RATE / 4);
	ah_reader_free(r);
	ah_stop(&h);
}
END_TEST

START_TEST(time_to_frame)
{
	ah_node h;
	ah_start(&h, NODE, "time", NULL);
	ah_find_f0(&h);
	ah_wait_frames(2 * RATE);
	GError *e = NULL;
	sync_client *sc = sync_client_new(NULL, NULL, NULL, NULL, &e);
	ck_assert_msg(sc, "%s", e ? e->message : "");
	ck_assert_int_eq(sync_client_wait(sc, AH_SAFETY_S * 1000), 0);
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	double sum2 = 0;
	int n = 0;
	for (int i = 0; i < 12; i++) {
		/* Spread over the last 1.5 s, at times off the period grid. */
		int64_t t = now_ns - 1600000000 + i * 123456789 + i * 7919;
		double err;
		check_time_request(&h, "cpu", t, t, &err);
		sum2 += err * err;
		n++;
		char name[32];
		g_snprintf(name, sizeof name, "node%d:cpu", NODE);
		check_time_request(&h, name, t, t, &err);
		/* The same instant on the global timescale (root: this node). */
		sync_graph_result g;
		char why[200];
		ck_assert_msg(sync_client_convert(sc, sync_clock_cpu(NODE), sync_clock_global(), sync_tval_of(t), &g, why,
						  sizeof why) == 0,
			      "cpu -> global: %s", why);
		check_time_request(&h, "global", g.value.i, t, &err);
		sum2 += err * err;
		n++;
	}
	/* ceil() makes the error uniform on (0, 1] frame around the truth: RMS
	 * about 0.58 frame, far below one frame unless the mapping is biased. */
	ck_assert_msg(sqrt(sum2 / n) < 0.9, "RMS error %.3f frames", sqrt(sum2 / n));
	/* The status device: what is captured, from which source, and the fitted
	 * card rate on this node's cpu clock, R (1 + a) / (1 + c) for audio skew
	 * a and cpu skew c, against the slope's stated standard error. */
	char *st = ah_status();
	ck_assert_msg(strstr(st, "format rate=48000 channels=2 format=S16_LE period=480"), "%s", st);
	ck_assert_msg(strstr(st, "tstamp source=sim path="), "%s", st);
	ck_assert_int_eq(ah_field(st, "lost"), 0);
	ck_assert_int_eq(ah_field(st, "malformed"), 0);
	ck_assert_int_eq(ah_field(st, "segment"), 0);
	const char *fr = strstr(st, "fit ns_per_frame=");
	ck_assert_msg(fr && strstr(fr, " rate="), "%s", st);
	double rate_hz = g_ascii_strtod(strstr(fr, " rate=") + 6, NULL);
	const sim_node_cfg *nc = sim_scenario_find_node(h.sc, NODE);
	double truth = RATE * (1 + nc->audio_skew_ppm * 1e-6) / (1 + nc->cpu.skew_ppm * 1e-6);
	/* Within 5 of the fit's own standard errors (plus 0.01 ppm for the
	 * printed digits). */
	double se_ppm = g_ascii_strtod(strstr(fr, "rate_se_ppm=") + 12, NULL);
	/* Converged: a window of 256 interrupts of 20 us latency pins the rate
	 * to ~0.3 ppm by the exponential model; the envelope's stated scale is
	 * the larger of that model's and the local density's at the floor
	 * (docs/clocks.md section 4), and under AddressSanitizer it read 2.3 ppm
	 * (not understood yet: a follow-up).  This is a sanity bound only; the
	 * accuracy check is the 5-s.e. one below. */
	ck_assert_msg(se_ppm > 0 && se_ppm < 5, "rate se %.4f ppm", se_ppm);
	ck_assert_msg(fabs(rate_hz / truth - 1) * 1e6 < 5 * se_ppm + 0.01, "fitted rate %.6f, true %.6f (%.3f ppm, se %.4f)",
		      rate_hz, truth, (rate_hz / truth - 1) * 1e6, se_ppm);
	ck_assert_msg(strstr(st, "syncd connected"), "%s", st);
	g_free(st);
	sync_client_free(sc);
	ah_stop(&h);
}
END_TEST

/* n clients at once on [first, last): past and future in one range. */
static void many_clients(const ah_node *h, int n)
{
	GMainContext *ctx = g_main_context_new();
	ah_reader *r[20];
	int64_t now = ah_wait_frames(0);
	int64_t first = now - RATE / 2, last = now + RATE / 2;
	for (int i = 0; i < n; i++)
		r[i] = ah_reader_new(ctx, first, last, 0, NULL);
	ah_spin_readers(ctx, r, n);
	for (int i = 0; i < n; i++) {
		check_range(h, r[i], first, last - first);
		ck_assert_int_eq(memcmp(r[i]->data->data, r[0]->data->data, r[0]->data->len), 0);
	}
	for (int i = 0; i < n; i++)
		ah_reader_free(r[i]);
	g_main_context_unref(ctx);
}

START_TEST(two_and_twenty_clients)
{
	ah_node h;
	ah_start(&h, NODE, "many", NULL);
	ah_find_f0(&h);
	ah_wait_frames(RATE);
	many_clients(&h, 2);
	many_clients(&h, 20);
	char *st = ah_status();
	ck_assert_int_eq(ah_field(st, "requests"), 1 + 2 + 20);
	ck_assert_int_eq(ah_field(st, "refused"), 0);
	g_free(st);
	ah_stop(&h);
}
END_TEST

static gboolean has_data(void *user)
{
	ah_reader *r = user;
	return r->data->len > 0 || r->err;
}

static gboolean past_gap(void *user)
{
	ah_reader *r = user;
	return (r->gaps && r->next > r->gap_to + RATE / 10) || r->err;
}

START_TEST(stuck_client)
{
	ah_node h;
	ah_opts o = {.audiod_conf = small_ring_conf};
	ah_start(&h, NODE, "stuck", &o);
	ah_find_f0(&h);
	GMainContext *cs = g_main_context_new(), *ca = g_main_context_new();
	/* The stuck client: open-ended from the next frame, reads one chunk and
	 * then nobody iterates its context. */
	ah_reader *s = ah_reader_new(cs, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL);
	ah_spin(cs, has_data, s);
	ck_assert_int_eq(s->err, 0);
	int64_t stuck_at = s->next;
	/* The streaming client: 4 s (four rings) from frame 0, mostly live. */
	int64_t total = 4 * RATE;
	ah_reader *a = ah_reader_new(ca, 0, total, 0, NULL);
	ah_spin_readers(ca, &a, 1);
	check_range(&h, a, 0, total);
	char *st = ah_status();
	int64_t c1 = ah_field(st, "captured");
	ck_assert_int_ge(c1, total);
	ck_assert_int_eq(ah_field(st, "streams"), 1); /* the stuck one; `a` has ended */
	g_free(st);
	/* Capture went on: more frames later. */
	ck_assert_int_gt(ah_wait_frames(c1 + h.period), c1);
	/* The stuck client resumes: what it missed is gone (1 s ring): a GAP,
	 * then data again, in order. */
	ah_spin(cs, past_gap, s);
	ck_assert_int_eq(s->err, 0);
	ck_assert_int_eq(s->gaps, 1);
	ck_assert_int_eq(s->out_of_order, 0);
	ck_assert_int_ge(s->gap_from, stuck_at);
	ck_assert_int_ge(s->gap_to, total - RATE); /* the ring held no more than 1 s behind `a`'s end */
	ah_reader_free(s);
	ah_reader_free(a);
	g_main_context_unref(cs);
	g_main_context_unref(ca);
	ah_stop(&h);
}
END_TEST

/* The request with `params` on [first, last) is refused with a message
 * containing `want`. */
static void refused(int64_t first, int64_t last, const char *params, const char *want)
{
	ah_reader *r = ah_read(first, last, params);
	ck_assert_msg(r->err < 0, "%s [%lld, %lld) was accepted", params ? params : "", (long long)first, (long long)last);
	ck_assert_msg(r->errmsg && strstr(r->errmsg, want), "%s: message \"%s\" lacks \"%s\"", params ? params : "",
		      r->errmsg ? r->errmsg : "", want);
	ah_reader_free(r);
}

START_TEST(bad_requests)
{
	ah_node h;
	ah_opts o = {.audiod_conf = small_ring_conf};
	ah_start(&h, NODE, "bad", &o);
	ah_wait_frames(2 * RATE);
	char *st = ah_status();
	int64_t c0 = ah_field(st, "captured");
	g_free(st);
	refused(c0 - 100, c0, "bogus", "not key=value");
	refused(c0 - 100, c0, "color=blue", "unknown parameter");
	refused(c0 - 100, c0, "clock=nosuch from=1 to=2", "clock \"nosuch\": unknown clock kind");
	refused(c0 - 100, c0, "clock=cpu from=1000 to=2000", "before the history kept");
	refused(c0 - 100, c0, "clock=cpu from=20 to=10", "must be after");
	refused(c0 - 100, c0, "clock=cpu from=abc", "not an integer");
	refused(c0 - 100, c0, "from=5", "without clock");
	refused(c0 - 100, c0, "channels=2", "not a channel");
	refused(c0 - 100, c0, "channels=0,-1", "not a channel");
	refused(c0 - 100, c0, "channels=", "empty");
	refused(0, 100, NULL, "older than the oldest held");
	refused(c0 - 100, c0 - 200, NULL, "last < first");
	/* A clock nobody publishes: no conversion. */
	refused(c0 - 100, c0, "clock=node77:cpu from=1 to=2", "cannot convert");
	/* Still capturing, still serving. */
	st = ah_status();
	ck_assert_int_eq(ah_field(st, "refused"), 12); /* all but the malformed header, which libdev refuses */
	g_free(st);
	int64_t c1 = ah_wait_frames(c0 + RATE / 2);
	ck_assert_int_gt(c1, c0);
	ah_reader *r = ah_read(c1 - 1000, c1, NULL);
	ck_assert(r->ended && !r->err);
	ck_assert_uint_eq(r->data->len, 1000 * h.channels * 2);
	ah_reader_free(r);
	ah_stop(&h);
}
END_TEST

START_TEST(bulk_reader)
{
	ah_node h;
	ah_start(&h, NODE, "bulk", NULL);
	ah_find_f0(&h);
	ah_wait_frames(RATE);
	GError *why = NULL;
	audio_ring *ring = NULL;
	int rc = ring_bulk_open("audio/0/ring", &ring, &why);
	ck_assert_msg(rc == 0, "ring_bulk_open: %s", why ? why->message : "?");
	const audio_ring_hdr *hd = audio_ring_header(ring);
	ck_assert_uint_eq(hd->rate_hz, RATE);
	ck_assert_uint_eq(hd->channels, h.channels);
	ck_assert_uint_eq(hd->frame_bytes, 2 * h.channels);
	int64_t first = 2000, n = RATE / 2;
	uint8_t *buf = g_malloc((size_t)n * hd->frame_bytes);
	int64_t oldest;
	ck_assert_int_eq(audio_ring_read(ring, first, (uint64_t)n, buf, &oldest), 0);
	ah_reader *r = ah_read(first, first + n, NULL);
	check_range(&h, r, first, n);
	ck_assert_int_eq(memcmp(buf, r->data->data, r->data->len), 0);
	/* Not yet written: -EAGAIN, never stale data. */
	int64_t o2, next;
	audio_ring_span(ring, &o2, &next);
	ck_assert_int_eq(audio_ring_read(ring, next, 10, buf, NULL), -EAGAIN);
	char *st = ah_status();
	ck_assert_int_eq(ah_field(st, "bulk"), 1);
	g_free(st);
	ah_reader_free(r);
	g_free(buf);
	audio_ring_free(ring);
	ah_stop(&h);
}
END_TEST

/* Run audioget with args; returns its stderr (g_free); exit status must be 0. */
/* Run audioget with args (NULL-ended, at most 14); its standard error (g_free
 * it) and the wait status in *status. */
static char *spawn_audioget(char **args, int *status)
{
	char *argv[16] = {AH_BIN_DIR "/audioget"};
	int n = 1;
	for (; args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	char *err_text = NULL;
	GError *e = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_text, status, &e),
		      "audioget: %s", e ? e->message : "");
	return err_text;
}

static char *run_audioget(char **args)
{
	int status;
	char *err_text = spawn_audioget(args, &status);
	ck_assert_msg(g_spawn_check_wait_status(status, NULL), "audioget failed: %s", err_text);
	return err_text;
}

/* Run audioget with args, which must fail (exit != 0) saying `want`. */
static void audioget_refused(char **args, const char *want)
{
	int status;
	char *err_text = spawn_audioget(args, &status);
	ck_assert_msg(!g_spawn_check_wait_status(status, NULL) && strstr(err_text, want), "audioget %s …: exit 0x%x, \"%s\"",
		      args[0], status, err_text);
	g_free(err_text);
}

/* The file holds `nch` channels chan[] of the world from audiod frame `first`. */
static void check_file(const ah_node *h, const char *path, int64_t first, int64_t n, unsigned nch, const uint16_t *chan)
{
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	ck_assert_msg(sf, "%s: %s", path, sf_strerror(NULL));
	ck_assert_int_eq(info.samplerate, RATE);
	ck_assert_int_eq(info.channels, nch);
	ck_assert_int_eq(info.frames, n);
	int16_t *x = g_new(int16_t, (size_t)n * nch);
	ck_assert_int_eq(sf_readf_short(sf, x, n), n);
	sf_close(sf);
	long bad = ah_mismatch(h, x, (size_t)n, nch, chan, h->f0 + first);
	ck_assert_msg(bad < 0, "%s: frame %ld differs from the world", path, bad);
	g_free(x);
}

/* Issue 13: `--tstamp kpatch` on a PCM the module cannot stamp (here ALSA's
 * null PCM, which names no card) fails at start-up with the reason, instead
 * of capturing with ALSA timestamps nobody asked for. */
START_TEST(kpatch_wanted_absent)
{
	char *dir = g_dir_make_tmp("chorus-kpatch-XXXXXX", NULL);
	ck_assert(dir);
	char *conf = g_build_filename(dir, "audiod.conf", NULL);
	ck_assert(g_file_set_contents(conf, "[device.0]\nperiods = 4\n", -1, NULL));
	char **env = g_environ_setenv(g_get_environ(), "CHORUS_RUN", dir, TRUE);
	env = g_environ_setenv(env, "CHORUS_NODE", "1", TRUE);
	env = g_environ_unsetenv(env, "CHORUS_SIM_CLOCK");
	char *argv[] = {AH_BIN_DIR "/audiod", "--pcm", "null", "--tstamp", "kpatch", "-c", conf, NULL};
	char *err_text = NULL;
	int status;
	GError *e = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_text, &status, &e),
		      "audiod: %s", e ? e->message : "");
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 1, "audiod --tstamp kpatch on null: status 0x%x: %s",
		      status, err_text);
	ck_assert_msg(strstr(err_text, "kpatch timestamps wanted but the PCM is not a hw: PCM"), "%s", err_text);
	g_free(err_text);
	g_strfreev(env);
	g_remove(conf);
	g_rmdir(dir);
	g_free(conf);
	g_free(dir);
}
END_TEST

START_TEST(audioget_files)
{
	ah_node h;
	ah_start(&h, NODE, "audioget", NULL);
	ah_find_f0(&h);
	ah_wait_frames(RATE);
	/* By cpu time, one channel, WAV: the range it prints is the file's. */
	int64_t t = sync_now(SYNC_KIND_CPU) - 600000000;
	char from[32], to[32], out[600];
	g_snprintf(from, sizeof from, "%lld", (long long)t);
	g_snprintf(to, sizeof to, "%lld", (long long)(t + 200000000));
	g_snprintf(out, sizeof out, "%s/x.wav", h.run);
	char *a1[] = {"--clock", "cpu", "--from", from, "--to", to, "--channels", "1", "-o", out, NULL};
	char *msg = run_audioget(a1);
	const char *p = strstr(msg, "first=");
	ck_assert_msg(p, "no range in: %s", msg);
	int64_t first = g_ascii_strtoll(p + 6, NULL, 10);
	p = strstr(msg, "last=");
	int64_t last = g_ascii_strtoll(p + 5, NULL, 10);
	ck_assert_ptr_nonnull(strstr(msg, "se_frames="));
	ck_assert_int_ge(last - first, RATE / 5 - 1);
	ck_assert_int_le(last - first, RATE / 5 + 1);
	static const uint16_t one[] = {1};
	check_file(&h, out, first, last - first, 1, one);
	/* The file states its own time: the comment holds the reply's time of
	 * the first frame on the requested clock (issue 13). */
	const char *rt = strstr(msg, " t0=");
	ck_assert_msg(rt && strstr(msg, "t0_clock=node2:cpu"), "no time in the reply: %s", msg);
	char want[64];
	g_strlcpy(want, rt + 1, sizeof want);
	*strchrnul(want, ' ') = 0;
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(out, SFM_READ, &info);
	ck_assert_ptr_nonnull(sf);
	const char *cm = sf_get_string(sf, SF_STR_COMMENT);
	ck_assert_msg(cm && strstr(cm, "t0_clock=node2:cpu") && strstr(cm, want) && strstr(cm, "period="), "comment: %s (want %s)",
		      cm ? cm : "(none)", want);
	sf_close(sf);
	ck_assert_ptr_nonnull(strstr(msg, "audioget: first frame at node2:cpu "));
	g_free(msg);
	/* By frames, both channels, FLAC (16-bit: lossless). */
	g_snprintf(out, sizeof out, "%s/x.flac", h.run);
	char *a2[] = {"--first", "12000", "--last", "20000", "-o", out, NULL};
	msg = run_audioget(a2);
	ck_assert_ptr_nonnull(strstr(msg, "first=12000 last=20000"));
	check_file(&h, out, 12000, 8000, 2, NULL);
	g_free(msg);
	/* Bad requests are refused at once, saying why (issue 15): a range
	 * that begins years ahead (it waited for ever), a negative frame, two
	 * ways of naming the range, a format audioget does not write. */
	char *b1[] = {"--first", "1000000000000000", "--last", "1000000000000010", "-o", out, NULL};
	audioget_refused(b1, "s after the newest frame");
	char *b2[] = {"--first", "-100", "--last", "5", "-o", out, NULL};
	audioget_refused(b2, "frame indices are 0 or more");
	char *b3[] = {"--clock", "global", "--from", "1", "--to", "2", "--first", "5", "-o", out, NULL};
	audioget_refused(b3, "not both");
	char *b4[] = {"--first", "12000", "--last", "12010", "-o", "x.mp3", NULL};
	audioget_refused(b4, "writes .wav or .flac");
	/* chorus-cat's listing names the ring for what it is (it said "not
	 * answering: Bad message"). */
	char *cat[] = {AH_BIN_DIR "/chorus-cat", NULL}, *cat_out = NULL;
	int cat_st;
	ck_assert(g_spawn_sync(NULL, cat, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &cat_out, NULL, &cat_st, NULL));
	ck_assert_msg(g_spawn_check_wait_status(cat_st, NULL) && strstr(cat_out, "audio/0/ring") &&
			      strstr(cat_out, "ring (audiod's shared memory") && strstr(cat_out, "audio/0/follow") &&
			      strstr(cat_out, "follow (the ring, woken by the capture thread") &&
			      !strstr(cat_out, "not answering"),
		      "chorus-cat:\n%s", cat_out);
	g_free(cat_out);
	/* Nothing lost silently (issue 15): standard output on a full device,
	 * and a WAV on a 16 KiB file system (32 KB of samples), each a
	 * non-zero exit that says why. */
	char *cmd = g_strdup_printf("exec %s/audioget --first 12000 --last 20000 --follow > /dev/full", AH_BIN_DIR);
	char *sh[] = {"/bin/sh", "-c", cmd, NULL}, *err_full = NULL;
	int st_full;
	ck_assert(g_spawn_sync(NULL, sh, NULL, 0, NULL, NULL, NULL, &err_full, &st_full, NULL));
	ck_assert_msg(!g_spawn_check_wait_status(st_full, NULL) && strstr(err_full, "standard output: No space left"),
		      "audioget > /dev/full: %s", err_full);
	g_free(err_full);
	g_free(cmd);
	char *tiny = g_strdup_printf("%s/tiny", h.run);
	g_mkdir_with_parents(tiny, 0755);
	char *mnt = g_strdup_printf("mount -t tmpfs -o size=16k tmpfs %s", tiny);
	if (getuid() == 0 && system(mnt) == 0) {
		g_snprintf(out, sizeof out, "%s/full.wav", tiny);
		char *a3[] = {AH_BIN_DIR "/audioget", "--first", "12000", "--last", "20000", "-o", out, NULL};
		char *err3 = NULL;
		int st3;
		ck_assert(g_spawn_sync(NULL, a3, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err3, &st3, NULL));
		char *um = g_strdup_printf("umount %s", tiny);
		ck_assert_int_eq(system(um), 0);
		g_free(um);
		ck_assert_msg(!g_spawn_check_wait_status(st3, NULL) && strstr(err3, "full.wav") && !strstr(err3, "frames to"),
			      "audioget on a full file system: %s", err3);
		g_free(err3);
	} else {
		printf("audioget_files: not root or no tmpfs: the full file system case did not run\n");
	}
	g_free(mnt);
	g_free(tiny);
	ah_stop(&h);
	/* No audiod: a one-shot fetch fails at once, naming the socket. */
	char *argv[] = {AH_BIN_DIR "/audioget", "--first", "0", "--last", "10", "-o", out, NULL};
	char *err_text = NULL;
	int status;
	ck_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_text, &status, NULL));
	ck_assert(!g_spawn_check_wait_status(status, NULL));
	ck_assert_msg(strstr(err_text, "unreachable at ") && strstr(err_text, "audio/0/data"), "%s", err_text);
	g_free(err_text);
}
END_TEST

static gboolean conv_ready(void *user)
{
	sync_client *sc = user;
	sync_graph_result r;
	char why[200];
	return sync_client_convert(sc, sync_clock_audio(NODE, 1), sync_clock_cpu(NODE), sync_tval_of(0), &r, why,
				   sizeof why) == 0;
}

START_TEST(two_devices)
{
	/* Device 1 is the same microphone opened a second time under another
	 * PCM string (its own side channel, sim-chorus_sim_NODE_2). */
	ah_node h;
	ah_opts o = {.audiod_conf = "[device.0]\nperiods = 64\n"
				    "[device.1]\npcm = chorus_sim:NODE=2\nchannels = 2\nperiods = 64\n"};
	ah_start(&h, NODE, "twodev", &o);
	ah_find_f0(&h);
	int64_t f1 = ah_find_f0_on(&h, "audio/1/data");
	ah_wait_frames(RATE);
	/* Each device's own frame numbering, each exact against the world. */
	ah_reader *r = ah_read_on("audio/1/data", 3000, 3000 + RATE / 2, "channels=1");
	ck_assert_msg(r->ended && !r->err, "%s", r->errmsg ? r->errmsg : "");
	static const uint16_t one[] = {1};
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)r->data->data, RATE / 2, 1, one, f1 + 3000), 0);
	ah_reader_free(r);
	r = ah_read(3000, 3000 + RATE / 2, NULL);
	check_range(&h, r, 3000, RATE / 2);
	ah_reader_free(r);
	GByteArray *b = g_byte_array_new();
	ck_assert_int_eq(dev_status_read_sync("audio/1/status", FALSE, b, 5000), 0);
	const char *st = (const char *)b->data;
	ck_assert_msg(strstr(st, "device audio/1 pcm=chorus_sim:NODE=2 node2"), "%s", st);
	ck_assert_msg(strstr(st, "tstamp source=sim path=") && strstr(st, "sim-chorus_sim_NODE_2"), "%s", st);
	g_byte_array_free(b, TRUE);
	/* node2:audio1 reaches the ticker and converts to the true time. */
	GError *e = NULL;
	sync_client *sc = sync_client_new(NULL, NULL, NULL, NULL, &e);
	ck_assert_msg(sc, "%s", e ? e->message : "");
	ah_spin(g_main_context_default(), conv_ready, sc);
	sync_graph_result g;
	char why[200];
	int64_t f = ah_wait_frames(0) - RATE / 2;
	ck_assert_int_eq(sync_client_convert(sc, sync_clock_audio(NODE, 1), sync_clock_cpu(NODE), sync_tval_of(f), &g, why,
					     sizeof why),
			 0);
	int64_t truth = sim_world_node_cpu_at(h.w, NODE, h.epoch_ns + sim_world_frame_time_ns(h.w, NODE, RATE, f1 + f));
	double err = (double)(g.value.i - truth) + g.value.f;
	ck_assert_msg(fabs(err) <= 5 * sqrt(g.var) + 1000, "audio1 frame %lld -> cpu: error %.0f ns, se %.0f ns",
		      (long long)f, err, sqrt(g.var));
	sync_client_free(sc);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audiod");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, past_range_exact);
	tcase_add_test(tc, time_to_frame);
	tcase_add_test(tc, two_and_twenty_clients);
	tcase_add_test(tc, stuck_client);
	tcase_add_test(tc, bad_requests);
	tcase_add_test(tc, bulk_reader);
	tcase_add_test(tc, audioget_files);
	tcase_add_test(tc, kpatch_wanted_absent);
	tcase_add_test(tc, two_devices);
	tcase_add_test(tc, restart_numbers_on);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
