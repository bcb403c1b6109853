/* bench/apps.c — the applications' numbers (issue 6):
 *
 *  1. fft + detect CPU per second of audio at 48 kHz (real-time factor):
 *     the daemons' work — STFT, band-power frames through the wire codec,
 *     detector, best-of-templates onset with overlap search — in one
 *     process on 2 minutes of synthetic frog calls at 10 dB, without IPC;
 *  2. the real services on simulated fields through chorus-demo
 *     (default.ini, line.ini, outside.ini; CHORUS_BENCH_APPS_SECONDS each,
 *     default 60): detection recall and false alarms, calls located,
 *     localization error median/p90 (inside and outside the array), latency
 *     from the end of a call to its position on collab/events p50/p95, and
 *     each service's CPU share per node at 16 kHz (IPC included);
 *  3. run-to-run stability (issue 15): default.ini CHORUS_BENCH_APPS_REPEATS
 *     times (default 5) in a row on this machine.  The world is the same
 *     every run (the scenario's seed), so an ideal pipeline would give the
 *     same verdict for every call every time; what varies comes from
 *     scheduling and load.  Prints each run's recall and calls located, their
 *     mean, min, max and s.d., and every call whose verdict was not the
 *     same in all runs (with its verdicts).
 * Prints tables; writes $CHORUS_BENCH_OUT/apps.csv.  Exit 1 when a run
 * failed or the CSV could not be written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "apps/detect/profile.h"
#include "apps/detect/refine.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/stft.h"
#include "apps/fft/frames.h"
#include "apps/dsp/wave.h"

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1. fft + detect in process at `rate`. Returns CPU s per s of audio. */
static double rtf(double rate, int size, int hop, int *calls_found, int *calls)
{
	det_profile prof;
	GError *err = NULL;
	if (!det_profile_load(&prof, "apps/profiles/frog.ini", &err)) {
		fprintf(stderr, "bench/apps: %s\n", err->message);
		exit(1);
	}
	const double secs = 120;
	size_t n = (size_t)(secs * rate);
	float *x = g_new(float, n);
	gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(g, 5);
	double sigma = 0.01;
	for (size_t i = 0; i < n; i++)
		x[i] = (float)gsl_ran_gaussian_ziggurat(g, sigma);
	dsp_wave_params wp = {.kind = DSP_WAVE_PULSE_TRAIN, .carrier_hz = 1800, .pulse_ms = 6, .pulse_interval_ms = 30, .pulses = 10};
	dsp_wave *w = dsp_wave_new(&wp, rate, NULL);
	double len = dsp_wave_length_s(w), pw = 0;
	for (int i = 0; i < (int)(len * rate); i++)
		pw += pow(dsp_wave_eval(w, i / rate), 2);
	pw /= len * rate;
	double amp = sqrt(10 * sigma * sigma * (prof.f_hi_hz - prof.f_lo_hz) / (rate / 2) / pw);
	*calls = 0;
	for (double t = 1.5; t < secs - 1; t += 2.0, (*calls)++)
		for (size_t i = (size_t)(t * rate); i < (size_t)((t + len) * rate); i++)
			x[i] += (float)(amp * dsp_wave_eval(w, i / rate - t));
	dsp_wave_free(w);

	double c0 = cpu_now();
	dsp_stft_params sp;
	dsp_stft_params_default(&sp);
	sp.size = size;
	sp.hop = hop;
	sp.rate_hz = rate;
	dsp_stft *s = dsp_stft_new(&sp, 0, NULL);
	dsp_det_params dp;
	det_profile_detector(&prof, rate, &dp);
	dsp_detector *det = dsp_detector_new(&dp, size, hop, NULL);
	int nt = det_profile_n_templates(&prof);
	float *h[DET_MAX_TEMPLATES];
	size_t m[DET_MAX_TEMPLATES];
	for (int t = 0; t < nt; t++)
		h[t] = det_profile_render(&prof, t, rate, &m[t], NULL);
	const char *why;
	det_refiner *ref = det_refiner_new(h, m, nt, &why);
	const float *win = dsp_stft_window(s);
	double ss = 0;
	for (int i = 0; i < size; i++)
		ss += (double)win[i] * win[i];
	int nb = size / 2 + 1;
	float *P = g_new(float, nb), *Q = g_new(float, nb);
	uint8_t *buf = g_malloc(fft_frame_bytes((uint32_t)nb));
	*calls_found = 0;
	for (size_t pos = 0; pos < n; pos += (size_t)(rate / 100)) { /* 10 ms periods, as audiod delivers */
		size_t k = MIN((size_t)(rate / 100), n - pos);
		dsp_stft_push(s, x + pos, k);
		dsp_frame f;
		while (dsp_stft_next(s, &f) == 1) {
			for (int b = 0; b < nb; b++)
				P[b] = (float)((b == 0 || b == nb - 1 ? 1 : 2) *
					       ((double)f.X[b][0] * f.X[b][0] + (double)f.X[b][1] * f.X[b][1]) / (size * ss));
			fft_frame_msg fm = {.first = f.first, .size = (uint32_t)size, .hop = (uint32_t)hop, .nbins = (uint32_t)nb, .rate_hz = rate, .P = P};
			size_t bl = (size_t)fft_frame_encode(&fm, buf, fft_frame_bytes((uint32_t)nb));
			fft_frame_msg d;
			fft_frame_decode(buf, bl, &d, Q, (size_t)nb, &why);
			dsp_event ev;
			if (dsp_detector_feed(det, d.first, fft_frame_band(&d, prof.f_lo_hz, prof.f_hi_hz), &ev) == 1) {
				int pre = MAX((int)ceil(prof.pre_ms * 1e-3 * rate), 64);
				int64_t first = ev.onset - size - pre;
				int lag_all = MAX((int)(ev.end - first) - (int)(prof.min_dur_s * rate), size * 3 / 2 + pre);
				size_t cn = (size_t)lag_all + det_refiner_max_len(ref) + (size_t)pre;
				float *clip = g_new0(float, cn);
				for (size_t i = 0; i < cn; i++)
					if (first + (int64_t)i >= 0 && first + (int64_t)i < (int64_t)n)
						clip[i] = x[first + (int64_t)i];
				det_refine_result rr, all[DET_REFINE_MAX];
				if (det_refine(ref, clip, cn, pre / 2, size * 3 / 2 + pre, prof.min_enr_db, &rr, &why) == 0) {
					(*calls_found)++;
					det_refine_subtract(ref, clip, cn, &rr);
					det_refine_all(ref, clip, cn, pre / 2, lag_all, all);
				}
				g_free(clip);
			}
		}
	}
	double c1 = cpu_now();
	for (int t = 0; t < nt; t++)
		g_free(h[t]);
	det_refiner_free(ref);
	dsp_detector_free(det);
	dsp_stft_free(s);
	det_profile_clear(&prof);
	g_free(P);
	g_free(Q);
	g_free(buf);
	g_free(x);
	gsl_rng_free(g);
	return (c1 - c0) / secs;
}

