/* proxy.c — benchmark of remote device access (chorus-proxy over loopback
 * TCP) against the same devices read locally, in one run:
 *
 *   status read        dev_link_status on an open link            (latency)
 *   status one-shot    dev_status_read_sync: connect (+ TCP, the
 *                      handshake's two HMACs) + read + close        (latency)
 *   command round trip dev_link_call on an open link               (latency)
 *   sensor stream      dev_sensor_reader over a past range          (MB/s)
 *   proxy cpu          chorus-proxy's share of one core relaying a
 *                      16 kHz stereo int16 stream (64000 B/s) paced
 *                      in real time, and a status subscriber       (% core)
 *
 * The devices run on a thread of this process, the proxy is a child
 * (tests/proxy_fixture.h).  Prints a table and writes
 * $CHORUS_BENCH_OUT/proxy.csv.  Timing is CLOCK_MONOTONIC; no assertions. */
#include "bench/csvout.h"
#include "bench/cpuload.h"
#include "bench/timing.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdev/dev.h"
#include "tests/proxy_fixture.h"

#define LAT_ITERS 5000
#define LAT_WARMUP 300
#define ONESHOT_ITERS 300
#define STREAM_ITEMS (25ll * 1000 * 1000) /* 50 MB of 2-byte items */
#define CPU_SECONDS 5

typedef struct {
	double p50, p90, p99, mean;
} lat;

static lat summarize(int64_t *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, bench_cmp_i64);
	double s = 0;
	for (int i = 0; i < n; i++)
		s += (double)t[i];
	return (lat){t[n / 2] / 1e3, t[n * 9 / 10] / 1e3, t[n * 99 / 100] / 1e3, s / n / 1e3};
}

static pfx *the_node; /* for die(): the proxy child must not outlive us */

static void die(const char *what, int e, const char *msg)
{
	fprintf(stderr, "bench proxy: %s: %s (%s)\n", what, g_strerror(-e), msg ? msg : "");
	if (the_node && the_node->pid)
		kill(the_node->pid, SIGTERM);
	exit(1);
}

/* Status reads (or command calls) on one open link. */
static lat on_link(const char *name, gboolean command)
{
	GError *err = NULL;
	dev_link *l = dev_link_open(name, 2000, &err);
	if (!l)
		die(name, -err->code, err->message);
	GByteArray *out = g_byte_array_new();
	int64_t *t = g_new(int64_t, LAT_ITERS);
	for (int i = -LAT_WARMUP; i < LAT_ITERS; i++) {
		int64_t t0 = bench_now_ns();
		int st, e = command ? dev_link_call(l, "set 1", 5, &st, out, 2000) : dev_link_status(l, FALSE, out, 2000);
		if (e < 0)
			die(name, e, NULL);
		if (i >= 0)
			t[i] = bench_now_ns() - t0;
	}
	lat r = summarize(t, LAT_ITERS);
	g_free(t);
	g_byte_array_unref(out);
	dev_link_close(l);
	return r;
}

static lat oneshot(const char *name)
{
	GByteArray *out = g_byte_array_new();
	int64_t *t = g_new(int64_t, ONESHOT_ITERS);
	for (int i = -10; i < ONESHOT_ITERS; i++) {
		int64_t t0 = bench_now_ns();
		int e = dev_status_read_sync(name, FALSE, out, 2000);
		if (e < 0)
			die(name, e, (char *)out->data);
		if (i >= 0)
			t[i] = bench_now_ns() - t0;
	}
	lat r = summarize(t, ONESHOT_ITERS);
	g_free(t);
	g_byte_array_unref(out);
	return r;
}

typedef struct {
	int64_t next, end;
	guint64 bytes;
	gboolean bad;
} stream;

static void s_data(void *u, int64_t first, const void *items, size_t n)
{
	stream *s = u;
	if (first != s->next)
		s->bad = TRUE;
	s->next = first + (int64_t)n;
	s->bytes += n * 2;
}

