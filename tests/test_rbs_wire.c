/* test_rbs_wire.c — the RBS packet codec: round trips, authentication,
 * every kind of malformed input refused with the right error, and the
 * header peek of the receive filter (rbs_wire_peek_sender). */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "libsync/fit.h"
#include "syncd/rbs_wire.h"
#include "tests/check_run.h"

static const uint8_t KEY[] = "0123456789abcdef-network-key";
static const uint8_t BADKEY[] = "0123456789abcdef-network-kez";

static sync_conv some_conv(int i)
{
	sync_conv c = sync_conv_fixed(1000000000LL * i, 5000000000LL + i, 1.0 + 1e-6 * i);
	c.flags = 0;
	c.n = 40 + (uint32_t)i;
	c.var_c = 1e6;
	c.var_s = 1e-12;
	c.rms = 1200;
	c.xmin = c.x0 - 1000000000;
	c.xmax = c.x0 + 1000000000;
	c.updated_ns = 777; /* never travels */
	return c;
}

static rbs_packet make_advert(rbs_node_news *nodes, rbs_edge *edges)
{
	for (int i = 0; i < 3; i++)
		nodes[i] = (rbs_node_news){(uint32_t)(i + 1), (uint32_t)i, 1000000LL * i};
	for (int i = 0; i < 4; i++) {
		edges[i].origin = (uint32_t)(i + 2);
		edges[i].hops = (uint16_t)i;
		edges[i].age_ns = 250000000LL * i;
		edges[i].from = sync_clock_cpu((uint32_t)(i + 2));
		edges[i].to = i == 3 ? sync_clock_global() : sync_clock_audio((uint32_t)(i + 2), (uint16_t)i);
		edges[i].conv = some_conv(i);
	}
	rbs_packet p = {.type = RBS_ADVERT, .sender = 9, .seq = 77, .root = 2, .nodes = nodes, .n_nodes = 3, .edges = edges, .n_edges = 4};
	return p;
}

START_TEST(test_roundtrip_all_types)
{
	uint8_t buf[RBS_MTU * 2];
	rbs_reception rx[5];
	for (int i = 0; i < 5; i++)
		rx[i] = (rbs_reception){(uint32_t)(10 + i), (uint32_t)(1000 + i), 1234567890123LL + i};
	rbs_node_news nodes[3];
	rbs_edge edges[4];
	rbs_packet in[3] = {
		{.type = RBS_BEACON, .sender = 3, .seq = 0xfffffffeu, .boot = 0x0123456789abcdefULL},
		{.type = RBS_REPORT, .sender = 4, .seq = 5, .rx = rx, .n_rx = 5},
		make_advert(nodes, edges),
	};
	for (int keyed = 0; keyed < 2; keyed++) {
		for (int t = 0; t < 3; t++) {
			const char *why = NULL;
			int n = rbs_wire_encode(&in[t], KEY, keyed ? sizeof KEY - 1 : 0, buf, sizeof buf);
			ck_assert_int_eq(n, (int)rbs_wire_size(&in[t], keyed));
			rbs_packet out;
			ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, KEY, keyed ? sizeof KEY - 1 : 0, &out, &why), 0);
			ck_assert_int_eq(out.type, in[t].type);
			ck_assert_uint_eq(out.sender, in[t].sender);
			ck_assert_uint_eq(out.seq, in[t].seq);
			ck_assert(out.boot == in[t].boot);
			ck_assert_uint_eq(out.n_rx, in[t].n_rx);
			for (size_t i = 0; i < out.n_rx; i++) {
				ck_assert_uint_eq(out.rx[i].sender, rx[i].sender);
				ck_assert_uint_eq(out.rx[i].seq, rx[i].seq);
				ck_assert_int_eq(out.rx[i].t_ns, rx[i].t_ns);
			}
			ck_assert_uint_eq(out.n_nodes, in[t].n_nodes);
			ck_assert_uint_eq(out.n_edges, in[t].n_edges);
			if (t == 2) {
				ck_assert_uint_eq(out.root, 2);
				for (size_t i = 0; i < 3; i++) {
					ck_assert_uint_eq(out.nodes[i].node, nodes[i].node);
					ck_assert_int_eq(out.nodes[i].age_ns, nodes[i].age_ns);
				}
				for (size_t i = 0; i < 4; i++) {
					ck_assert_uint_eq(out.edges[i].origin, edges[i].origin);
					ck_assert_uint_eq(out.edges[i].hops, edges[i].hops);
					ck_assert_int_eq(out.edges[i].age_ns, edges[i].age_ns);
					ck_assert(sync_clock_equal(out.edges[i].from, edges[i].from));
					ck_assert(sync_clock_equal(out.edges[i].to, edges[i].to));
					ck_assert_int_eq(out.edges[i].conv.x0, edges[i].conv.x0);
					ck_assert(out.edges[i].conv.slope == edges[i].conv.slope);
					ck_assert(out.edges[i].conv.var_c == edges[i].conv.var_c);
					ck_assert_int_eq(out.edges[i].conv.updated_ns, 0);
				}
			}
			rbs_packet_clear(&out);
		}
	}
}
END_TEST

