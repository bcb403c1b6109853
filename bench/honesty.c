/* bench/honesty — are the stated uncertainties true? (issue 13)
 *
 * Runs chorus-sim (real syncd and audiod per virtual node) over a matrix of
 * interrupt-latency shapes x timestamp sources x radio receive jitter x
 * clock wander, each row a line of four nodes 10 m apart that hear only
 * their neighbours (cpu conversions over 1-3 radio hops, audio0 over 3-5
 * graph edges), HONESTY_SEEDS times with different seeds (one run is a few
 * independent draws of each fit's error: the fits' errors persist for a
 * window), and from chorus-sim's samples.csv prints per row, clock kind
 * (cpu, global, audio0) and phase, pooled over the seeds: conversions
 * checked, RMS error, RMS of error / stated s.e. (the aim: 0.7-1.5) with
 * each seed's after it, and how many lie beyond 5 s.e. by the t-quantile
 * rule (libsync sync_tail_k; the aim: 0).  Phases: "young", the run's first
 * YOUNG_S seconds (the pairs' first window of 64 beacons, filling; a young
 * fit states its wander's bound, docs/clocks.md §5); "settling", to
 * STEADY_S (the window's second, over which that bound fades); "steady",
 * after it.  A row whose pooled RMS z exceeds 1.5 in any kind and phase or that
 * has any conversion beyond 5 s.e. fails, and then the bench exits 1; below
 * 0.7 a line is marked "wide" (over-cautious, not failed).
 *
 * Shapes: exponential 20 us, normal 12 +- 4 us, uniform 30 +- 10 us (floor
 * 12.7 us), constant 15 us, mixture 90 % 10 us + 10 % 200 us.  Where a
 * node's operator calibrated its latency floor (the side channel's uniform
 * and constant nodes, 2 us s.e.; driver-like ALSA cards' FIFO and link
 * delay of 4-10 us, 1 us s.e.) the
 * calibration told to audiod is the true floor plus an error drawn at that
 * s.e., independently per node and seed (floor_keys()): each card is
 * calibrated on its own, and an error common to every node would cancel in
 * every audio-to-audio conversion while being stated for each.  With
 * pessimistic ALSA timestamps nothing is calibrated.  Sources: the
 * simulator's side channel (kpatch format), ALSA with the plugin's "driver"
 * mode (DMA position at the status call, like HDA) and its "pessimistic"
 * mode (hw_ptr per interrupt, stamped at the wakeup).  Jitter: 0.3, 1, 5
 * us.  Wander (libsync/simwander.h): none; a random walk of 10 ppb per
 * sqrt(s) on every clock (each its own); a 5 °C temperature cycle of period
 * 600 s (a fast one: sun and cloud on an enclosure; a daily cycle's ramps
 * are 144 times gentler) that the nodes' crystals follow with different
 * coefficients (cpu 0.3, -0.2, 0.1, -0.3 ppm/°C, sound cards 1, -0.5, 0.8,
 * -1) — the same coefficient everywhere would cancel in every conversion.
 *
 * HONESTY_ROWS=quick (default: 12 rows) or full (135 rows);
 * HONESTY_PICK=3,10 runs only those rows of the set; HONESTY_SEEDS (3)
 * runs per row; HONESTY_JOBS (6) runs at once (a run is real time and
 * light: about 6 % of a core); HONESTY_DURATION_S (150) per run, at least
 * STEADY_S + 15; HONESTY_SYNCD_CONF=FILE appends FILE's INI text to every
 * node's syncd.conf (chorus-sim --syncd-conf), to try a setting over the
 * matrix.  Writes $CHORUS_BENCH_OUT/honesty.csv (row,shape,tstamp,
 * jitter_us,wander,kind,phase,hops,n,rms_us,rms_z,seed_rms_z,beyond_5se,
 * verdict,other_cores,reruns).  `other` is the most cores processes
 * outside the bench kept busy during any of the row's runs (cpuload.h).
 * A run that fails while others kept more than LOADED_CORES busy was not
 * measured in the conditions its model assumes (the machine's own
 * scheduling is part of every latency): it is run once more and that run
 * counts; the tally says how many were.  A run that passes under load
 * passes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "bench/csvout.h"
#include "bench/cpuload.h"
#include "libsync/conv.h"

#ifndef CSIM_BIN_DIR
#define CSIM_BIN_DIR "build/bin"
#endif

/* Cores other processes may keep busy before a failed run is repeated. */
#define LOADED_CORES 0.5
/* Run seconds before which a sample belongs to the pairs' first window:
 * chorus-sim samples from 10 s; a pair's window of 64 beacons fills
 * about 35 s into the run and slides from about 40 s ... */
