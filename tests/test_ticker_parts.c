/* test_ticker_parts.c — the ticker in parts (libsync/ticker_wire.h,
 * ticker_asm.h; syncd/ticker_store.h): a snapshot of 3000 conversions
 * (360,000 bytes, beyond libdev's 131,072-byte message) through syncd's
 * store and the reader's assembler, bit for bit; malformed, truncated,
 * out-of-order and stale parts refused with their reason while the
 * assembly in progress is kept; the store's epochs, and the one-part
 * helpers' refusal of a ticker in several parts. */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <string.h>

#include "libdev/wire.h"
#include "libsync/ticker_asm.h"
#include "libsync/ticker_wire.h"
#include "syncd/ticker_store.h"
#include "tests/check_run.h"

#define S_NS 1000000000LL

/* Entry k: node 1's cpu -> node k+2's cpu, a fitted line of its own. */
static sync_ticker_entry entry(size_t k)
{
	sync_ticker_entry e = {sync_clock_cpu(1), sync_clock_cpu((uint32_t)k + 2), sync_conv_fixed(100 * S_NS, 100 * S_NS + (int64_t)k * 1000, 1.0 + (double)k * 1e-9)};
	e.conv.flags = 0;
	e.conv.n = 20 + (uint32_t)(k % 40);
	e.conv.var_c = 1e4 + (double)k;
	e.conv.var_s = 1e-16;
	e.conv.rms = 100;
	e.conv.xbar = -0.5 * S_NS;
	e.conv.xmin = 99 * S_NS;
	e.conv.xmax = 100 * S_NS;
	e.conv.updated_ns = 100 * S_NS;
	return e;
}

static sync_ticker_entry *entries(size_t n)
{
	sync_ticker_entry *e = g_new(sync_ticker_entry, n);
	for (size_t k = 0; k < n; k++)
		e[k] = entry(k);
	return e;
}

static const sync_ticker_head HEAD = {7, 1, 100 * S_NS, 0};

/* The store's part of `epoch` from `first` (must succeed). */
static GByteArray *part(syncd_ticker_store *st, uint64_t epoch, size_t first)
{
	GByteArray *b = g_byte_array_new();
	char why[200];
	int rc = syncd_ticker_store_part(st, epoch, first, b, why, sizeof why);
	ck_assert_msg(rc == 0, "part of epoch %" G_GUINT64_FORMAT " at %zu: %s", epoch, first, why);
	return b;
}

/* Assemble the newest snapshot of st as a reader does; returns the parts. */
static int assemble(syncd_ticker_store *st, sync_ticker_asm *a, size_t *largest)
{
	char why[200];
	int parts = 0, rc = 0;
	*largest = 0;
	do {
		GByteArray *b = part(st, parts ? sync_ticker_asm_epoch(a) : 0, parts ? sync_ticker_asm_next(a) : 0);
		*largest = MAX(*largest, b->len);
		rc = sync_ticker_asm_add(a, b->data, b->len, why, sizeof why);
		ck_assert_msg(rc >= 0, "part %d: %s", parts, why);
		g_byte_array_unref(b);
		parts++;
	} while (rc == 0);
	return parts;
}

/* Both sides' packed bytes, which carry every field of the entry. */
static void same_entry(const sync_ticker_entry *a, const sync_ticker_entry *b, size_t i)
{
	uint8_t pa[SYNC_TICKER_ENTRY], pb[SYNC_TICKER_ENTRY];
	sync_ticker_pack_entry(a, pa);
	sync_ticker_pack_entry(b, pb);
	ck_assert_msg(memcmp(pa, pb, sizeof pa) == 0, "entry %zu differs after the round trip", i);
}