static void s_opened(void *u, int64_t first, int64_t last, uint32_t item, const void *r, size_t n)
{
	((stream *)u)->next = first;
}

static void s_end(void *u, int64_t next) { ((stream *)u)->end = next; }

static void s_error(void *u, int err, const char *msg) { die("sensor stream", err, msg); }

/* MB/s of a past range [0, STREAM_ITEMS). */
static double sensor_rate(const char *name)
{
	stream s = {.end = -1};
	dev_sensor_reader_ops ops = {NULL, s_data, NULL, s_end, s_error, NULL};
	int64_t t0 = bench_now_ns();
	dev_sensor_reader *r = dev_sensor_reader_new(name, 0, STREAM_ITEMS, 0, NULL, 0, NULL, &ops, &s, NULL);
	while (s.end < 0)
		g_main_context_iteration(NULL, TRUE);
	double dt = (double)(bench_now_ns() - t0) / 1e9;
	dev_sensor_reader_free(r);
	if (s.bad || s.bytes != (guint64)STREAM_ITEMS * 2)
		die(name, -EIO, "the stream lost or reordered items");
	return (double)s.bytes / 1e6 / dt;
}

static void grow(pfx *f, void *data) { f->sn_next = *(int64_t *)data; }

/* Real-time pacing: 32000 items a second (16 kHz x 2 channels), by the
 * clock (a late timer catches up), announced every 10 ms. */
static int64_t pace_t0, pace_base;
static gboolean pace(gpointer data)
{
	pfx *f = data;
	f->sn_next = pace_base + (bench_now_ns() - pace_t0) * 32000 / 1000000000;
	dev_sensor_advance(f->sn, f->sn_next);
	f->value++;
	if (f->value % 10 == 0)
		dev_status_notify(f->st);
	return G_SOURCE_CONTINUE;
}

static guint pace_id;
static void start_pace(pfx *f, void *data)
{
	pace_t0 = bench_now_ns();
	pace_base = f->sn_next;
	GSource *s = g_timeout_source_new(10);
	g_source_set_callback(s, pace, f, NULL);
	pace_id = g_source_attach(s, f->ctx);
	g_source_unref(s);
}

static void stop_pace(pfx *f, void *data)
{
	GSource *s = g_main_context_find_source_by_id(f->ctx, pace_id);
	if (s)
		g_source_destroy(s);
}

/* utime + stime of a process, s; -1 when it cannot be read. */
static double cpu_of(GPid pid)
{
	cpuload_proc p;
	return cpuload_proc_read((int)pid, &p) ? p.self_s : -1;
}

static void st_upd(void *u, int err, const char *d, size_t n) { (*(int *)u)++; }

/* chorus-proxy's % of a core for a paced stream and a status subscriber. */
static double proxy_cpu(pfx *f, guint64 *bytes)
{
	int64_t start = 200000000;
	pfx_call(f, grow, &start);
	stream s = {.end = -1};
	dev_sensor_reader_ops ops = {s_opened, s_data, NULL, s_end, s_error, NULL};
	pfx_call(f, start_pace, NULL);
	dev_sensor_reader *r = dev_sensor_reader_new("node3:demo/data", 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL, 0,
						     NULL, &ops, &s, NULL);
	int ups = 0;
	dev_status_reader *sr = dev_status_reader_new("node3:demo/status", FALSE, NULL, st_upd, NULL, &ups, NULL);
	int64_t until = bench_now_ns() + 1000000000; /* settle 1 s */
	while (bench_now_ns() < until)
		if (!g_main_context_iteration(NULL, FALSE))
			g_usleep(1000);
	double c0 = cpu_of(f->pid);
	guint64 b0 = s.bytes;
	int64_t t0 = bench_now_ns();
	until = t0 + (int64_t)CPU_SECONDS * 1000000000;
	while (bench_now_ns() < until)
		if (!g_main_context_iteration(NULL, FALSE))
			g_usleep(1000);
	double dt = (double)(bench_now_ns() - t0) / 1e9;
	double c1 = cpu_of(f->pid);
	*bytes = s.bytes - b0;
	dev_status_reader_free(sr);
	dev_sensor_reader_free(r);
	pfx_call(f, stop_pace, NULL);
	if (s.bad)
		die("paced stream", -EIO, "items lost or reordered");
	return 100.0 * (c1 - c0) / dt;
}

