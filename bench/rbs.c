/* bench/rbs.c — RBS accuracy and scale through chorus-sim's launcher (real
 * syncd and audiod processes on loopback, ground truth from the scenario).
 *
 *   1. single hop: 6 nodes in range, receive jitter 1 µs, skews up to
 *      ±100 ppm: cpu<->cpu RMS error and its ratio to the least-squares
 *      bound of each fit (that jitter, that fit's n and spread);
 *      and audio0 node i -> audio0 node j (audiod at 16 kHz on each);
 *   2. hops: 9 nodes in a line, each hearing its neighbours: RMS error by
 *      path length, against sqrt(hops) times the one-hop error;
 *   3. scale: N nodes of syncd + audiod at 16 kHz for 20 s: the largest N
 *      with every process alive, no xrun and every frame captured (the
 *      conversions beyond 5 standard errors are shown beside it);
 *   4. scale table: grids of N nodes 10 m apart, radio range 15 m (8
 *      neighbours), default timers, with audio (audiod at 16 kHz) and
 *      syncd only up to 300: bytes per node per second on the radio (UDP
 *      payload, sync/rbs tx_bytes), CPU per node (syncd, audiod; % of one
 *      core, from /proc), the machine's busy share, conversions in a
 *      ticker, RMS error at one hop against the RMS of the standard errors
 *      libsync stated, and conversions beyond 5 s.e. (must be 0: the run
 *      fails otherwise).  Every sample reads 16 tickers in turn and
 *      converts each to 8 radio neighbours and global
 *      (csim_truth_set_budget).  Rows "H2" run [rbs] advert_hops = 2
 *      (scoped advertisements: 300 nodes in real time); the RMS error of
 *      the conversions to global is printed beside the one-hop one, and
 *      audio rows check every node's xruns and frames (reported, not
 *      failed: real time is the machine's limit).  A full-flood syncd-only
 *      row whose load, projected from the previous one as N^2 (loopback
 *      hands every packet to every node's socket), exceeds the machine is
 *      not run and says so.
 *      Absolute figures are this machine's.
 *   5. dense-field table: N nodes all in range, every node beaconing and
 *      fitting every other ([rbs] references = 0) against K reference
 *      broadcasters (references = K): bytes per node per second, CPU, the
 *      ticker's size, RMS error against the stated s.e. at one hop and over
 *      all conversions measured, conversions beyond 5 s.e. (must be 0).
 *   Both tables count the conversions that could not be made (a ticker
 *   not read, no path, no global) over those attempted: must be 0.
 * Prints a table and writes CHORUS_BENCH_OUT/rbs.csv.  Environment:
 * RBS_BENCH_QUICK=1 shortens the runs; RBS_BENCH_SCALE="10 20 30" the sizes;
 * RBS_BENCH_TABLE="audio:10 sync:300:2" the scale table's rows (mode:nodes, or
 * mode:nodes:H with [rbs] advert_hops = H); RBS_BENCH_DENSE="50:0 50:4"
 * the dense table's rows (nodes:references); RBS_BENCH_ONLY=table or dense runs
 * that table alone.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/cpuload.h"
#include "libdev/link.h"
#include "libsync/ticker_read.h"
#include "sim/launch/launch.h"
#include "sim/launch/truth.h"

#ifndef CSIM_BIN_DIR
#define CSIM_BIN_DIR "build/bin"
#endif

static const char FAST[] = "[rbs]\nbeacon_interval_s = 0.25\nreport_interval_s = 0.25\nadvert_interval_s = 0.5\n"
			   "[realtime]\ninterval_s = 0.25\n";

static GString *g_csv;
static char *g_root;
static int g_quick;

static csim *start(const char *name, const char *scenario, gboolean audio, const char *conf)
{
	char *dir = g_build_filename(g_root, name, NULL);
	g_mkdir_with_parents(dir, 0755);
	char *sc = g_build_filename(dir, "scenario.ini", NULL);
	g_file_set_contents(sc, scenario, -1, NULL);
	csim_opts o = {.scenario = sc, .out_dir = dir, .bin_dir = CSIM_BIN_DIR, .syncd_extra = conf, .audio = audio, .audio_rate_hz = 16000, .ready_timeout_ms = 60000};
	GError *err = NULL;
	csim *s = csim_start(&o, &err);
	if (!s)
		fprintf(stderr, "bench/rbs: %s: %s\n", name, err->message);
	g_free(sc);
	g_free(dir);
	return s;
}

/* Sample the truth every 0.5 s for `secs`, keeping samples after `warm`. */
static void run(csim_truth *t, double warm, double secs)
{
	for (double e = 0; e < secs; e += 0.5) {
		g_usleep(500000);
		csim_truth_sample(t, e >= warm);
	}
}

