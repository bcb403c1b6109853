/* test_rbs_core.c — RBS matching and pairwise fits (rbs_core) and the mesh
 * view (rbs_mesh: learned conversions, ages, liveness, root rule), on seeded
 * simulated clocks with known truth. */
#include <check.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libsync/graph.h"
#include "syncd/rbs_core.h"
#include "syncd/rbs_history.h"
#include "syncd/rbs_mesh.h"
#include "tests/check_run.h"

#define SIGMA 1000.0 /* receive jitter, ns */

typedef struct {
	double skew;       /* fractional */
	int64_t offset_ns; /* ns */
} clk;

static int64_t cpu_at(const clk *c, int64_t t)
{
	return t + c->offset_ns + (int64_t)llround((double)t * c->skew);
}

static double gauss(GRand *g, double sd)
{
	double u1 = g_rand_double(g), u2 = g_rand_double(g);
	return sd * sqrt(-2.0 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(2.0 * G_PI * u2);
}

static rbs_core *new_core(uint32_t self)
{
	rbs_core_cfg c = {.self = self, .window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 0, .hold_ns = 10000000000LL, .peer_timeout_ns = 5000000000LL, .min_rbs = 8};
	const char *why = NULL;
	rbs_core *r = rbs_core_new(&c, &why);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* One run: node 1 (us) and node 2 hear beacons of node 3 (and, if sr, each
 * other's beacons with the sender's own looped-back time) for n beacons
 * 0.2 s apart; node 2 reports every 5 beacons.  Returns our conversion
 * cpu1 -> cpu2 in *out and the truth at the newest beacon in *truth_x/y. */
static void run_pair(guint32 seed, int n, gboolean third, gboolean sr, sync_conv *out, int64_t *tx, int64_t *ty)
{
	GRand *g = g_rand_new_with_seed(seed);
	clk c1 = {g_rand_double_range(g, -1e-4, 1e-4), 3000000000LL + g_rand_int_range(g, 0, 1000000)};
	clk c2 = {g_rand_double_range(g, -1e-4, 1e-4), 900000000000LL + g_rand_int_range(g, 0, 1000000)};
	rbs_core *me = new_core(1);
	GArray *rep = g_array_new(FALSE, FALSE, sizeof(rbs_reception));
	int64_t t = 1000000000000LL, now = 0;
	for (int j = 0; j < n; j++) {
		t += 200000000 + g_rand_int_range(g, 0, 1000000);
		int64_t a = cpu_at(&c1, t) + (int64_t)gauss(g, SIGMA);
		int64_t b = cpu_at(&c2, t) + (int64_t)gauss(g, SIGMA);
		now = cpu_at(&c1, t) + 1000000;
		uint32_t sender = third ? 3 : (uint32_t)(1 + j % 2);
		if (!third && !sr)
			continue;
		/* Both receive (the sender's reception is its loopback). */
		rbs_core_heard(me, sender, (uint32_t)j, a, now);
		rbs_reception x = {sender, (uint32_t)j, b};
		g_array_append_val(rep, x);
		if (j % 5 == 4) {
			rbs_core_report(me, 2, (rbs_reception *)(void *)rep->data, rep->len, now);
			/* Reports overlap (redundancy): keep the last 3 receptions. */
			if (rep->len > 3)
				g_array_remove_range(rep, 0, rep->len - 3);
			/* syncd's ticker solves the fits as they go (at most every
			 * 0.2 s): the wander's estimates pool over the windows */
			GArray *tick = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
			rbs_core_entries(me, tick);
			g_array_free(tick, TRUE);
		}
	}
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_core_entries(me, e), 1);
	sync_ticker_entry *te = &g_array_index(e, sync_ticker_entry, 0);
	ck_assert(sync_clock_equal(te->from, sync_clock_cpu(1)));
	ck_assert(sync_clock_equal(te->to, sync_clock_cpu(2)));
	*out = te->conv;
	*tx = cpu_at(&c1, t);
	*ty = cpu_at(&c2, t);
	g_array_free(e, TRUE);
	g_array_free(rep, TRUE);
	rbs_core_free(me);
	g_rand_free(g);
}

START_TEST(test_rbs_fit_calibrated)
{
	/* Over 200 seeds the error at the newest beacon, divided by the fit's own
	 * standard error, must have RMS ~ 1 (chi-square: 200 draws give RMS within
	 * ±0.15 at >4 sigma), and the residual RMS must be sigma*sqrt(2).  300
	 * beacons: past the window's first two, over which a steady clock's
	 * fit states its wander's fading bound (libsync/fit.c WANDER_FADE_K:
	 * RMS z 0.71 after 80). */
	double z2 = 0, rms = 0;
	int seeds = 200, shortened = 0;
	for (int s = 0; s < seeds; s++) {
		sync_conv c;
		int64_t tx, ty;
		run_pair((guint32)(1000 + s), 300, TRUE, FALSE, &c, &tx, &ty);
		/* Window 64, few rejected; a steady clock's fit believes in a
		 * wander and shortens its window now and then (libsync/fit.c). */
		shortened += c.n < 55;
		sync_tval y = sync_conv_apply(&c, sync_tval_of(tx));
		double err = sync_tval_diff(y, ty);
		double sd = sqrt(sync_conv_var(&c, sync_tval_of(tx)));
		ck_assert_msg(fabs(err) < 6 * sd, "seed %d: error %.0f ns, sd %.0f", s, err, sd);
		z2 += (err / sd) * (err / sd);
		rms += c.rms * c.rms;
	}
	double zr = sqrt(z2 / seeds), rr = sqrt(rms / seeds);
	/* fit.c believes one window's chance wander 1 time in 50 (chi^2_1 >
	 * 5.24) at each solve of a growing window: bound it at 4 % (8 of 200
	 * expected; P(X > 20) < 1e-4). */
	ck_assert_msg(shortened <= 20, "%d of %d steady fits shortened their window", shortened, seeds);
	ck_assert_msg(zr > 0.8 && zr < 1.2, "normalized error RMS %.3f", zr);
	ck_assert_msg(fabs(rr / (SIGMA * M_SQRT2) - 1.0) < 0.1, "residual RMS %.0f ns", rr);
}
END_TEST

START_TEST(test_sender_receiver_fallback)
{
	/* Only two nodes: no third-party beacon, so the pair uses the
	 * sender-receiver observations (our own beacons' loopback times). */
	sync_conv c;
	int64_t tx, ty;
	run_pair(7, 80, FALSE, TRUE, &c, &tx, &ty);
	double err = sync_tval_diff(sync_conv_apply(&c, sync_tval_of(tx)), ty);
	double sd = sqrt(sync_conv_var(&c, sync_tval_of(tx)));
	ck_assert_msg(fabs(err) < 5 * sd && sd < 1000, "error %.0f sd %.0f", err, sd);
}
END_TEST

START_TEST(test_unmatched_and_aging)
{
	rbs_core *me = new_core(1);
	int64_t now = 5000000000LL;
	/* Report of beacons we never heard: nothing added, no fit. */
	rbs_reception rx[6];
	for (int i = 0; i < 6; i++)
		rx[i] = (rbs_reception){3, (uint32_t)(i + 1), 100 * (i + 1) + (i % 2)};
	ck_assert_int_eq(rbs_core_report(me, 2, rx, 6, now), 0);
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_core_entries(me, e), 0);
	ck_assert_uint_eq(rbs_core_n_peers(me), 1);
	/* Heard, then the same report twice: added once; a fit is published
	 * only on 6 observations or more. */
	for (int i = 0; i < 6; i++)
		rbs_core_heard(me, 3, (uint32_t)(i + 1), 1000 + 1000 * i + (i == 1), now);
	ck_assert_int_eq(rbs_core_report(me, 2, rx, 5, now), 5);
	ck_assert_int_eq(rbs_core_report(me, 2, rx, 5, now), 0);
	ck_assert_uint_eq(rbs_core_entries(me, e), 0);
	ck_assert_int_eq(rbs_core_report(me, 2, rx, 6, now), 1);
	ck_assert_uint_eq(rbs_core_entries(me, e), 1);
	/* Our receptions are listed for our report, oldest first. */
	rbs_reception out[8];
	ck_assert_uint_eq(rbs_core_recent(me, 0, out, 8), 6);
	ck_assert_int_eq(out[0].t_ns, 1000);
	/* A silent peer ages out; receptions older than the hold time go. */
	ck_assert_uint_eq(rbs_core_expire(me, now + 4000000000LL), 0);
	ck_assert_uint_eq(rbs_core_expire(me, now + 6000000000LL), 1);
	ck_assert_uint_eq(rbs_core_n_peers(me), 0);
	rbs_core_heard(me, 3, 99, 20000000000LL, 20000000001LL);
	ck_assert_uint_eq(rbs_core_recent(me, 0, out, 8), 1);
	g_array_free(e, TRUE);
	rbs_core_free(me);
}
END_TEST

