/* bench/field.c — the field benchmark (issue 11): chorus-demo over the
 * scenarios of sim/scenarios/field/, one row each, in one table.
 *
 * Each row runs the real services (syncd, audiod on the simulated
 * microphones, fft, detect, collab on every node) through chorus-demo for
 * FIELD_DURATION_S (default 60) simulated seconds at 16 kHz and reads back
 * what chorus-demo scored (sim/score/report.h, one-to-one against the
 * truth): DIR/calls.csv per call, and its summary for detection recall and
 * false alarms.  Columns:
 *   calls      scored calls (every call in the denominator)
 *   located    calls whose "ok" result is within 1 m of the truth
 *   med/p90    horizontal error of every result with a position, whatever
 *              its status (m, linear-interpolated quantiles as report.c),
 *              for calls inside the nodes' convex hull ("in") and outside
 *              it ("out"); the same over "ok" results only in the CSV
 *   ok         results with status "ok"
 *   ell95      fraction of ok results whose truth lies inside their own
 *              95 % ellipse (Mahalanobis; aim 0.90-0.98)
 *   ok>1m      ok results farther than 1 m from their call (aim 0)
 *   unt        calls answered `untested`: four arrivals with the source's height
 *              unknown fit any position exactly (no arrival to spare)
 *   recall     detections matched to true arrivals / arrivals
 *   fa/nm      false alarms per node-minute
 *   cpu        user + sys CPU of chorus-demo and everything it ran (the
 *              services, and the world simulated inside each audiod by the
 *              ALSA plugin), core-seconds per simulated second, from
 *              getrusage(RUSAGE_CHILDREN) around the run
 *   xruns      audiod overruns logged on all nodes: non-zero means the
 *              machine could not simulate that world in real time, and the
 *              row measures lost audio too
 *   onset_z    detections' onsets against the true arrivals they matched:
 *              RMS of error / stated s.e. (detect's cpu_se_ns), and how
 *              many lie beyond 5 s.e. (">5se"): the error bars detect/events
 *              states (measured, not judged)
 * Rows: arguments, else FIELD_ROWS ("exact variation"), else all.  A row
 * whose scenario has a file source under build/calls (recorded calls) gets
 * tools/fetch-calls.sh run first and copies of its scenario and profile with
 * the absolute path of the fetched files; a row whose team states
 * something of its callers (row_refine) gets a copy of the profile saying
 * so.
 * The run directories stay under
 * build/bench/field-runs/ROW (demo.txt, calls.csv, the logs in sim/).
 * Writes build/bench/field.csv (and CHORUS_BENCH_OUT/field.csv when set).
 * Exit status 1 when a row could not be set up or produced no calls.csv,
 * or when any row has an ok result more than 1 m from its call (a wrong
 * answer stated as right: issue 12's one rule with no tolerance); the
 * other numbers are measured, not judged.
 */
#include <errno.h>
#include <glib.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FIELD_SRC_DIR
#define FIELD_SRC_DIR "."
#endif
#ifndef FIELD_BUILD_DIR
#define FIELD_BUILD_DIR "build"
#endif

static const char *const all_rows[] = {"exact", "variation", "recorded", "grass", "room", "wind",
				       "survey", "temperature", "overlap", "moving", NULL};

/* The profile of a row: the default (frog) unless named here. */
static const char *row_profile(const char *row)
{
	return strcmp(row, "recorded") == 0 ? "apps/profiles/duck.ini" : NULL;
}

/* A `[refine]` key of the profile that the field team of a row states
 * otherwise, its value in *value, or NULL for the profile as it is: the
 * variation row's frogs vary every parameter with a relative s.d. of 5 %
 * (its scenario), so its team, having recorded them, says
 * `variation_pct = 5` (frog.ini says 0: the simulator's default calls are
 * its templates); the moving row's bird flies at up to 10 m/s (collab is
 * told so too, row_told), `max_speed_m_s = 10`. */
static const char *row_refine(const char *row, const char **value)
{
	if (strcmp(row, "variation") == 0) {
		*value = "5";
		return "variation_pct";
	}
	if (strcmp(row, "moving") == 0) {
		*value = "10";
		return "max_speed_m_s";
	}
	return NULL;
}

