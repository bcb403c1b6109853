/* test_chaos_calls — chorus-demo --chaos's judgement of calls
 * (sim/score/chaos_calls.h): which calls the faults left locatable, and
 * that every such call not located is a failure; and the scorer's rules for
 * a result superseded by a later answer and for two results of one call
 * (sim/score/report.h). */
#include <check.h>
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sim/score/chaos_calls.h"
#include "sim/score/report.h"
#include "tests/check_run.h"
#include "tests/world_fixture.h"

/* Five nodes on a line 10 m apart; one source calling at 1 s and 30 s. */
static const char *field = "[world]\nspeed_of_sound_m_s = 343\nseed = 1\nduration_s = 60\n"
			   "[node.1]\nposition_m = 0, 0, 0\n[node.2]\nposition_m = 10, 0, 0\n"
			   "[node.3]\nposition_m = 20, 0, 0\n[node.4]\nposition_m = 30, 0, 0\n"
			   "[node.5]\nposition_m = 40, 0, 0\n"
			   "[source.1]\nposition_m = 20, 5, 0\nwaveform = click\ncall_times_s = 1, 30\n";

static demo_call call(int k, double t_s, int heard, const char *verdict)
{
	demo_call c;
	memset(&c, 0, sizeof c);
	c.source = 1;
	c.src = 0;
	c.k = (size_t)k;
	c.t_s = t_s;
	c.heard = heard;
	for (int i = 0; i < heard; i++)
		c.heard_id[i] = i + 1;
	c.verdict = verdict;
	g_strlcpy(c.status, strcmp(verdict, "missed") ? "ok" : "missed", sizeof c.status);
	c.err_m = NAN;
	return c;
}

static demo_eval eval_of(const demo_call *calls, int n)
{
	demo_eval ev;
	memset(&ev, 0, sizeof ev);
	ev.calls = g_array_new(FALSE, FALSE, sizeof(demo_call));
	g_array_append_vals(ev.calls, calls, (guint)n);
	return ev;
}

START_TEST(up_nodes_are_those_no_fault_touched)
{
	fixture f = fixture_make("chaos-calls.ini", field);
	demo_call c = call(1, 30.0, 5, "located");
	ck_assert_int_eq(chaos_calls_up(f.w, &c, NULL, 0), 5);
	/* node 2's audiod killed 5 s before the call: inside the window. */
	chaos_fault one[] = {{2, 24.0, 25.0}};
	ck_assert_int_eq(chaos_calls_up(f.w, &c, one, 1), 4);
	/* Long before, long after, or on a node that did not hear it. */
	chaos_fault far[] = {{2, 1.0, 2.0}, {3, 50.0, 51.0}, {9, 29.0, 31.0}};
	ck_assert_int_eq(chaos_calls_up(f.w, &c, far, 3), 5);
	/* A fault on every node (node -1). */
	chaos_fault all[] = {{-1, 30.5, 31.0}};
	ck_assert_int_eq(chaos_calls_up(f.w, &c, all, 1), 0);
	/* Only the nodes that heard it count. */
	demo_call c3 = call(1, 30.0, 3, "missed");
	ck_assert_int_eq(chaos_calls_up(f.w, &c3, NULL, 0), 3);
	fixture_drop(f);
}
END_TEST

START_TEST(judged_calls_must_be_located)
{
	fixture f = fixture_make("chaos-calls.ini", field);
	demo_call calls[] = {call(0, 1.0, 5, "located"), call(1, 30.0, 5, "missed")};
	demo_eval ev = eval_of(calls, 2);
	chaos_calls_tally t;
	GString *out = g_string_new(NULL);
	/* No fault: both judged, the missed one fails. */
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, NULL, 0, out, &t), 1);
	ck_assert_uint_eq(t.judged, 2);
	ck_assert_uint_eq(t.located, 1);
	ck_assert_uint_eq(t.missed, 1);
	ck_assert_ptr_nonnull(strstr(out->str, "missed"));
	/* Two of its five nodes down: three left, not judged. */
	chaos_fault two[] = {{1, 29.0, 30.5}, {5, 20.0, 21.0}};
	g_string_truncate(out, 0);
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, two, 2, 4, NULL, 0, out, &t), 0);
	ck_assert_uint_eq(t.judged, 1);
	ck_assert_uint_eq(t.calls, 2);
	ck_assert_str_eq(out->str, "");
	/* One of its five down: four left, judged when four arrivals can test
	 * an answer (the height told), not when they cannot (untold: 5). */
	chaos_fault one[] = {{1, 29.0, 30.5}};
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, one, 1, CHAOS_CALLS_MIN_NODES, NULL, 0, NULL, &t), 1);
	ck_assert_uint_eq(t.judged, 2);
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, one, 1, CHAOS_CALLS_MIN_NODES_UNTOLD, NULL, 0, NULL, &t), 0);
	ck_assert_uint_eq(t.judged, 1);
	/* A wrong answer or a refused one fails as much as a missed one. */
	g_array_index(ev.calls, demo_call, 1).verdict = "off";
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, NULL, 0, NULL, &t), 1);
	ck_assert_uint_eq(t.off, 1);
	g_array_index(ev.calls, demo_call, 1).verdict = "not_ok";
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, NULL, 0, NULL, &t), 1);
	ck_assert_uint_eq(t.not_ok, 1);
	g_string_free(out, TRUE);
	g_array_free(ev.calls, TRUE);
	fixture_drop(f);
}
END_TEST