static void round_trip(size_t n, size_t part_entries)
{
	syncd_ticker_store *st = syncd_ticker_store_new(4, part_entries);
	sync_ticker_entry *e = entries(n);
	ck_assert_uint_eq(syncd_ticker_store_take(st, 1, &HEAD, e, n), 1);
	sync_ticker_asm *a = sync_ticker_asm_new();
	size_t largest;
	int parts = assemble(st, a, &largest);
	size_t per = MIN(part_entries, SYNC_TICKER_PART_MAX);
	ck_assert_int_eq(parts, n ? (int)((n + per - 1) / per) : 1);
	ck_assert_uint_le(largest, DEV_WIRE_MAX_PAYLOAD);
	ck_assert(sync_ticker_asm_complete(a));
	const sync_ticker_head *h = sync_ticker_asm_head(a);
	ck_assert_uint_eq(h->count, n);
	ck_assert_uint_eq(h->node, HEAD.node);
	ck_assert_uint_eq(h->root, HEAD.root);
	ck_assert_int_eq(h->now_ns, HEAD.now_ns);
	size_t got;
	const sync_ticker_entry *r = sync_ticker_asm_entries(a, &got);
	ck_assert_uint_eq(got, n);
	ck_assert_uint_eq(sync_ticker_asm_skipped(a, NULL), 0);
	for (size_t i = 0; i < n; i++)
		same_entry(&e[i], &r[i], i);

	/* The reassembled graph converts exactly as one built from the
	 * original entries (same inputs, same arithmetic). */
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g0 = sync_graph_new(&gp), *g1 = sync_graph_new(&gp);
	char why[200];
	ck_assert_int_eq(sync_ticker_entries_to_graph(e, n, g0, NULL, why, sizeof why), (int)n);
	ck_assert_int_eq(sync_ticker_entries_to_graph(r, got, g1, NULL, why, sizeof why), (int)n);
	for (size_t k = 0; k < n; k += MAX(1, n / 7)) {
		sync_graph_result x, y;
		sync_tval t = sync_tval_of(100 * S_NS - S_NS / 3);
		int rx = sync_graph_convert(g0, sync_clock_cpu(1), sync_clock_cpu((uint32_t)k + 2), t, 100 * S_NS, &x, why, sizeof why);
		ck_assert_msg(rx == 0, "entry %zu: %s", k, why);
		ck_assert_int_eq(sync_graph_convert(g1, sync_clock_cpu(1), sync_clock_cpu((uint32_t)k + 2), t, 100 * S_NS, &y, why, sizeof why), 0);
		ck_assert_int_eq(x.value.i, y.value.i);
		ck_assert(x.value.f == y.value.f && x.var == y.var && x.hops == 1 && y.hops == 1);
	}
	sync_graph_free(g0);
	sync_graph_free(g1);
	sync_ticker_asm_free(a);
	g_free(e);
	syncd_ticker_store_free(st);
}

START_TEST(test_3000_in_parts)
{
	/* The snapshot alone is 2.7 times libdev's largest message. */
	ck_assert_uint_gt(3000 * SYNC_TICKER_ENTRY, DEV_WIRE_MAX_MSG);
	round_trip(3000, SYNC_TICKER_PART_MAX);
}
END_TEST

START_TEST(test_odd_part_sizes)
{
	round_trip(3000, 7);    /* 429 parts, the last of 4 */
	round_trip(1000, 1000); /* exactly one full part */
	round_trip(1001, 1000); /* one entry over */
	round_trip(0, 1000);    /* an empty ticker is one empty part */
	round_trip(50, 5000);   /* parts are never above the maximum */
}
END_TEST

/* A 3-part snapshot of 25 entries (parts of 10) from a store. */
typedef struct {
	syncd_ticker_store *st;
	GByteArray *p[3];
} three;

static three make_three(size_t keep)
{
	three t = {syncd_ticker_store_new((unsigned)keep, 10), {NULL}};
	sync_ticker_entry *e = entries(25);
	syncd_ticker_store_take(t.st, 1, &HEAD, e, 25);
	g_free(e);
	for (int i = 0; i < 3; i++)
		t.p[i] = part(t.st, 1, (size_t)i * 10);
	return t;
}

static void free_three(three *t)
{
	for (int i = 0; i < 3; i++)
		g_byte_array_unref(t->p[i]);
	syncd_ticker_store_free(t->st);
}

/* a refuses buf with `err` and a reason containing `says`; its assembly in
 * progress (next entry `next`) is kept. */
static void refused(sync_ticker_asm *a, const uint8_t *buf, size_t len, int err, const char *says, size_t next)
{
	char why[200] = "";
	int rc = sync_ticker_asm_add(a, buf, len, why, sizeof why);
	ck_assert_msg(rc == err, "expected %d, got %d (%s)", err, rc, why);
	ck_assert_msg(strstr(why, says) != NULL, "reason \"%s\" does not say \"%s\"", why, says);
	ck_assert_uint_eq(sync_ticker_asm_next(a), next);
}

