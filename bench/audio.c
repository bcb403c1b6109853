/* bench/audio — audiod on the simulated microphone (issue 4), in one run:
 *
 *  1. audiod CPU per second of audio at 48 kHz x 4 ch (S16) with 0, 1, 8 and
 *     32 streaming clients: the daemon's threads' cpu time
 *     (schedstat of every task under /proc/PID/task, ns; /proc/PID/stat utime+stime as a
 *     cross-check at tick resolution) over a fixed wall interval, divided by
 *     the audio captured meanwhile;
 *  2. latency from a period's interrupt (the side-channel record's time,
 *     known exactly from the world model) to a client holding the chunk
 *     that completes it, p50/p99 per client count; and the capture thread's
 *     own interrupt -> wakeup latency from audio/0/status;
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
#include "bench/timing.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audiod/ringserver.h"
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

/* cpu time of every thread of pid: ns from schedstat, and utime+stime ticks. */
static void proc_cpu(GPid pid, int64_t *ns, int64_t *ticks)
{
	char path[64], buf[1024];
	*ns = 0;
	*ticks = 0;
	g_snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	GDir *d = g_dir_open(path, 0, NULL);
	AH_REQUIRE(d, "cannot list %s", path);
	const char *t;
	while ((t = g_dir_read_name(d))) {
		char *p = g_strdup_printf("%s/%s/schedstat", path, t);
		FILE *f = fopen(p, "r");
		long long v;
		if (f && fscanf(f, "%lld", &v) == 1)
			*ns += v;
		if (f)
			fclose(f);
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

/* Latency of each chunk: now (node cpu) minus the interrupt record time of
 * the period that completed its last frame. */
typedef struct {
	const ah_node *h;
	GArray *lat; /* int64_t ns */
	gboolean on; /* measuring */
} lat_ctx;

static int64_t irq_record_time(const ah_node *h, int64_t frame_end)
{
	int64_t F = h->f0 + frame_end;
	int64_t cap = (int64_t)(h->period * 1e9 / h->rate_hz) / 2;
	int64_t truth = h->epoch_ns + sim_world_frame_time_ns(h->w, h->node, h->rate_hz, F);
	return sim_world_node_cpu_at(h->w, h->node, truth + sim_world_irq_latency_ns(h->w, h->node, F, cap));
}

static void on_chunk(void *user, int64_t first, size_t n)
{
	lat_ctx *l = user;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	if (!l->on)
		return;
	int64_t P = l->h->period, end = first + (int64_t)n;
	int64_t pend = (end + P - 1) / P * P;
	int64_t v = now_ns - irq_record_time(l->h, pend);
	g_array_append_val(l->lat, v);
}

static gboolean all_flowing(void *user)
{
	GPtrArray *a = user;
	for (guint i = 0; i < a->len; i++) {
		ah_reader *r = a->pdata[i];
		if (r->err)
			ah_fail(__FILE__, __LINE__, "client %u: %s", i, r->errmsg ? r->errmsg : "error");
		if (r->next == INT64_MIN || r->data->len == 0)
			return FALSE;
	}
	return TRUE;
}

static void run_clients(ah_node *h, int n)
{
	GMainContext *ctx = g_main_context_new();
	GPtrArray *rs = g_ptr_array_new();
	lat_ctx l = {h, g_array_new(FALSE, FALSE, sizeof(int64_t)), FALSE};
	for (int i = 0; i < n; i++) {
		ah_reader *r = ah_reader_new(ctx, 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL);
		r->stop_after = 1;
		r->on_chunk = on_chunk;
		r->chunk_user = &l;
		g_ptr_array_add(rs, r);
	}
	if (n)
		ah_spin(ctx, all_flowing, rs);
	char *st = ah_status();
	int64_t c0 = ah_field(st, "captured"), cpu0, tk0, cpu1, tk1;
	g_free(st);
	int64_t recv0[32];
	for (int i = 0; i < n; i++)
		recv0[i] = ((ah_reader *)rs->pdata[i])->next;
	proc_cpu(h->audiod, &cpu0, &tk0);
	int64_t w0 = mono_ns(), end = w0 + (int64_t)(MEASURE_S * 1e9);
	l.on = TRUE;
	if (n)
		while (mono_ns() < end)
			g_main_context_iteration(ctx, TRUE);
	else
		g_usleep((gulong)(MEASURE_S * 1e6));
	l.on = FALSE;
	proc_cpu(h->audiod, &cpu1, &tk1);
	int64_t w1 = mono_ns();
	st = ah_status();
	int64_t c1 = ah_field(st, "captured");
	double audio_s = (double)(c1 - c0) / h->rate_hz, wall_s = (w1 - w0) * 1e-9;
	double cpu_per_s = (cpu1 - cpu0) * 1e-9 / audio_s;
	double tick_per_s = (double)(tk1 - tk0) / sysconf(_SC_CLK_TCK) / audio_s;
	/* Every client kept up: no gaps, everything in order. */
	double delivered = 0;
	for (int i = 0; i < n; i++) {
		ah_reader *r = rs->pdata[i];
		AH_REQUIRE(!r->gaps && !r->out_of_order && !r->err, "client %d: %d gaps, %d out of order, err %d", i,
			   r->gaps, r->out_of_order, r->err);
		delivered += (double)(r->next - recv0[i]) / h->rate_hz;
	}
	int64_t p50 = quantile(l.lat, 0.5), p99 = quantile(l.lat, 0.99);
	printf("  %3d clients  audiod cpu %7.3f ms per s of audio (%5.2f%% of a core; stat ticks %.1f ms)  "
	       "delivered %6.1f s of audio",
	       n, cpu_per_s * 1e3, 100.0 * (cpu1 - cpu0) * 1e-9 / wall_s, tick_per_s * 1e3, delivered);
	if (n)
		printf("  irq->client p50 %.0f us p99 %.0f us (%u chunks)", p50 * 1e-3, p99 * 1e-3, l.lat->len);
	printf("\n");
	/* Where the time goes inside audiod over the last 2 s of the run
	 * (audio/0/status path_us, issue 17): the capture thread's work, the
	 * hop to the main loop, the sends to every client. */
	double hp[6] = {0};
	const char *pp = strstr(st, "path_us commit=");
	if (pp && sscanf(pp, "path_us commit=%lf/%lf dispatch=%lf/%lf send=%lf/%lf", &hp[0], &hp[1], &hp[2], &hp[3], &hp[4],
			 &hp[5]) == 6) {
		printf("               wakeup->queued p50 %.0f p99 %.0f us, ->main loop p50 %.0f p99 %.0f us, ->sent p50 %.0f p99 %.0f us\n",
		       hp[0], hp[1], hp[2], hp[3], hp[4], hp[5]);
		static const char *const names[] = {"path_commit_p50", "path_commit_p99", "path_dispatch_p50",
						    "path_dispatch_p99", "path_send_p50", "path_send_p99"};
		for (int k = 0; k < 6; k++)
			out(names[k], n, hp[k], "us");
	}
	g_free(st);
	out("audiod_cpu_per_audio_s", n, cpu_per_s * 1e3, "ms/s");
	out("audiod_cpu_stat_per_audio_s", n, tick_per_s * 1e3, "ms/s");
	if (n) {
		out("irq_to_client_p50", n, p50 * 1e-3, "us");
		out("irq_to_client_p99", n, p99 * 1e-3, "us");
	}
	for (int i = 0; i < n; i++)
		ah_reader_free(rs->pdata[i]);
	g_ptr_array_free(rs, TRUE);
	g_array_free(l.lat, TRUE);
	g_main_context_unref(ctx);
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

static void capture_latency(const char *label)
{
	char *st = ah_status();
	const char *p = strstr(st, "latency_us p50=");
	double p50 = 0, p99 = 0, mx = 0, n = 0;
	if (p)
		sscanf(p, "latency_us p50=%lf p99=%lf max=%lf n=%lf", &p50, &p99, &mx, &n);
	if (n > 0)
		printf("  capture thread irq->wakeup (%s, audio/0/status): p50 %.0f us p99 %.0f us max %.0f us\n", label,
		       p50, p99, mx);
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

int main(void)
{
	ah_fail_hook = fail;
	int bad = 0;
	const char *dir = g_getenv("CHORUS_BENCH_OUT");
	char path[512];
	g_snprintf(path, sizeof path, "%s/audio.csv", dir && *dir ? dir : ".");
	csv = fopen(path, "w");
	if (!csv) {
		fprintf(stderr, "bench/audio: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(csv, "metric,clients,value,unit\n");
	char *tmp = NULL;
	if (!g_getenv("CHORUS_RUN")) {
		tmp = g_dir_make_tmp("chorus-bench-XXXXXX", NULL);
		g_setenv("CHORUS_RUN", tmp, TRUE);
	}
	printf("bench/audio: audiod on the simulated 4-mic node %d, 48 kHz S16, period 480 (%s)\n", NODE, ah_scenario());
	ah_node h;
	ah_start(&h, NODE, "bench", NULL);
	ah_find_f0(&h);
	static const int counts[] = {0, 1, 8, 32};
	for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
		run_clients(&h, counts[i]);
	capture_latency("sim");
	bulk(&h);
	double se_side;
	accuracy(&h, "sidechannel", &se_side);
	ah_stop(&h);

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
		capture_latency(label);
		double se, rms = accuracy(&h, label, &se);
		ah_stop(&h);
		if (rms > 5 * se)
			bad++, fprintf(stderr, "bench/audio: %s: RMS error %.1f us beyond 5 stated s.e. (%.1f us)\n", label,
				       rms * 1e-3, se * 1e-3);
		if (i == 0 && rms > 20000)
			bad++, fprintf(stderr, "bench/audio: %s: RMS error %.1f us above 20 us\n", label, rms * 1e-3);
	}
	g_unsetenv("CHORUS_SIM_TSTAMP");
	fclose(csv);
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