START_TEST(baseline_separates_the_localization_limit)
{
	fixture f = fixture_make("chaos-calls.ini", field);
	demo_call calls[] = {call(0, 1.0, 5, "not_ok"), call(1, 30.0, 5, "missed")};
	demo_eval ev = eval_of(calls, 2);
	chaos_calls_tally t;
	/* Call 0 was not located without faults either; call 1 was. */
	const chaos_baseline_call b[] = {{1, 0, 0}, {1, 1, 1}};
	GString *out = g_string_new(NULL);
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, b, 2, out, &t), 1);
	ck_assert_uint_eq(t.baseline, 1);
	ck_assert_ptr_nonnull(strstr(out->str, "without faults either"));
	/* A call the baseline did not score fails as without one. */
	const chaos_baseline_call b1[] = {{1, 0, 0}};
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, b1, 1, NULL, &t), 1);
	/* Another source's verdict does not count. */
	const chaos_baseline_call b2[] = {{2, 0, 0}, {2, 1, 0}};
	ck_assert_int_eq(chaos_calls_judge(f.w, &ev, NULL, 0, 4, b2, 2, NULL, &t), 2);
	g_string_free(out, TRUE);
	g_array_free(ev.calls, TRUE);
	fixture_drop(f);
}
END_TEST

/* collab answers a call again when late arrivals complete one it
 * answered untested, its new result naming the first ("supersedes"): the
 * scorer scores the newer only, and the one superseded is the latest of
 * that reporter and seq (a reporter's seqs start again when its collab
 * restarts: an older result with the same seq stands). */
/* Score the results in `text` (written to path) against world w's five
 * nodes with the default parameters, into *ev. */
static void evaluate_text(const sim_world *w, const char *path, const char *text, demo_eval *ev)
{
	ck_assert(g_file_set_contents(path, text, -1, NULL));
	demo_eval_params p;
	demo_eval_params_default(&p);
	const char *files[] = {path};
	int ids[] = {1, 2, 3, 4, 5};
	demo_evaluate(w, ids, (const char *const[]){NULL, NULL, NULL, NULL, NULL}, 5, files, 1, &p, ev);
}

START_TEST(a_superseded_result_is_not_scored)
{
	fixture f = fixture_make("chaos-calls.ini", field);
	int64_t t1 = sim_world_node_cpu_at(f.w, 3, 1000000000LL), t30 = sim_world_node_cpu_at(f.w, 3, 30000000000LL);
	char *path = g_build_filename(g_getenv("CHORUS_RUN") ? g_getenv("CHORUS_RUN") : g_get_tmp_dir(),
				      "superseded.jsonl", NULL);
	char *text = g_strdup_printf(
		"{\"v\":1,\"reporter\":3,\"seq\":4,\"status\":\"ok\",\"x\":20.0,\"y\":5.0,\"sd_x\":0.01,\"sd_y\":0.01,\"cov_xy\":0,\"t_cpu_ns\":%" G_GINT64_FORMAT "}\n"
		"{\"v\":1,\"reporter\":3,\"seq\":4,\"status\":\"untested\",\"x\":21.0,\"y\":5.0,\"sd_x\":0.5,\"sd_y\":0.5,\"cov_xy\":0,\"t_cpu_ns\":%" G_GINT64_FORMAT "}\n"
		"{\"v\":1,\"reporter\":3,\"seq\":5,\"status\":\"ok\",\"supersedes\":4,\"x\":20.0,\"y\":5.0,\"sd_x\":0.01,\"sd_y\":0.01,\"cov_xy\":0,\"t_cpu_ns\":%" G_GINT64_FORMAT "}\n",
		t30, t1, t1);
	demo_eval ev;
	evaluate_text(f.w, path, text, &ev);
	ck_assert_uint_eq(ev.results, 3);
	ck_assert_uint_eq(ev.results_superseded, 1);
	ck_assert_uint_eq(ev.results_not_ok, 0); /* the untested one is not scored */
	ck_assert_uint_eq(ev.results_unmatched, 0);
	ck_assert_uint_eq(ev.calls->len, 2);
	ck_assert_uint_eq(ev.located, 2); /* both calls, each by one ok result */
	/* Without its successor the untested answer is the call's. */
	char *nl = strrchr(text, '{');
	*nl = 0;
	demo_eval_clear(&ev);
	evaluate_text(f.w, path, text, &ev);
	ck_assert_uint_eq(ev.results_superseded, 0);
	ck_assert_uint_eq(ev.located, 1);
	ck_assert_uint_eq(ev.not_ok, 1);
	demo_eval_clear(&ev);
	g_unlink(path);
	g_free(path);
	g_free(text);
	fixture_drop(f);
}
END_TEST

