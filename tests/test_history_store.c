/* test_history_store.c — syncd's pieces of history across a restart
 * (syncd/history_store.h, the export and restore of syncd/history.h,
 * pairs.h and rbs_core.h; docs/clocks.md "Across a restart of syncd").
 *
 * The store: pieces out equal pieces in, bit for bit (values chosen to
 * use every bit: seeded random doubles, extreme integers); every single
 * byte of a file flipped, and every truncation, is refused with a reason;
 * another boot's file (-ESTALE) and another node's (-EXDEV), another
 * version, and files whose every framing is right but whose values are
 * not (a piece of 2 observations, a negative slope, pieces overlapping, a
 * non-finite value, 257 pieces, an RBS pair of another node's cpu) are
 * refused, each with its reason.
 *
 * Through the histories: a local pair's and an RBS pair's pieces exported
 * at a stop, packed, read back and restored into a new syncd's tables are
 * published again exactly as the old syncd published them (the restored
 * pair's ticker entries equal the old one's, q2 included), and a
 * restored local pair converts frames from before the restart, and from
 * inside its downtime, within their stated errors (seeded cards whose
 * rate random-walks), where without the file they are refused.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "libsync/graph.h"
#include "libsync/simwander.h"
#include "libsync/ticker_wire.h"
#include "syncd/history.h"
#include "syncd/history_store.h"
#include "syncd/pairs.h"
#include "syncd/rbs_core.h"
#include "tests/check_run.h"

#define NS 1000000000LL
#define OWNER "boot=e9051cfa-4230-4329-a932-047270a28cdb"
#define NODE 7

/* A piece of a pair starting at x (y units per x unit ~ slope), every
 * double drawn so that all its bits are used. */
static sync_conv piece(GRand *r, int64_t x, int64_t len, double slope, uint32_t flags)
{
	sync_conv c = {0};
	c.x0 = x + len / 2;
	c.y0 = (int64_t)g_rand_int(r) << 30 | g_rand_int(r);
	c.yoff = g_rand_double_range(r, -0.5, 0.5);
	c.slope = slope * (1 + g_rand_double_range(r, -1e-4, 1e-4));
	c.xbar = g_rand_double_range(r, -1e3, 1e3);
	c.var_c = g_rand_double_range(r, 0, 1e6);
	c.var_s = g_rand_double_range(r, 0, 1e-12);
	c.rms = g_rand_double_range(r, 0, 1e4);
	c.wander = g_rand_double_range(r, 0, 1e-14);
	c.xmin = x;
	c.xmax = x + len;
	c.updated_ns = INT64_MAX - g_rand_int(r);
	c.n = 3 + g_rand_int_range(r, 0, 1000);
	c.flags = SYNC_CONV_PIECE | flags;
	return c;
}

/* A store of three local pairs (one with a break, one a lower envelope
 * of audio frames with a q2 span) and two RBS pairs. */
static history_store *sample_store(GRand *r)
{
	history_store *s = history_store_new(OWNER, NODE);
	sync_conv p[40];
	int64_t x = INT64_MAX / 4;
	for (int i = 0; i < 40; i++, x += 300 * NS)
		p[i] = piece(r, x, 64 * NS, 1.0, i == 20 ? SYNC_CONV_BREAK : 0);
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_cpu(NODE), sync_clock_realtime(NODE), SYNC_FIT_MEAN, 1.0,
			  1.0, p, 40);
	for (int i = 0; i < 5; i++)
		p[i] = piece(r, 48000 * 120 * (int64_t)i, 3072, 20833.3, SYNC_CONV_LOWER | (5u << SYNC_CONV_TAU_SHIFT));
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_audio(NODE, 1), sync_clock_cpu(NODE), SYNC_FIT_LOWER,
			  20833.333333333332, 20833.333333333332, p, 5);
	p[0] = piece(r, -5, 10, 1.0, 0);
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_audio(NODE, 0), sync_clock_cpu(NODE), SYNC_FIT_MEAN, 0,
			  20000.5, p, 1);
	for (uint32_t peer = 2; peer < 4; peer++) {
		for (int i = 0; i < 32; i++)
			p[i] = piece(r, 1000 * NS + i * 300 * NS, 30 * NS, 1.0 + peer * 1e-5, 0);
		history_store_add(s, HISTORY_STORE_RBS, sync_clock_cpu(NODE), sync_clock_cpu(peer), SYNC_FIT_MEAN, 1.0, 1.0,
				  p, 32);
	}
	return s;
}