static rbs_core *new_core_refs(uint32_t self, uint32_t refs)
{
	rbs_core_cfg c = {.self = self, .window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 0, .hold_ns = 10000000000LL, .peer_timeout_ns = 5000000000LL, .min_rbs = 8, .references = refs};
	const char *why = NULL;
	rbs_core *r = rbs_core_new(&c, &why);
	ck_assert_msg(r, "%s", why);
	return r;
}

/* n beacons of `sender` heard by us and by `peer` (1 us jitter-free offsets),
 * reported by the peer. */
static void beacons(rbs_core *me, uint32_t sender, uint32_t peer, uint32_t seq0, int n, int64_t *now)
{
	rbs_reception rx[64];
	ck_assert_int_le(n, 64);
	for (int i = 0; i < n; i++) {
		*now += 100000000;
		rbs_core_heard(me, sender, seq0 + (uint32_t)i, *now, *now);
		rx[i] = (rbs_reception){sender, seq0 + (uint32_t)i, *now + 7000 + (i % 3) * 100};
	}
	rbs_core_report(me, peer, rx, (size_t)n, *now);
}

/* [rbs] references: the K lowest-numbered nodes known are references; a
 * node publishes fits only to them; one-sided sender-receiver observations
 * are never used. */
START_TEST(test_references)
{
	const char *why = NULL;
	rbs_core_cfg bad = {.self = 1, .window = 64, .reject_k = 3.5, .hold_ns = 1, .peer_timeout_ns = 1, .min_rbs = 8, .references = 1};
	ck_assert_ptr_null(rbs_core_new(&bad, &why));
	ck_assert_ptr_nonnull(strstr(why, "at least 2"));
	rbs_core *me = new_core_refs(5, 2);
	int64_t now = 1000000000000LL;
	ck_assert(rbs_core_is_reference(me, 5)); /* alone: its own reference */
	uint32_t peers[] = {9, 1, 3, 7, 2};
	for (size_t i = 0; i < G_N_ELEMENTS(peers); i++)
		rbs_core_touch(me, peers[i], now);
	ck_assert(rbs_core_is_reference(me, 1));
	ck_assert(rbs_core_is_reference(me, 2));
	ck_assert(!rbs_core_is_reference(me, 3));
	ck_assert(!rbs_core_is_reference(me, 5));
	ck_assert(!rbs_core_is_reference(me, 9));
	/* RBS observations with peer 1 (a reference) and peer 3 (not), from
	 * beacons of reference 2: only cpu5 -> cpu1 is published. */
	beacons(me, 2, 1, 100, 20, &now);
	beacons(me, 2, 3, 200, 20, &now);
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_core_entries(me, e), 1);
	ck_assert(sync_clock_equal(g_array_index(e, sync_ticker_entry, 0).to, sync_clock_cpu(1)));
	g_array_set_size(e, 0);
	/* Reference 2's own beacons give us only one direction (we do not
	 * beacon): no sender-receiver fit, however many. */
	rbs_core *lone = new_core_refs(5, 2);
	int64_t t2 = now;
	rbs_core_touch(lone, 1, t2);
	rbs_core_touch(lone, 2, t2);
	beacons(lone, 2, 2, 300, 40, &t2);
	ck_assert_uint_eq(rbs_core_entries(lone, e), 0);
	/* One direction is no fit even with every node a reference (a node
	 * with beacon = false); with our own beacons too, it is. */
	rbs_core *all = new_core_refs(5, 0);
	int64_t t3 = now;
	rbs_core_touch(all, 2, t3);
	beacons(all, 2, 2, 300, 40, &t3);
	ck_assert_uint_eq(rbs_core_entries(all, e), 0);
	beacons(all, 5, 2, 400, 10, &t3);
	ck_assert_uint_eq(rbs_core_entries(all, e), 1);
	ck_assert(rbs_core_is_reference(all, 9));
	ck_assert(rbs_core_beacons(all, t3));
	/* Beaconing: not a reference of our own view (1, 2 are lower), but of
	 * peer 9's, which hears us and 7, 8: we beacon.  A peer that does not
	 * list us, or lists two lower nodes, does not make us beacon. */
	ck_assert(!rbs_core_beacons(me, now));
	rbs_node_news n9[] = {{9, 0, 0}, {5, 1, 0}, {7, 1, 0}, {8, 1, 1000}, {1, 2, 0}};
	rbs_node_news n3[] = {{3, 0, 0}, {1, 1, 0}, {2, 1, 0}, {5, 1, 0}};
	rbs_node_news n7[] = {{7, 0, 0}, {6, 1, 0}, {4, 1, 0}};
	rbs_core_advertised(me, 3, n3, G_N_ELEMENTS(n3), now);
	rbs_core_advertised(me, 7, n7, G_N_ELEMENTS(n7), now);
	ck_assert(!rbs_core_beacons(me, now));
	rbs_core_advertised(me, 9, n9, G_N_ELEMENTS(n9), now);
	ck_assert(rbs_core_beacons(me, now));
	/* That news ages out with the peer timeout. */
	ck_assert(!rbs_core_beacons(me, now + 6000000000LL));
	g_array_free(e, TRUE);
	rbs_core_free(all);
	rbs_core_free(lone);
	rbs_core_free(me);
}
END_TEST

