/* test_pairs_history.c — a local pair's history in syncd (syncd/pairs.h,
 * syncd/history.h; issue 16 item 3): an audio clock's frames converted to
 * cpu time long after the pair's sliding window moved on.
 *
 * An audio0 -> cpu pair is fed as audiod feeds it (the least-latency
 * observation of every ten periods: one every 0.1 s, cpu late by an
 * exponential latency, fitted as a lower envelope with the card's nominal
 * period) for twelve minutes, from a card whose rate against the cpu
 * crystal random-walks (libsync/simwander.h, seeded).  syncd's ticker
 * entries (the current fit and the pair's history pieces) go into a graph
 * as libsync loads them, and frames from one to eleven minutes ago are
 * converted to cpu time and compared with the truth: over many seeded
 * clocks the RMS of error / stated s.e. must not exceed 1 beyond its
 * sampling band (4 standard errors of an RMS of one z per clock), must not
 * be absurdly below it, and no error may exceed 5 s.e.  No slack is added
 * to the stated errors.  Without the history the same frames are refused.
 *
 * Breaks: a reset with the numbering continued (an overrun) keeps the
 * pieces before it but a time in the break is refused, never bridged,
 * and the frames after it convert from the new run's first on; a
 * reset after which the frames are numbered afresh from 0 drops the old
 * numbering's pieces, so a cpu time of the old run no longer converts to
 * a frame (which would name another instant now). */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "libsync/graph.h"
#include "libsync/simwander.h"
#include "libsync/ticker_wire.h"
#include "syncd/pairs.h"
#include "tests/check_run.h"

#define NS 1000000000LL
#define RATE 48000.0
#define PERIOD_NS (1e9 / RATE)
#define OBS_FRAMES 4800 /* one observation per 0.1 s, as audiod forwards them */
#define SEEDS 60
#define PROBES 11

typedef struct {
	double skew, q_ppb, latency_ns; /* fractional; ppb per sqrt(s); mean of the least latency */
	double t_end;                   /* s of data */
} world;

/* The cpu time (ns) of frame f of a card started at cpu time 1000 s. */
static double truth_ns(const world *w, const sync_wander *wd, double f)
{
	double t = f / RATE;
	return 1000e9 + t * 1e9 * (1 + w->skew) + sync_wander_phase_ns(wd, t);
}

static syncd_pairs *new_pairs(uint32_t pieces)
{
	syncd_pairs_cfg c = {.window = 64,
			     .reject_k = 3.5,
			     .wander = 1e-8,
			     .max_span_ns = 600 * NS,
			     .expire_ns = 120 * NS,
			     .history_pieces = pieces,
			     .history_ns = 3600 * NS,
			     .history_every_ns = 120 * NS};
	return syncd_pairs_new(&c);
}

#define A0 sync_clock_audio(1, 0)
#define CPU sync_clock_cpu(1)

/* Feed frames [f0, f1) of numbering `shift` (frame f of the card is
 * numbered f - shift) every OBS_FRAMES, solving once a second as syncd's
 * ticker does; returns the cpu time of the last observation. */
static int64_t feed(syncd_pairs *p, const world *w, const sync_wander *wd, GRand *r, int64_t f0, int64_t f1,
		    int64_t shift)
{
	int64_t cpu = 0;
	for (int64_t f = f0; f < f1; f += OBS_FRAMES) {
		double lat = -w->latency_ns * log(g_rand_double_range(r, 1e-300, 1));
		cpu = (int64_t)llround(truth_ns(w, wd, (double)f) + lat);
		const char *why;
		ck_assert_msg(syncd_pairs_observe(p, A0, CPU, f - shift, cpu, cpu, &why) == 0, "%s", why);
		if ((f / OBS_FRAMES) % 10 == 0) {
			size_t n;
			g_free(syncd_pairs_entries(p, &n));
		}
	}
	return cpu;
}