/* Every field of a and b, bit for bit. */
static void assert_identical(const history_store *a, const history_store *b)
{
	ck_assert_str_eq(history_store_owner(a), history_store_owner(b));
	ck_assert_uint_eq(history_store_node(a), history_store_node(b));
	ck_assert_uint_eq(history_store_n_pairs(a), history_store_n_pairs(b));
	for (guint i = 0; i < history_store_n_pairs(a); i++) {
		const history_store_pair *p = history_store_pair_at(a, i), *q = history_store_pair_at(b, i);
		ck_assert_int_eq(p->kind, q->kind);
		ck_assert(sync_clock_equal(p->from, q->from) && sync_clock_equal(p->to, q->to));
		ck_assert_int_eq(p->mode, q->mode);
		ck_assert(memcmp(&p->nominal, &q->nominal, sizeof p->nominal) == 0);
		ck_assert(memcmp(&p->unit_ns, &q->unit_ns, sizeof p->unit_ns) == 0);
		ck_assert_uint_eq(p->pieces->len, q->pieces->len);
		ck_assert_msg(memcmp(p->pieces->data, q->pieces->data, p->pieces->len * sizeof(sync_conv)) == 0,
			      "pair %u: pieces differ", i);
	}
}

/* Unpack len bytes; the code, the reason in why. */
static int unpack(const void *d, size_t len, const char *owner, uint32_t node, history_store **out, char *why,
		  size_t wlen)
{
	*out = NULL;
	return history_store_unpack(d, len, owner, node, out, why, wlen);
}

START_TEST(round_trip_bit_for_bit)
{
	GRand *r = g_rand_new_with_seed(16);
	history_store *s = sample_store(r);
	char why[300] = "";
	GBytes *b = history_store_pack(s, why, sizeof why);
	ck_assert_msg(b != NULL, "%s", why);
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	history_store *t;
	int rc = unpack(d, len, OWNER, NODE, &t, why, sizeof why);
	ck_assert_msg(rc == 0, "%d %s", rc, why);
	assert_identical(s, t);
	ck_assert_uint_eq(history_store_n_pieces(t), 40 + 5 + 1 + 64);
	ck_assert(history_store_same_pieces(s, t));
	/* Packing what was read gives the same bytes. */
	GBytes *b2 = history_store_pack(t, why, sizeof why);
	ck_assert(g_bytes_equal(b, b2));
	/* The same pieces but for q2 and its span: the file is not out of
	 * date; another piece, or another x, makes it so. */
	history_store_pair *q = (history_store_pair *)history_store_pair_at(t, 1);
	sync_conv *c = &g_array_index(q->pieces, sync_conv, 2);
	c->wander *= 2;
	c->flags = (c->flags & ~SYNC_CONV_TAU_MASK) | 7u << SYNC_CONV_TAU_SHIFT;
	ck_assert(history_store_same_pieces(s, t));
	c->xmax++;
	ck_assert(!history_store_same_pieces(s, t));
	ck_assert(!history_store_same_pieces(s, NULL));
	history_store *empty = history_store_new(OWNER, NODE);
	ck_assert(history_store_same_pieces(empty, NULL));
	history_store_free(empty);
	g_bytes_unref(b2);
	history_store_free(t);
	g_bytes_unref(b);
	history_store_free(s);
	g_rand_free(r);
}
END_TEST