static rbs_edge edge(uint32_t origin, sync_clock_id a, sync_clock_id b, int64_t age, double slope)
{
	rbs_edge e = {origin, 0, age, a, b, sync_conv_fixed(0, 0, slope)};
	e.conv.flags = 0;
	e.conv.n = 10;
	return e;
}

START_TEST(test_mesh_ages_and_root)
{
	rbs_mesh_cfg mc = {5, 30000000000LL, 10000000000LL, 16};
	rbs_mesh *m = rbs_mesh_new(&mc);
	int64_t now = 100000000000LL;
	/* Alone: we are the root. */
	ck_assert_uint_eq(rbs_mesh_root(m, -1, now), 5);
	rbs_node_news news[2] = {{3, 0, 0}, {1, 1, 2000000000LL}};
	rbs_edge ed[3] = {
		edge(3, sync_clock_cpu(3), sync_clock_cpu(1), 1000000000LL, 1.00001),
		edge(5, sync_clock_cpu(5), sync_clock_cpu(3), 0, 1.0), /* ours: ignored */
		edge(1, sync_clock_cpu(1), sync_clock_global(), 0, 1.0),
	};
	rbs_packet adv = {.type = RBS_ADVERT, .sender = 3, .root = 1, .nodes = news, .n_nodes = 2, .edges = ed, .n_edges = 3};
	ck_assert_int_eq(rbs_mesh_merge(m, &adv, now), 2);
	ck_assert_uint_eq(rbs_mesh_n_edges(m), 2);
	ck_assert_uint_eq(rbs_mesh_root(m, -1, now), 1);
	ck_assert_uint_eq(rbs_mesh_root(m, 3, now), 3); /* preferred and alive */
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	GArray *hops = g_array_new(FALSE, FALSE, sizeof(guint32));
	ck_assert_uint_eq(rbs_mesh_entries(m, 1, NULL, e, NULL, hops), 2);
	for (guint i = 0; i < e->len; i++) {
		sync_ticker_entry *x = &g_array_index(e, sync_ticker_entry, i);
		if (x->to.kind == SYNC_KIND_CPU)
			ck_assert_int_eq(x->conv.updated_ns, now - 1000000000LL); /* age carried, on our clock */
		ck_assert_uint_eq(g_array_index(hops, guint32, i), 1);
	}
	/* The global edge counts only for its root. */
	g_array_set_size(e, 0);
	ck_assert_uint_eq(rbs_mesh_entries(m, 3, NULL, e, NULL, NULL), 1);
	/* An older copy does not replace a fresher one; a fresher one does. */
	ed[0].age_ns = 5000000000LL;
	ed[0].conv.slope = 2.0;
	adv.n_edges = 1;
	ck_assert_int_eq(rbs_mesh_merge(m, &adv, now), 0);
	ed[0].age_ns = 0;
	ck_assert_int_eq(rbs_mesh_merge(m, &adv, now + 1), 1);
	/* Node 1's news is 2 s old: it dies 10 s later; the root moves to 3,
	 * and to us when 3 falls silent too. */
	ck_assert(rbs_mesh_alive(m, 1, now + 7000000000LL));
	ck_assert(!rbs_mesh_alive(m, 1, now + 9000000000LL));
	ck_assert_uint_eq(rbs_mesh_root(m, -1, now + 9000000000LL), 3);
	ck_assert_uint_eq(rbs_mesh_root(m, -1, now + 11000000000LL), 5);
	/* Nobody refreshes the conversions: they expire. */
	ck_assert_uint_eq(rbs_mesh_expire(m, now + 31000000000LL), 2);
	ck_assert_uint_eq(rbs_mesh_n_edges(m), 0);
	size_t nn;
	rbs_node_news *mine = rbs_mesh_news(m, now, 0, NULL, 0, &nn);
	ck_assert_uint_eq(mine[0].node, 5);
	ck_assert_uint_eq(mine[0].age_ns, 0);
	g_free(mine);
	g_array_free(e, TRUE);
	g_array_free(hops, TRUE);
	rbs_mesh_free(m);
}
END_TEST