START_TEST(test_malformed_parts)
{
	three t = make_three(4);
	sync_ticker_asm *a = sync_ticker_asm_new();
	char why[200];
	ck_assert_int_eq(sync_ticker_asm_add(a, t.p[0]->data, t.p[0]->len, why, sizeof why), 0);
	ck_assert_uint_eq(sync_ticker_asm_next(a), 10);
	GByteArray *b = g_byte_array_new();
	g_byte_array_append(b, t.p[1]->data, t.p[1]->len);

	refused(a, b->data, b->len - 1, -EMSGSIZE, "truncated", 10);            /* one byte short */
	refused(a, b->data, b->len - SYNC_TICKER_ENTRY, -EMSGSIZE, "size", 10); /* one entry short */
	refused(a, b->data, SYNC_TICKER_HDR - 1, -EMSGSIZE, "shorter than its header", 10);
	refused(a, b->data, 3, -EMSGSIZE, "shorter", 10);
	b->data[0] ^= 1;
	refused(a, b->data, b->len, -EBADMSG, "magic", 10);
	b->data[0] ^= 1;
	b->data[4] = 1; /* version 1: an older syncd's one-message ticker */
	refused(a, b->data, b->len, -EBADMSG, "version 1", 10);
	b->data[4] = 3;
	refused(a, b->data, b->len, -EBADMSG, "newer", 10);
	b->data[4] = SYNC_TICKER_VERSION;
	b->data[6] = 1;
	refused(a, b->data, b->len, -EBADMSG, "flags", 10);
	b->data[6] = 0;
	b->data[36] = 20; /* first 20 + 10 entries > total 25 */
	refused(a, b->data, b->len, -EMSGSIZE, "outside its snapshot", 10);
	b->data[36] = 10;
	memset(b->data + 24, 0, 8); /* epoch 0 */
	refused(a, b->data, b->len, -EBADMSG, "epoch 0", 10);
	g_byte_array_unref(b);

	/* Out of order: the third part before the second. */
	refused(a, t.p[2]->data, t.p[2]->len, -EPROTO, "entry 10 of 25 was wanted", 10);

	/* A malformed entry inside a good part is skipped and counted. */
	b = g_byte_array_new();
	g_byte_array_append(b, t.p[1]->data, t.p[1]->len);
	b->data[SYNC_TICKER_HDR + 3 * SYNC_TICKER_ENTRY + 4] = 9; /* entry 13's from kind */
	ck_assert_int_eq(sync_ticker_asm_add(a, b->data, b->len, why, sizeof why), 0);
	g_byte_array_unref(b);
	ck_assert_int_eq(sync_ticker_asm_add(a, t.p[2]->data, t.p[2]->len, why, sizeof why), 1);
	const char *bad;
	ck_assert_uint_eq(sync_ticker_asm_skipped(a, &bad), 1);
	ck_assert_msg(strstr(bad, "entry 13") && strstr(bad, "clock kind"), "%s", bad);
	size_t n;
	sync_ticker_asm_entries(a, &n);
	ck_assert_uint_eq(n, 24);
	sync_ticker_asm_free(a);
	free_three(&t);
}
END_TEST

START_TEST(test_epochs_never_mix)
{
	three t = make_three(2);
	sync_ticker_asm *a = sync_ticker_asm_new();
	char why[200];
	ck_assert_int_eq(sync_ticker_asm_add(a, t.p[0]->data, t.p[0]->len, why, sizeof why), 0);
	/* Two newer snapshots: epoch 1 is dropped (keep 2). */
	sync_ticker_entry *e = entries(25);
	ck_assert_uint_eq(syncd_ticker_store_take(t.st, 2, &HEAD, e, 25), 2);
	ck_assert_uint_eq(syncd_ticker_store_take(t.st, 3, &HEAD, e, 25), 3);
	g_free(e);
	GByteArray *b = g_byte_array_new();
	ck_assert_int_eq(syncd_ticker_store_part(t.st, 1, 10, b, why, sizeof why), -ESTALE);
	ck_assert_msg(strstr(why, "epoch 1 is no longer held") && strstr(why, "newest is 3"), "%s", why);
	/* A later part of epoch 3 does not continue epoch 1. */
	ck_assert_int_eq(syncd_ticker_store_part(t.st, 3, 10, b, why, sizeof why), 0);
	refused(a, b->data, b->len, -ESTALE, "epoch 3 while assembling epoch 1", 10);
	g_byte_array_set_size(b, 0);
	/* The newest from entry 0 starts over; then its later parts fit. */
	ck_assert_int_eq(syncd_ticker_store_part(t.st, 0, 0, b, why, sizeof why), 0);
	ck_assert_int_eq(sync_ticker_asm_add(a, b->data, b->len, why, sizeof why), 0);
	ck_assert_uint_eq(sync_ticker_asm_epoch(a), 3);
	/* A late answer for epoch 1 (still in flight) is refused as stale. */
	refused(a, t.p[1]->data, t.p[1]->len, -ESTALE, "while assembling epoch 3", 10);
	g_byte_array_unref(b);
	sync_ticker_asm_free(a);
	free_three(&t);
}
END_TEST