/* Every byte flipped, and every prefix: refused, with a reason. */
START_TEST(corrupt_and_truncated_refused)
{
	GRand *r = g_rand_new_with_seed(17);
	history_store *s = history_store_new(OWNER, NODE);
	sync_conv p[3];
	for (int i = 0; i < 3; i++)
		p[i] = piece(r, 100 * NS * i, 50 * NS, 1.0, 0);
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_cpu(NODE), sync_clock_realtime(NODE), SYNC_FIT_MEAN, 1.0,
			  1.0, p, 3);
	history_store_add(s, HISTORY_STORE_RBS, sync_clock_cpu(NODE), sync_clock_cpu(3), SYNC_FIT_MEAN, 1.0, 1.0, p, 2);
	char why[300];
	GBytes *b = history_store_pack(s, why, sizeof why);
	gsize len;
	const void *bd = g_bytes_get_data(b, &len);
	uint8_t *d = g_memdup2(bd, len);
	history_store *t;
	int checksum = 0, framing = 0;
	for (gsize i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			d[i] ^= (uint8_t)(1u << bit);
			why[0] = 0;
			int rc = unpack(d, len, OWNER, NODE, &t, why, sizeof why);
			ck_assert_msg(rc < 0, "byte %zu bit %d flipped: accepted", i, bit);
			ck_assert_msg(t == NULL && *why, "byte %zu: no reason", i);
			checksum += strstr(why, "checksum") != NULL;
			framing += strstr(why, "malformed") != NULL;
			d[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* Most of the file is its body, guarded by the checksum. */
	ck_assert_int_gt(checksum, (int)len);
	ck_assert_int_gt(framing, 0);
	for (gsize n = 0; n < len; n++) {
		why[0] = 0;
		int rc = unpack(d, n, OWNER, NODE, &t, why, sizeof why);
		ck_assert_msg(rc == -EBADMSG && t == NULL && *why, "truncated to %zu of %zu bytes: %d", n, len, rc);
	}
	ck_assert_int_eq(unpack(d, 0, OWNER, NODE, &t, why, sizeof why), -EBADMSG);
	ck_assert_msg(strstr(why, "empty"), "%s", why);
	ck_assert_int_eq(unpack("hello, world\n", 13, OWNER, NODE, &t, why, sizeof why), -EBADMSG);
	ck_assert_msg(strstr(why, "not a syncd history file"), "%s", why);
	ck_assert_int_eq(unpack(d, len, OWNER, NODE, &t, why, sizeof why), 0);
	history_store_free(t);
	g_free(d);
	g_bytes_unref(b);
	history_store_free(s);
	g_rand_free(r);
}
END_TEST

START_TEST(other_boot_and_node_refused)
{
	GRand *r = g_rand_new_with_seed(18);
	history_store *s = sample_store(r);
	char why[300];
	GBytes *b = history_store_pack(s, why, sizeof why);
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	history_store *t;
	int rc = unpack(d, len, "boot=0d6b2e0c-0000-4000-8000-000000000000", NODE, &t, why, sizeof why);
	ck_assert_int_eq(rc, -ESTALE);
	ck_assert_msg(t == NULL && strstr(why, "another boot") && strstr(why, OWNER), "%s", why);
	rc = unpack(d, len, OWNER, NODE + 1, &t, why, sizeof why);
	ck_assert_int_eq(rc, -EXDEV);
	ck_assert_msg(t == NULL && strstr(why, "written by node7, this is node8"), "%s", why);
	/* A simulated node's owner names its clocks too: another world's
	 * file is another owner's. */
	history_store *sim = history_store_new(OWNER " clock=12.5,1000 utc=- world=5", NODE);
	GBytes *bs = history_store_pack(sim, why, sizeof why);
	d = g_bytes_get_data(bs, &len);
	ck_assert_int_eq(unpack(d, len, OWNER " clock=12.5,1000 utc=- world=6", NODE, &t, why, sizeof why), -ESTALE);
	ck_assert_int_eq(unpack(d, len, OWNER " clock=12.5,1000 utc=- world=5", NODE, &t, why, sizeof why), 0);
	ck_assert_uint_eq(history_store_n_pairs(t), 0);
	history_store_free(t);
	g_bytes_unref(bs);
	history_store_free(sim);
	g_bytes_unref(b);
	history_store_free(s);
	g_rand_free(r);
}
END_TEST

/* A file made by hand (the encoding of history_store.h): version, and a
 * pair's fields and pieces as given, its checksum right. */
static GBytes *hand_file(guint16 version, const char *magic, guchar kind, guchar mode, double nominal, double unit,
			 sync_clock_id from, sync_clock_id to, const sync_conv *p, size_t n)
{
	GVariantBuilder pb;
	g_variant_builder_init(&pb, G_VARIANT_TYPE("a(yydday)"));
	size_t size = sync_ticker_size(n);
	uint8_t *buf = g_malloc(size);
	sync_ticker_entry *e = g_new(sync_ticker_entry, n);
	for (size_t i = 0; i < n; i++)
		e[i] = (sync_ticker_entry){from, to, p[i]};
	sync_ticker_head h = {NODE, SYNC_TICKER_NO_ROOT, 0, n};
	sync_ticker_pack(&h, e, buf);
	g_free(e);
	g_variant_builder_add_value(&pb, g_variant_new("(yydd@ay)", kind, mode, nominal, unit,
						       g_variant_new_from_data(G_VARIANT_TYPE_BYTESTRING, buf, size, TRUE,
									       g_free, buf)));
	GVariant *body = g_variant_ref_sink(g_variant_new("(su@a(yydday))", OWNER, (guint32)NODE, g_variant_builder_end(&pb)));
	if (G_BYTE_ORDER == G_BIG_ENDIAN) {
		GVariant *sw = g_variant_ref_sink(g_variant_byteswap(body));
		g_variant_unref(body);
		body = sw;
	}
	GBytes *bb = g_variant_get_data_as_bytes(body);
	GBytes *out = history_store_frame(magic, version, bb);
	g_bytes_unref(bb);
	g_variant_unref(body);
	return out;
}

/* The code and reason of unpacking a hand-made file. */
static int try_hand(GBytes *b, char *why, size_t wlen)
{
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	history_store *t = NULL;
	int rc = unpack(d, len, OWNER, NODE, &t, why, wlen);
	history_store_free(t);
	g_bytes_unref(b);
	return rc;
}

#define EXPECT_REFUSED(want_rc, needle, ...) \
	do { \
		char why_[300] = ""; \
		int rc_ = try_hand(hand_file(__VA_ARGS__), why_, sizeof why_); \
		ck_assert_msg(rc_ == (want_rc) && strstr(why_, needle), "got %d \"%s\", wanted %d \"%s\"", rc_, why_, \
			      want_rc, needle); \
	} while (0)

START_TEST(bad_values_refused)
{
	GRand *r = g_rand_new_with_seed(19);
	sync_conv p[257];
	for (int i = 0; i < 257; i++)
		p[i] = piece(r, 100 * NS * i, 50 * NS, 1.0, 0);
	sync_clock_id cpu = sync_clock_cpu(NODE), rt = sync_clock_realtime(NODE);
	/* The hand-made file itself is right. */
	char why[300];
	ck_assert_int_eq(try_hand(hand_file(1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, p, 3), why, sizeof why), 0);
	EXPECT_REFUSED(-EPROTONOSUPPORT, "version 2", 2, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "not a syncd history file", 1, "chorus-audiod-numbering", 1, 0, 1.0, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "kind", 1, HISTORY_STORE_MAGIC, 3, 0, 1.0, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "mode", 1, HISTORY_STORE_MAGIC, 1, 3, 1.0, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "nominal", 1, HISTORY_STORE_MAGIC, 1, 0, -1.0, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "nominal", 1, HISTORY_STORE_MAGIC, 1, 0, NAN, 1.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "unit", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 0.0, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "unit", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, INFINITY, cpu, rt, p, 3);
	EXPECT_REFUSED(-EBADMSG, "more than 256", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, p, 257);
	EXPECT_REFUSED(-EBADMSG, "no piece", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, p, 0);
	EXPECT_REFUSED(-EBADMSG, "global or utc", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, sync_clock_global(), p, 3);
	EXPECT_REFUSED(-EBADMSG, "global or utc", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, cpu, p, 3);
	EXPECT_REFUSED(-EBADMSG, "RBS pair", 1, HISTORY_STORE_MAGIC, 2, 0, 1.0, 1.0, sync_clock_cpu(3), sync_clock_cpu(4),
		       p, 3);
	EXPECT_REFUSED(-EBADMSG, "RBS pair", 1, HISTORY_STORE_MAGIC, 2, 0, 1.0, 1.0, cpu, rt, p, 3);
	/* The pieces themselves. */
	sync_conv q[3] = {p[0], p[1], p[2]};
	q[1].n = 2;
	EXPECT_REFUSED(-EBADMSG, "piece 1: a piece rests on fewer than 3", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt,
		       q, 3);
	q[1] = p[1];
	q[2].slope = -1;
	EXPECT_REFUSED(-EBADMSG, "piece 2: a piece rests", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	q[2] = p[2];
	q[1].xmin = q[0].xmax - 1;
	EXPECT_REFUSED(-EBADMSG, "begins before the end of the one before", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu,
		       rt, q, 3);
	q[1] = p[1];
	q[0].flags &= ~SYNC_CONV_PIECE;
	EXPECT_REFUSED(-EBADMSG, "piece 0: flags", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	q[0].flags = SYNC_CONV_PIECE | SYNC_CONV_FIXED;
	EXPECT_REFUSED(-EBADMSG, "piece 0: flags", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	q[0].flags = SYNC_CONV_PIECE | SYNC_CONV_LOWER | SYNC_CONV_UPPER;
	EXPECT_REFUSED(-EBADMSG, "piece 0: flags", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	q[0] = p[0];
	q[2].var_c = NAN;
	EXPECT_REFUSED(-EBADMSG, "piece 2: variance", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	q[2] = p[2];
	q[2].wander = INFINITY;
	EXPECT_REFUSED(-EBADMSG, "piece 2: residual RMS or wander", 1, HISTORY_STORE_MAGIC, 1, 0, 1.0, 1.0, cpu, rt, q, 3);
	/* The writer refuses what the reader would. */
	history_store *s = history_store_new(OWNER, NODE);
	history_store_add(s, HISTORY_STORE_LOCAL, cpu, rt, SYNC_FIT_MEAN, 1.0, 1.0, p, 257);
	ck_assert(history_store_pack(s, why, sizeof why) == NULL);
	ck_assert_msg(strstr(why, "257 pieces"), "%s", why);
	history_store_free(s);
	g_rand_free(r);
}
END_TEST

/* syncd_history_restore: checked, bounded, and published as saved. */
START_TEST(history_restore)
{
	GRand *r = g_rand_new_with_seed(20);
	syncd_history_params hp = {4, 3600 * NS, 120 * NS, 1.0};
	syncd_history *h = syncd_history_new(&hp);
	sync_conv p[6];
	for (int i = 0; i < 6; i++) {
		p[i] = piece(r, 1000 * NS + 100 * NS * i, 50 * NS, 1.0, (unsigned)(i + 1) << SYNC_CONV_TAU_SHIFT);
		p[i].updated_ns = p[i].xmax; /* as syncd keeps them (piece() draws any time: no room to age) */
	}
	const char *why = NULL;
	sync_conv bad[2] = {p[1], p[0]};
	ck_assert_int_eq(syncd_history_restore(h, bad, 2, &why), -EINVAL);
	ck_assert_msg(strstr(why, "follow one another"), "%s", why);
	ck_assert_uint_eq(syncd_history_count(h), 0);
	ck_assert_int_eq(syncd_history_restore(h, p, 6, &why), 4); /* the newest max_pieces */
	ck_assert_uint_eq(syncd_history_restored(h), 4);
	ck_assert_int_eq(syncd_history_restore(h, p, 6, &why), -EBUSY);
	/* Published as saved: q2 and its span (its line has no measure). */
	GArray *out = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	ck_assert_uint_eq(syncd_history_entries(h, sync_clock_cpu(1), sync_clock_realtime(1), INT64_MAX, out), 4);
	for (int i = 0; i < 4; i++)
		ck_assert(memcmp(&g_array_index(out, sync_ticker_entry, i).conv, &p[2 + i], sizeof(sync_conv)) == 0);
	GArray *ex = g_array_new(FALSE, FALSE, sizeof(sync_conv));
	ck_assert_uint_eq(syncd_history_export(h, NULL, 0, ex), 4);
	ck_assert(memcmp(ex->data, &p[2], 4 * sizeof(sync_conv)) == 0);
	/* A current fit exported is the piece a close would keep; h is
	 * unchanged. */
	sync_conv cur = piece(r, 2000 * NS, 50 * NS, 1.0, 0);
	cur.flags = SYNC_CONV_LOWER;
	g_array_set_size(ex, 0);
	ck_assert_uint_eq(syncd_history_export(h, &cur, 3e-18, ex), 4);
	ck_assert_uint_eq(syncd_history_count(h), 4);
	const sync_conv *last = &g_array_index(ex, sync_conv, 3);
	ck_assert_int_eq(last->xmin, cur.xmin);
	ck_assert_uint_eq(last->flags, SYNC_CONV_LOWER | SYNC_CONV_PIECE);
	ck_assert(last->wander == 3e-18);
	/* The oldest goes first: the restored count follows. */
	ck_assert_uint_eq(syncd_history_expire(h, p[3].updated_ns + 3600 * NS + 1), 2);
	ck_assert_uint_eq(syncd_history_restored(h), 2);
	GString *d = g_string_new("");
	syncd_history_describe(h, p[5].updated_ns, INT64_MIN, d);
	ck_assert_msg(strstr(d->str, "2 from before syncd restarted") && strstr(d->str, "as saved before syncd restarted"),
		      "%s", d->str);
	g_string_free(d, TRUE);
	g_array_free(ex, TRUE);
	g_array_free(out, TRUE);
	syncd_history_free(h);
	g_rand_free(r);
}
END_TEST

/* ---- through the tables: a restart --------------------------------- */

#define RATE 48000.0
#define PERIOD_NS (1e9 / RATE)
#define OBS_FRAMES 4800 /* one observation per 0.1 s, as audiod forwards them */
#define A0 sync_clock_audio(NODE, 0)
#define CPU sync_clock_cpu(NODE)

static syncd_pairs *new_pairs(void)
{
	syncd_pairs_cfg c = {.window = 64,
			     .reject_k = 3.5,
			     .wander = 1e-8,
			     .max_span_ns = 600 * NS,
			     .expire_ns = 120 * NS,
			     .history_pieces = 32,
			     .history_ns = 3600 * NS,
			     .history_every_ns = 120 * NS};
	return syncd_pairs_new(&c);
}

/* The cpu time (ns) of frame f of a card 30 ppm fast whose rate walks. */
static double truth_ns(const sync_wander *wd, double f)
{
	double t = f / RATE;
	return 1000e9 + t * 1e9 * (1 + 30e-6) + sync_wander_phase_ns(wd, t);
}

/* Feed frames [f0, f1) as audiod does (2 us of least latency), solving
 * once a second as the ticker does; the cpu time of the last. */
static int64_t feed(syncd_pairs *p, const sync_wander *wd, GRand *r, int64_t f0, int64_t f1)
{
	int64_t cpu = 0;
	for (int64_t f = f0; f < f1; f += OBS_FRAMES) {
		cpu = (int64_t)llround(truth_ns(wd, (double)f) - 2000 * log(g_rand_double_range(r, 1e-300, 1)));
		const char *why;
		ck_assert_msg(syncd_pairs_observe(p, A0, CPU, f, cpu, cpu, &why) == 0, "%s", why);
		if ((f / OBS_FRAMES) % 10 == 0) {
			size_t n;
			g_free(syncd_pairs_entries(p, &n));
		}
	}
	return cpu;
}

/* What the ticker publishes of the pairs: current fits, then pieces. */
static GArray *ticker_of(syncd_pairs *p)
{
	size_t n;
	sync_ticker_entry *cur = syncd_pairs_entries(p, &n);
	GArray *all = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	g_array_append_vals(all, cur, (guint)n);
	g_free(cur);
	syncd_pairs_history_entries(p, all);
	return all;
}

/* The pieces in a ticker (new array of sync_ticker_entry). */
static GArray *pieces_of(const GArray *t)
{
	GArray *out = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	for (guint i = 0; i < t->len; i++)
		if (g_array_index(t, sync_ticker_entry, i).conv.flags & SYNC_CONV_PIECE)
			g_array_append_val(out, g_array_index(t, sync_ticker_entry, i));
	return out;
}

/* The bytes a stopping syncd writes, read back as the next one reads. */
static history_store *stop_and_read(syncd_pairs *p, rbs_core *core)
{
	history_store *s = history_store_new(OWNER, NODE);
	syncd_pairs_export(p, TRUE, s);
	if (core)
		rbs_core_export(core, TRUE, s);
	char why[300];
	GBytes *b = history_store_pack(s, why, sizeof why);
	ck_assert_msg(b, "%s", why);
	history_store_free(s);
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	history_store *t = NULL;
	ck_assert_msg(history_store_unpack(d, len, OWNER, NODE, &t, why, sizeof why) == 0, "%s", why);
	g_bytes_unref(b);
	return t;
}

static void restore_all(const history_store *s, syncd_pairs *p, rbs_core *core, int64_t now_ns)
{
	for (guint i = 0; i < history_store_n_pairs(s); i++) {
		const history_store_pair *q = history_store_pair_at(s, i);
		const sync_conv *pc = (const sync_conv *)(void *)q->pieces->data;
		const char *why = "";
		int rc = q->kind == HISTORY_STORE_LOCAL
				 ? syncd_pairs_restore(p, q->from, q->to, q->mode, q->nominal, q->unit_ns, pc,
						       q->pieces->len, now_ns, &why)
				 : rbs_core_restore(core, q->to.node, pc, q->pieces->len, now_ns, &why);
		ck_assert_msg(rc == (int)q->pieces->len, "pair %u: %d (%s)", i, rc, why);
	}
}

/* A restarted syncd publishes the old one's pieces, as the old one did,
 * once the pair is fed again; plus the piece its stop closed. */
START_TEST(pairs_restart_publishes_the_same_pieces)
{
	sync_wander wd = {.rw_ppb = 2, .seed = 3};
	GRand *r = g_rand_new_with_seed(21);
	syncd_pairs *p = new_pairs();
	const char *why;
	ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	int64_t end = (int64_t)(600 * RATE);
	int64_t stop_ns = feed(p, &wd, r, 0, end);
	GArray *before = pieces_of(ticker_of(p));
	ck_assert_uint_ge(before->len, 4);
	history_store *s = stop_and_read(p, NULL);
	ck_assert_uint_eq(history_store_n_pieces(s), before->len + 1); /* and the current fit */
	syncd_pairs_free(p);

	/* The new syncd, 60 s later: the pair is configured and fed again. */
	syncd_pairs *q = new_pairs();
	restore_all(s, q, NULL, stop_ns + 60 * NS);
	GArray *t0 = ticker_of(q);
	ck_assert_uint_eq(t0->len, 0); /* kept for the pair, not published before it is fed */
	ck_assert_int_eq(syncd_pairs_configure(q, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
	feed(q, &wd, r, end + (int64_t)(60 * RATE), end + (int64_t)(90 * RATE));
	GArray *after = pieces_of(ticker_of(q));
	ck_assert_uint_ge(after->len, before->len + 1);
	for (guint i = 0; i < before->len; i++)
		ck_assert_msg(memcmp(&g_array_index(before, sync_ticker_entry, i), &g_array_index(after, sync_ticker_entry, i),
				     sizeof(sync_ticker_entry)) == 0,
			      "piece %u differs after the restart", i);
	/* A pair fitted otherwise does not take them. */
	syncd_pairs *o = new_pairs();
	restore_all(s, o, NULL, stop_ns + 60 * NS);
	ck_assert_int_eq(syncd_pairs_configure(o, A0, CPU, SYNC_FIT_MEAN, PERIOD_NS, &why), 0);
	feed(o, &wd, r, end + (int64_t)(60 * RATE), end + (int64_t)(70 * RATE));
	GArray *other = pieces_of(ticker_of(o));
	for (guint i = 0; i < other->len; i++) /* its own only */
		ck_assert_int_ge(g_array_index(other, sync_ticker_entry, i).conv.xmin, end + (int64_t)(60 * RATE));
	/* Pieces older than history_s go at once. */
	syncd_pairs *late = new_pairs();
	const history_store_pair *hp = history_store_pair_at(s, 0);
	ck_assert_int_eq(syncd_pairs_restore(late, hp->from, hp->to, hp->mode, hp->nominal, hp->unit_ns,
					     (const sync_conv *)(void *)hp->pieces->data, hp->pieces->len,
					     stop_ns + 4000 * NS, &why),
			 0);
	syncd_pairs_free(late);
	g_array_free(other, TRUE);
	syncd_pairs_free(o);
	g_array_free(after, TRUE);
	g_array_free(t0, TRUE);
	syncd_pairs_free(q);
	history_store_free(s);
	g_array_free(before, TRUE);
	g_rand_free(r);
}
END_TEST

/* An RBS pair's pieces: exported with the peer's current fit, restored
 * for the peer, published again once the peer has a fit. */
START_TEST(rbs_restart_keeps_the_peer_pieces)
{
	rbs_core_cfg cfg = {.self = NODE,
			    .window = 16,
			    .reject_k = 3.5,
			    .wander = 1e-8,
			    .max_span_ns = 300 * NS,
			    .hold_ns = 30 * NS,
			    .peer_timeout_ns = 10 * NS,
			    .min_rbs = 8,
			    .history_ns = 3600 * NS,
			    .history_pieces = 32,
			    .history_peers = 16,
			    .history_every_ns = 20 * NS};
	const char *why;
	rbs_core *c = rbs_core_new(&cfg, &why);
	ck_assert_msg(c, "%s", why);
	/* Node 3 hears beacons of node 9 as we do: offset 5 s, 12 ppm. */
	GRand *r = g_rand_new_with_seed(22);
	int64_t t = 100 * NS;
	uint32_t seq = 0;
	GArray *out = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	for (; t < 200 * NS; t += NS, seq++) {
		int64_t mine = t + g_rand_int_range(r, -500, 500);
		rbs_core_heard(c, 9, seq, mine, t);
		rbs_reception rx = {9, seq, (int64_t)(t * (1 + 12e-6)) + 5 * NS + g_rand_int_range(r, -500, 500)};
		rbs_core_report(c, 3, &rx, 1, t);
		rbs_core_touch(c, 3, t);
		g_array_set_size(out, 0);
		rbs_core_entries(c, out);
	}
	g_array_set_size(out, 0);
	rbs_core_history_entries(c, out);
	ck_assert_uint_ge(out->len, 3);
	history_store *s = history_store_new(OWNER, NODE);
	size_t n = rbs_core_export(c, TRUE, s);
	ck_assert_uint_eq(n, out->len + 1);
	ck_assert_uint_eq(history_store_n_pairs(s), 1);
	const history_store_pair *hp = history_store_pair_at(s, 0);
	ck_assert(hp->kind == HISTORY_STORE_RBS && sync_clock_equal(hp->to, sync_clock_cpu(3)));
	for (guint i = 0; i < out->len; i++)
		ck_assert(memcmp(&g_array_index(out, sync_ticker_entry, i).conv, &g_array_index(hp->pieces, sync_conv, i),
				 sizeof(sync_conv)) == 0);
	/* The last: the current fit, ended at its data's end. */
	const sync_conv *last = &g_array_index(hp->pieces, sync_conv, out->len);
	ck_assert_int_eq(last->updated_ns, last->xmax);
	rbs_core *c2 = rbs_core_new(&cfg, &why);
	ck_assert_int_eq(rbs_core_restore(c2, NODE, (const sync_conv *)(void *)hp->pieces->data, hp->pieces->len, t, &why),
			 -EINVAL);
	ck_assert_int_eq(rbs_core_restore(c2, 3, (const sync_conv *)(void *)hp->pieces->data, hp->pieces->len, t, &why),
			 (int)hp->pieces->len);
	ck_assert_int_eq(rbs_core_restore(c2, 3, (const sync_conv *)(void *)hp->pieces->data, hp->pieces->len, t, &why),
			 -EBUSY);
	/* Published once the peer has a fit again, a minute on. */
	for (t += 60 * NS; t < 280 * NS; t += NS, seq++) {
		rbs_core_heard(c2, 9, seq, t, t);
		rbs_reception rx = {9, seq, (int64_t)(t * (1 + 12e-6)) + 5 * NS};
		rbs_core_report(c2, 3, &rx, 1, t);
		rbs_core_touch(c2, 3, t);
		g_array_set_size(out, 0);
		rbs_core_entries(c2, out);
	}
	g_array_set_size(out, 0);
	rbs_core_history_entries(c2, out);
	ck_assert_uint_ge(out->len, hp->pieces->len);
	for (guint i = 0; i < hp->pieces->len; i++) {
		sync_conv a = g_array_index(out, sync_ticker_entry, i).conv, b = g_array_index(hp->pieces, sync_conv, i);
		/* q2 and its span: measured on the new line by now. */
		a.wander = b.wander = 0;
		a.flags &= ~SYNC_CONV_TAU_MASK;
		b.flags &= ~SYNC_CONV_TAU_MASK;
		ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "piece %u differs", i);
	}
	GString *d = g_string_new("");
	rbs_core_describe(c2, t, d);
	ck_assert_msg(strstr(d->str, "from before syncd restarted"), "%s", d->str);
	g_string_free(d, TRUE);
	history_store_free(s);
	rbs_core_free(c2);
	g_array_free(out, TRUE);
	rbs_core_free(c);
	g_rand_free(r);
}
END_TEST

#define SEEDS 30

/* Frames from before a restart (1 to 9 minutes before it) and inside the
 * minute syncd was down, converted by the restarted pair: within their
 * stated errors over seeded walking cards, where a syncd that restarted
 * without the file refuses them.  The RMS z over the clocks is bounded by
 * 1 + 4/sqrt(2 SEEDS) (4 standard errors of an RMS of SEEDS independent
 * z: each clock's probes share one walk), and no |z| exceeds 5. */
START_TEST(restored_pair_converts_the_past_honestly)
{
	double clock_z2 = 0;
	int clocks = 0, beyond5 = 0, probes = 0, refused_without = 0, bridged = 0;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		sync_wander wd = {.rw_ppb = 2, .seed = 9000 + seed};
		GRand *r = g_rand_new_with_seed((guint32)seed);
		syncd_pairs *p = new_pairs();
		const char *why;
		ck_assert_int_eq(syncd_pairs_configure(p, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
		int64_t end = (int64_t)(720 * RATE), back = end + (int64_t)(60 * RATE);
		int64_t stop_ns = feed(p, &wd, r, 0, end);
		history_store *s = stop_and_read(p, NULL);
		syncd_pairs_free(p);
		for (int with = 0; with < 2; with++) {
			syncd_pairs *q = new_pairs();
			if (with)
				restore_all(s, q, NULL, stop_ns + 60 * NS);
			ck_assert_int_eq(syncd_pairs_configure(q, A0, CPU, SYNC_FIT_LOWER, PERIOD_NS, &why), 0);
			int64_t now = feed(q, &wd, r, back, back + (int64_t)(180 * RATE));
			GArray *t = ticker_of(q);
			sync_graph_params gp;
			sync_graph_params_default(&gp);
			gp.max_age_ns = 0;
			sync_graph *g = sync_graph_new(&gp);
			size_t skipped;
			char buf[300] = "";
			sync_ticker_entries_to_graph((sync_ticker_entry *)(void *)t->data, t->len, g, &skipped, buf, sizeof buf);
			ck_assert_msg(skipped == 0, "%s", buf);
			double zz = 0;
			int nz = 0;
			for (int k = 0; k < 10; k++) {
				/* 9 minutes to 1 before the stop, and 10 s after it
				 * (syncd down; without the file that one is the new
				 * fit's line extrapolated, within the tolerance). */
				double at = (k < 9 ? -540 + 60.0 * k : 10) + g_rand_double(r) * 5;
				int64_t f = end + (int64_t)(at * RATE);
				sync_graph_result res;
				int rc = sync_graph_convert(g, A0, CPU, sync_tval_of(f), now, &res, buf, sizeof buf);
				if (!with) {
					refused_without += rc < 0 && k < 9;
					continue;
				}
				ck_assert_msg(rc == 0, "seed %" G_GUINT64_FORMAT " frame %.0f s from the stop refused: %s", seed,
					      at, buf);
				double z = ((double)res.value.i + res.value.f - truth_ns(&wd, (double)f)) / sqrt(res.var);
				beyond5 += fabs(z) > 5;
				bridged += (res.flags & SYNC_GRAPH_BRIDGED) != 0;
				zz += z * z;
				nz++;
			}
			if (with && nz) {
				clock_z2 += zz / nz;
				clocks++;
				probes += nz;
			}
			sync_graph_free(g);
			g_array_free(t, TRUE);
			syncd_pairs_free(q);
		}
		history_store_free(s);
		g_rand_free(r);
	}
	double rms = sqrt(clock_z2 / clocks), d = 4.0 / sqrt(2.0 * SEEDS);
	fprintf(stderr, "restored: %d probes (%d bridged), rms z %.3f, %d beyond 5; without the file %d of %d refused\n",
		probes, bridged, rms, beyond5, refused_without, SEEDS * 9);
	ck_assert_int_eq(probes, SEEDS * 10);
	ck_assert_int_eq(beyond5, 0);
	ck_assert_int_gt(bridged, 0);
	ck_assert_msg(rms < 1 + d, "rms z %.3f above 1 + %.3f", rms, d);
	ck_assert_int_eq(refused_without, SEEDS * 9);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("history_store");
	TCase *tc = tcase_create("store");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, round_trip_bit_for_bit);
	tcase_add_test(tc, corrupt_and_truncated_refused);
	tcase_add_test(tc, other_boot_and_node_refused);
	tcase_add_test(tc, bad_values_refused);
	tcase_add_test(tc, history_restore);
	tcase_add_test(tc, pairs_restart_publishes_the_same_pieces);
	tcase_add_test(tc, rbs_restart_keeps_the_peer_pieces);
	tcase_add_test(tc, restored_pair_converts_the_past_honestly);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