/* Copy the profile src to dst with `[refine] key` set to value (GKeyFile:
 * comments kept).  0, or -1 with the reason in why. */
static int with_refine(const char *src, const char *dst, const char *key, const char *value, char *why, size_t len)
{
	GKeyFile *k = g_key_file_new();
	GError *e = NULL;
	int rc = 0;
	if (!g_key_file_load_from_file(k, src, G_KEY_FILE_KEEP_COMMENTS, &e)) {
		snprintf(why, len, "cannot read profile %s: %s", src, e->message);
		rc = -1;
	} else {
		g_key_file_set_string(k, "refine", key, value);
		if (!g_key_file_save_to_file(k, dst, &e)) {
			snprintf(why, len, "cannot write %s: %s", dst, e->message);
			rc = -1;
		}
	}
	g_clear_error(&e);
	g_key_file_free(k);
	return rc;
}

/* What the field team of a row states besides the defaults (collab's 20 ±
 * 2 °C still air): the survey row's team knows its survey is good to 10 cm;
 * the wind row's read 5 m/s from the west off an anemometer; the moving
 * row's knows its bird flies at up to 10 m/s (it flies at 5). */
static const char *row_told(const char *row, const char **option)
{
	if (strcmp(row, "survey") == 0) {
		*option = "--position-sd";
		return "0.1";
	}
	if (strcmp(row, "wind") == 0) {
		*option = "--wind";
		return "5,270";
	}
	if (strcmp(row, "moving") == 0) {
		*option = "--source-speed";
		return "10";
	}
	return NULL;
}

typedef struct {
	char name[32];
	int ok; /* the run produced its output */
	char why[200];
	unsigned calls, located, ok_n, in_ell, off, ok_unmatched;
	unsigned untested;                       /* calls answered `untested`: four arrivals, the height unknown, none to spare */
	double med_in, p90_in, med_out, p90_out; /* every result with a position, any status */
	unsigned n_in, n_out;
	double ok_med_in, ok_p90_in, ok_med_out, ok_p90_out; /* ok results only */
	unsigned ok_n_in, ok_n_out;
	double recall, fa_nm, cpu, wall_s;
	double onset_z;         /* detections' onsets: RMS of error / stated s.e. */
	unsigned onset_beyond5; /* ... and how many lie beyond 5 s.e. */
	unsigned xruns;
	/* the survey row's self-survey (collab-survey over its results) */
	int surveyed, survey_calls;
	double survey_told_m, survey_refined_m; /* RMS horizontal node position error, m */
} row;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Quantile q of v[n] (sorted in place), linear interpolation between order
 * statistics (GSL's definition); NAN if empty. */
static double quantile(double *v, guint n, double q)
{
	if (!n)
		return NAN;
	gsl_sort(v, 1, n);
	return gsl_stats_quantile_from_sorted_data(v, 1, n, q);
}

/* Run argv with stdout and stderr to files; returns its exit status (or
 * -1 when it could not run, 128+signal when killed). */
static int run(char **argv, const char *out, const char *err)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "bench/field: %s: %s\n", argv[0], g_strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Run tools/fetch-calls.sh once; the cache directory, or NULL. */
static const char *calls_dir(char *why, size_t len)
{
	static char *dir;
	static int tried;
	if (tried)
		return dir;
	tried = 1;
	char *d = g_build_filename(FIELD_BUILD_DIR, "calls", NULL);
	char *cmd = g_strdup_printf("sh '%s/tools/fetch-calls.sh' '%s' >/dev/null", FIELD_SRC_DIR, d);
	if (system(cmd) == 0)
		dir = d;
	else {
		snprintf(why, len, "tools/fetch-calls.sh failed (see its message above)");
		g_free(d);
	}
	g_free(cmd);
	return dir;
}

/* Copy src to dst with every "file = .../build/calls/NAME" made absolute
 * (the fetched file).  0, or -1 with why. */
static int localise(const char *src, const char *dst, const char *calls, char *why, size_t len)
{
	char *text = NULL;
	if (!g_file_get_contents(src, &text, NULL, NULL)) {
		snprintf(why, len, "cannot read %s", src);
		return -1;
	}
	gchar **lines = g_strsplit(text, "\n", -1);
	GString *o = g_string_new(NULL);
	for (int i = 0; lines[i]; i++) {
		const char *l = lines[i], *b = strstr(l, "build/calls/");
		if (g_str_has_prefix(l, "file") && b)
			g_string_append_printf(o, "file = %s/%s", calls, b + strlen("build/calls/"));
		else
			g_string_append(o, l);
		if (lines[i + 1])
			g_string_append_c(o, '\n');
	}
	int rc = g_file_set_contents(dst, o->str, -1, NULL) ? 0 : -1;
	if (rc)
		snprintf(why, len, "cannot write %s", dst);
	g_string_free(o, TRUE);
	g_strfreev(lines);
	g_free(text);
	return rc;
}

/* The number after `key` in text, or NAN. */
static double after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? g_ascii_strtod(p + strlen(key), NULL) : NAN;
}

