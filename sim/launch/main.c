/* main.c — chorus-sim: run a scenario's virtual nodes and measure their
 * time conversions against ground truth (docs/architecture.md §5.4, docs/deployment.md).
 *
 *   chorus-sim SCENARIO [--duration S] [--out DIR] [--netns] [--no-audio]
 *              [--measure-nodes N [--measure-targets K]]
 *              [--app "detect -p apps/profiles/frog.ini"]... [--web PORT] ...
 *
 * --no-audio is the syncd-only mode: no audiod, only syncd per node.  A
 * field of more than 64 nodes (300 and beyond) is measured within a budget
 * (truth.h csim_truth_set_budget): each sample reads N tickers in turn
 * (default 16) and converts each to K nodes in its radio range (default 8)
 * and to global, instead of every pair.
 *
 * Every node runs syncd, audiod (unless --no-audio) and each --app, a
 * command line of a program in the bin directory ("%n" in it becomes the
 * node's number, "%c" its microphone count), with the node's environment and
 * readiness through sd_notify.
 *
 * --web PORT also runs chorus-proxy on every node and one chorus-web on
 * 127.0.0.1:PORT for the field (sim/launch/web.h): the live view, whose
 * address with its token is printed.
 *
 * Writes DIR/truth.csv (the table) and DIR/samples.csv (every measurement).
 * With --chaos SEED it also kills (SIGKILL, restarted 1 s later) and stops
 * (SIGSTOP for 1-5 s) random processes of random nodes, and reports them and
 * the failures they caused (sim/launch/chaos.h) to DIR/chaos.csv.
 * Exit status: 0 all conversions within 5 of their own standard errors
 * (and no chaos failure), 1 some were not (or none could be measured, or
 * chaos failed), 2 set-up failed.
 */
#include <glib-unix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/launch/chaos.h"
#include "sim/launch/launch.h"
#include "sim/launch/outages.h"
#include "sim/launch/truth.h"
#include "sim/launch/web.h"

typedef struct {
	GMainLoop *loop;
	csim_truth *truth;
	double warmup_s, duration_s, elapsed_s, interval_s;
	int samples;
} run_state;