START_TEST(test_store)
{
	syncd_ticker_store *st = syncd_ticker_store_new(3, 10);
	GByteArray *b = g_byte_array_new();
	char why[200];
	ck_assert_int_eq(syncd_ticker_store_part(st, 0, 0, b, why, sizeof why), -ENOENT);
	ck_assert(!syncd_ticker_store_fresh(st, 1, 100 * S_NS, S_NS));
	sync_ticker_entry *e = entries(25);
	syncd_ticker_store_take(st, 5, &HEAD, e, 25);
	g_free(e);
	/* Fresh while the state generation holds and the snapshot is young. */
	ck_assert(syncd_ticker_store_fresh(st, 5, HEAD.now_ns + S_NS / 2, S_NS));
	ck_assert(!syncd_ticker_store_fresh(st, 6, HEAD.now_ns + S_NS / 2, S_NS));
	ck_assert(!syncd_ticker_store_fresh(st, 5, HEAD.now_ns + 2 * S_NS, S_NS));
	ck_assert_int_eq(syncd_ticker_store_part(st, 1, 26, b, why, sizeof why), -ERANGE);
	ck_assert_int_eq(syncd_ticker_store_part(st, 1, 25, b, why, sizeof why), -ERANGE);
	ck_assert_msg(strstr(why, "has 25 entries"), "%s", why);
	ck_assert_uint_eq(b->len, 0);
	ck_assert_int_eq(syncd_ticker_store_part(st, 1, 20, b, why, sizeof why), 0);
	ck_assert_uint_eq(b->len, sync_ticker_part_size(5));
	ck_assert_uint_eq(syncd_ticker_store_epoch(st), 1);
	g_byte_array_unref(b);
	syncd_ticker_store_free(st);
	syncd_ticker_store_free(NULL);
	sync_ticker_asm_free(NULL);
}
END_TEST

START_TEST(test_requests)
{
	uint8_t buf[SYNC_TICKER_REQ];
	sync_ticker_req r = {0x123456789abcULL, 4000}, q;
	const char *why;
	sync_ticker_pack_req(&r, buf);
	ck_assert_int_eq(sync_ticker_unpack_req(buf, sizeof buf, &q, &why), 0);
	ck_assert(q.epoch == r.epoch && q.first == r.first);
	ck_assert_int_eq(sync_ticker_unpack_req(buf, sizeof buf - 1, &q, &why), -EMSGSIZE);
	buf[4] = 1;
	ck_assert_int_eq(sync_ticker_unpack_req(buf, sizeof buf, &q, &why), -EBADMSG);
	ck_assert_msg(strstr(why, "version-2"), "%s", why);
}
END_TEST

START_TEST(test_one_part_helpers)
{
	/* A one-part ticker reads with the old helpers ... */
	sync_ticker_entry *e = entries(30);
	sync_ticker_head h = HEAD;
	h.count = 30;
	uint8_t *buf = g_malloc(sync_ticker_size(30));
	ck_assert_uint_eq(sync_ticker_pack(&h, e, buf), sync_ticker_size(30));
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g = sync_graph_new(&gp);
	sync_ticker_head got;
	char why[200];
	ck_assert_int_eq(sync_ticker_to_graph(buf, sync_ticker_size(30), g, &got, NULL, why, sizeof why), 30);
	ck_assert_uint_eq(got.count, 30);
	g_free(buf);
	/* ... and the first part of a larger one is refused by them, saying
	 * what to use instead. */
	syncd_ticker_store *st = syncd_ticker_store_new(1, 10);
	syncd_ticker_store_take(st, 1, &HEAD, e, 30);
	GByteArray *b = part(st, 0, 0);
	ck_assert_int_eq(sync_ticker_to_graph(b->data, b->len, g, &got, NULL, why, sizeof why), -EMSGSIZE);
	ck_assert_msg(strstr(why, "several parts"), "%s", why);
	g_byte_array_unref(b);
	syncd_ticker_store_free(st);
	sync_graph_free(g);
	g_free(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ticker_parts");
	TCase *tc = tcase_create("parts");
	tcase_add_test(tc, test_3000_in_parts);
	tcase_add_test(tc, test_odd_part_sizes);
	tcase_add_test(tc, test_malformed_parts);
	tcase_add_test(tc, test_epochs_never_mix);
	tcase_add_test(tc, test_store);
	tcase_add_test(tc, test_requests);
	tcase_add_test(tc, test_one_part_helpers);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