#define YOUNG_S 40.0
/* ... and to its second: the young fit's wander bound fades while the
 * windows pooled go from 1 to 2, about 1.6 windows of data (libsync/fit.c
 * WANDER_FADE_K). */
#define STEADY_S 100.0
#define MAX_SEEDS 16

static const char *const shapes[] = {"exponential", "normal", "uniform", "constant", "mixture"};
static const char *const tstamps[] = {"sidechannel", "alsa-driver", "alsa-pessimistic"};
static const double jitters_us[] = {0.3, 1, 5};
static const char *const kinds[] = {"cpu", "global", "audio0"};
static const char *const wanders[] = {"none", "walk", "temp"};
static const char *const phases[] = {"young", "settling", "steady"};
enum { NKIND = 3,
       NPHASE = 3 };

typedef struct {
	guint n, beyond;
	double e2, z2;
	unsigned hmin, hmax;
} stats;

typedef struct {
	int shape, tstamp;
	double jitter_us;
	int wander;
	guint id; /* its number in the set (quick or full), as HONESTY_PICK names it */
	/* results, per seed (the last attempt's) */
	stats seed_st[MAX_SEEDS][NPHASE][NKIND];
	int seeds_done, reruns, error;
	double other_max;
} row;

/* The [node.N] wander keys of row r for the i-th node of the line. */
static void wander_keys(GString *s, const row *r, int i)
{
	static const double cpu_tc[] = {0.3, -0.2, 0.1, -0.3}, audio_tc[] = {1, -0.5, 0.8, -1};
	if (r->wander == 1)
		g_string_append(s, "cpu_wander_ppb_per_s = 10\naudio_wander_ppb_per_s = 10\n");
	else if (r->wander == 2)
		g_string_append_printf(s,
				       "temperature_cycle = 5, 600\ntempco_ppm_per_c = %g\naudio_tempco_ppm_per_c = %g\n",
				       cpu_tc[i], audio_tc[i]);
}

/* The [node.N] latency keys of a shape. */
static const char *shape_keys(int shape)
{
	switch (shape) {
	case 0:
		return "irq_latency = exponential\nirq_latency_mean_us = 20\n";
	case 1:
		return "irq_latency = normal\nirq_latency_mean_us = 12\nirq_latency_sd_us = 4\n";
	case 2:
		return "irq_latency = uniform\nirq_latency_mean_us = 30\nirq_latency_sd_us = 10\n";
	case 3:
		return "irq_latency = constant\nirq_latency_mean_us = 15\n";
	default:
		return "irq_latency = mixture\nirq_latency_mean_us = 10\nirq_latency_mix_fraction = 0.1\n"
		       "irq_latency_mix_mean_us = 200\n";
	}
}

/* The floor node i's operator calibrated, as audiod is told it: with
 * interrupt records (the side channel) the uniform and constant latencies'
 * floors (30 - 10 sqrt 3 and 15 us) to 2 us; a driver-like ALSA card's
 * position lags by its FIFO and link delay (the plugin's
 * irq_latency_floor_us: 4, 6, 8, 10 us on the four nodes), calibrated to 1
 * us, as a self-test against the interrupts would; the pessimistic mode's
 * floor is the host's wakeup latency, not calibrated (audiod then states
 * the fit's residual RMS).  Each calibration errs by a normal draw at its
 * s.e. from `rng` (one per node and seed; a floor is never below 0). */