/* The graph libsync builds from the pair's ticker entries. */
static sync_graph *graph_of(syncd_pairs *p, size_t *pieces)
{
	size_t n;
	sync_ticker_entry *cur = syncd_pairs_entries(p, &n);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	g_array_append_vals(all, cur, n);
	g_free(cur);
	*pieces = syncd_pairs_history_entries(p, all);
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	gp.max_age_ns = 0;
	sync_graph *g = sync_graph_new(&gp);
	size_t skipped;
	char why[300] = "";
	int loaded = sync_ticker_entries_to_graph((sync_ticker_entry *)all->data, all->len, g, &skipped, why, sizeof why);
	ck_assert_msg(skipped == 0, "%s", why);
	ck_assert_int_eq(loaded, (int)all->len);
	g_array_free(all, TRUE);
	return g;
}

typedef struct {
	double sum_z2, max_z, clock_z2;
	int n, clocks, beyond5, refused, bridged;
} tally;

/* Twelve minutes of one seeded card; frames 1 to 11 minutes old probed. */
static void run_one(const world *w, uint64_t seed, uint32_t pieces, tally *t)
{
	sync_wander wd = {.rw_ppb = w->q_ppb, .seed = seed};
	GRand *r = g_rand_new_with_seed((guint32)(seed * 2654435761u));
	syncd_pairs *p = new_pairs(pieces);
	const char *why;
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t end = (int64_t)(w->t_end * RATE);
	int64_t now = feed(p, w, &wd, r, 0, end, 0);
	size_t np;
	sync_graph *g = graph_of(p, &np);
	double zz = 0;
	int nz = 0;
	for (int k = 0; k < PROBES; k++) {
		double ago = 60 + 600.0 * k / (PROBES - 1) + g_rand_double(r) * 7; /* 1 to 11 minutes */
		int64_t f = end - (int64_t)(ago * RATE);
		sync_graph_result res;
		char buf[300];
		if (sync_graph_convert(g, A0, CPU, sync_tval_of(f), now, &res, buf, sizeof buf) < 0) {
			t->refused++;
			continue;
		}
		double z = ((double)res.value.i + res.value.f - truth_ns(w, &wd, (double)f)) / sqrt(res.var);
		t->sum_z2 += z * z;
		t->max_z = fmax(t->max_z, fabs(z));
		t->beyond5 += fabs(z) > 5;
		t->bridged += (res.flags & SYNC_GRAPH_BRIDGED) != 0;
		t->n++;
		zz += z * z;
		nz++;
	}
	if (nz) {
		t->clock_z2 += zz / nz;
		t->clocks++;
	}
	sync_graph_free(g);
	syncd_pairs_free(p);
	g_rand_free(r);
}

static void run_all(const world *w, uint32_t pieces, tally *t, const char *label)
{
	*t = (tally){0};
	for (uint64_t s = 1; s <= SEEDS; s++)
		run_one(w, 7000 + s, pieces, t);
	fprintf(stderr, "%s: %d probes (%d bridged), rms z %.3f, max |z| %.2f, %d beyond 5, %d refused\n", label, t->n,
		t->bridged, t->n ? sqrt(t->sum_z2 / t->n) : NAN, t->max_z, t->beyond5, t->refused);
}

/* The RMS z over the clocks: each clock's probes are correlated (one
 * walk), so the band is that of SEEDS independent z: 1 +- 4/sqrt(2 SEEDS). */
static void assert_honest(const world *w, double floor, const char *label)
{
	tally t;
	run_all(w, 32, &t, label);
	ck_assert_int_eq(t.refused, 0);
	ck_assert_int_eq(t.beyond5, 0);
	ck_assert_int_gt(t.bridged, 0);
	double rms = sqrt(t.clock_z2 / t.clocks), d = 4.0 / sqrt(2.0 * SEEDS);
	ck_assert_msg(rms < 1 + d && rms > floor, "%s: rms z %.3f outside %.2f .. 1 + %.3f", label, rms, floor, d);
	tally none;
	run_all(w, 0, &none, "without history");
	/* Every probe but the youngest (60 to 67 s ago) is beyond the window
	 * and the graph's tolerance. */
	ck_assert_int_ge(none.refused, SEEDS * (PROBES - 1));
}

/* A card and a cpu crystal in still air: their rates random-walk by 2
 * ppb/sqrt(s) apart, 30 ppm apart; 2 us of least latency per observation. */
START_TEST(old_frames_convert_honestly)
{
	world w = {.skew = 30e-6, .q_ppb = 2, .latency_ns = 2000, .t_end = 720};
	assert_honest(&w, 0.3, "audio0->cpu, wander 2 ppb/sqrt(s)");
}
END_TEST

