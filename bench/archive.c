/* archive.c — what chorus-archive costs (docs/archive.md §6): CPU per node,
 * bytes per hour, the latency of a 2 s request an hour back, and the
 * recovery time after a kill -9 in the middle of a segment.
 *
 *  - encode: one minute of the simulated world's signal (tests/data/
 *    audiod.ini, node 4: four mics at 48 kHz; channel 0 rendered at 16 kHz
 *    for the mono case) written through archive_segment at each FLAC level
 *    asked for, flushed every second as the daemon does: CPU s per s of
 *    audio (= fraction of a core) and bytes per hour;
 *  - live: the real chorus-archive on the real audiod of node 4 (48 kHz x
 *    4 ch) for 10 s: the daemon's user+system CPU from /proc, which adds
 *    the sensor stream's IPC to the encoding;
 *  - hour back: 60 one-minute segments (the encoded minute, copied with
 *    its index moved on by a minute each); a 2 s range in the oldest one
 *    read in-process (store scan + resolve + decode) and through audioget
 *    (a process, audiod down: its fallback), p50 and max of 10;
 *  - recovery: a child writes a minute into a segment, flushing every
 *    second, and dies with _exit before closing it (what kill -9 leaves:
 *    the encoder's last block and the STREAMINFO never written); the time
 *    archive_recover takes to close it.
 * Prints a table; writes $CHORUS_BENCH_OUT/archive.csv (metric,case,value,unit).
 */
#include <errno.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/csvout.h"
#include "archive/durable.h"
#include "bench/cpuload.h"
#include "archive/recover.h"
#include "archive/segment.h"
#include "archive/serve.h"
#include "archive/store.h"
#include "sim/scenario.h"
#include "sim/world.h"
#include "tests/audiod_harness.h"

#define NODE 4
#define MINUTE_S 60

static FILE *csv;

static void out(const char *metric, const char *c, double v, const char *unit)
{
	fprintf(csv, "%s,%s,%.6g,%s\n", metric, c, v, unit);
}

static G_GNUC_NORETURN void fail(const char *msg)
{
	fprintf(stderr, "bench/archive: %s\n", msg);
	exit(1);
}

static double cpu_self_s(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	return (double)g_get_monotonic_time() / 1e6;
}

/* A minute of the world at rate_hz on `channels` mics of node 4, S16. */
static int16_t *render(sim_world *w, unsigned rate_hz, unsigned channels)
{
	size_t n = (size_t)rate_hz * MINUTE_S;
	int16_t *x = g_new(int16_t, n * channels);
	for (size_t i = 0; i < n; i++)
		for (unsigned c = 0; c < channels; c++)
			x[i * channels + c] = sim_to_s16(sim_world_sample(w, NODE, (int)c, rate_hz, (int64_t)i));
	return x;
}

static archive_index *head(unsigned rate_hz, unsigned channels, int64_t first, int64_t run_ns)
{
	archive_index *x = archive_index_new();
	x->node = NODE;
	x->rate_hz = rate_hz;
	x->channels = channels;
	g_strlcpy(x->format, "S16_LE", sizeof x->format);
	x->first = first;
	x->run_ns = run_ns;
	x->wall_ns = run_ns + (int64_t)((double)first * 1e9 / rate_hz);
	return x;
}

/* Write the minute as one segment into dir, flushing every second, with
 * two global time points; close unless `crash` (then _exit: the child of
 * the recovery case).  Returns the CPU s it took. */