static void node_line(GString *s, int id, double x, double skew_ppm, int64_t off)
{
	g_string_append_printf(s,
			       "[node.%d]\nposition_m = %g,0,0\ncpu_skew_ppm = %g\ncpu_offset_ns = %" G_GINT64_FORMAT
			       "\naudio_skew_ppm = %g\nradio_jitter_ns = 1000\n",
			       id, x, skew_ppm, off, -skew_ppm / 3);
}

static void single_hop(void)
{
	/* Six nodes in range: 15 pairs, each with 4 third-party senders, so the
	 * fits turn over every few seconds and the RMS rests on many
	 * independent fits (one pair over one window is a single draw). */
	GString *sc = g_string_new("[world]\nseed = 101\nradio_range_m = 100\n");
	const double skew[6] = {100, -100, 37, -63, 81, -12};
	for (int i = 0; i < 6; i++)
		node_line(sc, i + 1, 3.0 * i, skew[i], 1000000000LL * (2 * i + 1));
	csim *s = start("single", sc->str, TRUE, FAST);
	g_string_free(sc, TRUE);
	if (!s)
		return;
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	const char *why = NULL;
	if (csim_truth_set_audio(t, csim_epoch_ns(s), 16000, CSIM_BIN_DIR, &why) < 0)
		fprintf(stderr, "bench/rbs: audio not measured: %s\n", why);
	run(t, g_quick ? 10 : 25, g_quick ? 20 : 55);
	csim_stop(s);
	size_t n, na;
	double rms = csim_truth_rms(t, CSIM_CPU, 1, &n), bound = csim_truth_bound_rms(t);
	double arms = csim_truth_rms(t, CSIM_AUDIO, 0, &na), asd = csim_truth_sd_rms(t, CSIM_AUDIO, 0);
	double sd = csim_truth_sd_rms(t, CSIM_CPU, 1);
	printf("single hop (6 nodes in range, jitter 1 us, skews -100..+100 ppm)\n");
	printf("  %-28s %10s %10s %10s %8s %6s\n", "", "rms_us", "bound_us", "sd_us", "ratio", "n");
	printf("  %-28s %10.3f %10.3f %10.3f %8.2f %6zu   (aim ratio <= 1.2)\n", "cpu<->cpu one hop", rms * 1e-3,
	       bound * 1e-3, sd * 1e-3, rms / bound, n);
	printf("  %-28s %10.3f %10s %10.3f %8s %6zu   (aim <= 2 us; audio->cpu->cpu->audio, 16 kHz)\n",
	       "audio0 i -> audio0 j", arms * 1e-3, "-", asd * 1e-3, "-", na);
	printf("  conversions beyond 5 standard errors: %u\n", csim_truth_outliers(t, 5.0));
	g_string_append_printf(g_csv, "audio,6,3,%zu,%.4f,,%.4f,,\n", na, arms * 1e-3, asd * 1e-3);
	g_string_append_printf(g_csv, "single_hop,6,1,%zu,%.4f,%.4f,%.4f,%.3f,%u\n", n, rms * 1e-3, bound * 1e-3, sd * 1e-3,
			       rms / bound, csim_truth_outliers(t, 5.0));
	csim_truth_free(t);
}