/* A neighbour silent beyond the peer timeout (a radio outage): its fit is
 * kept as a history piece, published beside the new fit once there is
 * one (never before, never overlapping it), and libsync's graph bridges a
 * time inside the outage; with history_pieces 0 nothing is kept. */
START_TEST(test_history_across_outage)
{
	for (int keep = 0; keep <= 1; keep++) {
		rbs_core_cfg c = {.self = 1, .window = 64, .reject_k = 3.5, .wander = 1e-7, .hold_ns = 10000000000LL, .peer_timeout_ns = 5000000000LL, .min_rbs = 8, .history_ns = 3600000000000LL, .history_pieces = keep ? 4 : 0, .history_peers = 16};
		const char *why = NULL;
		rbs_core *me = rbs_core_new(&c, &why);
		ck_assert_msg(me, "%s", why);
		int64_t now = 1000000000000LL;
		beacons(me, 3, 2, 0, 40, &now);
		int64_t gap_from = now;
		now += 60000000000LL; /* a minute of silence */
		ck_assert_uint_eq(rbs_core_expire(me, now), 1);
		GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
		ck_assert_uint_eq(rbs_core_history_entries(me, e), 0); /* no fit after it yet */
		beacons(me, 3, 2, 100, 40, &now);
		ck_assert_uint_eq(rbs_core_entries(me, e), 1);
		ck_assert_uint_eq(rbs_core_history_entries(me, e), (guint)keep);
		GString *d = g_string_new(NULL);
		rbs_core_describe(me, now, d);
		ck_assert_msg(!keep == !strstr(d->str, "history: node2 1 piece"), "%s", d->str);
		if (keep) {
			const sync_ticker_entry *cur = &g_array_index(e, sync_ticker_entry, 0), *pc = &g_array_index(e, sync_ticker_entry, 1);
			ck_assert(pc->conv.flags & SYNC_CONV_PIECE);
			ck_assert(sync_clock_equal(pc->from, cur->from) && sync_clock_equal(pc->to, cur->to));
			ck_assert_int_le(pc->conv.xmax, gap_from);
			ck_assert_int_le(pc->conv.xmax, cur->conv.xmin);
			ck_assert(pc->conv.wander >= 0);
			sync_graph_params gp;
			sync_graph_params_default(&gp);
			sync_graph *g = sync_graph_new(&gp);
			size_t skipped;
			char buf[200];
			ck_assert_int_eq(sync_ticker_entries_to_graph((const sync_ticker_entry *)(void *)e->data, e->len, g, &skipped, buf, sizeof buf), 2);
			sync_graph_result r;
			/* The offsets are 7.1 us throughout: the bridge holds them. */
			int64_t x = gap_from + 30000000000LL;
			ck_assert_msg(sync_graph_convert(g, sync_clock_cpu(1), sync_clock_cpu(2), sync_tval_of(x), now, &r, buf, sizeof buf) == 0, "%s", buf);
			ck_assert_uint_eq(r.flags, SYNC_GRAPH_BRIDGED);
			double err = sync_tval_diff(r.value, x + 7100);
			ck_assert_msg(fabs(err) < 5 * sqrt(r.var), "bridged error %.0f ns, s.e. %.0f", err, sqrt(r.var));
			sync_graph_free(g);
		}
		g_string_free(d, TRUE);
		g_array_free(e, TRUE);
		rbs_core_free(me);
	}
}
END_TEST