START_TEST(test_authentication)
{
	uint8_t buf[RBS_MTU * 2];
	rbs_node_news nodes[3];
	rbs_edge edges[4];
	rbs_packet p = make_advert(nodes, edges), out;
	const char *why = NULL;
	int n = rbs_wire_encode(&p, KEY, sizeof KEY - 1, buf, sizeof buf);
	ck_assert_int_gt(n, 0);
	/* Wrong key: refused. */
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, BADKEY, sizeof BADKEY - 1, &out, &why), -EACCES);
	ck_assert_ptr_null(out.edges);
	/* Every single-bit change anywhere is caught. */
	for (int i = 0; i < n; i++) {
		buf[i] ^= 0x10;
		int rc = rbs_wire_decode(buf, (size_t)n, KEY, sizeof KEY - 1, &out, &why);
		ck_assert_msg(rc < 0, "byte %d altered but accepted", i);
		buf[i] ^= 0x10;
	}
	/* Unauthenticated packet on a keyed network. */
	n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, KEY, sizeof KEY - 1, &out, &why), -EACCES);
	/* A keyed packet is readable by a node without a key (trailer skipped). */
	n = rbs_wire_encode(&p, KEY, sizeof KEY - 1, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, NULL, 0, &out, &why), 0);
	rbs_packet_clear(&out);
}
END_TEST

START_TEST(test_malformed)
{
	uint8_t buf[RBS_MTU * 2];
	rbs_node_news nodes[3];
	rbs_edge edges[4];
	rbs_packet p = make_advert(nodes, edges), out;
	const char *why = NULL;
	int n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	/* Every truncation is refused (size), none crashes. */
	for (int len = 0; len < n; len++) {
		int rc = rbs_wire_decode(buf, (size_t)len, NULL, 0, &out, &why);
		ck_assert_msg(rc == -EMSGSIZE, "length %d: %d (%s)", len, rc, why);
	}
	uint8_t b2[sizeof buf];
	memcpy(b2, buf, (size_t)n);
	b2[4] = 1; /* version 1: the 16-byte header before boot numbers */
	ck_assert_int_eq(rbs_wire_decode(b2, (size_t)n, NULL, 0, &out, &why), -EBADMSG);
	memcpy(b2, buf, (size_t)n);
	b2[0] = 'X'; /* magic */
	ck_assert_int_eq(rbs_wire_decode(b2, (size_t)n, NULL, 0, &out, &why), -EBADMSG);
	memcpy(b2, buf, (size_t)n);
	b2[5] = 9; /* type */
	ck_assert_int_eq(rbs_wire_decode(b2, (size_t)n, NULL, 0, &out, &why), -EBADMSG);
	memcpy(b2, buf, (size_t)n);
	b2[6] = 4; /* unknown flag */
	ck_assert_int_eq(rbs_wire_decode(b2, (size_t)n, NULL, 0, &out, &why), -EBADMSG);
	/* Impossible values: negative age, unknown clock kind, zero slope. */
	edges[1].age_ns = -5;
	n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, NULL, 0, &out, &why), -EINVAL);
	edges[1].age_ns = 5;
	edges[2].to.kind = 7;
	n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, NULL, 0, &out, &why), -EINVAL);
	edges[2].to.kind = SYNC_KIND_CPU;
	edges[3].conv.slope = 0;
	n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, NULL, 0, &out, &why), -EINVAL);
	/* A report with a receive time <= 0, and a beacon with a body. */
	rbs_reception rx = {1, 2, 0};
	rbs_packet r = {.type = RBS_REPORT, .sender = 1, .rx = &rx, .n_rx = 1};
	n = rbs_wire_encode(&r, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, NULL, 0, &out, &why), -EINVAL);
	rbs_packet b = {.type = RBS_BEACON, .sender = 1};
	n = rbs_wire_encode(&b, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n + 3, NULL, 0, &out, &why), -EMSGSIZE);
	/* Encoding refuses the invalid sender and a buffer too small. */
	b.sender = RBS_NO_NODE;
	ck_assert_int_eq(rbs_wire_encode(&b, NULL, 0, buf, sizeof buf), -EINVAL);
	b.sender = 1;
	ck_assert_int_eq(rbs_wire_encode(&b, NULL, 0, buf, 10), -EMSGSIZE);
}
END_TEST

