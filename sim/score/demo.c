/* demo.c — chorus-demo: the main job end to end (`make demo`).
 *
 *   chorus-demo [SCENARIO] [--duration S] [--out DIR] [--rate HZ]
 *               [--located-within M] [--source-plane Z] [--web PORT] ...
 *
 * Starts the scenario's virtual nodes with chorus-sim's launcher library:
 * on each node syncd, audiod on the simulated microphone (one channel per
 * scenario mic), fft, detect and collab, each with the node's environment
 * (CHORUS_NODE, virtual clock, scenario) and sd_notify readiness, exactly as
 * systemd would run them.  It runs for the duration, sampling chorus-sim's clock truth, stops
 * everything, and scores the run against the world's truth (report.h):
 * per call true position, estimate, error and uncertainty; detection recall
 * and false alarms; localization error median/p90; latency; chorus-sim's
 * sync error table.  Detections and results are matched to the truth
 * one-to-one, and a call counts as located only when its "ok" result lies
 * within --located-within M (default 1 m) of it (report.h).  collab is
 * told nothing of the world but what a field team would measure: the node
 * positions as surveyed (chorus-sim's nodes file: survey_error_m included),
 * and of the air only what the user states: --temperature T[,SD] (°C, as
 * a thermometer read it) or --speed-of-sound C[,SD]; without either,
 * collab's defaults (20 ± 10 °C: not measured), whatever the world's temperature_c or
 * speed_of_sound_m_s.  --wind SPEED,DIR and --position-sd M state the
 * anemometer's reading and the survey's accuracy, --source-speed V how
 * fast the team knows its callers can move.  The sources'
 * height is not among them: --source-plane Z states one (collab's
 * source_plane, source_z_m), as a user who knows it would.  Writes DIR/calls.csv, DIR/onsets.csv (every detection
 * matched to a true arrival: its onset's error and stated s.e.), DIR/results.jsonl (every node's
 * results), DIR/detections.jsonl, DIR/sync.csv, DIR/map.png and the logs
 * under DIR/sim/.
 * --web PORT: chorus-proxy on every node and chorus-web on 127.0.0.1:PORT,
 * the live view while it runs (sim/launch/web.h).
 * Exit status: 0, 1 when --expect-* bounds are not met, 2 set-up failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apps/collab/nodes.h"
#include "apps/collab/result.h"
#include "sim/launch/launch.h"
#include "sim/launch/outages.h"
#include "sim/launch/truth.h"
#include "sim/launch/web.h"
#include "sim/score/chaos_calls.h"
#include "sim/score/demo_chaos.h"
#include "sim/score/print.h"
#include "sim/score/report.h"
#include "sim/world.h"

static const char *const app_names[] = {"audiod", "fft", "detect", "collab"};

typedef struct {
	char *out, *simdir, *bin, *scenario, *profile, *collab_conf;
	const sim_scenario *sc;
	csim *sim;
	int rate_hz;
} demo;

static int64_t host_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
	GMainLoop *loop;
	csim_truth *truth;
	double warmup_s, duration_s, elapsed_s;
} run_state;

static gboolean on_tick(gpointer data)
{
	run_state *r = data;
	r->elapsed_s += 1.0;
	csim_truth_sample(r->truth, r->elapsed_s >= r->warmup_s);
	if (r->elapsed_s >= r->duration_s) {
		g_main_loop_quit(r->loop);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_CONTINUE;
}

/* Concatenate files into one.  Returns 0, or -EIO with the reason printed. */
static int merge(char **files, int n, const char *out)
{
	GString *all = g_string_new(NULL);
	for (int i = 0; i < n; i++) {
		char *t = NULL;
		if (g_file_get_contents(files[i], &t, NULL, NULL))
			g_string_append(all, t);
		g_free(t);
	}
	GError *err = NULL;
	int rc = 0;
	if (!g_file_set_contents(out, all->str, (gssize)all->len, &err)) {
		fprintf(stderr, "chorus-demo: %s\n", err->message);
		g_error_free(err);
		rc = -EIO;
	}
	g_string_free(all, TRUE);
	return rc;
}

