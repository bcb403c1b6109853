/* test_rbs_scope.c — scoped advertisements ([rbs] advert_hops, issue 17):
 * the mesh's hop counts (the fewest of the recent copies, not the
 * freshest copy's), scoped news, and the path to global each node
 * re-advertises (syncd/advert_scope.h).  Pure: no processes, no clocks.
 */
#include <check.h>
#include <glib.h>

#include "libsync/clockid.h"
#include "syncd/advert_scope.h"
#include "syncd/rbs_mesh.h"
#include "tests/check_run.h"

#define S 1000000000LL

static rbs_edge edge(uint32_t origin, uint16_t hops, sync_clock_id a, sync_clock_id b, int64_t age)
{
	rbs_edge e = {origin, hops, age, a, b, sync_conv_fixed(0, 0, 1.0)};
	e.conv.flags = 0;
	e.conv.n = 10;
	return e;
}

static rbs_packet advert(uint32_t sender, rbs_node_news *news, size_t nn, rbs_edge *ed, size_t ne)
{
	rbs_packet p = {.type = RBS_ADVERT, .sender = sender, .root = 1, .nodes = news, .n_nodes = nn, .edges = ed, .n_edges = ne};
	return p;
}

/* The hop count of the learned conversion between a and b. */
static guint32 hops_of(const rbs_mesh *m, sync_clock_id a, sync_clock_id b)
{
	GArray *e = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	GArray *h = g_array_new(FALSE, FALSE, sizeof(guint32));
	rbs_mesh_entries(m, 1, NULL, e, NULL, h);
	guint32 out = UINT32_MAX;
	char *want = rbs_mesh_pair_key(a, b);
	for (guint i = 0; i < e->len; i++) {
		sync_ticker_entry *x = &g_array_index(e, sync_ticker_entry, i);
		char *k = rbs_mesh_pair_key(x->from, x->to);
		if (g_str_equal(k, want))
			out = g_array_index(h, guint32, i);
		g_free(k);
	}
	g_free(want);
	g_array_free(e, TRUE);
	g_array_free(h, TRUE);
	return out;
}

/* A copy relayed one advertisement further looks fresher (the relay's age
 * leaves out its transit), but the conversion is still one hop away: its
 * hop count stays the direct copy's while that keeps coming; a relayed
 * copy alone, past the window, counts as the path it came by. */
START_TEST(test_fewest_recent_hops)
{
	rbs_mesh_cfg mc = {5, 30 * S, 15 * S, 32}; /* window: node_timeout / 3 = 5 s */
	rbs_mesh *m = rbs_mesh_new(&mc);
	int64_t now = 100 * S;
	sync_clock_id a = sync_clock_cpu(4), b = sync_clock_cpu(7);
	rbs_edge direct = edge(4, 0, a, b, 1000000), relayed = edge(4, 1, a, b, 999000);
	rbs_packet p4 = advert(4, NULL, 0, &direct, 1), p6 = advert(6, NULL, 0, &relayed, 1);
	ck_assert_int_eq(rbs_mesh_merge(m, &p4, now), 1);
	ck_assert_uint_eq(hops_of(m, a, b), 1);
	ck_assert_int_eq(rbs_mesh_merge(m, &p6, now), 1); /* fresher: the conversion is replaced */
	ck_assert_uint_eq(hops_of(m, a, b), 1);           /* ... its distance is not */
	for (int k = 1; k <= 4; k++) {
		ck_assert_int_eq(rbs_mesh_merge(m, &p4, now + k * 2 * S), 1);
		ck_assert_int_eq(rbs_mesh_merge(m, &p6, now + k * 2 * S), 1);
		ck_assert_uint_eq(hops_of(m, a, b), 1);
	}
	/* Node 4 no longer reaches us directly: after the window the relayed
	 * copies count. */
	ck_assert_int_eq(rbs_mesh_merge(m, &p6, now + 12 * S), 1);
	ck_assert_uint_eq(hops_of(m, a, b), 1);
	ck_assert_int_eq(rbs_mesh_merge(m, &p6, now + 14 * S), 1);
	ck_assert_uint_eq(hops_of(m, a, b), 2);
	rbs_mesh_free(m);
}
END_TEST