/* Score a finished run from DIR/calls.csv and DIR/demo.txt. */
static int read_run(row *r, const char *dir)
{
	char *csv = g_build_filename(dir, "calls.csv", NULL), *txt = g_build_filename(dir, "demo.txt", NULL);
	char *c = NULL, *t = NULL;
	int rc = -1;
	if (!g_file_get_contents(csv, &c, NULL, NULL) || !g_file_get_contents(txt, &t, NULL, NULL)) {
		snprintf(r->why, sizeof r->why, "no %s", c ? txt : csv);
		goto out;
	}
	gchar **lines = g_strsplit(c, "\n", -1);
	gchar **head = g_strsplit(lines[0], ",", -1);
	int ci = -1, cl = -1, cok = -1, cerr = -1, cell = -1, cest = -1, cst = -1;
	for (int k = 0; head[k]; k++) {
		cst = strcmp(head[k], "status") == 0 ? k : cst;
		ci = strcmp(head[k], "inside") == 0 ? k : ci;
		cl = strcmp(head[k], "located") == 0 ? k : cl;
		cok = strcmp(head[k], "ok") == 0 ? k : cok;
		cerr = strcmp(head[k], "error_m") == 0 ? k : cerr;
		cell = strcmp(head[k], "in_ell95") == 0 ? k : cell;
		cest = strcmp(head[k], "est_x") == 0 ? k : cest;
	}
	int ncol = (int)g_strv_length(head);
	g_strfreev(head);
	if (ci < 0 || cl < 0 || cok < 0 || cerr < 0 || cell < 0 || cest < 0 || cst < 0) {
		snprintf(r->why, sizeof r->why, "%s lacks a column this bench reads", csv);
		g_strfreev(lines);
		goto out;
	}
	GArray *e[4]; /* any status inside, outside; ok inside, outside */
	for (int k = 0; k < 4; k++)
		e[k] = g_array_new(FALSE, FALSE, sizeof(double));
	for (int i = 1; lines[i]; i++) {
		gchar **f = g_strsplit(lines[i], ",", -1);
		if ((int)g_strv_length(f) >= ncol) {
			r->calls++;
			r->located += atoi(f[cl]) != 0;
			r->untested += strcmp(f[cst], "untested") == 0;
			double err = g_ascii_strtod(f[cerr], NULL);
			int in = atoi(f[ci]) != 0;
			if (isfinite(g_ascii_strtod(f[cest], NULL)) && isfinite(err))
				g_array_append_val(e[in ? 0 : 1], err);
			if (atoi(f[cok])) {
				r->ok_n++;
				r->in_ell += atoi(f[cell]) != 0;
				r->off += !(err <= 1.0);
				g_array_append_val(e[in ? 2 : 3], err);
			}
		}
		g_strfreev(f);
	}
	g_strfreev(lines);
	double *q[8] = {&r->med_in, &r->p90_in, &r->med_out, &r->p90_out,
			&r->ok_med_in, &r->ok_p90_in, &r->ok_med_out, &r->ok_p90_out};
	unsigned *nq[4] = {&r->n_in, &r->n_out, &r->ok_n_in, &r->ok_n_out};
	for (int k = 0; k < 4; k++) {
		*nq[k] = e[k]->len;
		*q[2 * k] = quantile((double *)(void *)e[k]->data, e[k]->len, 0.5);
		*q[2 * k + 1] = quantile((double *)(void *)e[k]->data, e[k]->len, 0.9);
		g_array_free(e[k], TRUE);
	}
	/* The summary's recall and false alarms (print.c's wording). */
	const char *rl = strstr(t, "detection recall");
	r->recall = rl ? after(rl, "arrivals =") : NAN;
	const char *fl = strstr(t, "false alarms ");
	r->fa_nm = fl ? after(fl, "node-minutes =") : NAN;
	const char *zl = strstr(t, "onsets' stated errors");
	r->onset_z = zl ? after(zl, "stated s.e.") : NAN;
	unsigned nb = 0;
	const char *zr = zl ? strstr(zl, "stated s.e.") : NULL;
	r->onset_beyond5 = zr && sscanf(zr, "stated s.e. %*f, %u beyond", &nb) == 1 ? nb : 0;
	const char *ol = strstr(t, "ok results ");
	r->ok_unmatched = ol ? (unsigned)after(ol, "(+") : 0;
	rc = 0;
out:
	g_free(csv);
	g_free(txt);
	g_free(c);
	g_free(t);
	return rc;
}