/* Two callers 50 ms apart and two results for the first (collab formed
 * two groups for it: one answered at its place and time, the other, whose
 * reporter's detection was the first caller's, `failed`): the answer that
 * places the call is matched to it before the failed one, whose reporter's
 * onset lies nearer the call's arrival; the second caller gets the failed
 * one.  Before, the first call was scored failed and the right answer
 * was scored against the second caller, 12 m off (bench/field's overlap
 * row: "ok more than 1 m off"). */
START_TEST(a_result_that_places_its_call_is_matched_first)
{
	static const char *two = "[world]\nspeed_of_sound_m_s = 343\nseed = 1\nduration_s = 10\n"
				 "[node.1]\nposition_m = 0, 0, 0\n[node.2]\nposition_m = 10, 0, 0\n"
				 "[node.3]\nposition_m = 20, 0, 0\n[node.4]\nposition_m = 30, 0, 0\n"
				 "[node.5]\nposition_m = 40, 0, 0\n"
				 "[source.1]\nposition_m = 20, 5, 0\nwaveform = click\ncall_times_s = 1\n"
				 "[source.2]\nposition_m = 32, 5, 0\nwaveform = click\ncall_times_s = 1.05\n";
	fixture f = fixture_make("two-callers.ini", two);
	int64_t emit = sim_world_node_cpu_at(f.w, 3, 1000100000LL); /* 0.1 ms late */
	int64_t onset = sim_world_node_cpu_at(f.w, 3, (int64_t)llround(sim_world_arrival_s(f.w, 3, 0, 0, 0) * 1e9));
	char *path = g_build_filename(g_getenv("CHORUS_RUN") ? g_getenv("CHORUS_RUN") : g_get_tmp_dir(), "two-callers.jsonl",
				      NULL);
	char *text = g_strdup_printf(
		"{\"v\":1,\"reporter\":3,\"seq\":1,\"status\":\"failed\",\"why\":\"masked\",\"onset_cpu_ns\":%" G_GINT64_FORMAT "}\n"
		"{\"v\":1,\"reporter\":3,\"seq\":2,\"status\":\"ok\",\"x\":20.0,\"y\":5.0,\"sd_x\":0.01,\"sd_y\":0.01,\"cov_xy\":0,\"t_cpu_ns\":%" G_GINT64_FORMAT "}\n",
		onset, emit);
	demo_eval ev;
	evaluate_text(f.w, path, text, &ev);
	ck_assert_uint_eq(ev.calls->len, 2);
	ck_assert_uint_eq(ev.located, 1);
	ck_assert_uint_eq(ev.off, 0);
	ck_assert_uint_eq(ev.not_ok, 1);
	const demo_call *c1 = &g_array_index(ev.calls, demo_call, 0), *c2 = &g_array_index(ev.calls, demo_call, 1);
	ck_assert_int_eq(c1->source == 1 ? c1->located : c2->located, 1);
	ck_assert_str_eq(c1->source == 2 ? c1->status : c2->status, "failed");
	demo_eval_clear(&ev);
	g_unlink(path);
	g_free(path);
	g_free(text);
	fixture_drop(f);
}
END_TEST

START_TEST(baseline_file_is_read_by_its_header)
{
	const char *dir = g_getenv("CHORUS_RUN") ? g_getenv("CHORUS_RUN") : "/tmp";
	g_mkdir_with_parents(dir, 0755);
	char *path = g_build_filename(dir, "baseline-calls.csv", NULL);
	ck_assert(g_file_set_contents(path, "source,call,time_s,located,verdict\n1,0,1.0,1,located\n3,7,9.5,0,missed\n", -1, NULL));
	GError *err = NULL;
	GArray *a = chaos_baseline_load(path, &err);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->len, 2);
	ck_assert_int_eq(g_array_index(a, chaos_baseline_call, 1).source, 3);
	ck_assert_uint_eq(g_array_index(a, chaos_baseline_call, 1).k, 7);
	ck_assert_int_eq(g_array_index(a, chaos_baseline_call, 1).located, 0);
	g_array_free(a, TRUE);
	/* Errors name the file and line. */
	ck_assert(g_file_set_contents(path, "source,call,located\n1,0,1\n1,x,0\n", -1, NULL));
	ck_assert_ptr_null(chaos_baseline_load(path, &err));
	ck_assert_ptr_nonnull(strstr(err->message, "baseline-calls.csv:3:"));
	g_clear_error(&err);
	ck_assert(g_file_set_contents(path, "a,b\n", -1, NULL));
	ck_assert_ptr_null(chaos_baseline_load(path, &err));
	ck_assert_ptr_nonnull(strstr(err->message, ":1: not a calls.csv"));
	g_clear_error(&err);
	g_free(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("chaos_calls");
	TCase *tc = tcase_create("judge");
	tcase_add_test(tc, up_nodes_are_those_no_fault_touched);
	tcase_add_test(tc, judged_calls_must_be_located);
	tcase_add_test(tc, baseline_separates_the_localization_limit);
	tcase_add_test(tc, baseline_file_is_read_by_its_header);
	tcase_add_test(tc, a_superseded_result_is_not_scored);
	tcase_add_test(tc, a_result_that_places_its_call_is_matched_first);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