static gboolean on_sample(gpointer data)
{
	run_state *r = data;
	r->elapsed_s += r->interval_s;
	csim_truth_sample(r->truth, r->elapsed_s >= r->warmup_s);
	r->samples++;
	if (r->elapsed_s >= r->duration_s) {
		g_main_loop_quit(r->loop);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

/* chaos restarted a program: an audiod's numbering is found again. */
static void on_restarted(void *user, int node, const char *prog)
{
	if (!strcmp(prog, "audiod"))
		csim_truth_audio_restarted(user, node);
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
	double duration_s = 0, warmup_s = -1, interval_s = 1.0;
	char *out = NULL, *bin = NULL, *extra_file = NULL, *csv = NULL, *tstamp = NULL;
	char **apps = NULL;
	gboolean netns = FALSE, no_audio = FALSE;
	gint port = 0, rate_hz = 16000, measure_nodes = -1, measure_targets = 8;
	gint64 chaos_seed = -1;
	double chaos_interval_s = 10;
	gboolean chaos_hog = FALSE, chaos_radio = FALSE;
	gint web_port = 0;
	GOptionEntry entries[] = {
		{"duration", 'd', 0, G_OPTION_ARG_DOUBLE, &duration_s, "seconds to run (default: the scenario's duration)", "S"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "directory for logs, configs and CSV (default chorus-sim-out)", "DIR"},
		{"netns", 0, 0, G_OPTION_ARG_NONE, &netns, "one network namespace per node on a bridge (root)", NULL},
		{"no-audio", 0, 0, G_OPTION_ARG_NONE, &no_audio, "do not start audiod", NULL},
		{"rate", 0, 0, G_OPTION_ARG_INT, &rate_hz, "audiod sample rate, Hz (default 16000)", "HZ"},
		{"warmup", 0, 0, G_OPTION_ARG_DOUBLE, &warmup_s, "seconds before measurements count (default min(10, duration/3))", "S"},
		{"interval", 0, 0, G_OPTION_ARG_DOUBLE, &interval_s, "seconds between truth samples (default 1)", "S"},
		{"measure-nodes", 0, 0, G_OPTION_ARG_INT, &measure_nodes, "tickers read per sample, in turn (default: all up to 64 nodes, else 16; 0 = all)", "N"},
		{"measure-targets", 0, 0, G_OPTION_ARG_INT, &measure_targets, "with --measure-nodes: radio neighbours each is converted to (default 8)", "K"},
		{"port", 0, 0, G_OPTION_ARG_INT, &port, "UDP port of the sync protocol (default from our pid)", "PORT"},
		{"syncd-conf", 0, 0, G_OPTION_ARG_FILENAME, &extra_file, "INI text appended to every node's syncd.conf", "FILE"},
		{"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv, "CSV of the error table (default DIR/truth.csv)", "FILE"},
		{"bin", 0, 0, G_OPTION_ARG_FILENAME, &bin, "directory of syncd and audiod (default build/bin)", "DIR"},
		{"tstamp", 0, 0, G_OPTION_ARG_STRING, &tstamp, "audiod's timestamp source: sim (default) or alsa (the plugin's mode from CHORUS_SIM_TSTAMP)", "SRC"},
		{"chaos", 0, 0, G_OPTION_ARG_INT64, &chaos_seed, "inject faults (kill -9 and restart, SIGSTOP) from this seed (sim/launch/chaos.h)", "SEED"},
		{"chaos-interval", 0, 0, G_OPTION_ARG_DOUBLE, &chaos_interval_s, "mean seconds between faults (default 10)", "S"},
		{"chaos-hog", 0, 0, G_OPTION_ARG_NONE, &chaos_hog, "with --chaos: one fault in five hogs the host's cores for 2-6 s", NULL},
		{"chaos-radio", 0, 0, G_OPTION_ARG_NONE, &chaos_radio, "with --chaos: one fault in five cuts a node's radio for 3-15 s", NULL},
		{"app", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &apps, "also run this command line on every node (repeatable; %n = node, %c = mics)", "CMD"},
		{"web", 'w', 0, G_OPTION_ARG_INT, &web_port, "also run chorus-proxy on every node and chorus-web on 127.0.0.1:PORT (the live view)", "PORT"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("SCENARIO - run virtual chorus nodes and check their clocks");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err) || argc != 2) {
		fprintf(stderr, "chorus-sim: %s\n", err ? err->message : "exactly one SCENARIO file is needed (see --help)");
		return 2;
	}
	g_option_context_free(oc);
	if (tstamp && strcmp(tstamp, "sim") && strcmp(tstamp, "alsa")) {
		fprintf(stderr, "chorus-sim: --tstamp %s: not sim or alsa\n", tstamp);
		return 2;
	}
	if (!out)
		out = g_strdup("chorus-sim-out");
	if (!bin)
		bin = g_strdup("build/bin");
	char *extra = NULL;
	if (extra_file && !g_file_get_contents(extra_file, &extra, NULL, &err)) {
		fprintf(stderr, "chorus-sim: %s\n", err->message);
		return 2;
	}
	if (web_port < 0 || web_port > 65535) {
		fprintf(stderr, "chorus-sim: --web %d: expected a TCP port 1..65535\n", web_port);
		return 2;
	}
	int proxy_base = 0;
	GPtrArray *all_apps = g_ptr_array_new_with_free_func(g_free);
	for (char **a = apps; a && *a; a++)
		g_ptr_array_add(all_apps, g_strdup(*a));
	if (web_port) {
		char *p = csim_web_proxy_app(out, &proxy_base, &err);
		if (!p) {
			fprintf(stderr, "chorus-sim: --web: %s\n", err->message);
			return 2;
		}
		g_ptr_array_add(all_apps, p);
	}
	g_ptr_array_add(all_apps, NULL);
	char *audiod = g_build_filename(bin, "audiod", NULL);
	csim_opts o = {
		.scenario = argv[1],
		.out_dir = out,
		.bin_dir = bin,
		.syncd_extra = extra,
		.port = port,
		.audio = !no_audio && access(audiod, X_OK) == 0,
		.audio_rate_hz = (unsigned)rate_hz,
		.audio_tstamp = tstamp,
		.netns = netns,
		.apps = (const char *const *)all_apps->pdata,
	};
	g_free(audiod);
	csim *s = csim_start(&o, &err);
	if (!s) {
		fprintf(stderr, "chorus-sim: %s\n", err->message);
		return 2;
	}
	csim_web *web = NULL;
	if (web_port && !(web = csim_web_start(s, out, bin, web_port, proxy_base, &err))) {
		fprintf(stderr, "chorus-sim: --web: %s\n", err->message);
		csim_stop(s);
		return 2;
	}
	if (duration_s <= 0)
		duration_s = sim_scenario_world(csim_scenario(s))->duration_s;
	if (warmup_s < 0)
		warmup_s = MIN(10.0, duration_s / 3);
	fprintf(stderr, "chorus-sim: %zu nodes up (%s, port %d%s); running %.0f s, measuring after %.0f s\n",
		sim_scenario_n_nodes(csim_scenario(s)), o.audio ? "syncd + audiod" : "syncd only", csim_port(s),
		netns ? ", netns" : "", duration_s, warmup_s);
	run_state r = {g_main_loop_new(NULL, FALSE), csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s)), warmup_s, duration_s,
		       0, interval_s, 0};
	size_t nodes = sim_scenario_n_nodes(csim_scenario(s));
	if (measure_nodes < 0)
		measure_nodes = nodes > 64 ? 16 : 0;
	if (measure_nodes > 0) {
		csim_truth_set_budget(r.truth, (unsigned)measure_nodes, (unsigned)MAX(measure_targets, 0));
		fprintf(stderr, "chorus-sim: measuring %d tickers per sample, each to %d radio neighbours and global\n",
			measure_nodes, MAX(measure_targets, 0));
	}
	const char *why = NULL;
	if (o.audio && !measure_nodes && csim_truth_set_audio(r.truth, csim_epoch_ns(s), (unsigned)rate_hz, bin, &why) < 0)
		fprintf(stderr, "chorus-sim: audio not measured: %s\n", why);
	g_timeout_add((guint)(interval_s * 1000), on_sample, &r);
	g_unix_signal_add(SIGINT, on_signal, r.loop);
	g_unix_signal_add(SIGTERM, on_signal, r.loop);
	csim_chaos *chaos = chaos_seed >= 0 ? csim_chaos_new(s, (guint64)chaos_seed, chaos_interval_s, on_restarted, r.truth)
					    : NULL;
	if (chaos) {
		csim_chaos_hog(chaos, chaos_hog);
		csim_chaos_radio(chaos, chaos_radio);
	}
	csim_outages *outages = csim_outages_new(s, csim_outage_truth, r.truth);
	g_main_loop_run(r.loop);
	int o_stops, o_starts, o_failed;
	csim_outages_counts(outages, &o_stops, &o_starts, &o_failed);
	csim_outages_free(outages);
	GString *chaos_text = g_string_new(NULL);
	int chaos_failures = 0;
	if (chaos) {
		char *ccsv = g_build_filename(out, "chaos.csv", NULL);
		chaos_failures = csim_chaos_report(chaos, chaos_text, ccsv);
		const sim_scenario *sc = csim_scenario(s);
		for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
			int id = sim_scenario_node(sc, i)->id, k = csim_truth_renumbered(r.truth, id);
			if (k)
				g_string_append_printf(chaos_text, "chaos: node%d's audiod numbered its frames anew after %d of its restarts\n", id, k);
		}
		if (chaos_failures < 0)
			fprintf(stderr, "chorus-sim: cannot write %s\n", ccsv);
		g_free(ccsv);
		csim_chaos_free(chaos);
	}
	GString *table = g_string_new(NULL);
	char *csv_path = csv ? g_strdup(csv) : g_build_filename(out, "truth.csv", NULL);
	if (csim_truth_report(r.truth, table, csv_path) < 0)
		fprintf(stderr, "chorus-sim: cannot write %s\n", csv_path);
	char *samples = g_build_filename(out, "samples.csv", NULL);
	if (csim_truth_write_samples(r.truth, samples) < 0)
		fprintf(stderr, "chorus-sim: cannot write %s\n", samples);
	g_free(samples);
	csim_web_stop(web);
	csim_stop(s); /* after the report: the truth reads the scenario csim_stop frees */
	fputs(table->str, stdout);
	guint bad = csim_truth_outliers(r.truth, 5.0), n = csim_truth_all(r.truth)->len;
	int rc = 0;
	if (n == 0) {
		fprintf(stderr, "chorus-sim: no conversion could be measured (logs in %s)\n", out);
		rc = 1;
	} else if (bad) {
		GString *list = g_string_new(NULL);
		csim_truth_list_outliers(r.truth, 5.0, 12, list);
		fprintf(stderr, "chorus-sim: %u of %u conversions lie beyond 5 of their standard errors (t-quantile rule for young fits):\n%s",
			bad, n, list->str);
		g_string_free(list, TRUE);
		rc = 1;
	} else {
		printf("all %u conversions within 5 standard errors; CSV: %s\n", n, csv_path);
	}
	fputs(chaos_text->str, stdout);
	if (o_stops)
		printf("outages: %d node stop(s), %d start(s), %d failed start(s)\n", o_stops, o_starts, o_failed);
	if (o_failed)
		rc = 1;
	if (chaos_failures != 0) {
		fprintf(stderr, "chorus-sim: chaos: %s\n", chaos_failures < 0 ? "the report could not be written" : "failures (above)");
		rc = 1;
	}
	g_string_free(chaos_text, TRUE);
	g_string_free(table, TRUE);
	g_free(csv_path);
	csim_truth_free(r.truth);
	g_main_loop_unref(r.loop);
	g_free(out);
	g_free(bin);
	g_free(tstamp);
	g_free(extra);
	g_free(extra_file);
	g_free(csv);
	g_strfreev(apps);
	g_ptr_array_unref(all_apps);
	return rc;
}
