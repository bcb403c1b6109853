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
 *      conversions beyond 5 standard errors are shown beside it).
 * Prints a table and writes CHORUS_BENCH_OUT/rbs.csv.  Environment:
 * RBS_BENCH_QUICK=1 shortens the runs; RBS_BENCH_SCALE="10 20 30" the sizes.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/link.h"
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
	static guint64 last_busy, last_total;
	gchar *txt = NULL;
	if (!g_file_get_contents("/proc/stat", &txt, NULL, NULL))
		return NAN;
	guint64 v[10] = {0}, total = 0;
	sscanf(txt, "cpu %lu %lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	g_free(txt);
	for (int i = 0; i < 8; i++)
		total += v[i];
	guint64 busy = total - v[3] - v[4];
	double f = total > last_total ? (double)(busy - last_busy) / (double)(total - last_total) : NAN;
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

int main(void)
{
	const char *out = getenv("CHORUS_BENCH_OUT");
	g_quick = getenv("RBS_BENCH_QUICK") != NULL;
	setvbuf(stdout, NULL, _IOLBF, 0); /* partial results survive an interrupted run */
	g_root = g_dir_make_tmp("chorus-bench-rbs-XXXXXX", NULL);
	g_csv = g_string_new("case,nodes,hops,n,rms_us,bound_us,sd_us,ratio,note\n");
	single_hop();
	hops();
	scale();
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
	return 0;
}