/* A restless pair (20 ppb/sqrt(s): a crystal in the sun's heat): the q2
 * measured on the pair's line must keep up. */
START_TEST(restless_card)
{
	world w = {.skew = -45e-6, .q_ppb = 20, .latency_ns = 2000, .t_end = 720};
	assert_honest(&w, 0.3, "audio0->cpu, wander 20 ppb/sqrt(s)");
}
END_TEST

/* A card's pair (lower envelope) fed for 300 s, then reset at frame
 * *brk (from: where the run after it starts, or NULL) and fed from
 * `resume` for `after_s`: the pairs, and the cpu time of the last
 * observation in *now. */
static syncd_pairs *overrun(const world *w, const sync_wander *wd, GRand *r, int64_t *brk, const int64_t *from,
			    int64_t resume, double after_s, int64_t *now)
{
	syncd_pairs *p = new_pairs(32);
	const char *why;
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	*brk = (int64_t)(300 * RATE);
	feed(p, w, wd, r, 0, *brk, 0);
	ck_assert_int_eq(syncd_pairs_reset_from(p, A0, CPU, from), 0);
	*now = feed(p, w, wd, r, resume, resume + (int64_t)(after_s * RATE), 0);
	return p;
}

/* An overrun: audiod resets the pair and numbers on (frames keep counting
 * real time), 2 s of frames lost.  The pieces before the reset still
 * convert, the gap is refused as a break, not bridged. */
START_TEST(overrun_is_a_break)
{
	world w = {.skew = 30e-6, .q_ppb = 2, .latency_ns = 2000, .t_end = 0};
	sync_wander wd = {.rw_ppb = w.q_ppb, .seed = 99};
	GRand *r = g_rand_new_with_seed(99);
	int64_t brk, now, resume = (int64_t)(302 * RATE);
	syncd_pairs *p = overrun(&w, &wd, r, &brk, NULL, resume, 300, &now);
	size_t np;
	sync_graph *g = graph_of(p, &np);
	ck_assert_uint_ge(np, 3);
	sync_graph_result res;
	char buf[300];
	/* Inside the break: refused, and said so. */
	int64_t gap = brk + (int64_t)RATE / 2;
	ck_assert_int_eq(sync_graph_convert(g, A0, CPU, sync_tval_of(gap), now, &res, buf, sizeof buf), -ERANGE);
	ck_assert_msg(strstr(buf, "break"), "%s", buf);
	/* ... and from cpu time in it. */
	sync_tval cg = {(int64_t)truth_ns(&w, &wd, (double)gap), 0};
	ck_assert_int_eq(sync_graph_convert(g, CPU, A0, cg, now, &res, buf, sizeof buf), -ERANGE);
	/* Before it (4 and 8 minutes ago): converted, within 5 s.e. */
	int64_t before[2] = {brk - (int64_t)(60 * RATE), brk - (int64_t)(240 * RATE)};
	for (int k = 0; k < 2; k++) {
		ck_assert_msg(sync_graph_convert(g, A0, CPU, sync_tval_of(before[k]), now, &res, buf, sizeof buf) == 0, "%s",
			      buf);
		double err = (double)res.value.i + res.value.f - truth_ns(&w, &wd, (double)before[k]);
		ck_assert_msg(fabs(err) < 5 * sqrt(res.var), "error %.0f ns, s.e. %.0f ns", err, sqrt(res.var));
	}
	/* After it, from the run's first frames on (10 s and 60 s after the
	 * restart, long before the current fit's window): converted, within
	 * 5 s.e.  Before the new run's first fit was kept at once as a piece,
	 * everything until the next periodic piece (120 s) lay in the break
	 * (test_collab_sim under load: clips of a node that had overrun were
	 * refused for 7 s of frames it held). */
	int64_t after[2] = {resume + (int64_t)(10 * RATE), resume + (int64_t)(60 * RATE)};
	for (int k = 0; k < 2; k++) {
		ck_assert_msg(sync_graph_convert(g, A0, CPU, sync_tval_of(after[k]), now, &res, buf, sizeof buf) == 0,
			      "%.0f s after the restart: %s", (double)(after[k] - resume) / RATE, buf);
		double err = (double)res.value.i + res.value.f - truth_ns(&w, &wd, (double)after[k]);
		ck_assert_msg(fabs(err) < 5 * sqrt(res.var), "error %.0f ns, s.e. %.0f ns", err, sqrt(res.var));
	}
	GString *d = g_string_new(NULL);
	syncd_pairs_describe_clocks(p, now, d);
	ck_assert_msg(strstr(d->str, "history:") && strstr(d->str, "piece"), "%s", d->str);
	g_string_free(d, TRUE);
	sync_graph_free(g);
	syncd_pairs_free(p);
	g_rand_free(r);
}
END_TEST