/* audiod overruns logged by every node of the run. */
static unsigned count_xruns(const char *dir)
{
	char *sim = g_build_filename(dir, "sim", NULL);
	GDir *d = g_dir_open(sim, 0, NULL);
	unsigned n = 0;
	for (const char *e; d && (e = g_dir_read_name(d));) {
		if (!g_str_has_suffix(e, "-audiod.log"))
			continue;
		char *p = g_build_filename(sim, e, NULL), *t = NULL;
		if (g_file_get_contents(p, &t, NULL, NULL))
			for (const char *s = t; (s = strstr(s, "overrun")); s++)
				n++;
		g_free(t);
		g_free(p);
	}
	if (d)
		g_dir_close(d);
	g_free(sim);
	return n;
}

/* Horizontal positions by node id from a nodes file (ID X Y Z per line,
 * '#' comments) into pos[id] for ids below 64; returns how many. */
static int read_nodes(const char *path, double pos[64][2], int have[64])
{
	gchar *text;
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return 0;
	gchar **lines = g_strsplit(text, "\n", -1);
	int n = 0;
	for (int i = 0; lines[i]; i++) {
		unsigned id;
		double x, y;
		if (lines[i][0] != '#' && sscanf(lines[i], "%u %lf %lf", &id, &x, &y) == 3 && id < 64) {
			pos[id][0] = x;
			pos[id][1] = y;
			have[id] = 1;
			n++;
		}
	}
	g_strfreev(lines);
	g_free(text);
	return n;
}

/* The survey row's self-survey: collab-survey over every node's results
 * (told the row's 10 cm survey), and the RMS horizontal error of the node
 * positions before and after, against the scenario's true positions. */