START_TEST(test_random_bytes)
{
	/* Seeded garbage and mutated valid packets: always a clean refusal or a
	 * valid packet, never a crash (ASan run catches overreads). */
	GRand *g = g_rand_new_with_seed(42);
	uint8_t buf[RBS_MTU * 2];
	rbs_node_news nodes[3];
	rbs_edge edges[4];
	rbs_packet p = make_advert(nodes, edges), out;
	int n0 = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	int accepted = 0;
	for (int it = 0; it < 20000; it++) {
		uint8_t b[RBS_MTU * 2];
		size_t len;
		if (it % 2) {
			len = (size_t)g_rand_int_range(g, 0, 200);
			for (size_t i = 0; i < len; i++)
				b[i] = (uint8_t)g_rand_int(g);
			if (len >= 6 && it % 4 == 1) {
				b[0] = 'C', b[1] = 'H', b[2] = 'R', b[3] = 'B', b[4] = 1, b[5] = (uint8_t)(it % 5);
			}
		} else {
			memcpy(b, buf, (size_t)n0);
			len = (size_t)n0;
			for (int k = 0; k < 3; k++)
				b[g_rand_int_range(g, 0, n0)] = (uint8_t)g_rand_int(g);
		}
		const char *why = NULL;
		int rc = rbs_wire_decode(b, len, NULL, 0, &out, &why);
		if (rc == 0) {
			accepted++;
			rbs_packet_clear(&out);
		} else {
			ck_assert_ptr_nonnull(why);
			ck_assert(rc == -EMSGSIZE || rc == -EBADMSG || rc == -EINVAL);
		}
	}
	ck_assert_int_gt(accepted, 0); /* mutations of payload values still decode */
	g_rand_free(g);
}
END_TEST

START_TEST(test_peek_sender)
{
	/* The header's sender without decoding or authenticating; header
	 * faults refused with rbs_wire_decode's codes. */
	uint8_t buf[RBS_MTU * 2];
	uint32_t sender = 0;
	rbs_reception rx = {3, 1, 5};
	rbs_packet r = {.type = RBS_REPORT, .sender = 17, .seq = 4, .rx = &rx, .n_rx = 1}, out;
	int n = rbs_wire_encode(&r, KEY, sizeof KEY - 1, buf, sizeof buf);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(rbs_wire_peek_sender(buf, (size_t)n, &sender), 0);
	ck_assert_uint_eq(sender, 17);
	/* No authentication: a packet under another key still names its sender
	 * (decoding refuses it). */
	const char *why = NULL;
	ck_assert_int_eq(rbs_wire_decode(buf, (size_t)n, BADKEY, sizeof BADKEY - 1, &out, &why), -EACCES);
	sender = 0;
	ck_assert_int_eq(rbs_wire_peek_sender(buf, (size_t)n, &sender), 0);
	ck_assert_uint_eq(sender, 17);
	/* Header only: a body that does not decode does not matter. */
	ck_assert_int_eq(rbs_wire_peek_sender(buf, RBS_HDR, &sender), 0);

	uint8_t b[RBS_HDR];
	memcpy(b, buf, RBS_HDR);
	sender = 99;
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR - 1, &sender), -EMSGSIZE);
	b[0] = 'X';
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EBADMSG);
	memcpy(b, buf, RBS_HDR);
	b[4] = RBS_WIRE_VERSION + 1;
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EBADMSG);
	memcpy(b, buf, RBS_HDR);
	b[5] = 0;
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EBADMSG);
	b[5] = RBS_ADVERT + 1;
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EBADMSG);
	memcpy(b, buf, RBS_HDR);
	b[6] |= 2; /* an unknown flag */
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EBADMSG);
	memcpy(b, buf, RBS_HDR);
	memset(b + 8, 0xff, 4); /* RBS_NO_NODE */
	ck_assert_int_eq(rbs_wire_peek_sender(b, RBS_HDR, &sender), -EINVAL);
	ck_assert_uint_eq(sender, 99); /* untouched on error */

	/* Against the decoder on mutated packets: whatever decodes peeks to
	 * the same sender, and nothing peek refuses decodes. */
	GRand *g = g_rand_new_with_seed(43);
	n = rbs_wire_encode(&r, NULL, 0, buf, sizeof buf);
	for (int it = 0; it < 20000; it++) {
		uint8_t m[RBS_MTU * 2];
		memcpy(m, buf, (size_t)n);
		for (int k = 0; k < 2; k++)
			m[g_rand_int_range(g, 0, RBS_HDR + 4)] ^= (uint8_t)(1u << g_rand_int_range(g, 0, 8));
		size_t len = (size_t)g_rand_int_range(g, n - 2, n + 1);
		int rp = rbs_wire_peek_sender(m, len, &sender);
		int rd = rbs_wire_decode(m, len, NULL, 0, &out, &why);
		if (rd == 0) {
			ck_assert_int_eq(rp, 0);
			ck_assert_uint_eq(sender, out.sender);
			rbs_packet_clear(&out);
		}
		if (rp < 0)
			ck_assert_int_lt(rd, 0);
	}
	g_rand_free(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rbs_wire");
	TCase *tc = tcase_create("codec");
	tcase_add_test(tc, test_roundtrip_all_types);
	tcase_add_test(tc, test_authentication);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_random_bytes);
	tcase_add_test(tc, test_peek_sender);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
