/* bench/audio — audiod on the simulated microphone (issues 4 and 17), in one run:
 *
 *  1. audiod's own CPU at 48 kHz x 4 ch (S16) with 0, 1, 8 and 32 clients,
 *     through the sensor socket (audio/0/data) and as ring followers
 *     (audio/0/follow): the daemon's threads' cpu time (schedstat of every
 *     task under /proc/PID/task, ns; utime+stime ticks as a cross-check)
 *     over a fixed wall interval, the simulated card's render thread
 *     ("sim-dma", which a real card's DMA replaces) counted apart;
 *  2. latency from a period's interrupt (the side-channel record's time,
 *     known exactly from the world model) to a client holding the chunk
 *     that completes it, p50/p99 per path and client count, each client in
 *     its own thread as a client process would be; where the time goes
 *     (audio/0/status path_us: the capture thread's wakeup, its commit, the
 *     main loop, the sends, the followers' wakeups) beside this machine's
 *     floor measured with bare system calls in the same run (a timerfd
 *     wakeup, an eventfd or socket-pair fan-out to as many threads:
 *     bench/wakeref.h).  The capture thread runs at SCHED_FIFO as deployed
 *     (CHORUS_BENCH_RT=0: normal scheduling).  Fails when the followers are
 *     not faster than the socket path at the same client count;
 *  3. bulk read throughput (ring_bulk_open + audio_ring_read) vs memcpy of
 *     the same size, and the sensor socket for comparison;
 *  4. accuracy against the world's truth of the audio0 -> cpu conversion
 *     syncd publishes from audiod's observations: RMS / max / mean error,
 *     with the side-channel timestamps (mean interrupt latency 20 us) and
 *     with ALSA timestamps only (--tstamp alsa) in the plugin's two modes,
 *     driver (DMA position at the status call) and pessimistic (hw_ptr per
 *     interrupt, stamped at the wakeup).  Fails (exit 1) when an ALSA row's
 *     RMS error lies beyond 5 of its stated s.e., or the driver row's
 *     exceeds 20 us.
 * Prints a table and writes $CHORUS_BENCH_OUT/audio.csv (metric,clients,value,unit).
 */
#include "bench/csvout.h"
#include "bench/timing.h"
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audiod/follower.h"
#include "audiod/ringserver.h"
#include "bench/wakeref.h"
#include "libsync/client.h"
#include "libsync/now.h"
#include "tests/audiod_harness.h"

#define NODE 4
#define MEASURE_S 4.0

static FILE *csv;

static void fail(const char *msg)
{
	fprintf(stderr, "bench/audio: %s\n", msg);
	exit(1);
}