/* News within the scope, and of the nodes kept (the root rule's), only. */
START_TEST(test_scoped_news)
{
	rbs_mesh_cfg mc = {5, 30 * S, 15 * S, 32};
	rbs_mesh *m = rbs_mesh_new(&mc);
	int64_t now = 100 * S;
	/* Node 6 (a neighbour) knows 7 (its neighbour), 8 (two hops from
	 * it) and 1 (the root, far away). */
	rbs_node_news news[] = {{6, 0, 0}, {7, 1, S / 10}, {8, 2, S / 5}, {1, 9, S}};
	rbs_packet p = advert(6, news, G_N_ELEMENTS(news), NULL, 0);
	rbs_mesh_heard(m, 6, now);
	rbs_mesh_merge(m, &p, now);
	size_t n;
	rbs_node_news *all = rbs_mesh_news(m, now, 0, NULL, 0, &n);
	ck_assert_uint_eq(n, 5); /* ourselves and 6, 7, 8, 1 */
	g_free(all);
	uint32_t keep[] = {1, RBS_NO_NODE};
	rbs_node_news *sc = rbs_mesh_news(m, now, 2, keep, G_N_ELEMENTS(keep), &n);
	ck_assert_uint_eq(n, 4); /* 8 is three hops from us */
	gboolean have1 = FALSE;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_ne(sc[i].node, 8);
		if (sc[i].node == 1) {
			have1 = TRUE;
			ck_assert_uint_eq(sc[i].hops, 10);
		}
		if (sc[i].node == 6)
			ck_assert_uint_eq(sc[i].hops, 1);
		if (sc[i].node == 7)
			ck_assert_uint_eq(sc[i].hops, 2);
	}
	ck_assert(have1);
	g_free(sc);
	rbs_mesh_free(m);
}
END_TEST

static void add(GArray *a, sync_clock_id from, sync_clock_id to, uint32_t hops, double rms, int64_t now)
{
	syncd_conversion c = {.origin = from.node, .hops = hops, .age_ns = 0};
	c.e.from = from;
	c.e.to = to;
	c.e.conv = sync_conv_fixed(0, 0, 1.0);
	if (to.kind != SYNC_KIND_GLOBAL) {
		/* A fitted line over the last 60 s, variance rms^2 / n. */
		c.e.conv.flags = 0;
		c.e.conv.n = 30;
		c.e.conv.rms = rms;
		c.e.conv.var_c = rms * rms / 30;
		c.e.conv.var_s = 1e-24;
		c.e.conv.x0 = now;
		c.e.conv.y0 = now;
		c.e.conv.xmin = now - 60 * S;
		c.e.conv.xmax = now;
		c.e.conv.wander = 1e-8;
	}
	c.e.conv.updated_ns = now;
	g_array_append_val(a, c);
}

static gboolean on(GHashTable *route, sync_clock_id a, sync_clock_id b)
{
	char *k = rbs_mesh_pair_key(a, b);
	gboolean r = g_hash_table_contains(route, k);
	g_free(k);
	return r;
}

/* Node 4 at the end of a line 4-3-2-1 (root 1), with a worse parallel
 * path 4-9-1 and a side branch 3-8: its path to global is the line. */
START_TEST(test_route_to_global)
{
	int64_t now = 1000 * S;
	GArray *a = g_array_new(FALSE, FALSE, sizeof(syncd_conversion));
	sync_clock_id c1 = sync_clock_cpu(1), c2 = sync_clock_cpu(2), c3 = sync_clock_cpu(3), c4 = sync_clock_cpu(4),
		      c8 = sync_clock_cpu(8), c9 = sync_clock_cpu(9), g = sync_clock_global();
	add(a, c4, c3, 0, 500, now);
	add(a, c3, c2, 1, 500, now);
	add(a, c2, c1, 2, 500, now);
	add(a, c1, g, 3, 0, now);
	add(a, c4, c9, 0, 5000, now);
	add(a, c9, c1, 1, 5000, now);
	add(a, c3, c8, 1, 500, now);
	guint len;
	GHashTable *route = syncd_scope_route(a, 4, now, &len);
	ck_assert_uint_eq(len, 4);
	ck_assert(on(route, c4, c3) && on(route, c3, c2) && on(route, c2, c1) && on(route, c1, g));
	ck_assert(!on(route, c4, c9) && !on(route, c9, c1) && !on(route, c3, c8));
	/* advert_hops = 2: ours and the neighbours' go, the rest only on the path. */
	const syncd_conversion *v = (const syncd_conversion *)(void *)a->data;
	ck_assert(syncd_scope_keep(&v[0], 2, route));  /* ours */
	ck_assert(syncd_scope_keep(&v[1], 2, route));  /* 1 hop */
	ck_assert(syncd_scope_keep(&v[2], 2, route));  /* 2 hops, on the path */
	ck_assert(syncd_scope_keep(&v[3], 2, route));  /* global, on the path */
	ck_assert(syncd_scope_keep(&v[5], 2, route));  /* 1 hop */
	ck_assert(syncd_scope_keep(&v[6], 2, route));  /* 1 hop */
	ck_assert(!syncd_scope_keep(&v[6], 1, route)); /* not with advert_hops = 1 */
	ck_assert(!syncd_scope_keep(&v[5], 1, route));
	ck_assert(syncd_scope_keep(&v[2], 1, route)); /* the path always */
	g_hash_table_destroy(route);
	/* Without a definition of global there is no path, and nothing beyond
	 * the scope goes. */
	g_array_remove_index(a, 3);
	route = syncd_scope_route(a, 4, now, &len);
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(g_hash_table_size(route), 0);
	g_hash_table_destroy(route);
	g_array_free(a, TRUE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rbs_scope");
	TCase *tc = tcase_create("scope");
	tcase_add_test(tc, test_fewest_recent_hops);
	tcase_add_test(tc, test_scoped_news);
	tcase_add_test(tc, test_route_to_global);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