/* "V" or "V,SD" into "KEY = V\n[SD_KEY = SD\n]" of the collab config;
 * FALSE when malformed or out of [lo, hi]. */
static gboolean air_key(GString *out, const char *text, const char *key, const char *sd_key, double lo, double hi)
{
	gchar **v = g_strsplit(text, ",", 3);
	guint n = g_strv_length(v);
	double x[2] = {0, 0};
	gboolean ok = n == 1 || n == 2;
	for (guint i = 0; ok && i < n; i++) {
		char *end = NULL;
		x[i] = g_ascii_strtod(g_strstrip(v[i]), &end);
		ok = end != v[i] && !*end && isfinite(x[i]);
	}
	g_strfreev(v);
	if (!ok || x[0] < lo || x[0] > hi || x[1] < 0)
		return FALSE;
	g_string_append_printf(out, "%s = %.17g\n", key, x[0]);
	if (n == 2)
		g_string_append_printf(out, "%s = %.17g\n", sd_key, x[1]);
	return TRUE;
}

/* Collab's results so far over every node's jsonl: the count of lines and
 * the largest latency_s (detection to result) among them. */
static void collab_progress(const char *simdir, size_t nn, const sim_scenario *sc, guint *lines, double *max_latency)
{
	*lines = 0;
	*max_latency = 0;
	for (size_t i = 0; i < nn; i++) {
		char *path = g_strdup_printf("%s/node%d-collab.jsonl", simdir, sim_scenario_node(sc, i)->id);
		char *text = NULL;
		if (g_file_get_contents(path, &text, NULL, NULL)) {
			for (char *l = text; l && *l;) {
				char *nl = strchr(l, '\n');
				const char *lat = strstr(l, "\"latency_s\":");
				if (lat && (!nl || lat < nl))
					*max_latency = fmax(*max_latency, g_ascii_strtod(lat + 12, NULL));
				(*lines)++;
				l = nl ? nl + 1 : NULL;
			}
		}
		g_free(text);
		g_free(path);
	}
}

/* Wait until collab has had time to finish the last calls: no new result
 * for 1.5 times the slowest result's latency so far (at least 2.5 s; a
 * sanitizer build takes ~10 s a call where the plain one takes ~1), at
 * most 40 s. */
static void drain_collab(const char *simdir, size_t nn, const sim_scenario *sc)
{
	guint lines = 0, seen = 0;
	double lat = 0, quiet = 0;
	for (double waited = 0; waited < 40.0; waited += 0.5) {
		g_usleep(500000);
		collab_progress(simdir, nn, sc, &lines, &lat);
		quiet = lines == seen ? quiet + 0.5 : 0;
		seen = lines;
		if (quiet >= fmax(2.5, 1.5 * lat))
			return;
	}
}

/* Ports a run takes: the share port (UDP) at base, clip ports (TCP) at
 * base + 1 + node id for nodes up to PORT_SPAN - 2. */
#define PORT_SPAN 20

/* Whether port p of type (SOCK_DGRAM, SOCK_STREAM) can be bound on
 * loopback now (without SO_REUSEADDR: a socket in TIME_WAIT counts as
 * taken, as it does for collab's clip service). */