static void out(const char *metric, int clients, double value, const char *unit)
{
	fprintf(csv, "%s,%d,%.6g,%s\n", metric, clients, value, unit);
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* cpu time of every thread of pid: ns from schedstat, and utime+stime
 * ticks; *synth_ns is the part of the simulated card's render thread
 * ("sim-dma", sim/render_ahead.h), which a real card's DMA does for free. */
static void proc_cpu(GPid pid, int64_t *ns, int64_t *ticks, int64_t *synth_ns)
{
	char path[64], buf[1024];
	*ns = 0;
	*ticks = 0;
	*synth_ns = 0;
	g_snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	GDir *d = g_dir_open(path, 0, NULL);
	AH_REQUIRE(d, "cannot list %s", path);
	const char *t;
	while ((t = g_dir_read_name(d))) {
		char *p = g_strdup_printf("%s/%s/schedstat", path, t);
		char *cp = g_strdup_printf("%s/%s/comm", path, t), *comm = NULL;
		FILE *f = fopen(p, "r");
		long long v = 0;
		if (f && fscanf(f, "%lld", &v) == 1)
			*ns += v;
		if (f)
			fclose(f);
		if (g_file_get_contents(cp, &comm, NULL, NULL) && g_str_has_prefix(comm, "sim-dma"))
			*synth_ns += v;
		g_free(comm);
		g_free(cp);
		g_free(p);
	}
	g_dir_close(d);
	g_snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	AH_REQUIRE(f && fgets(buf, sizeof buf, f), "cannot read %s", path);
	fclose(f);
	/* Fields after the ")" of comm: state is field 3; utime 14, stime 15. */
	const char *q = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	AH_REQUIRE(q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2,
		   "cannot parse %s", path);
	*ticks = (int64_t)(ut + st);
}

static int64_t quantile(GArray *a, double q)
{
	if (!a->len)
		return 0;
	g_array_sort(a, bench_cmp_i64);
	size_t i = (size_t)(q * (a->len - 1) + 0.5);
	return g_array_index(a, int64_t, i);
}

/* The interrupt record time of the period ending at frame_end (a multiple
 * of the period): the side channel's time, known exactly from the world. */
static int64_t irq_record_time(const ah_node *h, int64_t frame_end)
{
	int64_t F = h->f0 + frame_end;
	int64_t cap = (int64_t)(h->period * 1e9 / h->rate_hz) / 2;
	int64_t truth = h->epoch_ns + sim_world_frame_time_ns(h->w, h->node, h->rate_hz, F);
	return sim_world_node_cpu_at(h->w, h->node, truth + sim_world_irq_latency_ns(h->w, h->node, F, cap));
}

/* How a client gets its frames. */
typedef enum { VIA_SOCKET,
	       VIA_FOLLOW } via;
static const char *const via_name[] = {"socket", "follow"};

/* One client, in its own thread as a client process would be. */
typedef struct {
	const ah_node *h;
	via mode;
	atomic_int *measuring, *stop;
	atomic_int flowing;
	GThread *thread;
	GArray *lat;      /* int64_t ns: now minus the interrupt of the last frame's period */
	int64_t frames;   /* received while measuring */
	int64_t expected; /* next frame expected, or INT64_MIN */
	int gaps, out_of_order;
	uint64_t lost;
	char why[200]; /* a failure, or "" */
} client;

/* A chunk [first, first + n) in hand: latency and continuity. */
static void got_frames(client *c, int64_t first, int64_t n)
{
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	if (c->expected != INT64_MIN && first != c->expected)
		c->out_of_order++;
	c->expected = first + n;
	atomic_store(&c->flowing, 1);
	if (!atomic_load(c->measuring))
		return;
	int64_t P = c->h->period, end = first + n;
	int64_t pend = (end + P - 1) / P * P;
	int64_t v = now_ns - irq_record_time(c->h, pend);
	g_array_append_val(c->lat, v);
	c->frames += n;
}

static void on_chunk(void *user, int64_t first, size_t n)
{
	got_frames(user, first, (int64_t)n);
}

static void socket_client(client *c)
{
	GMainContext *ctx = g_main_context_new();
	ah_reader *r = ah_reader_new(ctx, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL);
	r->stop_after = 1;
	r->on_chunk = on_chunk;
	r->chunk_user = c;
	while (!atomic_load(c->stop) && !r->err)
		g_main_context_iteration(ctx, TRUE);
	c->gaps = r->gaps;
	if (r->err)
		g_snprintf(c->why, sizeof c->why, "%s", r->errmsg ? r->errmsg : "sensor error");
	ah_reader_free(r);
	g_main_context_unref(ctx);
}

static void follow_client(client *c)
{
	GError *e = NULL;
	ring_follower *f = NULL;
	if (ring_follow_open("audio/0/follow", RING_FOLLOW_FROM_NEXT, &f, &e) < 0) {
		g_snprintf(c->why, sizeof c->why, "%s", e->message);
		g_error_free(e);
		return;
	}
	const audio_ring_hdr *hd = audio_ring_header(ring_follow_ring(f));
	enum { MAXF = 4096 };
	uint8_t *buf = g_malloc((size_t)MAXF * hd->frame_bytes);
	while (!atomic_load(c->stop)) {
		int rc = ring_follow_wait(f, 100);
		if (rc < 0) {
			g_snprintf(c->why, sizeof c->why, "follower: %s", g_strerror(-rc));
			break;
		}
		long n;
		int64_t first;
		uint64_t lost;
		while ((n = ring_follow_read(f, buf, MAXF, &first, &lost)) > 0) {
			c->lost += lost;
			if (audio_ring_has_gap(ring_follow_ring(f), first, (uint64_t)n))
				c->gaps++;
			got_frames(c, first, n);
		}
	}
	g_free(buf);
	ring_follow_free(f);
}

static gpointer client_main(gpointer data)
{
	client *c = data;
	if (c->mode == VIA_SOCKET)
		socket_client(c);
	else
		follow_client(c);
	atomic_store(&c->flowing, 1); /* even when it failed: the waiter sees why */
	return NULL;
}

/* The parts of audio/0/status path_us: wakeup->queued, ->main loop, ->sent,
 * and wakeup->followers woken (p50, p99 each). */
static void path_hops(const char *st, double hp[8])
{
	memset(hp, 0, 8 * sizeof *hp);
	const char *pp = strstr(st, "path_us commit=");
	if (pp)
		sscanf(pp, "path_us commit=%lf/%lf dispatch=%lf/%lf send=%lf/%lf notify=%lf/%lf", &hp[0], &hp[1], &hp[2],
		       &hp[3], &hp[4], &hp[5], &hp[6], &hp[7]);
}

typedef struct {
	via mode;
	int clients;
	double p50_us, p99_us, own_pct, synth_pct, hops[8];
	unsigned chunks;
} row;

/* n clients by `mode` for MEASURE_S: latency and audiod's cpu. */
static row run_clients(ah_node *h, via mode, int n)
{
	atomic_int measuring = 0, stop = 0;
	client *cs = g_new0(client, n ? n : 1);
	for (int i = 0; i < n; i++) {
		client *c = &cs[i];
		c->h = h;
		c->mode = mode;
		c->measuring = &measuring;
		c->stop = &stop;
		c->lat = g_array_new(FALSE, FALSE, sizeof(int64_t));
		c->expected = INT64_MIN;
		c->thread = g_thread_new("client", client_main, c);
	}
	int64_t deadline = mono_ns() + (int64_t)AH_SAFETY_S * 1000000000;
	for (int i = 0; i < n; i++) {
		while (!atomic_load(&cs[i].flowing) && mono_ns() < deadline)
			g_usleep(1000);
		AH_REQUIRE(atomic_load(&cs[i].flowing) && !cs[i].why[0], "%s client %d: %s", via_name[mode], i,
			   cs[i].why[0] ? cs[i].why : "no frames");
	}
	char *st = ah_status();
	int64_t c0 = ah_field(st, "captured"), cpu0, tk0, sy0, cpu1, tk1, sy1;
	g_free(st);
	proc_cpu(h->audiod, &cpu0, &tk0, &sy0);
	int64_t w0 = mono_ns(), t_row = ah_host_now(); /* host raw, as spawn_host_ns */
	atomic_store(&measuring, 1);
	g_usleep((gulong)(MEASURE_S * 1e6));
	atomic_store(&measuring, 0);
	proc_cpu(h->audiod, &cpu1, &tk1, &sy1);
	int64_t w1 = mono_ns();
	st = ah_status();
	int64_t c1 = ah_field(st, "captured");
	atomic_store(&stop, 1);
	row rw = {.mode = mode, .clients = n};
	path_hops(st, rw.hops);
	g_free(st);
	GArray *lat = g_array_new(FALSE, FALSE, sizeof(int64_t));
	double delivered = 0;
	for (int i = 0; i < n; i++) {
		client *c = &cs[i];
		g_thread_join(c->thread);
		/* Every client kept up: no gaps, nothing lost, everything in order. */
		AH_REQUIRE(!c->why[0] && !c->gaps && !c->out_of_order && !c->lost,
			   "%s client %d: %d gaps, %d out of order, %" G_GUINT64_FORMAT " lost%s%s", via_name[mode], i,
			   c->gaps, c->out_of_order, c->lost, c->why[0] ? ": " : "", c->why);
		g_array_append_vals(lat, c->lat->data, c->lat->len);
		delivered += (double)c->frames / h->rate_hz;
		g_array_free(c->lat, TRUE);
	}
	g_free(cs);
	double audio_s = (double)(c1 - c0) / h->rate_hz, wall_s = (w1 - w0) * 1e-9;
	double own_ns = (double)(cpu1 - cpu0 - (sy1 - sy0));
	rw.own_pct = 100.0 * own_ns * 1e-9 / wall_s;
	rw.synth_pct = 100.0 * (sy1 - sy0) * 1e-9 / wall_s;
	rw.p50_us = quantile(lat, 0.5) * 1e-3;
	rw.p99_us = quantile(lat, 0.99) * 1e-3;
	rw.chunks = lat->len;
	printf("  [%5.1f s] %-6s %3d clients  audiod own cpu %5.2f%% of a core (%.3f ms per s of audio; the simulated card's "
	       "rendering %5.2f%% more; stat ticks %.1f ms)  delivered %6.1f s",
	       (t_row - h->spawn_host_ns) * 1e-9, via_name[mode], n, rw.own_pct, own_ns * 1e-6 / audio_s, rw.synth_pct,
	       (double)(tk1 - tk0) / sysconf(_SC_CLK_TCK) / audio_s * 1e3, delivered);
	if (n)
		printf("  irq->client p50 %.0f us p99 %.0f us (%u chunks)", rw.p50_us, rw.p99_us, rw.chunks);
	printf("\n");
	char m[64];
	g_snprintf(m, sizeof m, "audiod_own_cpu_%s", via_name[mode]);
	out(m, n, rw.own_pct, "%core");
	g_snprintf(m, sizeof m, "sim_render_cpu_%s", via_name[mode]);
	out(m, n, rw.synth_pct, "%core");
	if (n) {
		g_snprintf(m, sizeof m, "irq_to_client_%s_p50", via_name[mode]);
		out(m, n, rw.p50_us, "us");
		g_snprintf(m, sizeof m, "irq_to_client_%s_p99", via_name[mode]);
		out(m, n, rw.p99_us, "us");
	}
	static const char *const names[] = {"path_commit_p50", "path_commit_p99", "path_dispatch_p50",
					    "path_dispatch_p99", "path_send_p50", "path_send_p99"};
	if (mode == VIA_SOCKET)
		for (int k = 0; k < 6; k++)
			out(names[k], n, rw.hops[k], "us");
	g_array_free(lat, TRUE);
	return rw;
}

static void bulk(ah_node *h)
{
	GError *why = NULL;
	audio_ring *ring = NULL;
	int rc = ring_bulk_open("audio/0/ring", &ring, &why);
	AH_REQUIRE(rc == 0, "ring_bulk_open: %s", why ? why->message : "?");
	const audio_ring_hdr *hd = audio_ring_header(ring);
	int64_t oldest, next;
	audio_ring_span(ring, &oldest, &next);
	const uint64_t n = h->rate_hz; /* one second per read */
	size_t bytes = n * hd->frame_bytes;
	uint8_t *dst = g_malloc(bytes), *src = g_malloc(bytes);
	memset(src, 1, bytes);
	const int reps = 200;
	int64_t first = next - 2 * (int64_t)n;
	AH_REQUIRE(first >= oldest, "ring holds too little");
	int64_t t0 = mono_ns();
	for (int i = 0; i < reps; i++) {
		rc = audio_ring_read(ring, first, n, dst, NULL);
		AH_REQUIRE(rc == 0, "audio_ring_read: %d", rc);
	}
	int64_t t1 = mono_ns();
	for (int i = 0; i < reps; i++) {
		memcpy(dst, src, bytes);
		__asm__ volatile(""
				 :
				 : "r"(dst)
				 : "memory");
	}
	int64_t t2 = mono_ns();
	int64_t t3 = mono_ns();
	const int sreps = 10;
	for (int i = 0; i < sreps; i++) {
		ah_reader *r = ah_read(first, first + (int64_t)n, NULL);
		AH_REQUIRE(r->ended && r->data->len == bytes, "sensor read failed");
		ah_reader_free(r);
	}
	int64_t t4 = mono_ns();
	double ring_gbs = (double)bytes * reps / (t1 - t0), cpy_gbs = (double)bytes * reps / (t2 - t1),
	       sock_gbs = (double)bytes * sreps / (t4 - t3);
	printf("  bulk read of 1 s (%zu bytes): ring %.2f GB/s (%.0f us), memcpy %.2f GB/s (%.0f us), "
	       "sensor socket %.3f GB/s (%.0f us)\n",
	       bytes, ring_gbs, (t1 - t0) * 1e-3 / reps, cpy_gbs, (t2 - t1) * 1e-3 / reps, sock_gbs,
	       (t4 - t3) * 1e-3 / sreps);
	out("bulk_ring_read", 0, ring_gbs, "GB/s");
	out("bulk_memcpy", 0, cpy_gbs, "GB/s");
	out("sensor_socket_read", 1, sock_gbs, "GB/s");
	g_free(dst);
	g_free(src);
	audio_ring_free(ring);
}

/* audio0 -> cpu through syncd's ticker vs the world: frames every 100 over
 * the last 4 s.  Returns the RMS error, ns. */
static double accuracy(ah_node *h, const char *label, double *se_out)
{
	GError *e = NULL;
	sync_client *sc = sync_client_new(NULL, NULL, NULL, NULL, &e);
	AH_REQUIRE(sc, "%s", e ? e->message : "");
	AH_REQUIRE(sync_client_wait(sc, AH_SAFETY_S * 1000) == 0, "no ticker");
	char *st = ah_status();
	int64_t next = ah_field(st, "captured");
	g_free(st);
	double sum2 = 0, sum = 0, maxe = 0, se_sum = 0;
	int n = 0;
	for (int64_t f = next - 4 * (int64_t)h->rate_hz; f < next - (int64_t)h->period; f += 100) {
		sync_graph_result r;
		char why[200];
		int rc = sync_client_convert(sc, sync_clock_audio(NODE, 0), sync_clock_cpu(NODE), sync_tval_of(f), &r,
					     why, sizeof why);
		AH_REQUIRE(rc == 0, "audio0 -> cpu at frame %lld: %s", (long long)f, why);
		int64_t truth = sim_world_node_cpu_at(
			h->w, h->node, h->epoch_ns + sim_world_frame_time_ns(h->w, h->node, h->rate_hz, h->f0 + f));
		double err = (double)(r.value.i - truth) + r.value.f;
		sum += err;
		sum2 += err * err;
		maxe = fmax(maxe, fabs(err));
		se_sum += sqrt(r.var);
		n++;
	}
	sync_client_free(sc);
	double rms = sqrt(sum2 / n);
	*se_out = se_sum / n;
	printf("  audio0->cpu accuracy (%s): RMS %.3f us, max %.3f us, mean %+.3f us, stated se %.3f us (%d frames)\n",
	       label, rms * 1e-3, maxe * 1e-3, sum / n * 1e-3, se_sum / n * 1e-3, n);
	char m[64];
	g_snprintf(m, sizeof m, "accuracy_%s_rms", label);
	out(m, 0, rms * 1e-3, "us");
	g_snprintf(m, sizeof m, "accuracy_%s_max", label);
	out(m, 0, maxe * 1e-3, "us");
	g_snprintf(m, sizeof m, "accuracy_%s_mean", label);
	out(m, 0, sum / n * 1e-3, "us");
	g_snprintf(m, sizeof m, "accuracy_%s_se", label);
	out(m, 0, se_sum / n * 1e-3, "us");
	return rms;
}

static void capture_latency(const ah_node *h, const char *label)
{
	char *st = ah_status();
	const char *p = strstr(st, "latency_us p50=");
	double p50 = 0, p99 = 0, mx = 0, n = 0, ago = 0, recs = 0;
	if (p)
		sscanf(p, "latency_us p50=%lf p99=%lf max=%lf n=%lf", &p50, &p99, &mx, &n);
	const char *q = p ? strstr(p, " max_ago_s=") : NULL;
	if (q)
		sscanf(q, " max_ago_s=%lf max_records=%lf", &ago, &recs);
	/* When the worst wakeup came, counted from audiod's start: a start-up
	 * transient or a wakeup that slept through an interrupt (more than one
	 * record read) is the usual explanation. */
	double since_start = (ah_host_now() - h->spawn_host_ns) * 1e-9 - ago;
	if (n > 0)
		printf("  capture thread irq->wakeup (%s, audio/0/status): p50 %.0f us p99 %.0f us max %.0f us "
		       "(%.1f s after audiod started, a wakeup that read %.0f record%s)\n",
		       label, p50, p99, mx, since_start, recs, recs == 1 ? "" : "s");
	else
		printf("  capture thread irq->wakeup (%s): not measurable (ALSA timestamps carry no interrupt time)\n",
		       label);
	char m[64];
	g_snprintf(m, sizeof m, "capture_wakeup_%s_p50", label);
	out(m, 0, p50, "us");
	g_snprintf(m, sizeof m, "capture_wakeup_%s_p99", label);
	out(m, 0, p99, "us");
	g_free(st);
}

/* The per-hop table (issue 17): where the time from the interrupt to a
 * client goes, against this machine's floor measured with bare system calls
 * in the same run (bench/wakeref.h).  Returns the failures: the follower
 * path must be faster than the socket path it is the alternative to. */
static int latency_table(const ah_node *h, row rows[2][4], const int *counts)
{
	int64_t period_ns = (int64_t)(h->period * 1e9 / h->rate_hz);
	const int rounds = 200;
	char *st = ah_status();
	double w50 = 0, w99 = 0, wmax = 0, wn = 0;
	const char *p = strstr(st, "latency_us p50=");
	if (p)
		sscanf(p, "latency_us p50=%lf p99=%lf max=%lf n=%lf", &w50, &w99, &wmax, &wn);
	wake_q timer = wakeref_timer(period_ns, rounds);
	size_t chunk = (size_t)h->period * 8 + 64; /* 4 ch x S16 and the chunk header */
	wake_q efd[4], sock[4];
	for (int i = 1; i < 4; i++) {
		efd[i] = wakeref_fanout(counts[i], 0, period_ns, rounds);
		sock[i] = wakeref_fanout(counts[i], chunk, period_ns, rounds);
	}
	const char *rt = strstr(st, " rt=");
	printf("\n  where the time goes (p50 / p99 us; this machine, 2 cores; capture thread %s; floor = bare system "
	       "calls, same run):\n",
	       rt && g_str_has_prefix(rt, " rt=SCHED_FIFO") ? "SCHED_FIFO" : "normal scheduling");
	printf("  %-44s %8s %8s   %s\n", "hop", "p50", "p99", "floor p50 / p99");
	printf("  %-44s %8.0f %8.0f   %.0f / %.0f (a thread in poll on a timerfd: the simulated interrupt)\n",
	       "interrupt -> capture thread awake", w50, w99, timer.p50_us, timer.p99_us);
	const row *s1 = &rows[VIA_SOCKET][1];
	printf("  %-44s %8.0f %8.0f\n", "awake -> frames committed, event queued", s1->hops[0], s1->hops[1]);
	printf("  %-44s %8.0f %8.0f\n", "queued -> main loop (eventfd, socket path)", s1->hops[2], s1->hops[3]);
	for (int i = 1; i < 4; i++) {
		char what[64];
		g_snprintf(what, sizeof what, "main loop -> sent to %d client%s", counts[i], counts[i] > 1 ? "s" : "");
		printf("  %-44s %8.0f %8.0f\n", what, rows[VIA_SOCKET][i].hops[4], rows[VIA_SOCKET][i].hops[5]);
	}
	for (int i = 1; i < 4; i++) {
		char what[64];
		g_snprintf(what, sizeof what, "awake -> %d follower%s woken (eventfd)", counts[i], counts[i] > 1 ? "s" : "");
		printf("  %-44s %8.0f %8.0f\n", what, rows[VIA_FOLLOW][i].hops[6], rows[VIA_FOLLOW][i].hops[7]);
		out("path_notify_p50", counts[i], rows[VIA_FOLLOW][i].hops[6], "us");
		out("path_notify_p99", counts[i], rows[VIA_FOLLOW][i].hops[7], "us");
	}
	printf("\n  %-8s %7s %18s %30s %8s %10s\n", "path", "clients", "irq->client", "floor: timer + hop to clients",
	       "ratio", "aim p50/p99");
	static const double aim50[4] = {0, 100, 150, 150}, aim99[4] = {0, 250, 400, 400};
	for (int m = 0; m < 2; m++)
		for (int i = 1; i < 4; i++) {
			const row *r = &rows[m][i];
			const wake_q *hop = m == VIA_FOLLOW ? &efd[i] : &sock[i];
			double f50 = timer.p50_us + hop->p50_us, f99 = timer.p99_us + hop->p99_us;
			printf("  %-8s %7d %8.0f / %6.0f %14.0f / %-6.0f (%s) %6.2f %5.0f/%-4.0f %s\n", via_name[m], r->clients,
			       r->p50_us, r->p99_us, f50, f99, m == VIA_FOLLOW ? "eventfd" : "socket ", r->p50_us / f50,
			       aim50[i], aim99[i], r->p50_us <= aim50[i] && r->p99_us <= aim99[i] ? "met" : "not met");
			char name[64];
			g_snprintf(name, sizeof name, "floor_%s_p50", via_name[m]);
			out(name, r->clients, f50, "us");
			g_snprintf(name, sizeof name, "floor_%s_p99", via_name[m]);
			out(name, r->clients, f99, "us");
		}
	g_free(st);
	out("floor_timer_p50", 0, timer.p50_us, "us");
	out("floor_timer_p99", 0, timer.p99_us, "us");
	int bad = 0;
	for (int i = 1; i < 4; i++)
		if (rows[VIA_FOLLOW][i].p50_us >= rows[VIA_SOCKET][i].p50_us) {
			fprintf(stderr, "bench/audio: %d followers: p50 %.0f us, not below the socket path's %.0f us\n",
				counts[i], rows[VIA_FOLLOW][i].p50_us, rows[VIA_SOCKET][i].p50_us);
			bad++;
		}
	printf("\n");
	return bad;
}

int main(void)
{
	ah_fail_hook = fail;
	int bad = 0;
	char path[4096];
	csv = bench_csv_open("audio.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "metric,clients,value,unit\n");
	char *tmp = NULL;
	if (!g_getenv("CHORUS_RUN")) {
		tmp = g_dir_make_tmp("chorus-bench-XXXXXX", NULL);
		g_setenv("CHORUS_RUN", tmp, TRUE);
	}
	printf("bench/audio: audiod on the simulated 4-mic node %d, 48 kHz S16, period 480 (%s)\n", NODE, ah_scenario());
	ah_node h;
	/* The capture thread at SCHED_FIFO, as deployed (README, the unit's
	 * LimitRTPRIO): woken clients cannot preempt it before it has woken
	 * them all.  CHORUS_BENCH_RT=0 measures normal scheduling. */
	const char *rt = g_getenv("CHORUS_BENCH_RT");
	char *conf = g_strdup_printf("[audiod]\nrt_priority = %s\n[device.0]\nperiods = 64\n", rt ? rt : "50");
	ah_opts ro = {.audiod_conf = conf};
	ah_start(&h, NODE, "bench", &ro);
	ah_find_f0(&h);
	static const int counts[] = {0, 1, 8, 32};
	row rows[2][4];
	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
			rows[m][i] = run_clients(&h, (via)m, counts[i]);
	capture_latency(&h, "sim");
	bad += latency_table(&h, rows, counts);
	bulk(&h);
	double se_side;
	accuracy(&h, "sidechannel", &se_side);
	ah_stop(&h);
	g_free(conf);

	/* ALSA timestamps from the plugin's two modes (sim/pcm_chorus_sim.c):
	 * the position read at the status call, like HDA's DMA position
	 * ("driver"), and hw_ptr moving only at interrupts, stamped at the
	 * wakeup ("pessimistic").  Each row must state an error bar that
	 * covers its error. */
	static const char *const modes[] = {"driver", "pessimistic"};
	for (int i = 0; i < 2; i++) {
		g_setenv("CHORUS_SIM_TSTAMP", modes[i], TRUE);
		ah_opts o = {.tstamp = "alsa"};
		char tag[32], label[32];
		g_snprintf(tag, sizeof tag, "alsa%d", i);
		g_snprintf(label, sizeof label, "alsa-%s", modes[i]);
		ah_start(&h, NODE, tag, &o);
		ah_find_f0(&h);
		ah_wait_frames(8 * (int64_t)h.rate_hz);
		capture_latency(&h, label);
		double se, rms = accuracy(&h, label, &se);
		ah_stop(&h);
		if (rms > 5 * se)
			bad++, fprintf(stderr, "bench/audio: %s: RMS error %.1f us beyond 5 stated s.e. (%.1f us)\n", label,
				       rms * 1e-3, se * 1e-3);
		if (i == 0 && rms > 20000)
			bad++, fprintf(stderr, "bench/audio: %s: RMS error %.1f us above 20 us\n", label, rms * 1e-3);
	}
	g_unsetenv("CHORUS_SIM_TSTAMP");
	if (bench_csv_close(csv, path) != 0)
		bad = 1;
	printf("  (csv: %s)\n", path);
	if (tmp) {
		char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "bench/audio: could not remove %s\n", tmp);
		g_free(cmd);
		g_free(tmp);
	}
	return bad ? 1 : 0;
}