static double write_minute(const char *dir, const int16_t *x, unsigned rate_hz, unsigned channels, int level,
			   int64_t first, int64_t run_ns, gboolean crash)
{
	GError *err = NULL;
	archive_index *h = head(rate_hz, channels, first, run_ns);
	double c0 = cpu_self_s();
	archive_segment *s = archive_segment_open(dir, h, level, &err);
	if (!s)
		fail(err->message);
	size_t n = (size_t)rate_hz * MINUTE_S, chunk = rate_hz / 100; /* 10 ms chunks, as audiod's periods */
	for (size_t i = 0; i < n; i += chunk) {
		if (!archive_segment_write(s, x + i * channels, MIN(chunk, n - i), &err))
			fail(err->message);
		if ((i / chunk) % 100 == 99) {
			archive_timept t = {.frame = first + (int64_t)i, .cpu_ns = 0, .has_global = 1};
			t.global_ns = h->wall_ns + (int64_t)((double)i * 1e9 / rate_hz);
			t.global_se_ns = 1000;
			archive_segment_add_time(s, &t);
			if (!archive_segment_flush(s, &err))
				fail(err->message);
		}
	}
	if (crash)
		_exit(0);
	if (!archive_segment_close(s, h->wall_ns + MINUTE_S * 1000000000LL, &err))
		fail(err->message);
	double c = cpu_self_s() - c0;
	archive_index_free(h);
	return c;
}

static int64_t dir_bytes(const char *dir, const char *suffix)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *n;
	int64_t b = 0;
	while ((n = g_dir_read_name(d))) {
		if (!g_str_has_suffix(n, suffix))
			continue;
		char *p = g_build_filename(dir, n, NULL);
		GStatBuf st;
		if (g_stat(p, &st) == 0)
			b += st.st_size;
		g_free(p);
	}
	g_dir_close(d);
	return b;
}

static void rm_dir(const char *dir)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *n;
	while (d && (n = g_dir_read_name(d))) {
		char *p = g_build_filename(dir, n, NULL);
		g_unlink(p);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_rmdir(dir);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void read_cb(void *user, int64_t first, const void *frames, size_t n)
{
	*(int64_t *)user += (int64_t)n;
}

/* 60 segments from the one in src (the copies' indices moved on by a
 * minute each); a 2 s range in the oldest, read 10 times in-process and
 * 10 times through audioget. */
static void hour_back(const char *base, const char *label, unsigned rate_hz, unsigned channels, const char *src)
{
	char *dir = g_build_filename(base, "hour", NULL);
	g_mkdir_with_parents(dir, 0755);
	GError *err = NULL;
	archive_store *one = archive_store_open(src, FALSE, &err);
	if (!one || archive_store_count(one) != 1)
		fail("the encoded minute is not a store of one segment");
	const archive_entry *en = archive_store_entry(one, 0);
	char *flac = g_strdup_printf("%s/%s.flac", src, en->name), *data = NULL;
	gsize len;
	if (!g_file_get_contents(flac, &data, &len, &err))
		fail(err->message);
	for (int m = 0; m < 60; m++) {
		archive_index *x = archive_index_new();
		GArray *t = x->times, *g = x->gaps;
		*x = *en->x;
		x->times = t;
		x->gaps = g;
		int64_t df = (int64_t)m * rate_hz * MINUTE_S, dt = (int64_t)m * MINUTE_S * 1000000000LL;
		x->first += df;
		x->wall_ns += dt;
		x->wall_end_ns += dt;
		for (guint k = 0; k < en->x->times->len; k++) {
			archive_timept p = g_array_index(en->x->times, archive_timept, k);
			p.frame += df;
			p.global_ns += dt;
			g_array_append_val(t, p);
		}
		char name[ARCHIVE_NAME_MAX], *fn, *in;
		archive_name(x, name, sizeof name);
		fn = g_strdup_printf("%s.flac", name);
		in = g_strdup_printf("%s.idx", name);
		GString *text = g_string_new(NULL);
		archive_index_format(x, text);
		if (!archive_write_atomic(dir, fn, data, len, &err) || !archive_write_atomic(dir, in, text->str, text->len, &err))
			fail(err->message);
		g_string_free(text, TRUE);
		g_free(fn);
		g_free(in);
		archive_index_free(x);
	}
	/* 2 s, 10 s into the oldest minute: an hour before the newest. */
	int64_t first = en->x->first + 10 * (int64_t)rate_hz, last = first + 2 * (int64_t)rate_hz;
	double t_in[10], t_get[10];
	for (int i = 0; i < 10; i++) {
		double t0 = now_s();
		archive_store *s = archive_store_open(dir, FALSE, &err);
		archive_request q = {.node = NODE, .first = first, .last = last};
		archive_answer a;
		int64_t got = 0;
		archive_read_ops ops = {NULL, read_cb, NULL};
		if (!s || !archive_resolve(s, &q, &a, &err) || archive_store_read(s, NODE, 0, first, last, &ops, &got, &err) < 0)
			fail(err->message);
		t_in[i] = now_s() - t0;
		if (got != last - first)
			fail("the hour-back read came short");
		archive_store_free(s);
	}
	char f0[32], f1[32], *outp = g_build_filename(base, "get.flac", NULL);
	g_snprintf(f0, sizeof f0, "%" PRId64, first);
	g_snprintf(f1, sizeof f1, "%" PRId64, last);
	char nn[16];
	g_snprintf(nn, sizeof nn, "%d", NODE);
	char *argv[] = {AH_BIN_DIR "/audioget", "--node", nn, "--archive", dir, "--first", f0, "--last", f1, "-o", outp, NULL};
	for (int i = 0; i < 10; i++) {
		int st;
		double t0 = now_s();
		if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL, &st, &err) || st != 0)
			fail("audioget from the archive failed");
		t_get[i] = now_s() - t0;
	}
	qsort(t_in, 10, sizeof(double), cmp_double);
	qsort(t_get, 10, sizeof(double), cmp_double);
	printf("  %-10s 2 s an hour back: in-process p50 %.1f ms max %.1f ms; audioget p50 %.1f ms max %.1f ms\n", label,
	       t_in[5] * 1e3, t_in[9] * 1e3, t_get[5] * 1e3, t_get[9] * 1e3);
	out("hour_back_inprocess_p50", label, t_in[5] * 1e3, "ms");
	out("hour_back_inprocess_max", label, t_in[9] * 1e3, "ms");
	out("hour_back_audioget_p50", label, t_get[5] * 1e3, "ms");
	out("hour_back_audioget_max", label, t_get[9] * 1e3, "ms");
	g_free(outp);
	g_free(flac);
	g_free(data);
	archive_store_free(one);
	rm_dir(dir);
	g_free(dir);
}