static gboolean port_free(int type, int p)
{
	int fd = socket(AF_INET, type, 0);
	if (fd < 0)
		return FALSE;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	gboolean ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

/* The first base from `start` on (steps of PORT_SPAN within 40000..59999)
 * whose ports are all free: the range is shared with the kernel's
 * ephemeral ports, so a fixed choice could meet a connection's port (a
 * collab that could not listen on its clip port ended a run).  `start`
 * itself when none is (collab then says which port). */
static int port_base(int start)
{
	for (int k = 0; k < 1000; k++) {
		int base = 40000 + (start - 40000 + k * PORT_SPAN) % 20000;
		gboolean ok = port_free(SOCK_DGRAM, base);
		for (int p = base + 1; ok && p < base + PORT_SPAN; p++)
			ok = port_free(SOCK_STREAM, p);
		if (ok)
			return base;
	}
	return start;
}

int main(int argc, char **argv)
{
	double duration_s = 60, located_within_m = 1.0, source_z_m = NAN, expect_recall = -1, expect_median = -1, expect_p90 = -1, expect_fa = -1, expect_located = -1;
	char *out = NULL, *bin = NULL, *profile = NULL, *temperature = NULL, *speed = NULL, *wind = NULL;
	double position_sd_m = 0, source_speed_m_s = 0;
	gint rate_hz = 16000;
	double ring_s = 0;
	gint periods = 0;
	gboolean quiet = FALSE;
	gint web_port = 0;
	gint64 chaos_seed = -1;
	char *chaos_baseline = NULL;
	double chaos_interval_s = 10;
	gboolean chaos_hog = FALSE, chaos_radio = FALSE;
	char *syncd_conf = NULL, *collab_conf = NULL, *detect_conf = NULL;
	GOptionEntry entries[] = {
		{"duration", 'd', 0, G_OPTION_ARG_DOUBLE, &duration_s, "seconds of calls to run (default 60)", "S"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "output directory (default demo-out)", "DIR"},
		{"bin", 0, 0, G_OPTION_ARG_FILENAME, &bin, "directory of the chorus programs (default build/bin)", "DIR"},
		{"profile", 'p', 0, G_OPTION_ARG_FILENAME, &profile, "detector profile (default apps/profiles/frog.ini)", "FILE"},
		{"rate", 0, 0, G_OPTION_ARG_INT, &rate_hz, "audio sample rate, Hz (default 16000)", "HZ"},
		{"ring-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &ring_s,
		 "audiod's ring_s on every node (default 20): calls of an outage are located after it only while their audio is held", "S"},
		{"audio-periods", 0, 0, G_OPTION_ARG_INT, &periods,
		 "periods in every audiod's ALSA buffer (2-1024; default audiod's 8, 80 ms): a deeper buffer rides out a loaded machine's stalls without overruns",
		 "N"},
		{"source-plane", 0, 0, G_OPTION_ARG_DOUBLE, &source_z_m,
		 "tell collab the sources are at height Z (m; default: collab is told no height)", "Z"},
		{"temperature", 0, 0, G_OPTION_ARG_STRING, &temperature,
		 "tell collab the air temperature and its uncertainty (degrees Celsius; default: collab's 20,10, not measured)", "T[,SD]"},
		{"speed-of-sound", 0, 0, G_OPTION_ARG_STRING, &speed,
		 "tell collab the speed of sound and its uncertainty (m/s; default: from the temperature)", "C[,SD]"},
		{"wind", 0, 0, G_OPTION_ARG_STRING, &wind,
		 "tell collab the wind as measured: speed (m/s) and the direction it comes from (degrees clockwise from +y)",
		 "SPEED,DIR"},
		{"position-sd", 0, 0, G_OPTION_ARG_DOUBLE, &position_sd_m,
		 "tell collab the node positions are surveyed to M per axis (m, default 0)", "M"},
		{"source-speed", 0, 0, G_OPTION_ARG_DOUBLE, &source_speed_m_s,
		 "tell collab its callers move at up to V m/s (collab's source_speed_m_s; default 0: they keep still)", "V"},
		{"located-within", 0, 0, G_OPTION_ARG_DOUBLE, &located_within_m,
		 "a call is located when its ok result is within M of the truth (m, default 1)", "M"},
		{"syncd-conf", 0, 0, G_OPTION_ARG_FILENAME, &syncd_conf, "INI text appended to every node's syncd.conf", "FILE"},
		{"detect-conf", 0, 0, G_OPTION_ARG_FILENAME, &detect_conf, "every node's detect reads this configuration (detect -c)", "FILE"},
		{"collab-conf", 0, 0, G_OPTION_ARG_FILENAME, &collab_conf,
		 "INI text appended to every node's collab.conf (after its [collab] keys)", "FILE"},
		{"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "print the summary only", NULL},
		{"web", 'w', 0, G_OPTION_ARG_INT, &web_port, "show the live view: chorus-proxy per node, chorus-web on 127.0.0.1:PORT", "PORT"},
		{"chaos", 0, 0, G_OPTION_ARG_INT64, &chaos_seed,
		 "inject faults from this seed (kill -9 and restart, SIGSTOP; collab too) and judge the calls they left locatable", "SEED"},
		{"chaos-interval", 0, 0, G_OPTION_ARG_DOUBLE, &chaos_interval_s, "mean seconds between faults (default 10)", "S"},
		{"chaos-baseline", 0, 0, G_OPTION_ARG_FILENAME, &chaos_baseline,
		 "with --chaos: calls.csv of the same world without faults; a call it did not locate either does not fail", "CSV"},
		{"chaos-hog", 0, 0, G_OPTION_ARG_NONE, &chaos_hog, "with --chaos: one fault in five hogs the host's cores for 2-6 s", NULL},
		{"chaos-radio", 0, 0, G_OPTION_ARG_NONE, &chaos_radio, "with --chaos: one fault in five cuts a node's radio for 3-15 s", NULL},
		{"expect-recall", 0, 0, G_OPTION_ARG_DOUBLE, &expect_recall, "fail below this detection recall", "R"},
		{"expect-located", 0, 0, G_OPTION_ARG_DOUBLE, &expect_located, "fail below this fraction of calls located", "R"},
		{"expect-false-alarms", 0, 0, G_OPTION_ARG_DOUBLE, &expect_fa, "fail above this many false alarms per node-minute", "R"},
		{"expect-median", 0, 0, G_OPTION_ARG_DOUBLE, &expect_median, "fail above this median error, m", "M"},
		{"expect-p90", 0, 0, G_OPTION_ARG_DOUBLE, &expect_p90, "fail above this p90 error, m", "M"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("[SCENARIO] - run chorus end to end on a simulated field and score it");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err) || argc > 2) {
		fprintf(stderr, "chorus-demo: %s\n", err ? err->message : "at most one SCENARIO");
		return 2;
	}
	g_option_context_free(oc);
	if (!(located_within_m > 0) || !isfinite(located_within_m)) {
		fprintf(stderr, "chorus-demo: --located-within: expected a positive distance in m, got %g\n", located_within_m);
		return 2;
	}
	if (periods && (periods < 2 || periods > 1024)) {
		fprintf(stderr, "chorus-demo: --audio-periods: expected 2..1024 periods, got %d\n", periods);
		return 2;
	}
	gboolean source_plane = !isnan(source_z_m);
	if (source_plane && !(fabs(source_z_m) <= 1e4)) {
		fprintf(stderr, "chorus-demo: --source-plane: expected a height in -10000..10000 m, got %g\n", source_z_m);
		return 2;
	}
	demo d = {0};
	d.rate_hz = rate_hz;
	d.scenario = g_canonicalize_filename(argc == 2 ? argv[1] : "sim/scenarios/default.ini", NULL);
	d.out = g_canonicalize_filename(out ? out : "demo-out", NULL);
	d.simdir = g_build_filename(d.out, "sim", NULL);
	d.bin = g_canonicalize_filename(bin ? bin : "build/bin", NULL);
	d.profile = g_canonicalize_filename(profile ? profile : "apps/profiles/frog.ini", NULL);
	/* Start afresh: results of an earlier run must not be scored again. */
	char *rm = g_strdup_printf("rm -rf '%s'", d.simdir);
	if (system(rm) != 0)
		fprintf(stderr, "chorus-demo: could not clear %s\n", d.simdir);
	g_free(rm);
	g_mkdir_with_parents(d.simdir, 0755);

	/* What the field team states about the air (never the world's). */
	GString *air = g_string_new(NULL);
	const char *air_err = NULL;
	if (temperature && !air_key(air, temperature, "temperature_c", "temperature_sd_c", -60, 60))
		air_err = "--temperature: expected T or T,SD in °C (T in -60..60, SD >= 0)";
	if (speed && !air_key(air, speed, "speed_of_sound_m_s", "speed_of_sound_sd_m_s", 100, 2000))
		air_err = "--speed-of-sound: expected C or C,SD in m/s (C in 100..2000, SD >= 0)";
	if (wind && !air_key(air, wind, "wind_speed_m_s", "wind_from_deg", 0, 100))
		air_err = "--wind: expected SPEED,DIR (m/s in 0..100, degrees)";
	if (!(position_sd_m >= 0 && position_sd_m <= 100))
		air_err = "--position-sd: expected 0..100 m";
	if (!(source_speed_m_s >= 0 && source_speed_m_s <= 100))
		air_err = "--source-speed: expected 0..100 m/s";
	if (air_err) {
		fprintf(stderr, "chorus-demo: %s\n", air_err);
		return 2;
	}
	g_string_append_printf(air, "position_sd_m = %g\nsource_speed_m_s = %g\n", position_sd_m, source_speed_m_s);
	char *c_txt = g_string_free(air, FALSE);
	/* The user's own text appended to syncd's and collab's configurations
	 * (bench/soak: stores full within minutes), read before anything
	 * starts; detect's is a file of its own (-c). */
	char *syncd_extra = NULL, *collab_extra = NULL;
	if ((syncd_conf && !g_file_get_contents(syncd_conf, &syncd_extra, NULL, &err)) ||
	    (collab_conf && !g_file_get_contents(collab_conf, &collab_extra, NULL, &err))) {
		fprintf(stderr, "chorus-demo: %s\n", err->message);
		return 2;
	}
	/* Ports of this run (several runs may share the host).  Node
	 * positions: the nodes file chorus-sim writes (csim_nodes_path).  The
	 * source height only when the user stated one. */
	char z_txt[G_ASCII_DTOSTR_BUF_SIZE] = "0";
	if (source_plane)
		g_ascii_dtostr(z_txt, sizeof z_txt, source_z_m);
	int base = port_base(40000 + (int)(getpid() % 1000) * PORT_SPAN);
	d.collab_conf = g_build_filename(d.simdir, "collab.conf", NULL);
	char *cc = g_strdup_printf("# generated by chorus-demo\n[collab]\nnodes = %s/nodes.txt\n%s"
				   "share_address = 127.255.255.255\nshare_port = %d\n"
				   "clip_port = %d\nsource_plane = %s\nsource_z_m = %s\nmap_every = 1000\n"
				   "# the field's key, which chorus-sim writes for syncd: shared detections and\n"
				   "# clip requests authenticated as in a field\nkey_file = %s/network.key\n%s%s",
				   d.simdir, c_txt, base, base + 1, source_plane ? "true" : "false", z_txt, d.simdir,
				   collab_extra ? "# from --collab-conf\n" : "", collab_extra ? collab_extra : "");
	if (!g_file_set_contents(d.collab_conf, cc, -1, &err)) {
		fprintf(stderr, "chorus-demo: %s\n", err->message);
		return 2;
	}
	g_free(cc);
	g_free(c_txt);

	/* The apps on every node, after syncd and audiod (%n: the node). */
	char *qp = g_shell_quote(d.profile), *qc = g_shell_quote(d.collab_conf);
	char *qd = detect_conf ? g_shell_quote(detect_conf) : NULL;
	char *det = g_strdup_printf("detect -p %s --jsonl %s/node%%n-detect.jsonl%s%s", qp, d.simdir, qd ? " -c " : "",
				    qd ? qd : "");
	g_free(qd);
	char *col = g_strdup_printf("collab -c %s --jsonl %s/node%%n-collab.jsonl", qc, d.simdir);
	int proxy_base = 0;
	char *proxy_app = NULL;
	if (web_port && (web_port > 65535 || !(proxy_app = csim_web_proxy_app(d.simdir, &proxy_base, &err)))) {
		fprintf(stderr, "chorus-demo: --web %d: %s\n", web_port, err ? err->message : "expected a TCP port 1..65535");
		return 2;
	}
	const char *apps[] = {"fft", det, col, proxy_app, NULL};
	csim_opts o = {.scenario = d.scenario, .out_dir = d.simdir, .bin_dir = d.bin, .syncd_extra = syncd_extra, .audio = TRUE, .audio_rate_hz = (unsigned)rate_hz, .audio_ring_s = ring_s, .audio_periods = (unsigned)periods, .apps = apps};
	int64_t t_start = host_raw();
	d.sim = csim_start(&o, &err);
	g_free(qp);
	g_free(qc);
	g_free(det);
	g_free(col);
	g_free(proxy_app);
	g_free(collab_extra);
	if (!d.sim) {
		g_free(syncd_extra);
		fprintf(stderr, "chorus-demo: %s\n", err->message);
		return 2;
	}
	d.sc = csim_scenario(d.sim);
	size_t nn = sim_scenario_n_nodes(d.sc);
	int rc = 0;
	csim_web *web = NULL;
	if (web_port && !(web = csim_web_start(d.sim, d.simdir, d.bin, web_port, proxy_base, &err))) {
		fprintf(stderr, "chorus-demo: --web: %s\n", err->message);
		csim_stop(d.sim);
		return 2;
	}
	double t_ready = (host_raw() - csim_epoch_ns(d.sim)) * 1e-9;
	if (!rc) {
		fprintf(stderr, "chorus-demo: %zu nodes up in %.1f s (syncd, audiod at %d Hz, fft, detect, collab); running %.0f s\n",
			nn, (host_raw() - t_start) * 1e-9, rate_hz, duration_s);
		run_state r = {g_main_loop_new(NULL, FALSE), csim_truth_new(d.sc, csim_run_dir(d.sim), csim_epoch_ns(d.sim)), MIN(10.0, duration_s / 3),
			       duration_s, 0};
		g_timeout_add(1000, on_tick, &r);
		guint s1 = g_unix_signal_add(SIGINT, on_signal, r.loop), s2 = g_unix_signal_add(SIGTERM, on_signal, r.loop);
		csim_outages *outages = csim_outages_new(d.sim, csim_outage_truth, r.truth);
		/* Under faults audiod's numbering is tried too (restarts that
		 * number on): audio0 -> audio0 conversions are measured. */
		const char *why = NULL;
		if (chaos_seed >= 0 && csim_truth_set_audio(r.truth, csim_epoch_ns(d.sim), (unsigned)rate_hz, d.bin, &why) < 0)
			fprintf(stderr, "chorus-demo: audio not measured: %s\n", why);
		demo_chaos *chaos = chaos_seed >= 0 ? demo_chaos_start(d.sim, r.truth, (guint64)chaos_seed, chaos_interval_s,
								       chaos_hog, chaos_radio)
						    : NULL;
		g_main_loop_run(r.loop);
		csim_outages_free(outages);
		g_source_remove(s1);
		g_source_remove(s2);
		double t_end = (host_raw() - csim_epoch_ns(d.sim)) * 1e-9;
		int chaos_failures = 0;
		if (chaos) {
			/* The faults stop; the checks read the running nodes. */
			char *ccsv = g_build_filename(d.out, "chaos.csv", NULL);
			chaos_failures = demo_chaos_finish(chaos, ccsv);
			if (chaos_failures < 0)
				fprintf(stderr, "chorus-demo: cannot write %s\n", ccsv);
			g_free(ccsv);
		}
		/* Let the last calls finish their trip through collab. */
		drain_collab(d.simdir, nn, d.sc);
		double ran_s = (host_raw() - csim_epoch_ns(d.sim)) * 1e-9 - t_ready;
		csim_web_stop(web);
		/* Stop every node (the launcher counts each program's CPU). */
		double app_cpu_s[G_N_ELEMENTS(app_names)];
		for (size_t i = 0; i < nn; i++)
			csim_node_stop(d.sim, sim_scenario_node(d.sc, i)->id);
		for (size_t a = 0; a < G_N_ELEMENTS(app_names); a++)
			app_cpu_s[a] = csim_cpu_seconds(d.sim, app_names[a]);

		/* Score, against the world of the scenario the launcher ran. */
		GError *e2 = NULL;
		const sim_scenario *sc = d.sc;
		sim_world *world = sim_world_new(sc, &e2);
		if (world)
			sim_world_set_epoch(world, csim_epoch_ns(d.sim));
		if (!world) {
			fprintf(stderr, "chorus-demo: %s\n", e2->message);
			rc = 2;
		} else {
			int *ids = g_new(int, nn);
			char **dets = g_new0(char *, nn + 1), **res = g_new0(char *, nn + 1);
			for (size_t i = 0; i < nn; i++) {
				ids[i] = sim_scenario_node(d.sc, i)->id;
				dets[i] = g_strdup_printf("%s/node%d-detect.jsonl", d.simdir, ids[i]);
				res[i] = g_strdup_printf("%s/node%d-collab.jsonl", d.simdir, ids[i]);
			}
			/* Calls start counting 3 s after the apps are up (the floor is
			 * learned) and stop 1 s before the end (the last must reach
			 * every node and be detected). */
			demo_eval_params ep;
			demo_eval_params_default(&ep);
			ep.t_lo_s = t_ready + 3.0;
			ep.t_hi_s = t_end - 1.0;
			ep.located_within_m = located_within_m;
			ep.epoch_ns = csim_epoch_ns(d.sim);
			demo_eval ev;
			demo_evaluate(world, ids, (const char *const *)dets, (int)nn, (const char *const *)res, (int)nn, &ep, &ev);
			char *csv = g_build_filename(d.out, "calls.csv", NULL), *rj = g_build_filename(d.out, "results.jsonl", NULL),
			     *dj = g_build_filename(d.out, "detections.jsonl", NULL), *png = g_build_filename(d.out, "map.png", NULL),
			     *scsv = g_build_filename(d.out, "sync.csv", NULL);
			if (merge(res, (int)nn, rj) < 0 || merge(dets, (int)nn, dj) < 0)
				rc = 2;
			int wr = demo_write_csv(&ev, csv);
			if (wr < 0) {
				fprintf(stderr, "chorus-demo: %s: %s\n", csv, g_strerror(-wr));
				rc = 2;
			}
			char *ocsv = g_build_filename(d.out, "onsets.csv", NULL);
			wr = demo_write_onsets_csv(&ev, ocsv);
			if (wr < 0) {
				fprintf(stderr, "chorus-demo: %s: %s\n", ocsv, g_strerror(-wr));
				rc = 2;
			}
			g_free(ocsv);
			char *fx = sim_scenario_effects(d.sc);
			char told[96];
			g_snprintf(told, sizeof told, "%s%s%s%s", speed ? "c = " : temperature ? "T = "
											       : "collab's default 20,10 °C",
				   speed ? speed : temperature ? temperature
							       : "",
				   speed ? " m/s" : temperature ? " °C"
								: "",
				   position_sd_m > 0 ? ", positions ± surveyed" : wind ? ", wind"
										       : "");
			printf("chorus demo: %s, %zu nodes, %.0f s, audio %d Hz, source height %s, air told to collab: %s\n"
			       "world: %s\n\n",
			       d.scenario, nn, duration_s, rate_hz, source_plane ? z_txt : "not told to collab", told, fx);
			g_free(fx);
			demo_print(&ev, !quiet, stdout);
			/* CPU of the services, per node, as a share of one core (for
			 * fft + detect this is the real-time factor at this rate). */
			printf("  cpu per node (%% of one core, %.0f s)  audiod %.2f  fft %.2f  detect %.2f  collab %.2f\n", ran_s,
			       100 * app_cpu_s[0] / (nn * ran_s), 100 * app_cpu_s[1] / (nn * ran_s),
			       100 * app_cpu_s[2] / (nn * ran_s), 100 * app_cpu_s[3] / (nn * ran_s));
			GString *table = g_string_new(NULL);
			csim_truth_report(r.truth, table, scsv);
			printf("\nsync errors (chorus-sim truth)\n%s", table->str);
			g_string_free(table, TRUE);
			guint bad = csim_truth_outliers(r.truth, 5.0);
			if (bad) {
				/* Which ones: the node whose graph made each and its path. */
				GString *list = g_string_new(NULL);
				csim_truth_list_outliers(r.truth, 5.0, 12, list);
				printf("%u conversion(s) beyond 5 of their standard errors:\n%s", bad, list->str);
				g_string_free(list, TRUE);
			}
			/* The map: collab's nodes file and, from the truth, where
			 * each scored call was. */
			collab_nodes *cn = collab_nodes_load(csim_nodes_path(d.sim), NULL);
			size_t ns = ev.calls->len;
			double *truth = g_new(double, 2 * ns + 1);
			for (size_t i = 0; i < ns; i++) {
				truth[2 * i] = g_array_index(ev.calls, demo_call, i).pos_m[0];
				truth[2 * i + 1] = g_array_index(ev.calls, demo_call, i).pos_m[1];
			}
			char why[256];
			if (cn && collab_map(rj, cn, truth, ns, png, "chorus demo: estimates (95% ellipses), nodes, true sources",
					     why, sizeof why) < 0)
				fprintf(stderr, "chorus-demo: map: %s\n", why);
			g_free(truth);
			collab_nodes_free(cn);
			printf("\nwritten: %s %s %s %s %s (logs in %s)\n", csv, rj, dj, scsv, png, d.simdir);
			if (chaos) {
				/* Four arrivals test an answer only with the height told. */
				int calls = demo_chaos_judge(chaos, world, &ev,
							     source_plane ? CHAOS_CALLS_MIN_NODES : CHAOS_CALLS_MIN_NODES_UNTOLD,
							     chaos_baseline, stdout);
				if (chaos_failures != 0 || calls) {
					printf("chorus-demo: chaos: %s\n", chaos_failures < 0 ? "the report could not be written" : "failures (above)");
					rc = 1;
				}
			}
			double recall = ev.arrivals ? (double)ev.arrivals_detected / ev.arrivals : 0;
			double frac = ev.calls->len ? (double)ev.located / ev.calls->len : 0;
			double fa = ev.node_minutes > 0 ? ev.false_alarms / ev.node_minutes : 0;
			if ((expect_recall >= 0 && !(recall >= expect_recall)) ||
			    (expect_located >= 0 && !(frac >= expect_located)) || (expect_fa >= 0 && !(fa <= expect_fa)) ||
			    (expect_median >= 0 && !(ev.err_median_m <= expect_median)) ||
			    (expect_p90 >= 0 && !(ev.err_p90_m <= expect_p90))) {
				printf("chorus-demo: expectations not met\n");
				rc = 1;
			}
			demo_eval_clear(&ev);
			g_free(ids);
			g_strfreev(dets);
			g_strfreev(res);
			g_free(csv);
			g_free(rj);
			g_free(dj);
			g_free(png);
			g_free(scsv);
		}
		sim_world_free(world);
		demo_chaos_free(chaos);
		csim_truth_free(r.truth);
		g_main_loop_unref(r.loop);
	}
	csim_stop(d.sim);
	g_free(d.scenario);
	g_free(d.out);
	g_free(d.simdir);
	g_free(d.bin);
	g_free(d.profile);
	g_free(d.collab_conf);
	g_free(syncd_extra); /* csim_opts held it */
	g_free(syncd_conf);
	g_free(collab_conf);
	g_free(detect_conf);
	g_free(out);
	g_free(bin);
	g_free(profile);
	g_free(chaos_baseline);
	return rc;
}