static void hops(void)
{
	GString *sc = g_string_new("[world]\nseed = 202\nradio_range_m = 15\n");
	GRand *g = g_rand_new_with_seed(202);
	for (int i = 1; i <= 9; i++)
		node_line(sc, i, 10.0 * (i - 1), g_rand_double_range(g, -100, 100), 1000000000LL * i);
	g_rand_free(g);
	csim *s = start("hops", sc->str, FALSE, FAST);
	g_string_free(sc, TRUE);
	if (!s)
		return;
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	run(t, g_quick ? 10 : 25, g_quick ? 20 : 55);
	csim_stop(s);
	size_t n1;
	double r1 = csim_truth_rms(t, CSIM_CPU, 1, &n1);
	printf("hops (9 nodes in a line, each hearing its neighbours; paths as libsync chose them)\n");
	printf("  %4s %10s %10s %12s %8s %6s\n", "hops", "rms_us", "sd_us", "rms/rms(1)", "sqrt(h)", "n");
	for (unsigned h = 1; h <= 8; h++) {
		size_t n;
		double r = csim_truth_rms(t, CSIM_CPU, h, &n);
		if (!n)
			continue;
		double sd = csim_truth_sd_rms(t, CSIM_CPU, h);
		printf("  %4u %10.3f %10.3f %12.2f %8.2f %6zu\n", h, r * 1e-3, sd * 1e-3, r / r1, sqrt(h), n);
		g_string_append_printf(g_csv, "hops,9,%u,%zu,%.4f,,%.4f,%.3f,\n", h, n, r * 1e-3, sd * 1e-3, r / r1);
	}
	size_t ng;
	double rg = csim_truth_rms(t, CSIM_GLOBAL, 0, &ng);
	printf("  global (all hops) rms %.3f us over %zu; beyond 5 standard errors: %u\n", rg * 1e-3, ng,
	       csim_truth_outliers(t, 5.0));
	csim_truth_free(t);
}

/* audiod's counters from audio/0/status of node n. */
static gboolean audio_ok(csim *s, int n, double secs, char *why, size_t len)
{
	char id[16];
	g_snprintf(id, sizeof id, "%d", n);
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", csim_run_dir(s), TRUE);
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("audio/0/status", FALSE, b, 3000);
	g_unsetenv("CHORUS_NODE");
	gboolean ok = FALSE;
	if (rc == 0) {
		const char *txt = (const char *)b->data, *x = strstr(txt, "xruns count="), *f = strstr(txt, "captured=");
		guint64 xr = x ? g_ascii_strtoull(x + 12, NULL, 10) : 1, fr = f ? g_ascii_strtoull(f + 9, NULL, 10) : 0;
		ok = xr == 0 && fr >= 0.95 * 16000 * secs;
		snprintf(why, len, "node%d: xruns %" G_GUINT64_FORMAT ", frames %" G_GUINT64_FORMAT " of ~%.0f", n, xr, fr,
			 16000 * secs);
	} else {
		snprintf(why, len, "node%d: audio/0/status unreadable", n);
	}
	g_byte_array_free(b, TRUE);
	return ok;
}

static double cpu_busy(void)
{
	/* Fraction of the machine busy since the last call (/proc/stat). */
	static double last_busy, last_total;
	double busy, total;
	if (!cpuload_machine(&busy, &total))
		return NAN;
	double f = total > last_total ? (busy - last_busy) / (total - last_total) : NAN;
	last_busy = busy;
	last_total = total;
	return f;
}

static void scale(void)
{
	const char *sizes = getenv("RBS_BENCH_SCALE");
	gchar **v = g_strsplit(sizes ? sizes : (g_quick ? "8 16" : "10 20 30 40"), " ", -1);
	int best = 0;
	double secs = g_quick ? 15 : 30;
	printf("scale (syncd + audiod at 16 kHz per node, default timers, %.0f s each, nodes in a 40 m square, range 25 m)\n",
	       secs);
	printf("  %5s %8s %9s %10s %10s  %s\n", "nodes", "ok", "cpu_busy", "rms1_us", ">5se", "first problem");
	for (int k = 0; v[k]; k++) {
		int n = atoi(v[k]);
		if (n <= 0)
			continue;
		GString *sc = g_string_new("[world]\nseed = 303\nradio_range_m = 25\n");
		GRand *g = g_rand_new_with_seed(303);
		for (int i = 1; i <= n; i++) {
			g_string_append_printf(sc, "[node.%d]\nposition_m = %g,%g,0\ncpu_skew_ppm = %g\ncpu_offset_ns = %d\n"
						   "audio_skew_ppm = %g\nradio_jitter_ns = 1000\n",
					       i, g_rand_double_range(g, 0, 40), g_rand_double_range(g, 0, 40),
					       g_rand_double_range(g, -100, 100), i * 1000000, g_rand_double_range(g, -40, 40));
		}
		g_rand_free(g);
		char name[32];
		g_snprintf(name, sizeof name, "scale%d", n);
		csim *s = start(name, sc->str, TRUE, "# default timers\n");
		g_string_free(sc, TRUE);
		if (!s) {
			printf("  %5d %8s %9s %10s %10s  could not start\n", n, "no", "-", "-", "-");
			g_string_append_printf(g_csv, "scale,%d,,,,,,,start_failed\n", n);
			break;
		}
		csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
		cpu_busy();
		run(t, secs / 2, secs);
		double busy = cpu_busy();
		char why[160] = "";
		gboolean ok = TRUE;
		for (int i = 1; i <= n && ok; i++) {
			if (!csim_node_running(s, i)) {
				snprintf(why, sizeof why, "node%d: a process died", i);
				ok = FALSE;
			} else if (!audio_ok(s, i, secs + 1, why, sizeof why)) {
				ok = FALSE;
			}
		}
		if (ok)
			why[0] = 0;
		csim_stop(s);
		/* Real time is about keeping up; accuracy is reported beside it. */
		guint out = csim_truth_outliers(t, 5.0);
		ok = ok && csim_truth_all(t)->len > 0;
		double r1 = csim_truth_rms(t, CSIM_CPU, 1, NULL);
		printf("  %5d %8s %8.0f%% %10.3f %10u  %s\n", n, ok ? "yes" : "no", busy * 100, r1 * 1e-3, out, why);
		g_string_append_printf(g_csv, "scale,%d,,,%.4f,,,,%s\n", n, r1 * 1e-3, ok ? "realtime" : "failed");
		csim_truth_free(t);
		if (!ok)
			break;
		best = n;
	}
	printf("  largest field in real time: %d nodes (aim >= 30)\n", best);
	g_strfreev(v);
}