/* A pair left alone (the field split, no third node's beacons reach both):
 * its RBS fit stops while their own beacons go on, and once it is a peer
 * timeout behind, the fresh sender-receiver fit is published instead of
 * the stale one extrapolated. */
START_TEST(test_alone_pair_uses_sender_receiver)
{
	rbs_core *me = new_core(1);
	int64_t now = 1000000000000LL;
	beacons(me, 3, 2, 0, 20, &now);
	GString *d = g_string_new(NULL);
	rbs_core_describe(me, now, d);
	ck_assert_msg(strstr(d->str, "fit=rbs"), "%s", d->str);
	for (int k = 0; k < 16; k++) {
		beacons(me, 1, 2, 100 + 10 * (uint32_t)k, 5, &now);
		beacons(me, 2, 2, 100 + 10 * (uint32_t)k, 5, &now);
	}
	g_string_truncate(d, 0);
	rbs_core_describe(me, now, d);
	ck_assert_msg(strstr(d->str, "fit=sender-receiver"), "%s", d->str);
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_core_entries(me, e), 1);
	ck_assert_int_ge(g_array_index(e, sync_ticker_entry, 0).conv.xmax, now - 1000000000LL);
	g_array_free(e, TRUE);
	g_string_free(d, TRUE);
	rbs_core_free(me);
}
END_TEST