static void self_survey(row *r, const char *dir, const char *scen)
{
	char *tool = g_build_filename(FIELD_BUILD_DIR, "bin", "collab-survey", NULL);
	char *nodes = g_build_filename(dir, "sim", "nodes.txt", NULL), *res = g_build_filename(dir, "results.jsonl", NULL);
	char *refined = g_build_filename(dir, "survey-nodes.txt", NULL), *log = g_build_filename(dir, "survey.err", NULL);
	char *argv[] = {tool, "--nodes", nodes, "--position-sd", "0.1", "--out", refined, res, NULL};
	GKeyFile *kf = g_key_file_new();
	double told[64][2], adj[64][2];
	int ht[64] = {0}, ha[64] = {0};
	if (run(argv, "/dev/null", log) == 0 && g_key_file_load_from_file(kf, scen, G_KEY_FILE_NONE, NULL) &&
	    read_nodes(nodes, told, ht) > 0 && read_nodes(refined, adj, ha) > 0) {
		double e2t = 0, e2a = 0;
		int n = 0;
		for (unsigned id = 0; id < 64; id++) {
			char grp[32];
			snprintf(grp, sizeof grp, "node.%u", id);
			char *ps = g_key_file_get_string(kf, grp, "position_m", NULL);
			double t[3];
			int len = ps ? sscanf(ps, "%lf , %lf , %lf", &t[0], &t[1], &t[2]) : 0;
			g_free(ps);
			/* collab's position of a node is its channel 0 microphone's */
			char *mics = g_key_file_get_string(kf, grp, "mics_m", NULL);
			double o[3] = {0, 0, 0};
			if (mics)
				sscanf(mics, "%lf , %lf , %lf", &o[0], &o[1], &o[2]);
			g_free(mics);
			if (len >= 2 && ht[id] && ha[id]) {
				t[0] += o[0];
				t[1] += o[1];
				e2t += pow(told[id][0] - t[0], 2) + pow(told[id][1] - t[1], 2);
				e2a += pow(adj[id][0] - t[0], 2) + pow(adj[id][1] - t[1], 2);
				n++;
			}
		}
		gchar *head = NULL;
		g_file_get_contents(refined, &head, NULL, NULL);
		if (n > 0 && head) {
			r->surveyed = 1;
			r->survey_told_m = sqrt(e2t / n);
			r->survey_refined_m = sqrt(e2a / n);
			sscanf(head, "# collab-survey: %d calls", &r->survey_calls);
		}
		g_free(head);
	}
	g_key_file_free(kf);
	g_free(tool);
	g_free(nodes);
	g_free(res);
	g_free(refined);
	g_free(log);
}

static void run_row(row *r, double duration_s)
{
	char *dir = g_build_filename(FIELD_BUILD_DIR, "bench", "field-runs", r->name, NULL);
	char *scen = g_strdup_printf("%s/sim/scenarios/field/%s.ini", FIELD_SRC_DIR, r->name);
	char *prof = row_profile(r->name) ? g_build_filename(FIELD_SRC_DIR, row_profile(r->name), NULL) : NULL;
	char *text = NULL;
	g_mkdir_with_parents(dir, 0755);
	if (!g_file_get_contents(scen, &text, NULL, NULL)) {
		snprintf(r->why, sizeof r->why, "no scenario %s", scen);
		goto out;
	}
	if (strstr(text, "build/calls/")) {
		const char *calls = calls_dir(r->why, sizeof r->why);
		char *s2 = g_build_filename(dir, "scenario.ini", NULL), *p2 = g_build_filename(dir, "profile.ini", NULL);
		int bad = !calls || localise(scen, s2, calls, r->why, sizeof r->why) < 0 ||
			  (prof && localise(prof, p2, calls, r->why, sizeof r->why) < 0);
		g_free(scen);
		scen = s2;
		if (prof) {
			g_free(prof);
			prof = p2;
		} else {
			g_free(p2);
		}
		if (bad)
			goto out;
	}
	const char *rvalue, *rkey = row_refine(r->name, &rvalue);
	if (rkey) {
		char *src = prof ? prof : g_build_filename(FIELD_SRC_DIR, "apps/profiles/frog.ini", NULL);
		char *p2 = g_build_filename(dir, "profile-told.ini", NULL);
		int bad = with_refine(src, p2, rkey, rvalue, r->why, sizeof r->why) < 0;
		g_free(src);
		prof = p2;
		if (bad)
			goto out;
	}
	char dur[G_ASCII_DTOSTR_BUF_SIZE];
	g_ascii_dtostr(dur, sizeof dur, duration_s);
	char *demo = g_build_filename(FIELD_BUILD_DIR, "bin", "chorus-demo", NULL);
	char *bin = g_build_filename(FIELD_BUILD_DIR, "bin", NULL);
	char *argv[16] = {demo, scen, "--duration", dur, "--out", dir, "--bin", bin, "--rate", "16000", "--quiet"};
	int n = 11;
	if (prof) {
		argv[n++] = "--profile";
		argv[n++] = prof;
	}
	const char *told_opt = NULL, *told = row_told(r->name, &told_opt);
	if (told) {
		argv[n++] = (char *)told_opt;
		argv[n++] = (char *)told;
	}
	argv[n] = NULL;
	char *out = g_build_filename(dir, "demo.txt", NULL), *err = g_build_filename(dir, "demo.err", NULL);
	/* A stale calls.csv must not pass for this run's. */
	char *csv = g_build_filename(dir, "calls.csv", NULL);
	unlink(csv);
	g_free(csv);
	printf("  running %-12s (%s s) ...\n", r->name, dur);
	struct rusage r0, r1;
	getrusage(RUSAGE_CHILDREN, &r0);
	double t0 = now_s();
	int st = run(argv, out, err);
	r->wall_s = now_s() - t0;
	getrusage(RUSAGE_CHILDREN, &r1);
	double cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6 +
		     (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) * 1e-6;
	r->cpu = cpu / duration_s;
	r->xruns = count_xruns(dir);
	if (st == 2 || st < 0 || st >= 127)
		snprintf(r->why, sizeof r->why, "chorus-demo exit %d (see %s)", st, err);
	else if (read_run(r, dir) == 0)
		r->ok = 1;
	if (r->ok && strcmp(r->name, "survey") == 0)
		self_survey(r, dir, scen);
	g_free(demo);
	g_free(bin);
	g_free(out);
	g_free(err);
out:
	g_free(text);
	g_free(dir);
	g_free(scen);
	g_free(prof);
}

