/* test_conversions.c — the node's one list of conversions
 * (syncd/conversions.c), read by the ticker (SYNCD_CONV_ALL) and the
 * advertisement (SYNCD_CONV_SHAREABLE): its sources in order, local
 * knowledge taking precedence over learned, the root's definition of
 * global, realtime pairs kept out of advertisements, origins, hops and
 * ages as advertised. */
#include <check.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "libsync/now.h"
#include "syncd/conversions.h"
#include "tests/check_run.h"

#define S_NS 1000000000LL

static sync_conv learned_conv(int64_t x0)
{
	sync_conv c = sync_conv_fixed(x0, x0 + 5, 1.0);
	c.flags = 0;
	c.n = 20;
	c.var_c = 1e4;
	c.var_s = 1e-16;
	c.rms = 100;
	c.xmin = x0 - S_NS;
	c.xmax = x0;
	return c;
}

/* The entry from -> to in a (GArray of syncd_conversion), or NULL. */
static const syncd_conversion *find(GArray *a, sync_clock_id from, sync_clock_id to)
{
	for (guint i = 0; i < a->len; i++) {
		const syncd_conversion *c = &g_array_index(a, syncd_conversion, i);
		if (sync_clock_equal(c->e.from, from) && sync_clock_equal(c->e.to, to))
			return c;
	}
	return NULL;
}

typedef struct {
	syncd_pairs *pairs;
	syncd_root *root;
	rbs_mesh *mesh;
	int64_t now;
} world;

/* Node 1: pairs cpu-realtime and cpu-audio0 fed until 100 s; root of global
 * (unless `remote_root`: it follows node 5); a mesh that learned from node
 * 5's advertisement (received at 101 s) cpu5->audio5:0 (age 0.5 s, 1 hop
 * there), cpu5->realtime5, node 5's global definition, and its own
 * version of our cpu1->audio1:0. */
static void make(world *w, gboolean remote_root)
{
	const char *why = NULL;
	syncd_pairs_cfg pc = {.window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 600 * S_NS, .expire_ns = 120 * S_NS};
	w->pairs = syncd_pairs_new(&pc);
	for (int i = 0; i < 5; i++) {
		int64_t x = (96 + i) * S_NS;
		ck_assert_int_eq(syncd_pairs_observe(w->pairs, sync_clock_cpu(1), sync_clock_realtime(1), x, x + 77 + i % 2,
						     x, &why),
				 0);
		ck_assert_int_eq(syncd_pairs_observe(w->pairs, sync_clock_cpu(1), sync_clock_audio(1, 0), x,
						     (96 + i) * 48000, x, &why),
				 0);
	}
	w->root = syncd_root_new(1, remote_root ? 5 : -1, 3, 0, (syncd_notify){NULL, NULL});
	rbs_mesh_cfg mc = {1, 30 * S_NS, 15 * S_NS, SYNC_GRAPH_MAX_HOPS};
	w->mesh = rbs_mesh_new(&mc);
	w->now = 101 * S_NS;
	rbs_edge e[4] = {
		{5, 1, S_NS / 2, sync_clock_cpu(5), sync_clock_audio(5, 0), learned_conv(90 * S_NS)},
		{5, 0, S_NS / 2, sync_clock_cpu(5), sync_clock_realtime(5), learned_conv(90 * S_NS)},
		{5, 0, 0, sync_clock_cpu(5), sync_clock_global(), sync_conv_fixed(3, 4, 1.0)},
		{5, 0, 0, sync_clock_cpu(1), sync_clock_audio(1, 0), learned_conv(90 * S_NS)},
	};
	rbs_node_news nn = {5, 0, 0};
	rbs_packet adv = {.type = RBS_ADVERT, .sender = 5, .root = 5, .nodes = &nn, .n_nodes = 1, .edges = e, .n_edges = 4};
	ck_assert_int_eq(rbs_mesh_merge(w->mesh, &adv, w->now), 4);
}

static void unmake(world *w)
{
	rbs_mesh_free(w->mesh);
	syncd_root_free(w->root);
	syncd_pairs_free(w->pairs);
}

