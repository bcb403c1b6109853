/* test_audiod_past.c — audio from well before the pair's fit window, by
 * time, end to end (issue 16 item 3): the real syncd and audiod of one
 * simulated node (tests/audiod_harness.h) run for 110 s with a ring of
 * 150 s; then audio from 25 to 100 s ago is asked for by cpu time and by
 * global time.  syncd's audio0 -> cpu fit rests on its last 6.4 s of
 * observations, and the graph's tolerance is 60 s: a frame older than
 * about 66 s converts only through the pair's history (syncd/pairs.h,
 * history.h: pieces on the ticker, bridged between).  Checked against the
 * world model's truth:
 *
 *  - the first frame audiod returns is the true one within 5 of its stated
 *    s.e. (+1 frame: the first whole frame at or after the time) and the
 *    samples are the world's;
 *  - the reply states the time of that frame (t0, through syncd's pair and
 *    its history) within 5 of its stated s.e. of the truth: before the
 *    history it said t0=none for these;
 *  - libsync converts the frame to cpu time (a client such as collab or
 *    chorus-web does) within 5 s.e., flagged bridged for the old ones. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libsync/client.h"
#include "libsync/now.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"

#define NODE 2
#define RATE 48000
#define RUN_S 110

static const char conf[] = "[device.0]\nring_s = 150\nperiods = 64\n";

/* The double after " key=" in a reply; NAN when absent or "none". */
static double field(const char *reply, const char *key)
{
	char k[32];
	g_snprintf(k, sizeof k, " %s=", key);
	const char *p = strstr(reply, k);
	if (!p || !strncmp(p + strlen(k), "none", 4))
		return NAN;
	return g_ascii_strtod(p + strlen(k), NULL);
}

/* Ask [T, T + 10 ms) on `clock` for node cpu time `cpu`; check the frame,
 * its samples and the stated time of the first frame on `clock`
 * (t_clock: T's value there minus cpu, so the truth on it is frame's cpu
 * time + t_clock). */
static void ask(const ah_node *h, const char *clock, int64_t t, int64_t cpu, double ago_s)
{
	char params[160];
	g_snprintf(params, sizeof params, "clock=%s from=%lld to=%lld", clock, (long long)t, (long long)(t + 10000000));
	ah_reader *r = ah_read(0, 0, params);
	ck_assert_msg(r->ended && !r->err, "%s (%.0f s ago): %d %s", params, ago_s, r->err, r->errmsg ? r->errmsg : "");
	double se = field(r->reply, "se_frames");
	int64_t host = sim_world_true_at_node_cpu(h->w, h->node, cpu);
	double truth = sim_world_frame_at(h->w, h->node, h->rate_hz, (double)(host - h->epoch_ns) * 1e-9) - (double)h->f0;
	double err = (double)r->first - truth;
	ck_assert_msg(fabs(err) <= 5 * se + 1, "%s: first=%lld, truth %.3f (error %.3f frames, se %.4g)", params,
		      (long long)r->first, truth, err, se);
	int64_t n = r->last - r->first;
	ck_assert_int_lt(ah_mismatch(h, (const int16_t *)r->data->data, (size_t)n, h->channels, NULL, h->f0 + r->first), 0);
	/* The frame's true time on the node's cpu clock, and so on `clock`. */
	int64_t ft = sim_world_node_cpu_at(h->w, h->node,
					   h->epoch_ns + sim_world_frame_time_ns(h->w, h->node, h->rate_hz, h->f0 + r->first));
	double t0 = field(r->reply, "t0"), t0se = field(r->reply, "t0_se");
	ck_assert_msg(isfinite(t0) && isfinite(t0se), "%.0f s ago, no time stated: \"%s\"", ago_s, r->reply);
	double t0_err = t0 - (double)(ft + (t - cpu));
	fprintf(stderr, "%s, %.0f s ago: frame error %.2f (se %.3g frames), t0 error %.0f ns, stated s.e. %.0f ns\n", clock,
		ago_s, err, se, t0_err, t0se);
	ck_assert_msg(fabs(t0_err) <= 5 * t0se + 2, "%s %.0f s ago: t0 %.0f off by %.0f ns, s.e. %.3g (%s)", clock, ago_s, t0,
		      t0_err, t0se, r->reply);
	ah_reader_free(r);
}

START_TEST(old_audio_by_time)
{
	ah_node h;
	ah_opts o = {.audiod_conf = conf};
	ah_start(&h, NODE, "past", &o);
	ah_find_f0(&h);
	for (int64_t s = 20; s < RUN_S + 20; s += 20)
		ah_wait_frames(MIN(s, RUN_S) * RATE); /* (each wait is bounded by AH_SAFETY_S) */
	GError *e = NULL;
	sync_client *sc = sync_client_new(NULL, NULL, NULL, NULL, &e);
	ck_assert_msg(sc, "%s", e ? e->message : "");
	ck_assert_int_eq(sync_client_wait(sc, AH_SAFETY_S * 1000), 0);
	int64_t now = sync_now(SYNC_KIND_CPU);
	static const double ago[] = {25, 70, 85, 100};
	for (size_t i = 0; i < G_N_ELEMENTS(ago); i++) {
		int64_t t = now - (int64_t)(ago[i] * 1e9) + 7919 * (int64_t)i;
		char why[200];
		sync_graph_result g;
		ck_assert_msg(sync_client_convert(sc, sync_clock_cpu(NODE), sync_clock_global(), sync_tval_of(t), &g, why,
						  sizeof why) == 0,
			      "cpu -> global: %s", why);
		ask(&h, "cpu", t, t, ago[i]);
		ask(&h, "global", g.value.i, t, ago[i]);
		/* libsync alone: the frame of that time to cpu time. */
		int64_t host = sim_world_true_at_node_cpu(h.w, NODE, t);
		int64_t f = (int64_t)floor(sim_world_frame_at(h.w, NODE, RATE, (double)(host - h.epoch_ns) * 1e-9)) - h.f0;
		sync_graph_result r;
		ck_assert_msg(sync_client_convert(sc, sync_clock_audio(NODE, 0), sync_clock_cpu(NODE), sync_tval_of(f), &r,
						  why, sizeof why) == 0,
			      "frame %lld (%.0f s ago) -> cpu: %s", (long long)f, ago[i], why);
		int64_t ft = sim_world_node_cpu_at(h.w, NODE, h.epoch_ns + sim_world_frame_time_ns(h.w, NODE, RATE, h.f0 + f));
		double err = (double)(r.value.i - ft) + r.value.f;
		ck_assert_msg(fabs(err) <= 5 * sqrt(r.var) + 1, "frame %.0f s ago: %.0f ns off, s.e. %.0f", ago[i], err,
			      sqrt(r.var));
		if (ago[i] > 70)
			ck_assert_msg(r.flags & SYNC_GRAPH_BRIDGED, "frame %.0f s ago not through the history", ago[i]);
	}
	sync_client_free(sc);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("audiod_past");
	TCase *tc = tcase_create("past");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, old_audio_by_time);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
