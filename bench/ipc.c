/* ipc.c — benchmark of libdev against raw SOCK_SEQPACKET sockets.
 *
 *   command round trip   dev_link_call on a command device     vs raw ping-pong
 *   status read          dev_link_status on a status device     vs raw ping-pong
 *                        (same request and reply sizes as the libdev messages)
 *   sensor streaming     dev_sensor_reader over a sensor device with 4 KiB and
 *                        64 KiB chunks   vs raw blocking writes of the same chunks
 *
 * The services (and the raw echo/writer) run on a second thread with its own
 * GMainContext; the client is this thread.  Prints a table and writes
 * $CHORUS_BENCH_OUT/ipc.csv.  Timing is CLOCK_MONOTONIC; no assertions. */
#include "bench/csvout.h"
#include "bench/timing.h"
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libdev/dev.h"

#define RT_ITERS 20000
#define RT_WARMUP 1000
#define STREAM_BYTES_4K (64ull << 20)
#define STREAM_BYTES_64K (256ull << 20)

typedef struct {
	double p50, p99;
} pct;

static pct percentiles(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_i64);
	return (pct){v[n / 2] / 1e3, v[(int)(n * 0.99)] / 1e3};
}

/* ---- services on the server thread ---- */

static char status_text[64];

static int st_text(void *u, GString *o)
{
	g_string_append(o, status_text);
	return 0;
}

static int cmd_run(void *u, const dev_creds *w, const char *c, GString *r)
{
	g_string_append(r, "pong");
	return 0;
}

#define ITEM 4
static uint8_t ring[1 << 17];

static void sn_range(void *u, int64_t *o, int64_t *n)
{
	*o = 0;
	*n = INT64_MAX / 2; /* everything is "held": measure transport, not waiting */
}

static int sn_read(void *u, void *c, int64_t first, size_t n, void *buf)
{
	memcpy(buf, ring, n * ITEM); /* a ring copy, as audiod does */
	return 0;
}

typedef struct {
	GMainContext *ctx;
	GMainLoop *loop;
} server;

static gpointer server_main(gpointer p)
{
	server *s = p;
	g_main_context_push_thread_default(s->ctx);
	g_main_loop_run(s->loop);
	g_main_context_pop_thread_default(s->ctx);
	return NULL;
}

/* ---- raw baselines ---- */

typedef struct {
	int fd;
	size_t reply;   /* echo: reply size; writer: chunk size */
	uint64_t total; /* writer: bytes to send */
} raw_peer;

static gpointer raw_echo(gpointer p)
{
	raw_peer *r = p;
	uint8_t buf[256], out[256] = {0};
	while (recv(r->fd, buf, sizeof buf, 0) > 0)
		if (send(r->fd, out, r->reply, MSG_NOSIGNAL) < 0)
			break;
	return NULL;
}

static gpointer raw_writer(gpointer p)
{
	raw_peer *r = p;
	uint8_t *chunk = g_malloc0(r->reply);
	for (uint64_t sent = 0; sent < r->total; sent += r->reply - 32) { /* payload bytes, as the reader counts */
		memcpy(chunk + 32, ring, r->reply - 32);                  /* same copy as the sensor read */
		if (send(r->fd, chunk, r->reply, MSG_NOSIGNAL) < 0)
			break;
	}
	g_free(chunk);
	return NULL;
}

/* A raw SOCK_SEQPACKET pair with an echo thread answering `reply` bytes. */
typedef struct {
	int sv[2];
	raw_peer rp;
	GThread *t;
} raw_pair;

static void raw_open(raw_pair *p, size_t reply)
{
	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, p->sv);
	p->rp = (raw_peer){p->sv[1], reply, 0};
	p->t = g_thread_new("echo", raw_echo, &p->rp);
}

static void raw_close(raw_pair *p)
{
	shutdown(p->sv[0], SHUT_RDWR);
	g_thread_join(p->t);
	close(p->sv[0]);
	close(p->sv[1]);
}

static int64_t raw_rt(raw_pair *p, size_t req)
{
	uint8_t buf[256] = {0};
	int64_t t0 = bench_now_ns();
	send(p->sv[0], buf, req, MSG_NOSIGNAL);
	recv(p->sv[0], buf, sizeof buf, 0);
	return bench_now_ns() - t0;
}

