/* test_collab_sim.c — the whole pipeline on a short simulated field: four
 * virtual nodes (syncd, audiod on the simulated microphone, fft, detect,
 * collab) on sim/scenarios/square4.ini for about 25 s through chorus-demo,
 * scored against the world's truth: detections, calls located, errors and
 * their claimed uncertainty. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#ifndef CHORUS_BIN_DIR
#define CHORUS_BIN_DIR "build/bin"
#endif

static double after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? g_ascii_strtod(p + strlen(key), NULL) : NAN;
}

START_TEST(four_nodes_locate_calls)
{
	const char *run = g_getenv("CHORUS_RUN");
	char *out = g_build_filename(run ? run : g_get_tmp_dir(), "demo", NULL);
	char *prog = g_build_filename(CHORUS_BIN_DIR, "chorus-demo", NULL);
	gchar *argv[] = {prog, "sim/scenarios/square4.ini", "--duration", "25", "--out", out, "--bin", CHORUS_BIN_DIR, "-q", NULL};
	gchar *sout = NULL, *serr = NULL;
	gint status = 0;
	GError *err = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, NULL, 0, NULL, NULL, &sout, &serr, &status, &err), "%s",
		      err ? err->message : "");
	fprintf(stderr, "%s%s", sout, serr);
	ck_assert_msg(g_spawn_check_wait_status(status, NULL), "chorus-demo failed (logs in %s/sim)", out);
	/* detection recall "… = R" and false alarms "… = F per node-minute" */
	double recall = after(sout, "arrivals = "), fa = after(strstr(sout, "false alarms"), "node-minutes = ");
	ck_assert_msg(recall >= 0.9, "detection recall %.3f", recall);
	ck_assert_msg(fa <= 1.0, "false alarms %.2f per node-minute", fa);
	char *csv = g_build_filename(out, "calls.csv", NULL), *text = NULL;
	ck_assert(g_file_get_contents(csv, &text, NULL, NULL));
	gchar **lines = g_strsplit(text, "\n", -1);
	int calls = 0, located = 0, honest = 0;
	GArray *errs = g_array_new(FALSE, FALSE, sizeof(double));
	for (gchar **l = lines + 1; *l && **l; l++) {
		gchar **f = g_strsplit(*l, ",", -1);
		ck_assert_uint_ge(g_strv_length(f), 17);
		calls++;
		if (atoi(f[7])) {
			double e = g_ascii_strtod(f[10], NULL), sd = g_ascii_strtod(f[11], NULL);
			located++;
			g_array_append_val(errs, e);
			/* an honest uncertainty: within 6 of its own standard errors, plus
			 * 5 mm for what the model leaves out */
			honest += e <= 6 * sd + 0.005;
		}
		g_strfreev(f);
	}
	double *v = (double *)errs->data;
	for (guint i = 1; i < errs->len; i++) /* insertion sort: a handful of values */
		for (guint j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	double med = errs->len ? v[errs->len / 2] : NAN, worst = errs->len ? v[errs->len - 1] : NAN;
	fprintf(stderr, "collab sim: %d of %d calls located, median error %.4f m, worst %.4f m, %d honest\n", located,
		calls, med, worst, honest);
	/* square4.ini has 11 calls; those in the scoring window count */
	ck_assert_int_ge(calls, 6);
	ck_assert_int_ge(located, calls - 1);
	ck_assert_double_le(med, 0.05);
	ck_assert_double_le(worst, 0.2);
	ck_assert_int_ge(honest, located - 1);
	g_array_free(errs, TRUE);
	g_strfreev(lines);
	g_free(text);
	g_free(csv);
	g_free(sout);
	g_free(serr);
	g_free(prog);
	g_free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("collab_sim");
	TCase *tc = tcase_create("collab_sim");
	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, four_nodes_locate_calls);
	suite_add_tcase(s, tc);
	SRunner *r = srunner_create(s);
	srunner_set_fork_status(r, CK_NOFORK);
	srunner_run_all(r, CK_NORMAL);
	int failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
