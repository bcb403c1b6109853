/* test_archive_outage.c — issue 21's "time that improves after the fact"
 * end to end: chorus-sim runs two nodes with syncd, audiod and
 * chorus-archive, and node 2's radio goes down ([node.2] radio_down) long
 * enough for its conversion to global time to age and then vanish.  Audio
 * node 2 recorded during the outage is asked of its archive twice, through
 * archive_resolve (what audioget's fallback and chorus-export call):
 *
 *  - while the node is still cut off: the frames are there, and each has
 *    the field's global time (root node 1's timescale) within its stated
 *    standard error of the truth, or none, or one said to be in another
 *    timescale (t0_root=2: once its conversion to the field had aged out,
 *    node 2 became its own root);
 *  - after the radio is back and syncd has fits again: every frame has a
 *    global time (bridged across the outage from the conversions recorded
 *    before and after it), honest, and more certain than before.
 *
 * The truth is the world's: the frame's true time, the root's cpu clock
 * then and the root's own definition of global (sim/launch/truth.h).
 */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive/serve.h"
#include "archive/store.h"
#include "libdev/link.h"
#include "sim/launch/launch.h"
#include "sim/launch/truth.h"
#include "tests/check_run.h"

#ifndef CSIM_BIN_DIR
#define CSIM_BIN_DIR "build/bin"
#endif

#define RATE 16000
#define OUT_FROM 15.0 /* s: node 2's radio outage */
#define OUT_TO 50.0
/* The frames asked about: recorded at these world times, all inside the
 * outage and the later ones after the conversion had gone. */
static const double probe_s[] = {20, 25, 30, 35, 40, 45};
#define NPROBE (sizeof probe_s / sizeof probe_s[0])
/* Each probe's |error| / stated s.e. must stay under Z_MAX: two-sided
 * Gaussian P(|z| > 4.89) = 1e-6, so the 2 x 6 checks fail an honest
 * archive with probability under 1.2e-5 (union bound). */
#define Z_MAX 4.89

static const char SCENARIO[] = "[world]\nseed = 11\nduration_s = 120\nsample_rate_hz = 16000\nperiod_frames = 160\n"
			       "[node.1]\nposition_m = 0,0,0\ncpu_skew_ppm = 12.5\ncpu_offset_ns = 3141592653\n"
			       "audio_skew_ppm = -20\n"
			       "[node.2]\nposition_m = 10,0,0\ncpu_skew_ppm = -31\ncpu_offset_ns = 27182818284\n"
			       "audio_skew_ppm = 35\ncpu_wander_ppb_per_s = 1\nradio_down = 15-50\n";
static const char FAST[] = "[rbs]\nbeacon_interval_s = 0.1\nreport_interval_s = 0.1\nadvert_interval_s = 0.2\n";

static int64_t host_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sample the truth once a second until world time reaches w_s. */
static void run_until(csim *s, csim_truth *t, double w_s)
{
	while ((double)(host_raw() - csim_epoch_ns(s)) * 1e-9 < w_s) {
		csim_truth_sample(t, TRUE);
		g_usleep(1000000);
	}
}

#define FIELD_ROOT 1

typedef struct {
	int has_time;    /* in the field's timescale */
	uint32_t root;   /* the timescale stated */
	double z, se_ns; /* INFINITY: no time in the field's timescale */
} probe;

/* Ask node 2's archive for one second from frame f; compare the stated
 * global time of f with the truth. */
static probe ask(const char *dir, csim_truth *t, int64_t f)
{
	GError *err = NULL;
	archive_store *st = archive_store_open(dir, FALSE, &err);
	ck_assert_msg(st, "%s: %s", dir, err ? err->message : "?");
	archive_request q = {.node = 2, .device = 0, .first = f, .last = f + RATE};
	archive_answer a;
	ck_assert_msg(archive_resolve(st, &q, &a, &err), "frames %" G_GINT64_FORMAT "+%d: %s", f, RATE,
		      err ? err->message : "?");
	ck_assert_int_eq(a.first, f);
	probe p = {.has_time = a.has_time && a.when.root == FIELD_ROOT, .root = a.has_time ? a.when.root : 0, .z = NAN, .se_ns = INFINITY};
	if (a.has_time && a.when.root != FIELD_ROOT) {
		ck_assert_msg(a.when.root != ARCHIVE_ROOT_UNKNOWN, "the archive recorded no root (%s)", a.reply);
		ck_assert_msg(strstr(a.reply, " t0_root="), "the reply does not name the other timescale: %s", a.reply);
		fprintf(stderr, "  frame %" G_GINT64_FORMAT ": in root node%u's timescale, not the field's (%s)\n", f,
			a.when.root, a.reply);
	} else if (a.has_time) {
		int64_t g;
		double gf;
		char why[200];
		ck_assert_msg(csim_truth_global_of_frame(t, 2, f, FIELD_ROOT, &g, &gf, why, sizeof why) == 0, "truth: %s", why);
		double e = (double)(a.when.global_ns - g) + (a.when.frac_ns - gf);
		p.se_ns = a.when.se_ns;
		p.z = e / a.when.se_ns;
		fprintf(stderr, "  frame %" G_GINT64_FORMAT ": error %.1f ns, stated s.e. %.1f ns, z %.2f (%s)\n", f, e,
			a.when.se_ns, p.z, a.reply);
	} else
		fprintf(stderr, "  frame %" G_GINT64_FORMAT ": no global time (%s)\n", f, a.reply);
	archive_store_free(st);
	return p;
}