/* CPU seconds (user + system) of process pid so far, from /proc; 0 when
 * it is gone. */
static double proc_cpu_s(pid_t pid)
{
	cpuload_proc p;
	return pid > 0 && cpuload_proc_read((int)pid, &p) ? p.self_s : 0;
}

/* Node n's sync/rbs counter `name` (tx_bytes ...), or 0. */
static guint64 rbs_counter(csim *s, int n, const char *name)
{
	char id[16], key[32];
	g_snprintf(id, sizeof id, "%d", n);
	g_snprintf(key, sizeof key, " %s=", name);
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", csim_run_dir(s), TRUE);
	GByteArray *b = g_byte_array_new();
	guint64 v = 0;
	if (dev_status_read_sync("sync/rbs", FALSE, b, 3000) == 0) {
		const char *p = strstr((const char *)b->data, key);
		v = p ? g_ascii_strtoull(p + strlen(key), NULL, 10) : 0;
	}
	g_byte_array_free(b, TRUE);
	g_unsetenv("CHORUS_NODE");
	return v;
}

/* Node n's ticker: its conversions, or -1. */
static int ticker_size(csim *s, int n)
{
	char id[16], why[200];
	g_snprintf(id, sizeof id, "%d", n);
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", csim_run_dir(s), TRUE);
	sync_ticker_asm *a = sync_ticker_asm_new();
	int rc = sync_ticker_fetch(5000, a, why, sizeof why);
	sync_ticker_asm_free(a);
	g_unsetenv("CHORUS_NODE");
	return rc;
}

typedef struct {
	double cpu[2]; /* syncd, audiod: CPU seconds of all nodes */
	guint64 tx;    /* bytes sent by all nodes */
	gint64 t_us;   /* monotonic */
} totals;

static totals take_totals(csim *s, int n, gboolean audio)
{
	totals x = {{0, 0}, 0, g_get_monotonic_time()};
	for (int i = 1; i <= n; i++) {
		x.cpu[0] += proc_cpu_s(csim_pid(s, i, "syncd"));
		if (audio)
			x.cpu[1] += proc_cpu_s(csim_pid(s, i, "audiod"));
		x.tx += rbs_counter(s, i, "tx_bytes");
	}
	return x;
}

static GString *grid(int n)
{
	GString *sc = g_string_new("[world]\nseed = 404\nradio_range_m = 15\n");
	GRand *g = g_rand_new_with_seed(404);
	int side = (int)ceil(sqrt(n));
	for (int i = 1; i <= n; i++)
		g_string_append_printf(sc,
				       "[node.%d]\nposition_m = %d,%d,0\ncpu_skew_ppm = %g\ncpu_offset_ns = %d\n"
				       "audio_skew_ppm = %g\nradio_jitter_ns = 1000\n",
				       i, 10 * ((i - 1) % side), 10 * ((i - 1) / side), g_rand_double_range(g, -100, 100),
				       i * 1000000, g_rand_double_range(g, -40, 40));
	g_rand_free(g);
	return sc;
}