int main(int argc, char **argv)
{
	char *run = g_dir_make_tmp("chorus-bench-proxy-XXXXXX", NULL);
	g_setenv("CHORUS_RUN", run, TRUE);
	char *dir = g_path_get_dirname(argv[0]);
	char *bindir = g_build_filename(dir, "..", "bin", NULL);
	g_free(dir);
	pfx *f = pfx_start(bindir, 1000, NULL);
	the_node = f;
	int64_t n = STREAM_ITEMS;
	pfx_call(f, grow, &n);

	lat ls = on_link("demo/status", FALSE), rs = on_link("node3:demo/status", FALSE);
	lat lo = oneshot("demo/status"), ro = oneshot("node3:demo/status");
	lat lc = on_link("demo/ctl", TRUE), rc = on_link("node3:demo/ctl", TRUE);
	double lsen = sensor_rate("demo/data"), rsen = sensor_rate("node3:demo/data");
	guint64 bytes;
	double cpu = proxy_cpu(f, &bytes);
	pfx_stop(f);
	the_node = NULL;
	rmdir(run);

	struct {
		const char *metric, *unit;
		double local, remote;
	} rows[] = {
		{"status_read_p50", "us", ls.p50, rs.p50},
		{"status_read_p90", "us", ls.p90, rs.p90},
		{"status_read_p99", "us", ls.p99, rs.p99},
		{"status_read_mean", "us", ls.mean, rs.mean},
		{"status_oneshot_p50", "us", lo.p50, ro.p50},
		{"status_oneshot_p99", "us", lo.p99, ro.p99},
		{"command_rtt_p50", "us", lc.p50, rc.p50},
		{"command_rtt_p99", "us", lc.p99, rc.p99},
		{"sensor_stream", "MB/s", lsen, rsen},
	};
	printf("%-20s %12s %12s %8s\n", "metric", "local", "remote", "ratio");
	char csvp[4096];
	FILE *csv = bench_csv_open("proxy.csv", csvp, sizeof csvp);
	if (csv)
		fprintf(csv, "metric,unit,local,remote,ratio\n");
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		double ratio = rows[i].remote / rows[i].local;
		printf("%-20s %10.2f%-2s %10.2f%-2s %8.2f\n", rows[i].metric, rows[i].local, rows[i].unit[0] == 'u' ? "us" : "",
		       rows[i].remote, rows[i].unit[0] == 'u' ? "us" : "", ratio);
		if (csv)
			fprintf(csv, "%s,%s,%.3f,%.3f,%.3f\n", rows[i].metric, rows[i].unit, rows[i].local, rows[i].remote, ratio);
	}
	printf("%-20s %12s %10.2f%%  (%.0f B/s relayed over %d s, and a status subscriber)\n", "proxy_cpu_16k_stereo", "",
	       cpu, (double)bytes / CPU_SECONDS, CPU_SECONDS);
	printf("(latencies: %d on an open link after %d warm-up, %d one-shot; stream %lld MB; loopback TCP)\n", LAT_ITERS,
	       LAT_WARMUP, ONESHOT_ITERS, STREAM_ITEMS * 2 / 1000000);
	int rc_ = 0;
	if (csv) {
		fprintf(csv, "proxy_cpu_16k_stereo,%%core,,%.3f,\n", cpu);
		if (bench_csv_close(csv, csvp) != 0)
			rc_ = 1;
		else
			printf("wrote %s\n", csvp);
	} else {
		rc_ = 1;
	}
	g_free(run);
	g_free(bindir);
	return rc_;
}