/* The store alone: bounded pieces per peer (the oldest go), an overlapping
 * fit replaces the piece it overlaps, old pieces expire, entries stop at
 * the current fit's data. */
/* Node 2 reboots 60 s into a field: its cpu clock (CLOCK_MONOTONIC_RAW)
 * starts again from a few seconds, and its syncd from a larger boot number
 * (rbs_core_boot).  Every conversion cpu1 -> cpu2 published after it is
 * absent or honest at the newest beacon (within 5 of its s.e.) — the old
 * line, fitted to a clock that no longer runs, never stands for the new
 * one while the window still holds its observations — and the old fit is
 * a piece of the pair's history.  A restart of syncd alone (a new boot
 * number, the clock going on) keeps the pair's fit. */
static void run_reboot(guint32 seed, gboolean clock_restarts, int *published_after, int *worst_z100, uint64_t *obs_end)
{
	GRand *g = g_rand_new_with_seed(seed);
	clk c1 = {g_rand_double_range(g, -1e-4, 1e-4), 3000000000LL};
	clk c2 = {g_rand_double_range(g, -1e-4, 1e-4), 900000000000LL};
	rbs_core_cfg cfg = {.self = 1, .window = 64, .reject_k = 3.5, .wander = 1e-7, .hold_ns = 10000000000LL, .peer_timeout_ns = 5000000000LL, .min_rbs = 8, .history_ns = 3600000000000LL, .history_pieces = 8, .history_peers = 8};
	const char *why = NULL;
	rbs_core *me = rbs_core_new(&cfg, &why);
	ck_assert_ptr_nonnull(me);
	GArray *rep = g_array_new(FALSE, FALSE, sizeof(rbs_reception));
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	int64_t t = 1000000000000LL, now = 0;
	uint64_t boot = 7;
	*published_after = 0;
	*worst_z100 = 0;
	rbs_core_boot(me, 2, boot, 0);
	for (int j = 0; j < 600; j++) {
		t += 200000000;
		if (j == 300) {
			/* 60 s in: node 2 is down for 20 s and comes back. */
			t += 20000000000LL;
			boot++;
			if (clock_restarts)
				c2.offset_ns = 4000000000LL - t - (int64_t)llround((double)t * c2.skew);
			g_array_set_size(rep, 0);
		}
		int64_t a = cpu_at(&c1, t) + (int64_t)gauss(g, SIGMA);
		int64_t b = cpu_at(&c2, t) + (int64_t)gauss(g, SIGMA);
		now = cpu_at(&c1, t) + 1000000;
		rbs_core_heard(me, 3, (uint32_t)j, a, now);
		rbs_reception x = {3, (uint32_t)j, b};
		g_array_append_val(rep, x);
		if (j % 5 != 4)
			continue;
		rbs_core_boot(me, 2, boot, now);
		rbs_core_report(me, 2, (rbs_reception *)(void *)rep->data, rep->len, now);
		if (rep->len > 3)
			g_array_remove_range(rep, 0, rep->len - 3);
		g_array_set_size(e, 0);
		if (j < 300 || !rbs_core_entries(me, e))
			continue;
		sync_conv *cv = &g_array_index(e, sync_ticker_entry, 0).conv;
		int64_t tx = cpu_at(&c1, t), ty = cpu_at(&c2, t);
		sync_tval y = sync_conv_apply(cv, sync_tval_of(tx));
		double z = fabs(((double)(y.i - ty) + y.f) / sqrt(sync_conv_var(cv, sync_tval_of(tx))));
		(*published_after)++;
		if (z > *worst_z100 / 100.0)
			*worst_z100 = (int)fmin(z * 100.0, 1e9);
	}
	*obs_end = rbs_core_restarts(me);
	GArray *h = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	size_t pieces = rbs_core_history_entries(me, h);
	if (clock_restarts)
		ck_assert_msg(pieces >= 1, "seed %u: the old fit kept no piece of history", seed);
	g_array_free(h, TRUE);
	g_array_free(e, TRUE);
	g_array_free(rep, TRUE);
	rbs_core_free(me);
	g_rand_free(g);
}