/* An overrun whose restart says where the new run starts (audiod's
 * "reset A B from=X": its restart frame, numbered on real time): the
 * frames between that frame and the run's first interrupt are the run's,
 * converted by its line extrapolated back, within 5 s.e.; without from=
 * they fell in the break (the chaos soak: a call 32 ms after a restart,
 * 58 ms before the first interrupt syncd saw, had no cpu time, and detect
 * sent an event every reader refused). */
START_TEST(a_restart_converts_from_its_first_frame)
{
	world w = {.skew = 30e-6, .q_ppb = 2, .latency_ns = 2000, .t_end = 0};
	for (int with_from = 0; with_from < 2; with_from++) {
		sync_wander wd = {.rw_ppb = w.q_ppb, .seed = 77};
		GRand *r = g_rand_new_with_seed(77);
		/* 4.6 s lost; the run restarts at `start`, its first interrupt
		 * 90 ms later */
		int64_t brk, now, start = (int64_t)(304.6 * RATE), first = start + (int64_t)(0.09 * RATE);
		syncd_pairs *p = overrun(&w, &wd, r, &brk, with_from ? &start : NULL, first, 30, &now);
		size_t np;
		sync_graph *g = graph_of(p, &np);
		sync_graph_result res;
		char buf[300];
		int64_t f = start + (int64_t)(0.032 * RATE); /* the call's onset */
		int rc = sync_graph_convert(g, A0, CPU, sync_tval_of(f), now, &res, buf, sizeof buf);
		if (!with_from) {
			ck_assert_int_eq(rc, -ERANGE);
			ck_assert_msg(strstr(buf, "break"), "%s", buf);
		} else {
			ck_assert_msg(rc == 0, "%s", buf);
			double err = (double)res.value.i + res.value.f - truth_ns(&w, &wd, (double)f);
			ck_assert_msg(fabs(err) < 5 * sqrt(res.var), "error %.0f ns, s.e. %.0f ns", err, sqrt(res.var));
			/* the lost frames before it stay in the break */
			ck_assert_int_eq(sync_graph_convert(g, A0, CPU, sync_tval_of(start - 10), now, &res, buf, sizeof buf),
					 -ERANGE);
		}
		sync_graph_free(g);
		syncd_pairs_free(p);
		g_rand_free(r);
	}
}
END_TEST

/* audiod restarted without a line to number on by: the new run numbers
 * from 0 and resets the pair.  The old numbering's pieces go: a cpu time
 * of the old run no longer converts to a frame (that index names an
 * instant of the new run now), and the new run's frames convert by the
 * new run's fits. */