START_TEST(test_all_for_the_ticker)
{
	world w;
	make(&w, FALSE);
	GArray *a = syncd_conversions(w.pairs, w.root, NULL, w.mesh, SYNCD_CONV_ALL, w.now);
	/* Local pairs first, then our definition of global, then learned. */
	ck_assert_uint_eq(a->len, 5);
	const syncd_conversion *c0 = &g_array_index(a, syncd_conversion, 0);
	const syncd_conversion *c2 = &g_array_index(a, syncd_conversion, 2);
	ck_assert_uint_eq(c0->e.from.node, 1);
	ck_assert_uint_eq(c0->origin, 1);
	ck_assert_uint_eq(c0->hops, 0);
	ck_assert_int_eq(c0->age_ns, S_NS); /* last observation at 100 s */
	ck_assert(sync_clock_equal(c2->e.from, sync_clock_cpu(1)));
	ck_assert(sync_clock_equal(c2->e.to, sync_clock_global()));
	ck_assert(c2->e.conv.flags & SYNC_CONV_FIXED);
	ck_assert_int_eq(c2->age_ns, 0);
	ck_assert_int_eq(c2->e.conv.updated_ns, c2->e.conv.x0);
	ck_assert_ptr_nonnull(find(a, sync_clock_cpu(1), sync_clock_realtime(1)));
	/* Our own cpu1->audio1:0 wins over node 5's copy. */
	const syncd_conversion *au = find(a, sync_clock_cpu(1), sync_clock_audio(1, 0));
	ck_assert_ptr_nonnull(au);
	ck_assert_uint_eq(au->origin, 1);
	ck_assert_uint_eq(au->e.conv.n, 5);
	const syncd_conversion *l = find(a, sync_clock_cpu(5), sync_clock_audio(5, 0));
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->origin, 5);
	ck_assert_uint_eq(l->hops, 2);
	ck_assert_int_eq(l->age_ns, S_NS / 2);
	ck_assert_int_eq(l->e.conv.updated_ns, w.now - S_NS / 2);
	ck_assert_ptr_nonnull(find(a, sync_clock_cpu(5), sync_clock_realtime(5)));
	/* Node 5's global edge is not ours to publish: node 1 is the root. */
	ck_assert_ptr_null(find(a, sync_clock_cpu(5), sync_clock_global()));
	g_array_free(a, TRUE);

	/* The ticker form is the same list. */
	size_t n;
	sync_ticker_entry *te = syncd_conversions_ticker(w.pairs, w.root, NULL, w.mesh, w.now, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert(sync_clock_equal(te[2].to, sync_clock_global()));
	g_free(te);
	/* Without RBS: the pairs and the global definition only. */
	a = syncd_conversions(w.pairs, w.root, NULL, NULL, SYNCD_CONV_ALL, w.now);
	ck_assert_uint_eq(a->len, 3);
	g_array_free(a, TRUE);
	unmake(&w);
}
END_TEST

START_TEST(test_shareable_for_the_advert)
{
	world w;
	make(&w, FALSE);
	GArray *a = syncd_conversions(w.pairs, w.root, NULL, w.mesh, SYNCD_CONV_SHAREABLE, w.now);
	/* No realtime pair, ours or learned. */
	ck_assert_uint_eq(a->len, 3);
	for (guint i = 0; i < a->len; i++) {
		const syncd_conversion *c = &g_array_index(a, syncd_conversion, i);
		ck_assert(c->e.from.kind != SYNC_KIND_REALTIME && c->e.to.kind != SYNC_KIND_REALTIME);
	}
	ck_assert_ptr_nonnull(find(a, sync_clock_cpu(1), sync_clock_audio(1, 0)));
	ck_assert_ptr_nonnull(find(a, sync_clock_cpu(1), sync_clock_global()));
	ck_assert_ptr_nonnull(find(a, sync_clock_cpu(5), sync_clock_audio(5, 0)));
	g_array_free(a, TRUE);
	unmake(&w);
}
END_TEST

START_TEST(test_remote_root)
{
	/* Following node 5: no definition of our own; node 5's global edge is
	 * the one learned, with its origin and hops. */
	world w;
	make(&w, TRUE);
	ck_assert_uint_eq(syncd_root_node(w.root), 5);
	GArray *a = syncd_conversions(w.pairs, w.root, NULL, w.mesh, SYNCD_CONV_SHAREABLE, w.now);
	ck_assert_ptr_null(find(a, sync_clock_cpu(1), sync_clock_global()));
	const syncd_conversion *g = find(a, sync_clock_cpu(5), sync_clock_global());
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->origin, 5);
	ck_assert_uint_eq(g->hops, 1);
	ck_assert_int_eq(g->age_ns, 0);
	ck_assert_uint_eq(a->len, 3);
	g_array_free(a, TRUE);
	unmake(&w);
}
END_TEST

int main(void)
{
	const char *why = NULL;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "test_conversions: %s\n", why);
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("conversions");
	TCase *tc = tcase_create("conversions");
	tcase_add_test(tc, test_all_for_the_ticker);
	tcase_add_test(tc, test_shareable_for_the_advert);
	tcase_add_test(tc, test_remote_root);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