static void recovery(const char *base, const char *label, const int16_t *x, unsigned rate_hz, unsigned channels)
{
	char *dir = g_build_filename(base, "crash", NULL);
	g_mkdir_with_parents(dir, 0755);
	pid_t pid = fork();
	if (pid == 0)
		write_minute(dir, x, rate_hz, channels, 5, 0, 1764547200000000000LL, TRUE);
	int st;
	waitpid(pid, &st, 0);
	archive_recovery r;
	GError *err = NULL;
	if (!archive_recover(dir, 5, &r, &err))
		fail(err->message);
	printf("  %-10s recovery of a killed 1-minute segment: %.1f ms (%d segment, %" PRId64 " of %u frames kept)\n",
	       label, r.elapsed_s * 1e3, r.recovered, r.frames, rate_hz * MINUTE_S);
	out("recovery", label, r.elapsed_s * 1e3, "ms");
	out("recovery_frames_kept", label, (double)r.frames, "frames");
	rm_dir(dir);
	g_free(dir);
}

static void encode_case(const char *base, sim_world *w, const char *label, unsigned rate_hz, unsigned channels)
{
	int16_t *x = render(w, rate_hz, channels);
	static const int levels[] = {0, 5, 8};
	char *keep = NULL;
	for (size_t i = 0; i < G_N_ELEMENTS(levels); i++) {
		char *dir = g_strdup_printf("%s/enc-%s-%d", base, label, levels[i]);
		g_mkdir_with_parents(dir, 0755);
		double cpu = write_minute(dir, x, rate_hz, channels, levels[i], 0, 1764547200000000000LL, FALSE);
		int64_t b = dir_bytes(dir, ".flac") + dir_bytes(dir, ".idx");
		double raw = (double)rate_hz * channels * 2 * 3600;
		printf("  %-10s FLAC level %d: %.2f %% of a core, %.1f MB/hour (%.0f %% of raw PCM)\n", label, levels[i],
		       100 * cpu / MINUTE_S, b * 60 / 1e6, 100 * b * 60 / raw);
		char m[64];
		g_snprintf(m, sizeof m, "cpu_level%d", levels[i]);
		out(m, label, 100 * cpu / MINUTE_S, "percent_of_core");
		g_snprintf(m, sizeof m, "bytes_per_hour_level%d", levels[i]);
		out(m, label, (double)b * 60, "bytes");
		if (levels[i] == 5)
			keep = dir;
		else {
			rm_dir(dir);
			g_free(dir);
		}
	}
	hour_back(base, label, rate_hz, channels, keep);
	recovery(base, label, x, rate_hz, channels);
	rm_dir(keep);
	g_free(keep);
	g_free(x);
}