/* One row of the scale and dense tables: `n` nodes of `scenario` with
 * syncd configuration `conf` for `secs` (measured over the second half).
 * Prints the row, adds it to the CSV as `csv_case`, sets *busy_out (the
 * machine's busy share).  Returns 1 when the row failed (beyond 5 s.e.,
 * nothing measured, a process died or it could not start). */
static int run_row(const char *label, const char *name, int n, gboolean audio, const char *scenario, const char *conf,
		   double secs, const char *csv_case, double *busy_out)
{
	csim *s = start(name, scenario, audio, conf);
	*busy_out = 0;
	if (!s) {
		printf("  %-8s %5d  could not start\n", label, n);
		g_string_append_printf(g_csv, "%s,%d,,,,,,,start_failed\n", csv_case, n);
		return 1;
	}
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	csim_truth_set_budget(t, (unsigned)MIN(n, 16), 8);
	run(t, secs / 2, secs / 2);
	totals a = take_totals(s, n, audio);
	cpu_busy();
	for (double e = 0; e < secs / 2; e += 0.5) {
		g_usleep(500000);
		csim_truth_sample(t, TRUE);
	}
	double busy = cpu_busy();
	totals b = take_totals(s, n, audio);
	int tk = ticker_size(s, (n + 1) / 2);
	gboolean alive = TRUE;
	for (int i = 1; i <= n && alive; i++)
		alive = csim_node_running(s, i);
	/* With audio, real time also means every node captured every frame
	 * without an xrun (reported, not failed: it is the machine's limit). */
	char audio_why[160] = "";
	int audio_bad = 0;
	for (int i = 1; audio && i <= n; i++) {
		char why[160];
		if (!audio_ok(s, i, secs, why, sizeof why) && audio_bad++ == 0)
			g_strlcpy(audio_why, why, sizeof audio_why);
	}
	csim_stop(s);
	double w = (double)(b.t_us - a.t_us) * 1e-6;
	double bps = (double)(b.tx - a.tx) / (n * w), c0 = 100 * (b.cpu[0] - a.cpu[0]) / (n * w),
	       c1 = 100 * (b.cpu[1] - a.cpu[1]) / (n * w);
	size_t n1, nall;
	double rms = csim_truth_rms(t, CSIM_CPU, 1, &n1), se = csim_truth_sd_rms(t, CSIM_CPU, 1);
	double rms_all = csim_truth_rms(t, CSIM_CPU, 0, &nall), se_all = csim_truth_sd_rms(t, CSIM_CPU, 0);
	size_t ng;
	double rms_g = csim_truth_rms(t, CSIM_GLOBAL, 0, &ng), se_g = csim_truth_sd_rms(t, CSIM_GLOBAL, 0);
	guint out = csim_truth_outliers(t, 5.0), all = csim_truth_all(t)->len;
	guint64 tried, nfail = csim_truth_budget_failed(t, &tried);
	const char *note = !alive ? "a process died" : all == 0 ? "nothing measured"
					       : out            ? "BEYOND 5 s.e."
					       : nfail          ? "CONVERSIONS FAILED"
					       : audio_bad      ? "audio not real time"
					       : busy > 0.95    ? "machine saturated: not real time"
								: "";
	char ac[16];
	g_snprintf(ac, sizeof ac, audio ? "%.2f" : "-", c1);
	char fl[32];
	g_snprintf(fl, sizeof fl, "%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, nfail, tried);
	printf("  %-8s %5d %9.0f %9.2f %9s %7.0f%% %7d %8.3f %8.3f %6.2f %6zu %8.3f %8.3f %6zu %8.3f %8.3f %6zu %5u %9s  %s\n",
	       label, n, bps, c0, ac, busy * 100, tk, rms * 1e-3, se * 1e-3, rms / se, n1, rms_all * 1e-3, se_all * 1e-3, nall,
	       rms_g * 1e-3, se_g * 1e-3, ng, out, fl, note);
	if (audio_bad)
		printf("           %d of %d nodes lost frames or had xruns (first: %s)\n", audio_bad, n, audio_why);
	g_string_append_printf(g_csv, "%s,%d,1,%zu,%.4f,,%.4f,%.3f,bytes_per_node_s=%.0f syncd_cpu_pct=%.3f audiod_cpu_pct=%.3f busy_pct=%.1f ticker=%d rms_any_us=%.4f sd_any_us=%.4f n_any=%zu beyond5se=%u failed=%" G_GUINT64_FORMAT " tried=%" G_GUINT64_FORMAT " rms_global_us=%.4f sd_global_us=%.4f n_global=%zu audio_bad_nodes=%d label=%s\n",
			       csv_case, n, n1, rms * 1e-3, se * 1e-3, rms / se, bps, c0, audio ? c1 : 0.0, busy * 100, tk,
			       rms_all * 1e-3, se_all * 1e-3, nall, out, nfail, tried, rms_g * 1e-3, se_g * 1e-3, ng, audio_bad, label);
	csim_truth_free(t);
	*busy_out = busy;
	return !alive || all == 0 || out || nfail;
}

static const char TABLE_HEAD[] = "  %-8s %5s %9s %9s %9s %8s %7s %8s %8s %6s %6s %8s %8s %6s %8s %8s %6s %5s %9s  %s\n";

/* The scale table; returns the rows that failed (beyond 5 s.e., nothing
 * measured, or a process died). */
static int scale_table(void)
{
	const char *rows = getenv("RBS_BENCH_TABLE");
	gchar **v = g_strsplit(rows ? rows : (g_quick ? "audio:10 sync:10 sync:48 sync:48:2" : "audio:10 audio:30 audio:48 audio:100:2 sync:10 sync:30 sync:48 sync:100 sync:300 sync:100:2 sync:300:2"), " ", -1);
	double secs = g_quick ? 20 : 40, last_busy = 0;
	int failed = 0, last_n = 0;
	printf("scale table (grid 10 m apart, range 15 m: 8 neighbours; default timers; %.0f s each, measured over the second half;\n"
	       "  absolute figures are this machine's: %ld cores)\n",
	       secs, sysconf(_SC_NPROCESSORS_ONLN));
	printf(TABLE_HEAD, "mode", "nodes", "B/node/s", "syncd_%", "audiod_%", "busy_%", "ticker", "rms1_us", "se1_us",
	       "ratio", "n1", "rms_us", "se_us", "n", "rmsg_us", "seg_us", "ng", ">5se", "failed", "note");
	for (int k = 0; v[k]; k++) {
		gboolean audio = g_str_has_prefix(v[k], "audio:");
		/* mode:N or mode:N:H ([rbs] advert_hops = H: scoped adverts) */
		gchar **f = g_strsplit(v[k], ":", 3);
		int n = f[0] && f[1] ? atoi(f[1]) : 0, hops = f[0] && f[1] && f[2] ? atoi(f[2]) : 0;
		g_strfreev(f);
		if (n <= 0)
			continue;
		char label[16];
		g_snprintf(label, sizeof label, hops ? "%s/H%d" : "%s", audio ? "audio" : "syncd", hops);
		/* The simulation's load grows as N^2 when every advertisement
		 * carries the whole field (every packet reaches every node's
		 * socket, and every packet grows with N): such a row projected
		 * beyond the machine is not run.  Scoped rows always run. */
		double projected = last_n > 0 ? last_busy * ((double)n / last_n) * ((double)n / last_n) : 0;
		if (!audio && !hops && last_n > 0 && projected > 1.0) {
			printf("  %-8s %5d  not run: projected %.0f%% of this machine (%.0f%% at %d nodes, growing as N^2)\n", label,
			       n, projected * 100, last_busy * 100, last_n);
			g_string_append_printf(g_csv, "table_sync,%d,,,,,,,not_run_projected_busy_pct=%.0f\n", n, projected * 100);
			continue;
		}
		GString *sc = grid(n);
		char name[32], conf[64];
		g_snprintf(name, sizeof name, "table-%s%d-%d", audio ? "audio" : "sync", n, hops);
		g_snprintf(conf, sizeof conf, hops ? "[rbs]\nadvert_hops = %d\n" : "# default timers\n", hops);
		double busy = 0;
		failed += run_row(label, name, n, audio, sc->str, conf, secs, audio ? "table_audio" : "table_sync", &busy);
		g_string_free(sc, TRUE);
		if (!audio && !hops) {
			last_busy = busy;
			last_n = n;
		}
	}
	g_strfreev(v);
	return failed;
}

/* N nodes scattered over 30 x 30 m, radio range 200 m: every node hears
 * every other (a dense field). */
static GString *dense(int n)
{
	GString *sc = g_string_new("[world]\nseed = 505\nradio_range_m = 200\n");
	GRand *g = g_rand_new_with_seed(505);
	for (int i = 1; i <= n; i++)
		g_string_append_printf(sc,
				       "[node.%d]\nposition_m = %.1f,%.1f,0\ncpu_skew_ppm = %g\ncpu_offset_ns = %d\n"
				       "audio_skew_ppm = %g\nradio_jitter_ns = 1000\n",
				       i, g_rand_double_range(g, 0, 30), g_rand_double_range(g, 0, 30),
				       g_rand_double_range(g, -100, 100), i * 1000000, g_rand_double_range(g, -40, 40));
	g_rand_free(g);
	return sc;
}

/* The dense-field table (issue 17): N nodes all in range, every node a
 * reference (full reports, N^2/2 fits flooded) against [rbs] references = K
 * (K beacons per interval in every report, N*K fits; other pairs convert
 * through a reference, two hops).  Returns the rows that failed. */
static int dense_table(void)
{
	const char *env = getenv("RBS_BENCH_DENSE");
	gchar **v = g_strsplit(env ? env : (g_quick ? "20:0 20:4" : "50:0 50:4 50:8"), " ", -1);
	double secs = g_quick ? 20 : 40;
	int failed = 0;
	printf("dense-field table (N nodes in 30 x 30 m, all in range; default timers; %.0f s each; rms1/se1: one-hop\n"
	       "  conversions, rms/se: all measured (via a reference: two hops); absolute figures are this machine's)\n",
	       secs);
	printf(TABLE_HEAD, "refs", "nodes", "B/node/s", "syncd_%", "audiod_%", "busy_%", "ticker", "rms1_us", "se1_us",
	       "ratio", "n1", "rms_us", "se_us", "n", "rmsg_us", "seg_us", "ng", ">5se", "failed", "note");
	for (int k = 0; v[k]; k++) {
		int n = atoi(v[k]), refs = strchr(v[k], ':') ? atoi(strchr(v[k], ':') + 1) : 0;
		if (n <= 0)
			continue;
		GString *sc = dense(n);
		char name[32], label[16], conf[96];
		g_snprintf(name, sizeof name, "dense-%d-%d", n, refs);
		g_snprintf(label, sizeof label, refs ? "K=%d" : "all", refs);
		g_snprintf(conf, sizeof conf, "[rbs]\nreferences = %d\n", refs);
		double busy;
		failed += run_row(label, name, n, FALSE, sc->str, conf, secs, "dense", &busy);
		g_string_free(sc, TRUE);
	}
	g_strfreev(v);
	return failed;
}

int main(void)
{
	const char *out = getenv("CHORUS_BENCH_OUT");
	g_quick = getenv("RBS_BENCH_QUICK") != NULL;
	setvbuf(stdout, NULL, _IOLBF, 0); /* partial results survive an interrupted run */
	g_root = g_dir_make_tmp("chorus-bench-rbs-XXXXXX", NULL);
	g_csv = g_string_new("case,nodes,hops,n,rms_us,bound_us,sd_us,ratio,note\n");
	const char *only = getenv("RBS_BENCH_ONLY"); /* "table" or "dense": that table alone */
	if (!only) {
		single_hop();
		hops();
		scale();
	}
	int failed = 0;
	if (!only || !strcmp(only, "dense"))
		failed += dense_table();
	if (!only || !strcmp(only, "table"))
		failed += scale_table();
	if (out) {
		g_mkdir_with_parents(out, 0755);
		char *p = g_build_filename(out, "rbs.csv", NULL);
		g_file_set_contents(p, g_csv->str, -1, NULL);
		printf("CSV: %s\n", p);
		g_free(p);
	}
	g_string_free(g_csv, TRUE);
	char *rm = g_strdup_printf("rm -rf '%s'", g_root);
	if (system(rm) != 0)
		fprintf(stderr, "bench/rbs: could not remove %s\n", g_root);
	g_free(rm);
	g_free(g_root);
	if (failed)
		fprintf(stderr, "bench/rbs: %d scale-table rows failed (beyond 5 s.e., conversions that could not be made, nothing measured or a process died)\n", failed);
	return failed ? 1 : 0;
}