START_TEST(renumbering_drops_the_old_numbering)
{
	world w = {.skew = 30e-6, .q_ppb = 2, .latency_ns = 2000, .t_end = 0};
	sync_wander wd = {.rw_ppb = w.q_ppb, .seed = 5};
	GRand *r = g_rand_new_with_seed(5);
	syncd_pairs *p = new_pairs(32);
	const char *why;
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t old_end = (int64_t)(400 * RATE), start = old_end + (int64_t)(20 * RATE), end = start + (int64_t)(300 * RATE);
	feed(p, &w, &wd, r, 0, old_end, 0);
	size_t np;
	sync_graph *g = graph_of(p, &np);
	ck_assert_uint_ge(np, 2);
	sync_graph_free(g);
	ck_assert_int_eq(syncd_pairs_reset(p, A0, CPU), 0);
	/* Card frame f is now numbered f - start. */
	int64_t now = feed(p, &w, &wd, r, start, end, start);
	g = graph_of(p, &np);
	ck_assert_uint_ge(np, 1);
	sync_graph_result res;
	char buf[300];
	/* The old run's cpu times, 2 and 6 minutes before its end: refused. */
	for (int k = 0; k < 2; k++) {
		sync_tval c = {(int64_t)truth_ns(&w, &wd, (double)(old_end - (int64_t)((120 + 240 * k) * RATE))), 0};
		ck_assert_msg(sync_graph_convert(g, CPU, A0, c, now, &res, buf, sizeof buf) < 0, "converted to frame %lld",
			      (long long)res.value.i);
	}
	/* A frame of the new numbering 4 minutes ago: its truth. */
	int64_t f = end - (int64_t)(240 * RATE);
	ck_assert_msg(sync_graph_convert(g, A0, CPU, sync_tval_of(f - start), now, &res, buf, sizeof buf) == 0, "%s", buf);
	double err = (double)res.value.i + res.value.f - truth_ns(&w, &wd, (double)f);
	ck_assert_msg(fabs(err) < 5 * sqrt(res.var), "error %.0f ns, s.e. %.0f ns", err, sqrt(res.var));
	sync_graph_free(g);
	syncd_pairs_free(p);
	g_rand_free(r);
}
END_TEST

/* audiod stopped for 200 s (longer than [fit] expire_s: syncd forgets the
 * pair) and restarted numbering on from its own line: the pair's history
 * outlives the pair, so frames from before the outage still convert, and
 * a cpu time inside it is bridged.  Had it numbered afresh, nothing of
 * the old numbering would. */
START_TEST(history_outlives_an_expired_pair)
{
	world w = {.skew = 30e-6, .q_ppb = 2, .latency_ns = 2000, .t_end = 0};
	sync_wander wd = {.rw_ppb = w.q_ppb, .seed = 11};
	GRand *r = g_rand_new_with_seed(11);
	syncd_pairs *p = new_pairs(32);
	const char *why;
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t stop = (int64_t)(300 * RATE), start = stop + (int64_t)(200 * RATE), end = start + (int64_t)(200 * RATE);
	int64_t t = feed(p, &w, &wd, r, 0, stop, 0);
	ck_assert_uint_eq(syncd_pairs_expire(p, t + 121 * NS), 1);
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t now = feed(p, &w, &wd, r, start, end, 0);
	size_t np;
	sync_graph *g = graph_of(p, &np);
	ck_assert_uint_ge(np, 3);
	const int64_t f[3] = {stop - (int64_t)(200 * RATE), stop - (int64_t)(20 * RATE), stop + (int64_t)(100 * RATE)};
	for (int k = 0; k < 3; k++) {
		sync_graph_result res;
		char buf[300];
		ck_assert_msg(sync_graph_convert(g, A0, CPU, sync_tval_of(f[k]), now, &res, buf, sizeof buf) == 0, "%s", buf);
		double err = (double)res.value.i + res.value.f - truth_ns(&w, &wd, (double)f[k]);
		ck_assert_msg(fabs(err) < 5 * sqrt(res.var), "frame %lld: error %.0f ns, s.e. %.0f ns", (long long)f[k], err,
			      sqrt(res.var));
	}
	sync_graph_free(g);
	/* Again, numbered afresh this time: the old pieces go. */
	t = now;
	ck_assert_uint_eq(syncd_pairs_expire(p, t + 121 * NS), 1);
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t again = end + (int64_t)(200 * RATE);
	now = feed(p, &w, &wd, r, again, again + (int64_t)(130 * RATE), again);
	g = graph_of(p, &np);
	sync_graph_result res;
	char buf[300];
	sync_tval c = {(int64_t)truth_ns(&w, &wd, (double)(stop - (int64_t)(20 * RATE))), 0};
	ck_assert_int_lt(sync_graph_convert(g, CPU, A0, c, now, &res, buf, sizeof buf), 0);
	sync_graph_free(g);
	syncd_pairs_free(p);
	g_rand_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pairs_history");
	TCase *tc = tcase_create("history");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, old_frames_convert_honestly);
	tcase_add_test(tc, restless_card);
	tcase_add_test(tc, overrun_is_a_break);
	tcase_add_test(tc, a_restart_converts_from_its_first_frame);
	tcase_add_test(tc, renumbering_drops_the_old_numbering);
	tcase_add_test(tc, history_outlives_an_expired_pair);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