typedef struct {
	const char *scenario;
	double recall, fa_per_min, located, med, p90, med_in, p90_in, med_out, p90_out, lat50, lat95;
	double cpu[4];
	int n_in, n_out, ok;
	unsigned arrivals, detected, calls, calls_located;
	GHashTable *verdicts; /* "source,call" -> verdict (calls.csv), when asked for */
} acc_row;

static double after(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;
	return p ? g_ascii_strtod(p + strlen(key), NULL) : NAN;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double q(double *v, int n, double p)
{
	if (n == 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, cmp);
	double h = p * (n - 1);
	int i = (int)floor(h);
	return i + 1 < n ? v[i] + (h - i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* 2. One chorus-demo run. */
static void accuracy(const char *scenario, const char *seconds, const char *outdir, acc_row *r)
{
	GHashTable *keep = r->verdicts;
	memset(r, 0, sizeof *r);
	r->verdicts = keep;
	r->scenario = scenario;
	char *out = g_build_filename(outdir, "apps-demo", NULL);
	gchar *argv[] = {"build/bin/chorus-demo", (gchar *)scenario, "--duration", (gchar *)seconds, "--out", out, "-q", NULL};
	gchar *so = NULL;
	gint st;
	if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &so, NULL, &st, NULL) ||
	    !g_spawn_check_wait_status(st, NULL)) {
		fprintf(stderr, "bench/apps: chorus-demo %s failed\n", scenario);
		g_free(out);
		g_free(so);
		return;
	}
	r->ok = 1;
	const char *dr = strstr(so, "detection recall"), *cl = strstr(so, "calls located");
	if (!dr || sscanf(dr, "detection recall %u / %u", &r->detected, &r->arrivals) != 2)
		r->detected = r->arrivals = 0;
	if (!cl || sscanf(cl, "calls located %u / %u", &r->calls_located, &r->calls) != 2)
		r->calls_located = r->calls = 0;
	r->recall = after(so, "arrivals = ");
	r->fa_per_min = after(strstr(so, "false alarms"), "node-minutes = ");
	r->located = after(strstr(so, "calls located"), " = ");
	r->lat50 = after(so, "collab/events  p50 ");
	r->lat95 = after(strstr(so, "collab/events  p50"), "s, p95 ");
	const char *cpu = strstr(so, "cpu per node");
	r->cpu[0] = after(cpu, "audiod ");
	r->cpu[1] = after(cpu, "fft ");
	r->cpu[2] = after(cpu, "detect ");
	r->cpu[3] = after(cpu, "collab ");
	char *csv = g_build_filename(out, "calls.csv", NULL), *text = NULL;
	double all[1000], in[1000], outv[1000];
	int na = 0, ni = 0, no = 0;
	if (g_file_get_contents(csv, &text, NULL, NULL)) {
		gchar **lines = g_strsplit(text, "\n", -1);
		for (gchar **l = lines + 1; *l && **l && na < 1000; l++) {
			gchar **f = g_strsplit(*l, ",", -1);
			/* Errors of every "ok" result matched to a call (column 18),
			 * not only of the located ones: those are cut at 1 m. */
			if (r->verdicts && g_strv_length(f) >= 20)
				g_hash_table_insert(r->verdicts, g_strdup_printf("%s,%s", f[0], f[1]), g_strdup(f[19]));
			if (g_strv_length(f) >= 19 && atoi(f[18])) {
				double e = g_ascii_strtod(f[10], NULL);
				all[na++] = e;
				if (atoi(f[5]))
					in[ni++] = e;
				else
					outv[no++] = e;
			}
			g_strfreev(f);
		}
		g_strfreev(lines);
	}
	r->med = q(all, na, 0.5);
	r->p90 = q(all, na, 0.9);
	r->med_in = q(in, ni, 0.5);
	r->p90_in = q(in, ni, 0.9);
	r->med_out = q(outv, no, 0.5);
	r->p90_out = q(outv, no, 0.9);
	r->n_in = ni;
	r->n_out = no;
	g_free(text);
	g_free(csv);
	g_free(so);
	g_free(out);
}

static void moments(const double *v, int n, double *mean, double *sd, double *lo, double *hi)
{
	double s = 0, s2 = 0;
	*lo = INFINITY;
	*hi = -INFINITY;
	for (int i = 0; i < n; i++) {
		s += v[i];
		*lo = fmin(*lo, v[i]);
		*hi = fmax(*hi, v[i]);
	}
	*mean = n ? s / n : NAN;
	for (int i = 0; i < n; i++)
		s2 += (v[i] - *mean) * (v[i] - *mean);
	*sd = n > 1 ? sqrt(s2 / (n - 1)) : NAN;
}

/* 3. default.ini again and again: the spread, and the calls whose verdict
 * changed.  Returns 1 when a run failed. */
static int stability(const char *secs, const char *dir, FILE *csv)
{
	const char *rep = g_getenv("CHORUS_BENCH_APPS_REPEATS");
	int n = rep ? atoi(rep) : 5, failed = 0, done = 0;
	if (n < 2)
		n = 2;
	if (n > 20)
		n = 20;
	printf("\nrun to run: sim/scenarios/default.ini %d times (the same world each time)\n", n);
	printf("%4s %8s %10s %8s %10s\n", "run", "recall", "detected", "located", "calls");
	double recall[20], located[20];
	GHashTable *per_call = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_ptr_array_unref);
	for (int k = 0; k < n; k++) {
		acc_row r = {.verdicts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
		accuracy("sim/scenarios/default.ini", secs, dir, &r);
		if (!r.ok) {
			printf("%4d failed\n", k + 1);
			failed = 1;
			g_hash_table_unref(r.verdicts);
			continue;
		}
		recall[done] = r.recall;
		located[done] = r.located;
		done++;
		printf("%4d %8.3f %4u/%-5u %8.3f %4u/%-5u\n", k + 1, r.recall, r.detected, r.arrivals, r.located, r.calls_located,
		       r.calls);
		fprintf(csv, "stability_recall,default.ini/run%d,16000,%.4f,fraction\nstability_located,default.ini/run%d,16000,%.4f,fraction\n",
			k + 1, r.recall, k + 1, r.located);
		GHashTableIter it;
		gpointer key, val;
		g_hash_table_iter_init(&it, r.verdicts);
		while (g_hash_table_iter_next(&it, &key, &val)) {
			GPtrArray *a = g_hash_table_lookup(per_call, key);
			if (!a) {
				a = g_ptr_array_new_with_free_func(g_free);
				g_hash_table_insert(per_call, g_strdup(key), a);
			}
			while (a->len < (guint)done - 1)
				g_ptr_array_add(a, g_strdup("unscored"));
			g_ptr_array_add(a, g_strdup(val));
		}
		g_hash_table_unref(r.verdicts);
	}
	double m, sd, lo, hi;
	moments(recall, done, &m, &sd, &lo, &hi);
	printf("recall:  mean %.3f, min %.3f, max %.3f, s.d. %.3f over %d runs\n", m, lo, hi, sd, done);
	fprintf(csv, "stability_recall_sd,default.ini,16000,%.4f,fraction\n", sd);
	moments(located, done, &m, &sd, &lo, &hi);
	printf("located: mean %.3f, min %.3f, max %.3f, s.d. %.3f over %d runs\n", m, lo, hi, sd, done);
	fprintf(csv, "stability_located_sd,default.ini,16000,%.4f,fraction\n", sd);
	/* the calls that did not get the same verdict every time */
	GList *keys = g_list_sort(g_hash_table_get_keys(per_call), (GCompareFunc)strcmp);
	int unstable = 0;
	for (GList *l = keys; l; l = l->next) {
		GPtrArray *a = g_hash_table_lookup(per_call, l->data);
		while (a->len < (guint)done)
			g_ptr_array_add(a, g_strdup("unscored"));
		gboolean same = TRUE;
		for (guint i = 1; i < a->len && same; i++)
			same = !strcmp(g_ptr_array_index(a, i), g_ptr_array_index(a, 0));
		if (same)
			continue;
		unstable++;
		printf("  call %s (source,call):", (char *)l->data);
		for (guint i = 0; i < a->len; i++)
			printf(" %s", (char *)g_ptr_array_index(a, i));
		printf("\n");
	}
	printf("%d of %u calls changed verdict between runs (unscored: outside that run's scoring window)\n", unstable,
	       g_hash_table_size(per_call));
	fprintf(csv, "stability_unstable_calls,default.ini,16000,%d,calls\n", unstable);
	g_list_free(keys);
	g_hash_table_unref(per_call);
	return failed;
}

int main(void)
{
	const char *dir = g_getenv("CHORUS_BENCH_OUT") ? g_getenv("CHORUS_BENCH_OUT") : "bench-out";
	const char *secs = g_getenv("CHORUS_BENCH_APPS_SECONDS") ? g_getenv("CHORUS_BENCH_APPS_SECONDS") : "60";
	g_mkdir_with_parents(dir, 0755);
	char *csvp = g_build_filename(dir, "apps.csv", NULL);
	FILE *csv = fopen(csvp, "w");
	if (!csv) {
		fprintf(stderr, "bench/apps: cannot write %s\n", csvp);
		return 1;
	}
	fprintf(csv, "what,scenario,rate_hz,value,unit\n");

	printf("fft + detect in one process (no IPC), frog profile, calls at 10 dB every 2 s\n");
	printf("%8s %6s %6s %14s %8s\n", "rate_hz", "size", "hop", "cpu_per_s_audio", "found");
	const struct {
		double rate_hz;
		int size, hop;
	} cfg[] = {{48000, 1024, 256}, {48000, 2048, 512}, {16000, 1024, 256}};
	for (size_t i = 0; i < G_N_ELEMENTS(cfg); i++) {
		int found, calls;
		double f = rtf(cfg[i].rate_hz, cfg[i].size, cfg[i].hop, &found, &calls);
		printf("%8.0f %6d %6d %14.5f %4d/%-3d\n", cfg[i].rate_hz, cfg[i].size, cfg[i].hop, f, found, calls);
		fprintf(csv, "rtf_fft_detect_size%d_hop%d,-,%.0f,%.6f,cpu_s_per_audio_s\n", cfg[i].size, cfg[i].hop, cfg[i].rate_hz, f);
	}

	printf("\nreal services on simulated fields (chorus-demo, %s s each, audio 16 kHz)\n", secs);
	printf("%-28s %6s %6s %6s %9s %9s %9s %9s %9s %9s %7s %7s %18s\n", "scenario", "recall", "fa/min", "located",
	       "med_m", "p90_m", "in_med", "in_p90", "out_med", "out_p90", "lat50_s", "lat95_s", "cpu% fft/detect");
	const char *sc[] = {"sim/scenarios/default.ini", "sim/scenarios/line.ini", "sim/scenarios/outside.ini"};
	for (size_t i = 0; i < G_N_ELEMENTS(sc); i++) {
		acc_row r = {0};
		accuracy(sc[i], secs, dir, &r);
		if (!r.ok) {
			printf("%-28s failed\n", sc[i]);
			continue;
		}
		printf("%-28s %6.3f %6.2f %7.3f %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %7.3f %7.3f %8.2f/%.2f\n", sc[i], r.recall,
		       r.fa_per_min, r.located, r.med, r.p90, r.med_in, r.p90_in, r.med_out, r.p90_out, r.lat50, r.lat95,
		       r.cpu[1], r.cpu[2]);
		const char *base = strrchr(sc[i], '/') + 1;
		fprintf(csv, "recall,%s,16000,%.4f,fraction\nfalse_alarms,%s,16000,%.3f,per_node_minute\n"
			     "located,%s,16000,%.4f,fraction\nerror_median,%s,16000,%.5f,m\nerror_p90,%s,16000,%.5f,m\n"
			     "error_inside_median,%s,16000,%.5f,m\nerror_inside_p90,%s,16000,%.5f,m\n"
			     "error_outside_median,%s,16000,%.5f,m\nerror_outside_p90,%s,16000,%.5f,m\n"
			     "latency_p50,%s,16000,%.4f,s\nlatency_p95,%s,16000,%.4f,s\n"
			     "cpu_audiod,%s,16000,%.3f,percent_core\ncpu_fft,%s,16000,%.3f,percent_core\n"
			     "cpu_detect,%s,16000,%.3f,percent_core\ncpu_collab,%s,16000,%.3f,percent_core\n",
			base, r.recall, base, r.fa_per_min, base, r.located, base, r.med, base, r.p90, base, r.med_in, base,
			r.p90_in, base, r.med_out, base, r.p90_out, base, r.lat50, base, r.lat95, base, r.cpu[0], base,
			r.cpu[1], base, r.cpu[2], base, r.cpu[3]);
	}
	int failed = stability(secs, dir, csv);
	if (fflush(csv) != 0 || ferror(csv)) {
		fprintf(stderr, "bench/apps: writing %s failed\n", csvp);
		failed = 1;
	}
	if (fclose(csv) != 0) {
		fprintf(stderr, "bench/apps: closing %s: %s\n", csvp, g_strerror(errno));
		failed = 1;
	}
	printf("\nCSV: %s\n", csvp);
	g_free(csvp);
	return failed;
}