static double raw_stream(size_t chunk_payload, uint64_t total)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	size_t msg = chunk_payload + 32; /* same datagram size as a SENS_DATA */
	raw_peer rp = {sv[1], msg, total};
	uint8_t *buf = g_malloc(msg);
	int64_t t0 = bench_now_ns();
	GThread *t = g_thread_new("writer", raw_writer, &rp);
	uint64_t got = 0;
	while (got < total) {
		ssize_t n = recv(sv[0], buf, msg, 0);
		if (n <= 0)
			break;
		got += (uint64_t)n - 32;
	}
	double s = (bench_now_ns() - t0) / 1e9;
	g_thread_join(t);
	close(sv[0]);
	close(sv[1]);
	g_free(buf);
	return got / s / 1e6;
}

/* ---- libdev measurements ---- */

/* Round trips through libdev (`status` FALSE: a command, TRUE: a status
 * read) interleaved one for one with raw ping-pongs of the same sizes, so
 * both see the same machine load (the 2 shared cores are noisy). */
static void interleaved(gboolean status, pct *dev, pct *raw)
{
	dev_link *l = dev_link_open(status ? "bench/status" : "bench/cmd", 5000, NULL);
	GByteArray *out = g_byte_array_new();
	/* wire sizes: CMD "ping" 20 B -> CMD_REPLY 24 B; STATUS_GET 16 B -> 16+32 B */
	size_t req = status ? 16 : 20, reply = status ? 48 : 24;
	raw_pair rp;
	raw_open(&rp, reply);
	int64_t *v = g_new(int64_t, RT_ITERS), *w = g_new(int64_t, RT_ITERS);
	int st;
	for (int i = -RT_WARMUP; i < RT_ITERS; i++) {
		int64_t t0 = bench_now_ns();
		int e = status ? dev_link_status(l, FALSE, out, 5000) : dev_link_call(l, "ping", 4, &st, out, 5000);
		int64_t dt = bench_now_ns() - t0;
		if (e < 0)
			g_error("bench: libdev request failed: %s", g_strerror(-e));
		int64_t rt = raw_rt(&rp, req);
		if (i >= 0) {
			v[i] = dt;
			w[i] = rt;
		}
	}
	raw_close(&rp);
	dev_link_close(l);
	g_byte_array_unref(out);
	*dev = percentiles(v, RT_ITERS);
	*raw = percentiles(w, RT_ITERS);
	g_free(v);
	g_free(w);
}

typedef struct {
	GMainLoop *loop;
	uint64_t bytes;
} stream_rx;

static void rx_data(void *u, int64_t first, const void *items, size_t n) { ((stream_rx *)u)->bytes += n * ITEM; }
static void rx_end(void *u, int64_t next) { g_main_loop_quit(((stream_rx *)u)->loop); }
static void rx_error(void *u, int err, const char *m) { g_error("stream: %s", m); }

static double dev_stream(const char *name, uint64_t total)
{
	GMainContext *ctx = g_main_context_new();
	g_main_context_push_thread_default(ctx);
	stream_rx rx = {g_main_loop_new(ctx, FALSE), 0};
	dev_sensor_reader_ops ops = {NULL, rx_data, NULL, rx_end, rx_error, NULL};
	int64_t t0 = bench_now_ns();
	dev_sensor_reader *r = dev_sensor_reader_new(name, 0, (int64_t)(total / ITEM), 0, NULL, 0, ctx, &ops, &rx, NULL);
	g_main_loop_run(rx.loop);
	double s = (bench_now_ns() - t0) / 1e9;
	dev_sensor_reader_free(r);
	g_main_loop_unref(rx.loop);
	g_main_context_pop_thread_default(ctx);
	g_main_context_unref(ctx);
	return rx.bytes / s / 1e6;
}