/* /proc/PID/stat user + system time, s; -1 when it cannot be read. */
static double proc_cpu_s(GPid pid)
{
	cpuload_proc p;
	return cpuload_proc_read((int)pid, &p) ? p.self_s : -1;
}

static void live(void)
{
	ah_node h;
	ah_start(&h, NODE, "bench-archive", NULL);
	char *dir = g_build_filename(h.run, "archive", NULL), *conf = g_build_filename(h.run, "archive.conf", NULL);
	char *text = g_strdup_printf("[archive]\ndir = %s\nreserve_mb = 0\n", dir);
	g_file_set_contents(conf, text, -1, NULL);
	char *argv[] = {AH_BIN_DIR "/chorus-archive", "-c", conf, NULL};
	GPid pid;
	GError *err = NULL;
	if (!g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, &err))
		fail(err->message);
	g_usleep(2 * G_USEC_PER_SEC); /* past the start and the ring's backlog */
	double c0 = proc_cpu_s(pid), t0 = now_s();
	g_usleep(10 * G_USEC_PER_SEC);
	double c = proc_cpu_s(pid) - c0, t = now_s() - t0;
	kill(pid, SIGTERM);
	int st;
	waitpid(pid, &st, 0);
	printf("  live       chorus-archive on audiod, 48 kHz x %u ch, level 5: %.2f %% of a core over %.1f s\n", h.channels,
	       100 * c / t, t);
	out("cpu_live", "48k_4ch", 100 * c / t, "percent_of_core");
	g_free(text);
	g_free(conf);
	g_free(dir);
	ah_stop(&h);
}

int main(void)
{
	ah_fail_hook = fail;
	char path[4096];
	csv = bench_csv_open("archive.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "metric,case,value,unit\n");
	char *base = g_dir_make_tmp("chorus-bench-archive-XXXXXX", NULL);
	if (!g_getenv("CHORUS_RUN"))
		g_setenv("CHORUS_RUN", base, TRUE);
	GError *err = NULL;
	sim_scenario *sc = sim_scenario_load(ah_scenario(), &err);
	sim_world *w = sc ? sim_world_new(sc, &err) : NULL;
	if (!w)
		fail(err->message);
	printf("bench/archive: FLAC segments of the simulated world (%s, node %d), one minute each, on %s\n", ah_scenario(),
	       NODE, base);
	encode_case(base, w, "48k_4ch", 48000, 4);
	encode_case(base, w, "16k_1ch", 16000, 1);
	live();
	sim_world_free(w);
	sim_scenario_free(sc);
	rm_dir(base);
	g_free(base);
	if (bench_csv_close(csv, path) != 0)
		return 1;
	printf("bench/archive: wrote %s\n", path);
	return 0;
}