static void floor_keys(GString *s, const row *r, int i, GRand *rng)
{
	double truth, sd;
	if (r->tstamp == 1) {
		truth = 4 + 2 * i;
		sd = 1;
		g_string_append_printf(s, "irq_latency_floor_us = %g\n", truth);
	} else if (r->tstamp == 0 && r->shape == 2) {
		truth = 30 - 10 * sqrt(3.0);
		sd = 2;
	} else if (r->tstamp == 0 && r->shape == 3) {
		truth = 15;
		sd = 2;
	} else {
		return;
	}
	/* Box-Muller from GRand's uniform doubles */
	double u1 = g_rand_double_range(rng, 1e-12, 1), u2 = g_rand_double(rng);
	double g = sqrt(-2 * log(u1)) * cos(2 * G_PI * u2);
	g_string_append_printf(s, "calibrated_floor_us = %.3f, %g\n", fmax(0.0, truth + sd * g), sd);
}

static int scenario_seed(const row *r, int seed)
{
	return 100 + r->shape * 10 + r->tstamp + 1000 * r->wander + 7919 * seed;
}

static char *scenario_text(const row *r, int seed, double duration_s)
{
	static const double cpu_skew[] = {20, -15, 5, -30}, audio_skew[] = {-10, 25, 12, 3};
	GString *s = g_string_new(NULL);
	int sseed = scenario_seed(r, seed);
	GRand *rng = g_rand_new_with_seed((guint32)sseed);
	g_string_append_printf(s, "[world]\nseed = %d\nduration_s = %g\nradio_range_m = 12\n", sseed, duration_s);
	for (int i = 0; i < 4; i++) {
		g_string_append_printf(s,
				       "[node.%d]\nposition_m = %d, 0, 0\ncpu_skew_ppm = %g\naudio_skew_ppm = %g\n"
				       "radio_jitter_ns = %g\n%s",
				       i + 1, 10 * i, cpu_skew[i], audio_skew[i], r->jitter_us * 1e3, shape_keys(r->shape));
		floor_keys(s, r, i, rng);
		wander_keys(s, r, i);
	}
	g_rand_free(rng);
	return g_string_free(s, FALSE);
}

/* Read chorus-sim's samples.csv into per-phase, per-kind statistics.
 * 0 or -errno. */