START_TEST(test_peer_reboot)
{
	for (guint32 seed = 1; seed <= 20; seed++) {
		int n, z100;
		uint64_t restarts;
		run_reboot(seed, TRUE, &n, &z100, &restarts);
		ck_assert_msg(z100 < 500, "seed %u: a conversion to the rebooted peer %.1f s.e. off", seed, z100 / 100.0);
		ck_assert_msg(n >= 40, "seed %u: %d conversions published in the 60 s after the reboot", seed, n);
		ck_assert_uint_eq(restarts, 1);
		run_reboot(seed, FALSE, &n, &z100, &restarts);
		ck_assert_msg(z100 < 500, "seed %u: syncd restarted, %.1f s.e. off", seed, z100 / 100.0);
		ck_assert_uint_eq(restarts, 0);
	}
}
END_TEST

START_TEST(test_history_store)
{
	rbs_history *h = rbs_history_new(2, 1, 100, 0);
	sync_conv c = {.slope = 1, .n = 10, .xmin = 0, .xmax = 10};
	ck_assert(rbs_history_close(h, 7, &c, 0));
	ck_assert(!rbs_history_close(h, 8, &c, 0)); /* one peer at most */
	ck_assert(!rbs_history_close(h, 7, &c, NAN));
	c.xmin = 20;
	c.xmax = 30;
	ck_assert(rbs_history_close(h, 7, &c, 1e-24));
	c.xmin = 40;
	c.xmax = 50;
	ck_assert(rbs_history_close(h, 7, &c, 0)); /* the first goes */
	guint peers;
	ck_assert_uint_eq(rbs_history_count(h, &peers), 2);
	ck_assert_uint_eq(peers, 1);
	c.xmin = 45; /* overlaps [40, 50]: replaces it */
	c.xmax = 60;
	ck_assert(rbs_history_close(h, 7, &c, 0));
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_history_entries(h, 1, 7, 55, e), 1); /* [45, 60] reaches past 55 */
	ck_assert_int_eq(g_array_index(e, sync_ticker_entry, 0).conv.xmin, 20);
	ck_assert_double_eq(g_array_index(e, sync_ticker_entry, 0).conv.wander, 1e-24);
	ck_assert_uint_eq(rbs_history_expire(h, 135), 1); /* [20, 30] ended 105 ago */
	ck_assert_uint_eq(rbs_history_expire(h, 161), 1);
	ck_assert_uint_eq(rbs_history_count(h, &peers), 0);
	ck_assert_uint_eq(peers, 0);
	g_array_free(e, TRUE);
	rbs_history_free(h);
	/* The q2 of a piece is measured on the noted line once it spans two
	 * 32 s spans (before that the fit's own bound is taken): a straight
	 * line under 100 ns of noise has none (the estimator subtracts the
	 * noise; syncd/continuity.h); a line whose rate ramps gets the line's,
	 * with the span it was measured over (SYNC_CONV_TAU_MASK). */
	h = rbs_history_new(2, 4, 3600000000000LL, 0);
	GRand *g = g_rand_new_with_seed(77);
	c = (sync_conv){.slope = 1, .n = 10, .xmin = 0, .xmax = 40000000000LL};
	for (int64_t x = 0; x <= 40000000000LL; x += 4000000000LL)
		rbs_history_note(h, 9, x, x + 5000 + (int64_t)gauss(g, 100), 100);
	ck_assert(rbs_history_close(h, 9, &c, 1e-24));
	e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_history_entries(h, 1, 9, c.xmax, e), 1);
	ck_assert_double_eq(g_array_index(e, sync_ticker_entry, 0).conv.wander, 1e-24); /* 40 s: the fit's bound */
	for (int64_t x = 44000000000LL; x <= 600000000000LL; x += 4000000000LL)
		rbs_history_note(h, 9, x, x + 5000 + (int64_t)gauss(g, 100), 100);
	c.xmin = 100000000000LL;
	c.xmax = 600000000000LL;
	ck_assert(rbs_history_close(h, 9, &c, 1e-24));
	g_array_set_size(e, 0);
	ck_assert_uint_eq(rbs_history_entries(h, 1, 9, c.xmax, e), 2);
	ck_assert_msg(g_array_index(e, sync_ticker_entry, 1).conv.wander < 1e-27, "q2 %g of a straight line",
		      g_array_index(e, sync_ticker_entry, 1).conv.wander);
	/* ... but the oldest piece, which a time before all data is carried
	 * back with, keeps its fit's bound when that is larger. */
	ck_assert_double_eq(g_array_index(e, sync_ticker_entry, 0).conv.wander, 1e-24);
	ck_assert_uint_eq(g_array_index(e, sync_ticker_entry, 0).conv.flags & SYNC_CONV_TAU_MASK, 0);
	GString *d = g_string_new(NULL);
	rbs_history_describe(h, c.xmax, NULL, NULL, d);
	ck_assert_msg(strstr(d->str, "measured over 600 s of the line"), "%s", d->str);
	g_string_free(d, TRUE);
	g_array_free(e, TRUE);
	rbs_history_free(h);
	/* A ramp of the rate, 1e-9 per s (a temperature change): the line
	 * measures q2 = 1.5 ydot^2 tau at its longest span (256 s; ydot 1e-18
	 * per ns), above the fit's bound. */
	h = rbs_history_new(2, 4, 3600000000000LL, 0);
	for (int64_t x = 0; x <= 600000000000LL; x += 4000000000LL) {
		double t = (double)x * 1e-9;
		rbs_history_note(h, 9, x, x + 5000 + (int64_t)llround(0.5e-9 * t * t * 1e9 + gauss(g, 100)), 100);
	}
	ck_assert(rbs_history_close(h, 9, &c, 1e-30));
	e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(rbs_history_entries(h, 1, 9, c.xmax, e), 1);
	const sync_conv *pc = &g_array_index(e, sync_ticker_entry, 0).conv;
	double want = 1.5 * 1e-36 * 256e9;
	ck_assert_msg(fabs(pc->wander / want - 1) < 0.1, "q2 %g, want %g", pc->wander, want);
	ck_assert_double_eq(sync_conv_piece_tau(pc, 1.0), 256e9);
	d = g_string_new(NULL);
	rbs_history_describe(h, c.xmax, NULL, NULL, d);
	ck_assert_msg(strstr(d->str, "measured over 600 s of the line, spans of 256 s"), "%s", d->str);
	g_string_free(d, TRUE);
	g_array_free(e, TRUE);
	g_rand_free(g);
	rbs_history_free(h);
	/* Periodic pieces: a mature fit at once, then one whose data begin
	 * every_ns after the newest piece's end; none without every_ns. */
	h = rbs_history_new(8, 4, 3600000000000LL, 100);
	c = (sync_conv){.slope = 1, .n = 31, .xmin = 0, .xmax = 10};
	ck_assert(!rbs_history_keep(h, 5, &c, 32, 0)); /* young */
	c.n = 32;
	ck_assert(rbs_history_keep(h, 5, &c, 32, 0));
	c.xmin = 50;
	c.xmax = 60;
	ck_assert(!rbs_history_keep(h, 5, &c, 32, 0));
	c.xmin = 110;
	c.xmax = 120;
	ck_assert(rbs_history_keep(h, 5, &c, 32, 0));
	ck_assert_uint_eq(rbs_history_count(h, NULL), 2);
	rbs_history_free(h);
	h = rbs_history_new(8, 4, 3600000000000LL, 0);
	ck_assert(!rbs_history_keep(h, 5, &c, 32, 0));
	rbs_history_free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rbs_core");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_rbs_fit_calibrated);
	tcase_add_test(tc, test_sender_receiver_fallback);
	tcase_add_test(tc, test_unmatched_and_aging);
	tcase_add_test(tc, test_references);
	tcase_add_test(tc, test_mesh_ages_and_root);
	tcase_add_test(tc, test_history_across_outage);
	tcase_add_test(tc, test_history_store);
	tcase_add_test(tc, test_peer_reboot);
	tcase_add_test(tc, test_alone_pair_uses_sender_receiver);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