static void fmt(char *b, size_t n, double v, const char *f)
{
	if (isfinite(v) && fabs(v) >= 1e4)
		snprintf(b, n, "%.1e", v); /* a wild solve must not widen the table */
	else if (isfinite(v))
		snprintf(b, n, f, v);
	else
		snprintf(b, n, "-");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *env = getenv("FIELD_ROWS"), *dur = getenv("FIELD_DURATION_S");
	double duration_s = dur && *dur ? g_ascii_strtod(dur, NULL) : 60;
	if (!(duration_s >= 10)) {
		fprintf(stderr, "bench/field: FIELD_DURATION_S: expected at least 10 s, got '%s'\n", dur);
		return 1;
	}
	gchar **names = argc > 1 ? g_strdupv(argv + 1) : env && *env ? g_strsplit_set(env, " ,", -1)
								     : g_strdupv((gchar **)all_rows);
	GArray *rows = g_array_new(FALSE, TRUE, sizeof(row));
	for (int i = 0; names[i]; i++) {
		if (!*names[i])
			continue;
		row r = {0};
		g_strlcpy(r.name, names[i], sizeof r.name);
		g_array_append_val(rows, r);
	}
	g_strfreev(names);
	printf("field benchmark: chorus-demo, %.0f s per row, audio 16 kHz, one-to-one scoring, located = ok within 1 m\n",
	       duration_s);
	for (guint i = 0; i < rows->len; i++)
		run_row(&g_array_index(rows, row, i), duration_s);

	GString *csv = g_string_new("scenario,calls,located,median_in_m,p90_in_m,n_in,median_out_m,p90_out_m,n_out,"
				    "ok_median_in_m,ok_p90_in_m,ok_n_in,ok_median_out_m,ok_p90_out_m,ok_n_out,ok_in_ell95,ok_n,ok_over_1m,ok_unmatched,recall,false_alarms_per_node_min,cpu_core_s_per_s,"
				    "xruns,wall_s,onset_rms_z,onsets_beyond_5se,untested,note\n");
	printf("\n%-12s %5s %9s %8s %8s %8s %8s %4s %6s %6s %4s %7s %6s %6s %6s %7s %5s\n", "scenario", "calls", "located",
	       "med_in", "p90_in", "med_out", "p90_out", "ok", "ell95", "ok>1m", "unt", "recall", "fa/nm", "cpu", "xruns",
	       "onset_z", ">5se");
	int failed = 0;
	for (guint i = 0; i < rows->len; i++) {
		const row *r = &g_array_index(rows, row, i);
		if (!r->ok) {
			failed++;
			printf("%-12s  not run: %s\n", r->name, r->why);
			g_string_append_printf(csv, "%s,,,,,,,,,,,,,,,,,,,,,,,,,,,%s\n", r->name, r->why);
			continue;
		}
		char loc[24], a[5][16], ell[16];
		snprintf(loc, sizeof loc, "%u/%u", r->located, r->calls);
		fmt(a[0], 16, r->med_in, "%.3f");
		fmt(a[1], 16, r->p90_in, "%.3f");
		fmt(a[2], 16, r->med_out, "%.3f");
		fmt(a[3], 16, r->p90_out, "%.3f");
		fmt(ell, 16, r->ok_n ? (double)r->in_ell / r->ok_n : NAN, "%.2f");
		printf("%-12s %5u %9s %8s %8s %8s %8s %4u %6s %6u %4u %7.3f %6.2f %6.2f %6u %7.2f %5u\n", r->name, r->calls,
		       loc, a[0], a[1], a[2], a[3], r->ok_n, ell, r->off, r->untested, r->recall, r->fa_nm, r->cpu, r->xruns,
		       r->onset_z, r->onset_beyond5);
		g_string_append_printf(csv, "%s,%u,%u,%.4f,%.4f,%u,%.4f,%.4f,%u,%.4f,%.4f,%u,%.4f,%.4f,%u,%.4f,%u,%u,%u,%.4f,%.3f,"
					    "%.3f,%u,%.1f,%.3f,%u,%u,\n",
				       r->name, r->calls, r->located, r->med_in, r->p90_in, r->n_in, r->med_out, r->p90_out,
				       r->n_out, r->ok_med_in, r->ok_p90_in, r->ok_n_in, r->ok_med_out, r->ok_p90_out,
				       r->ok_n_out, r->ok_n ? (double)r->in_ell / r->ok_n : NAN, r->ok_n, r->off,
				       r->ok_unmatched, r->recall, r->fa_nm, r->cpu, r->xruns, r->wall_s, r->onset_z,
				       r->onset_beyond5, r->untested);
	}
	printf("(med/p90: horizontal error in m of every result with a position, whatever its status, inside / outside "
	       "the nodes' hull\n (ok results only: field.csv); ok: results with status ok; ell95: ok results inside their "
	       "own 95 %% ellipse;\n unt: calls answered untested (four arrivals with the height unknown: nothing to test them "
	       "by);\n cpu: core-seconds per simulated second of chorus-demo and all it ran, the world's simulation "
	       "included;\n xruns: audiod overruns on all nodes. Run directories: %s/bench/field-runs/ROW)\n",
	       FIELD_BUILD_DIR);
	for (guint i = 0; i < rows->len; i++) {
		const row *r = &g_array_index(rows, row, i);
		if (r->surveyed)
			printf("self-survey of the %s row (collab-survey over its %d ok results, told 10 cm): node position RMS "
			       "error %.3f m as surveyed, %.3f m refined\n",
			       r->name, r->survey_calls, r->survey_told_m, r->survey_refined_m);
		else if (r->ok && strcmp(r->name, "survey") == 0)
			printf("self-survey of the survey row: collab-survey did not run (see %s/bench/field-runs/survey/survey.err)\n",
			       FIELD_BUILD_DIR);
	}
	const char *bo = getenv("CHORUS_BENCH_OUT");
	char *paths[2] = {g_build_filename(FIELD_BUILD_DIR, "bench", "field.csv", NULL),
			  bo && *bo ? g_build_filename(bo, "field.csv", NULL) : NULL};
	for (int k = 0; k < 2 && paths[k]; k++) {
		char *d = g_path_get_dirname(paths[k]);
		g_mkdir_with_parents(d, 0755);
		g_free(d);
		if (g_file_set_contents(paths[k], csv->str, -1, NULL))
			printf("CSV: %s\n", paths[k]);
		else {
			fprintf(stderr, "bench/field: cannot write %s\n", paths[k]);
			failed++;
		}
		g_free(paths[k]);
	}
	g_string_free(csv, TRUE);
	/* A wrong answer stated as ok is a bug (issue 12), whatever the row. */
	int wrong = 0;
	for (guint i = 0; i < rows->len; i++) {
		const row *r = &g_array_index(rows, row, i);
		if (r->ok && r->off) {
			printf("bench/field: FAIL: %s: %u ok result(s) more than 1 m from their call\n", r->name, r->off);
			wrong++;
		}
	}
	g_array_free(rows, TRUE);
	if (failed)
		printf("bench/field: %d row(s) not run or written\n", failed);
	return failed || wrong ? 1 : 0;
}