static int read_samples(const char *path, stats st[NPHASE][NKIND])
{
	char *text = NULL;
	GError *e = NULL;
	if (!g_file_get_contents(path, &text, NULL, &e)) {
		fprintf(stderr, "bench/honesty: %s\n", e->message);
		g_error_free(e);
		return -ENOENT;
	}
	memset(st, 0, sizeof(stats) * NPHASE * NKIND);
	for (int p = 0; p < NPHASE; p++)
		for (int k = 0; k < NKIND; k++)
			st[p][k].hmin = 99;
	gchar **lines = g_strsplit(text, "\n", -1);
	for (int i = 1; lines[i]; i++) {
		gchar **f = g_strsplit(lines[i], ",", -1);
		if (g_strv_length(f) >= 9) {
			int k = !strcmp(f[1], "cpu") ? 0 : !strcmp(f[1], "global") ? 1
										   : 2;
			double t_s = g_ascii_strtod(f[0], NULL);
			int p = t_s < YOUNG_S ? 0 : t_s < STEADY_S ? 1
								   : 2;
			unsigned hops = (unsigned)atoi(f[4]);
			double err = g_ascii_strtod(f[5], NULL), sd = g_ascii_strtod(f[6], NULL);
			double dof = g_ascii_strtod(f[8], NULL);
			if (sd > 0) {
				stats *s = &st[p][k];
				s->n++;
				s->e2 += err * err;
				s->z2 += (err / sd) * (err / sd);
				s->beyond += fabs(err) > sync_tail_k(dof, 5.0) * sd;
				s->hmin = MIN(s->hmin, hops);
				s->hmax = MAX(s->hmax, hops);
			}
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	g_free(text);
	return 0;
}

/* A run fails when a kind and phase has a conversion beyond 5 s.e. or an
 * RMS z above 1.5. */
static gboolean stats_bad(const stats *s)
{
	return s->beyond > 0 || (s->n && sqrt(s->z2 / s->n) > 1.5);
}

/* ---- the runs, HONESTY_JOBS at once ---- */

typedef struct {
	row *r;
	guint row_i;
	int seed, attempt;
	char *dir;
	cpuload_sample c0;
	gboolean have_c0;
} job;

typedef struct {
	GQueue pending;
	int running, jobs;
	double duration_s;
	const char *tmp;
	GMainLoop *loop;
	/* rows finished, printed in order */
	GArray *rows;
	guint printed;
	int seeds;
	FILE *csv;
	int failed, reruns, wide[NPHASE][NKIND], lines[NPHASE][NKIND];
} bench;

static void start_next(bench *b);

/* Print row i's pooled lines and its CSV rows; count its verdicts. */
static void print_row(bench *b, guint i)
{
	row *r = &g_array_index(b->rows, row, i);
	if (r->error) {
		printf("%3u %-11s %-16s %6.1f %-6s chorus-sim failed (logs under %s)\n", r->id, shapes[r->shape],
		       tstamps[r->tstamp], r->jitter_us, wanders[r->wander], b->tmp);
		fprintf(b->csv, "%u,%s,%s,%g,%s,,,,,,,,,error,,%d\n", r->id, shapes[r->shape], tstamps[r->tstamp], r->jitter_us,
			wanders[r->wander], r->reruns);
		b->failed++;
		return;
	}
	gboolean row_bad = FALSE;
	for (int k = 0; k < NKIND; k++)
		for (int p = 0; p < NPHASE; p++) {
			stats pool = {.hmin = 99};
			GString *per = g_string_new(NULL);
			for (int s = 0; s < b->seeds; s++) {
				const stats *x = &r->seed_st[s][p][k];
				pool.n += x->n;
				pool.beyond += x->beyond;
				pool.e2 += x->e2;
				pool.z2 += x->z2;
				pool.hmin = MIN(pool.hmin, x->hmin);
				pool.hmax = MAX(pool.hmax, x->hmax);
				if (x->n)
					g_string_append_printf(per, "%s%.2f", per->len ? " " : "", sqrt(x->z2 / x->n));
			}
			if (!pool.n) {
				printf("%3u %-11s %-16s %6.1f %-6s %-6s %-8s none measured\n", r->id, shapes[r->shape],
				       tstamps[r->tstamp], r->jitter_us, wanders[r->wander], kinds[k], phases[p]);
				row_bad = TRUE;
				g_string_free(per, TRUE);
				continue;
			}
			double rms = sqrt(pool.e2 / pool.n) * 1e-3, z = sqrt(pool.z2 / pool.n);
			gboolean bad = stats_bad(&pool);
			const char *verdict = bad ? "FAIL" : z < 0.7 ? "wide"
								     : "ok";
			row_bad |= bad;
			b->lines[p][k]++;
			b->wide[p][k] += !bad && z < 0.7;
			char hops[16];
			g_snprintf(hops, sizeof hops, "%u-%u", pool.hmin, pool.hmax);
			char seeds[64];
			g_snprintf(seeds, sizeof seeds, "(%s)", per->str);
			printf("%3u %-11s %-16s %6.1f %-6s %-6s %-8s %5s %6u %9.3f %6.2f %-16s %5u  %-5s %.2f\n", r->id,
			       shapes[r->shape], tstamps[r->tstamp], r->jitter_us, wanders[r->wander], kinds[k], phases[p], hops,
			       pool.n, rms, z, seeds, pool.beyond, verdict, r->other_max);
			fprintf(b->csv, "%u,%s,%s,%g,%s,%s,%s,%s,%u,%.4f,%.3f,%s,%u,%s,%.3f,%d\n", r->id, shapes[r->shape],
				tstamps[r->tstamp], r->jitter_us, wanders[r->wander], kinds[k], phases[p], hops, pool.n, rms, z,
				per->str, pool.beyond, verdict, r->other_max, r->reruns);
			g_string_free(per, TRUE);
		}
	if (r->reruns)
		printf("%3u: %d run(s) failed while other processes kept more than %.1f cores busy and were run again\n",
		       r->id, r->reruns, LOADED_CORES);
	fflush(stdout);
	b->failed += row_bad;
}

static void finished(GObject *src, GAsyncResult *res, gpointer data)
{
	job *j = data;
	bench *b = g_object_get_data(src, "bench");
	GSubprocess *p = G_SUBPROCESS(src);
	GError *e = NULL;
	row *r = j->r;
	int rc = 0;
	if (!g_subprocess_wait_finish(p, res, &e)) {
		fprintf(stderr, "bench/honesty: chorus-sim: %s\n", e->message);
		g_error_free(e);
		rc = -ECHILD;
	} else if (!g_subprocess_get_if_exited(p) || g_subprocess_get_exit_status(p) > 1) {
		fprintf(stderr, "bench/honesty: row %u seed %d: chorus-sim failed (see %s/chorus-sim.log)\n", j->row_i,
			j->seed, j->dir);
		rc = -ECHILD;
	}
	stats st[NPHASE][NKIND];
	if (rc == 0) {
		char *csv = g_build_filename(j->dir, "out", "samples.csv", NULL);
		rc = read_samples(csv, st);
		g_free(csv);
	}
	cpuload_sample c1;
	double other = j->have_c0 && cpuload_now(&c1) ? cpuload_other_cores(&j->c0, &c1) : -1;
	r->other_max = fmax(r->other_max, other);
	if (rc < 0) {
		r->error = 1;
		r->seeds_done++;
	} else {
		gboolean bad = FALSE;
		for (int ph = 0; ph < NPHASE; ph++)
			for (int k = 0; k < NKIND; k++)
				bad |= stats_bad(&st[ph][k]);
		if (bad && j->attempt == 0 && other > LOADED_CORES) {
			/* not measured in the conditions its model assumes: once more */
			job *again = g_new0(job, 1);
			*again = (job){.r = r, .row_i = j->row_i, .seed = j->seed, .attempt = 1};
			g_queue_push_head(&b->pending, again);
			r->reruns++;
			b->reruns++;
		} else {
			memcpy(r->seed_st[j->seed], st, sizeof st);
			r->seeds_done++;
		}
	}
	g_object_unref(p);
	g_free(j->dir);
	g_free(j);
	b->running--;
	while (b->printed < b->rows->len && g_array_index(b->rows, row, b->printed).seeds_done >= b->seeds)
		print_row(b, b->printed++);
	start_next(b);
	if (!b->running && g_queue_is_empty(&b->pending))
		g_main_loop_quit(b->loop);
}

/* Start queued runs until HONESTY_JOBS are running. */
static void start_next(bench *b)
{
	while (b->running < b->jobs && !g_queue_is_empty(&b->pending)) {
		job *j = g_queue_pop_head(&b->pending);
		const row *r = j->r;
		char name[48];
		g_snprintf(name, sizeof name, "row%u-seed%d-%d", j->row_i, j->seed, j->attempt);
		j->dir = g_build_filename(b->tmp, name, NULL);
		g_mkdir_with_parents(j->dir, 0755);
		double dur_s = b->duration_s;
		char *sc = g_build_filename(j->dir, "scenario.ini", NULL), *text = scenario_text(r, j->seed, dur_s);
		char *out = g_build_filename(j->dir, "out", NULL), *log = g_build_filename(j->dir, "chorus-sim.log", NULL);
		GError *e = NULL;
		GSubprocess *p = NULL;
		if (g_file_set_contents(sc, text, -1, &e)) {
			char dur[32];
			g_snprintf(dur, sizeof dur, "%g", dur_s);
			const char *extra = getenv("HONESTY_SYNCD_CONF"); /* INI text appended to every syncd.conf */
			GPtrArray *argv = g_ptr_array_new();
			const char *fixed[] = {CSIM_BIN_DIR "/chorus-sim", "-o", out, "-d", dur, "--tstamp",
					       r->tstamp ? "alsa" : "sim"};
			for (size_t a = 0; a < G_N_ELEMENTS(fixed); a++)
				g_ptr_array_add(argv, (gpointer)fixed[a]);
			if (extra && *extra) {
				g_ptr_array_add(argv, "--syncd-conf");
				g_ptr_array_add(argv, (gpointer)extra);
			}
			g_ptr_array_add(argv, sc);
			g_ptr_array_add(argv, NULL);
			GSubprocessLauncher *l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE);
			g_subprocess_launcher_set_stderr_file_path(l, log);
			if (r->tstamp)
				g_subprocess_launcher_setenv(l, "CHORUS_SIM_TSTAMP",
							     r->tstamp == 1 ? "driver" : "pessimistic", TRUE);
			j->have_c0 = cpuload_now(&j->c0);
			p = g_subprocess_launcher_spawnv(l, (const char *const *)argv->pdata, &e);
			g_object_unref(l);
			g_ptr_array_free(argv, TRUE);
		}
		if (!p) {
			fprintf(stderr, "bench/honesty: row %u: %s\n", j->row_i, e->message);
			g_error_free(e);
			j->r->error = 1;
			j->r->seeds_done++;
			g_free(j->dir);
			g_free(j);
		} else {
			g_object_set_data(G_OBJECT(p), "bench", b);
			b->running++;
			g_subprocess_wait_async(p, NULL, finished, j);
		}
		g_free(sc);
		g_free(text);
		g_free(out);
		g_free(log);
	}
}

/* An integer from the environment, or def; -1 when malformed or outside
 * [lo, hi]. */
static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return def;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < lo || x > hi) {
		fprintf(stderr, "bench/honesty: %s=%s: an integer from %d to %d\n", name, v, lo, hi);
		return -1;
	}
	return (int)x;
}