/* The count of packets node n's simulated radio dropped in outages (its
 * sync/rbs line "... N in outages"). */
static long outage_drops(csim *s, int n)
{
	char id[16];
	g_snprintf(id, sizeof id, "%d", n);
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", csim_run_dir(s), TRUE);
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("sync/rbs", FALSE, b, 2000);
	g_byte_array_append(b, (const guint8 *)"", 1);
	ck_assert_msg(rc == 0, "sync/rbs of node%d: %s", n, (char *)b->data);
	const char *p = strstr((char *)b->data, " lost, ");
	long k = p ? strtol(p + 7, NULL, 10) : -1;
	ck_assert_msg(p && strstr(p, " in outages"), "no outage count in node%d's sync/rbs:\n%s", n, (char *)b->data);
	g_byte_array_free(b, TRUE);
	return k;
}

START_TEST(outage_gets_better_times_after_reconnection)
{
	const char *run = getenv("CHORUS_RUN");
	char *dir = g_build_filename(run ? run : "/tmp", "archive-outage", NULL);
	g_mkdir_with_parents(dir, 0755);
	char *sc = g_build_filename(dir, "scenario.ini", NULL);
	ck_assert(g_file_set_contents(sc, SCENARIO, -1, NULL));
	char *arch = g_build_filename(dir, "arch%n", NULL), *arch2 = g_build_filename(dir, "arch2", NULL);
	char *app = g_strdup_printf("chorus-archive --dir %s --segment 5 --flush 1", arch);
	const char *apps[] = {app, NULL};
	csim_opts o = {.scenario = sc, .out_dir = dir, .bin_dir = CSIM_BIN_DIR, .syncd_extra = FAST, .audio = TRUE, .audio_rate_hz = RATE, .apps = apps};
	GError *err = NULL;
	csim *s = csim_start(&o, &err);
	ck_assert_msg(s, "chorus-sim: %s", err ? err->message : "?");
	csim_truth *t = csim_truth_new(csim_scenario(s), csim_run_dir(s), csim_epoch_ns(s));
	const char *why = NULL;
	ck_assert_msg(csim_truth_set_audio(t, csim_epoch_ns(s), RATE, CSIM_BIN_DIR, &why) == 0, "%s", why);

	/* Node 2's frames at the probe times (its numbering is found before the outage). */
	run_until(s, t, OUT_FROM - 2);
	int64_t f[NPROBE];
	char w[200];
	for (size_t i = 0; i < NPROBE; i++)
		ck_assert_msg(csim_truth_frame_at(t, 2, probe_s[i], &f[i], w, sizeof w) == 0, "%s", w);

	/* Still cut off: the last probe's segment (5 s) is closed by 47 s. */
	run_until(s, t, OUT_TO - 2);
	fprintf(stderr, "during the outage (world %.0f s):\n", OUT_TO - 2);
	probe during[NPROBE];
	for (size_t i = 0; i < NPROBE; i++) {
		during[i] = ask(arch2, t, f[i]);
		if (during[i].has_time)
			ck_assert_msg(fabs(during[i].z) <= Z_MAX, "during: frame at %g s is %.2f stated s.e. off", probe_s[i],
				      during[i].z);
	}
	/* Back on the radio at 50 s; fits are full again well within 20 s,
	 * and the segments recorded after the reconnection are closed. */
	run_until(s, t, OUT_TO + 25);
	fprintf(stderr, "after reconnection (world %.0f s):\n", OUT_TO + 25);
	int improved = 0;
	for (size_t i = 0; i < NPROBE; i++) {
		probe after = ask(arch2, t, f[i]);
		ck_assert_msg(after.has_time, "after: the frame at %g s has no global time in the field's timescale",
			      probe_s[i]);
		ck_assert_msg(fabs(after.z) <= Z_MAX, "after: frame at %g s is %.2f stated s.e. off", probe_s[i], after.z);
		ck_assert_msg(after.se_ns <= during[i].se_ns * (1 + 1e-9),
			      "after: the frame at %g s is placed worse (s.e. %.1f ns, was %.1f)", probe_s[i], after.se_ns,
			      during[i].se_ns);
		improved += !during[i].has_time || after.se_ns < during[i].se_ns;
	}
	/* The later probes lay where node 2 had no conversion to the field. */
	ck_assert_msg(improved >= 1, "no probe was placed better after the reconnection");
	/* The outage was real: node 2's radio dropped the packets of 35 s. */
	long drops = outage_drops(s, 2);
	ck_assert_msg(drops > 100, "node2's radio dropped only %ld packets in its outage", drops);
	csim_truth_free(t);
	csim_stop(s);
	g_free(app);
	g_free(arch);
	g_free(arch2);
	g_free(sc);
	g_free(dir);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("archive_outage");
	TCase *tc = tcase_create("outage");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, outage_gets_better_times_after_reconnection);
	suite_add_tcase(su, tc);
	int failed = tu_check_run(su);
	return failed ? 1 : 0;
}