int main(void)
{
	/* One CPU for every thread: on this shared VM a wakeup on an idle second
	 * CPU costs ~40 us at random, which swamped the difference measured.
	 * Pinned, libdev and raw pay the same thread handoff.  CHORUS_BENCH_CPUS=all
	 * leaves the affinity alone. */
	const char *cpus = g_getenv("CHORUS_BENCH_CPUS");
	if (!cpus || strcmp(cpus, "all") != 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
		sched_setaffinity(0, sizeof set, &set);
	}
	char *run = g_dir_make_tmp("chorus-bench-XXXXXX", NULL);
	g_setenv("CHORUS_RUN", run, TRUE);
	g_unsetenv("CHORUS_NODE");
	memset(status_text, 's', 32);
	for (size_t i = 0; i < sizeof ring; i++)
		ring[i] = (uint8_t)i;

	server s = {g_main_context_new(), NULL};
	s.loop = g_main_loop_new(s.ctx, FALSE);
	GError *e = NULL;
	dev_command *cmd = dev_command_new("bench/cmd", NULL, s.ctx, cmd_run, NULL, NULL, &e);
	dev_status *st = cmd ? dev_status_new("bench/status", NULL, s.ctx, st_text, NULL, NULL, &e) : NULL;
	dev_sensor_ops sops = {sn_range, sn_read, NULL, NULL, NULL};
	dev_options o4, o64;
	dev_options_init(&o4);
	dev_options_init(&o64);
	o4.chunk_bytes = 4096;
	o64.chunk_bytes = 65536;
	dev_sensor *s4 = st ? dev_sensor_new("bench/data4k", &o4, s.ctx, ITEM, &sops, NULL, &e) : NULL;
	dev_sensor *s64 = s4 ? dev_sensor_new("bench/data64k", &o64, s.ctx, ITEM, &sops, NULL, &e) : NULL;
	if (!s64) {
		fprintf(stderr, "bench ipc: %s\n", e->message);
		return 1;
	}
	GThread *th = g_thread_new("server", server_main, &s);

	pct dc, rc, ds, rs;
	interleaved(FALSE, &dc, &rc);
	interleaved(TRUE, &ds, &rs);
	double d4 = dev_stream("bench/data4k", STREAM_BYTES_4K), r4 = raw_stream(4096, STREAM_BYTES_4K);
	double d64 = dev_stream("bench/data64k", STREAM_BYTES_64K), r64 = raw_stream(65536, STREAM_BYTES_64K);

	g_main_loop_quit(s.loop);
	g_thread_join(th);
	dev_command_free(cmd);
	dev_status_free(st);
	dev_sensor_free(s4);
	dev_sensor_free(s64);
	g_main_loop_unref(s.loop);
	g_main_context_unref(s.ctx);
	char *sub = g_build_filename(run, "bench", NULL);
	rmdir(sub);
	rmdir(run);
	g_free(sub);

	struct {
		const char *metric, *unit;
		double dev, raw;
		const char *aim;
	} rows[] = {
		{"command_rtt_p50", "us", dc.p50, rc.p50, "<= 1.5x raw"},
		{"command_rtt_p99", "us", dc.p99, rc.p99, ""},
		{"status_read_p50", "us", ds.p50, rs.p50, ""},
		{"status_read_p99", "us", ds.p99, rs.p99, ""},
		{"sensor_stream_4k", "MB/s", d4, r4, ""},
		{"sensor_stream_64k", "MB/s", d64, r64, ">= raw/2"},
	};
	printf("%-20s %12s %12s %8s  %s\n", "metric", "libdev", "raw", "ratio", "aim");
	char csvp[4096];
	FILE *csv = bench_csv_open("ipc.csv", csvp, sizeof csvp);
	if (!csv)
		return 1;
	fprintf(csv, "metric,unit,libdev,raw,ratio\n");
	for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
		double ratio = rows[i].dev / rows[i].raw;
		printf("%-20s %10.2f%-2s %10.2f%-2s %8.2f  %s\n", rows[i].metric, rows[i].dev,
		       rows[i].unit[0] == 'u' ? "us" : "", rows[i].raw, rows[i].unit[0] == 'u' ? "us" : "", ratio,
		       rows[i].aim);
		fprintf(csv, "%s,%s,%.3f,%.3f,%.3f\n", rows[i].metric, rows[i].unit, rows[i].dev, rows[i].raw, ratio);
	}
	printf("(MB/s rows: higher is better; round trips %d after %d warm-up; streams %llu/%llu MiB)\n", RT_ITERS,
	       RT_WARMUP, STREAM_BYTES_4K >> 20, STREAM_BYTES_64K >> 20);
	int lost = bench_csv_close(csv, csvp) != 0;
	if (!lost)
		printf("wrote %s\n", csvp);
	g_free(run);
	return lost;
}