int main(void)
{
	const char *rows_env = getenv("HONESTY_ROWS"), *dur_env = getenv("HONESTY_DURATION_S");
	gboolean full = rows_env && !strcmp(rows_env, "full");
	if (rows_env && !full && strcmp(rows_env, "quick")) {
		fprintf(stderr, "bench/honesty: HONESTY_ROWS=%s: quick or full\n", rows_env);
		return 2;
	}
	bench b = {.duration_s = dur_env ? g_ascii_strtod(dur_env, NULL) : 150};
	if (!(b.duration_s >= STEADY_S + 15)) {
		fprintf(stderr,
			"bench/honesty: HONESTY_DURATION_S=%s: at least %g s (young fits to %g s, settling to %g s, and "
			"after)\n",
			dur_env, STEADY_S + 15, YOUNG_S, STEADY_S);
		return 2;
	}
	b.seeds = env_int("HONESTY_SEEDS", 3, 1, MAX_SEEDS);
	b.jobs = env_int("HONESTY_JOBS", 6, 1, 64);
	if (b.seeds < 0 || b.jobs < 0)
		return 2;
	b.rows = g_array_new(FALSE, TRUE, sizeof(row));
	for (int wd = 0; wd < 3; wd++)
		for (int s = 0; s < 5; s++)
			for (int t = 0; t < 3; t++)
				for (int j = 0; j < 3; j++) {
					row r = {.shape = s, .tstamp = t, .jitter_us = jitters_us[j], .wander = wd, .id = b.rows->len};
					/* quick: every shape with the side channel at 1 us, the
					 * ALSA modes and the other jitters with exponential
					 * delays; each wander with exponential delays at 1 us,
					 * the temperature cycle also through real-driver ALSA */
					gboolean quick = wd == 0 ? (t == 0 && j == 1) || (s == 0 && (j == 1 || t == 0))
								 : s == 0 && j == 1 && (t == 0 || (wd == 2 && t == 1));
					if (full || quick)
						g_array_append_val(b.rows, r);
				}
	const char *pick = getenv("HONESTY_PICK");
	if (pick && *pick) {
		GArray *kept = g_array_new(FALSE, TRUE, sizeof(row));
		gchar **ids = g_strsplit(pick, ",", -1);
		for (gchar **id = ids; *id; id++) {
			char *end;
			unsigned long k = strtoul(*id, &end, 10);
			if (end == *id || *end || k >= b.rows->len) {
				fprintf(stderr, "bench/honesty: HONESTY_PICK=%s: '%s' is not a row of the %u\n", pick, *id,
					b.rows->len);
				return 2;
			}
			g_array_append_val(kept, g_array_index(b.rows, row, k));
		}
		g_strfreev(ids);
		g_array_free(b.rows, TRUE);
		b.rows = kept;
	}
	char csv_path[4096];
	b.csv = bench_csv_open("honesty.csv", csv_path, sizeof csv_path);
	if (!b.csv)
		return 1;
	fprintf(b.csv, "row,shape,tstamp,jitter_us,wander,kind,phase,hops,n,rms_us,rms_z,seed_rms_z,beyond_5se,verdict,"
		       "other_cores,reruns\n");
	char *tmp = g_dir_make_tmp("chorus-honesty-XXXXXX", NULL);
	b.tmp = tmp;
	printf("bench/honesty: %u rows (%s) x %d seeds, %g s each, %d at once; young: the first %g s, settling: to %g "
	       "s; 4 nodes on a line; runs under %s\n",
	       b.rows->len, full ? "full" : "quick", b.seeds, b.duration_s, b.jobs, YOUNG_S, STEADY_S, tmp);
	printf("%3s %-11s %-16s %6s %-6s %-6s %-8s %5s %6s %9s %6s %-16s %5s  %-5s %s\n", "row", "shape", "tstamp",
	       "jit_us", "wander", "kind", "phase", "hops", "n", "rms_us", "rms_z", "(per seed)", ">5se", "verd.",
	       "other");
	fflush(stdout);
	for (guint i = 0; i < b.rows->len; i++)
		for (int s = 0; s < b.seeds; s++) {
			job *j = g_new0(job, 1);
			*j = (job){.r = &g_array_index(b.rows, row, i), .row_i = i, .seed = s};
			g_queue_push_tail(&b.pending, j);
		}
	b.loop = g_main_loop_new(NULL, FALSE);
	start_next(&b);
	if (b.running)
		g_main_loop_run(b.loop);
	g_main_loop_unref(b.loop);
	int rc = 0;
	if (bench_csv_close(b.csv, csv_path) != 0)
		rc = 1;
	printf("bench/honesty: %d of %u rows failed (pooled RMS z > 1.5 or a conversion beyond 5 s.e.; %d run(s) "
	       "repeated after failing under load); wide (RMS z < 0.7) of the rows' lines:",
	       b.failed, b.rows->len, b.reruns);
	for (int p = 0; p < NPHASE; p++)
		for (int k = 0; k < NKIND; k++)
			printf(" %s %s %d/%d%s", kinds[k], phases[p], b.wide[p][k], b.lines[p][k],
			       p == NPHASE - 1 && k == NKIND - 1 ? "" : ",");
	printf("; CSV %s\n", csv_path);
	char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
	if (!b.failed && system(cmd) != 0)
		fprintf(stderr, "bench/honesty: could not remove %s\n", tmp);
	g_free(cmd);
	g_free(tmp);
	g_array_free(b.rows, TRUE);
	return b.failed || rc ? 1 : 0;
}
