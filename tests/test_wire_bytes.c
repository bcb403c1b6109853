/* test_wire_bytes.c — the wire formats' exact bytes (issue 20 item 2): a
 * known message of each codec encoded and compared with its bytes as
 * written down here, then those bytes decoded back to the known values.  A
 * round trip alone passes on a big-endian host even when a codec writes
 * host order, so a node of one byte order would not understand one of the
 * other; fixed bytes catch that.  The bytes are the little-endian layouts
 * of docs/protocol.md (libdev messages and their stream framing, RBS
 * packets, the ticker's parts and entries, packed conversions),
 * apps/fft/frames.h (fft frames) and apps/dsp/sample.h (audio samples).  `make check-be` runs this on s390x.
 * kpatch's records are not here: they are the module's native struct,
 * read on the machine that wrote them (kpatch/chorus_kpatch.h). */
#include <check.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/sample.h"
#include "apps/fft/frames.h"
#include "libdev/frame.h"
#include "libdev/wire.h"
#include "libsync/conv.h"
#include "libsync/ticker_wire.h"
#include "syncd/rbs_wire.h"
#include "tests/check_run.h"

/* Fails naming both when the len bytes at p are not the hex string want
 * (spaces in want are ignored). */
static void expect_hex(const void *p, size_t len, const char *want, const char *what)
{
	GString *got = g_string_new(NULL);
	GString *w = g_string_new(NULL);
	for (size_t i = 0; i < len; i++)
		g_string_append_printf(got, "%02x", ((const uint8_t *)p)[i]);
	for (const char *c = want; *c; c++)
		if (*c != ' ')
			g_string_append_c(w, *c);
	ck_assert_msg(!strcmp(got->str, w->str), "%s: bytes\n  got  %s\n  want %s", what, got->str, w->str);
	g_string_free(got, TRUE);
	g_string_free(w, TRUE);
}

/* The conversion every codec below carries: fields of distinct bytes. */
static sync_conv known_conv(void)
{
	sync_conv c = sync_conv_fixed(0x0102030405060708LL, -2, 1.5);
	c.yoff = 0.25;
	c.xbar = -3.0;
	c.var_c = 1e-6;
	c.var_s = 2e-20;
	c.rms = 12.5;
	c.wander = 1e-7;
	c.xmin = -100;
	c.xmax = 0x1122334455667788LL;
	c.updated_ns = 123456789;
	c.n = 0xa1b2c3d4u;
	c.flags = SYNC_CONV_LOWER;
	return c;
}

static void check_known_conv(const sync_conv *c)
{
	ck_assert_int_eq(c->x0, 0x0102030405060708LL);
	ck_assert_int_eq(c->y0, -2);
	ck_assert(c->slope == 1.5 && c->yoff == 0.25 && c->xbar == -3.0 && c->var_c == 1e-6 && c->var_s == 2e-20);
	ck_assert(c->rms == 12.5 && c->wander == 1e-7);
	ck_assert_int_eq(c->xmin, -100);
	ck_assert_int_eq(c->xmax, 0x1122334455667788LL);
	ck_assert_int_eq(c->updated_ns, 123456789);
	ck_assert_uint_eq(c->n, 0xa1b2c3d4u);
	ck_assert_uint_eq(c->flags, SYNC_CONV_LOWER);
}

#define CONV_HEX \
	"0807060504030201 feffffffffffffff 000000000000d03f 000000000000f83f 00000000000008c0 8dedb5a0f7c6b03e " \
	"2342920ca19cd73b 0000000000002940 48afbc9af2d77a3e 9cffffffffffffff 8877665544332211 15cd5b0700000000 " \
	"d4c3b2a1 01000000"

/* magic "CH", version 1, type CMD_REPLY, flags, payload length, id; status -5, "hi". */
#define LIBDEV_HEX "4348 01 21 0000 0000 06000000 04030201 fbffffff 6869"
/* The frame: the message's length (22) first. */
#define FRAME_LEN_HEX "16000000"
/* magic "CHRB", version 2, type REPORT, flags, sender, seq, boot, count;
 * each reception: sender, seq, t_ns. */
#define RBS_HEX \
	"43485242 02 02 0000 03000000 0d0c0b0a 8877665544332211 02000000 07000000 04030201 0807060504030201 " \
	"09000000 01000000 0000000000010000"

START_TEST(test_libdev_message)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_CMD_REPLY, 0, 0x01020304u);
	dev_wire_u32(b, (uint32_t)-5);
	dev_wire_bytes(b, "hi", 2);
	ck_assert_int_eq(dev_wire_end(b), 0);
	expect_hex(b->data, b->len, LIBDEV_HEX, "libdev message");
	dev_msg m;
	const char *why = NULL;
	ck_assert_msg(dev_wire_decode(b->data, b->len, &m, &why) == 0, "%s", why);
	ck_assert_uint_eq(m.type, DEV_MSG_CMD_REPLY);
	ck_assert_uint_eq(m.id, 0x01020304u);
	ck_assert_int_eq(m.u.reply.status, -5);
	ck_assert_uint_eq(m.u.reply.len, 2);
	ck_assert(!memcmp(m.u.reply.data, "hi", 2));
	/* Its stream framing (chorus-proxy's TCP): a length before it. */
	GByteArray *f = g_byte_array_new();
	dev_frame_append(f, b->data, b->len);
	dev_framer fr;
	dev_framer_init(&fr);
	dev_framer_feed(&fr, f->data, f->len);
	const uint8_t *msg;
	size_t len;
	ck_assert_int_eq(dev_framer_next(&fr, &msg, &len, &why), 1);
	ck_assert_uint_eq(len, b->len);
	ck_assert(!memcmp(msg, b->data, len));
	dev_framer_clear(&fr);
	expect_hex(f->data, 4, FRAME_LEN_HEX, "frame length");
	g_byte_array_free(f, TRUE);
	g_byte_array_free(b, TRUE);
}
END_TEST

START_TEST(test_conv_packed)
{
	sync_conv c = known_conv(), d;
	uint8_t buf[SYNC_CONV_WIRE_SIZE];
	ck_assert_uint_eq(sync_conv_pack(&c, buf), SYNC_CONV_WIRE_SIZE);
	expect_hex(buf, sizeof buf, CONV_HEX, "packed conversion");
	const char *why = NULL;
	ck_assert_int_eq(sync_conv_unpack(buf, sizeof buf, &d, &why), 0);
	check_known_conv(&d);
}
END_TEST

START_TEST(test_rbs_report)
{
	rbs_reception rx[2] = {{.sender = 7, .seq = 0x01020304u, .t_ns = 0x0102030405060708LL}, {.sender = 9, .seq = 1, .t_ns = 1LL << 40}};
	rbs_packet p = {.type = RBS_REPORT, .sender = 3, .seq = 0x0a0b0c0du, .boot = 0x1122334455667788ULL};
	p.n_rx = 2;
	p.rx = rx;
	uint8_t buf[256];
	int n = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
	ck_assert_int_eq(n, (int)rbs_wire_size(&p, 0));
	expect_hex(buf, (size_t)n, RBS_HEX, "RBS report");
	rbs_packet d;
	const char *why = NULL;
	ck_assert_msg(rbs_wire_decode(buf, (size_t)n, NULL, 0, &d, &why) == 0, "%s", why);
	ck_assert_uint_eq(d.sender, 3);
	ck_assert_uint_eq(d.seq, 0x0a0b0c0du);
	ck_assert_uint_eq(d.boot, 0x1122334455667788ULL);
	ck_assert_uint_eq(d.n_rx, 2);
	ck_assert_uint_eq(d.rx[0].seq, 0x01020304u);
	ck_assert_int_eq(d.rx[0].t_ns, 0x0102030405060708LL);
	ck_assert_int_eq(d.rx[1].t_ns, 1LL << 40);
	rbs_packet_clear(&d);
	uint32_t sender;
	ck_assert_int_eq(rbs_wire_peek_sender(buf, (size_t)n, &sender), 0);
	ck_assert_uint_eq(sender, 3);
}
END_TEST

START_TEST(test_ticker_part)
{
	sync_ticker_entry e = {.from = sync_clock_audio(0x01020304u, 2), .to = sync_clock_global(), .conv = known_conv()};
	uint8_t eb[SYNC_TICKER_ENTRY];
	sync_ticker_pack_entry(&e, eb);
	expect_hex(eb, sizeof eb, "04030201 0200 0200 00000000 0300 0000 " CONV_HEX, "ticker entry");
	sync_ticker_part part = {.head = {.node = 5, .root = SYNC_TICKER_NO_ROOT, .now_ns = -1, .count = 3},
				 .epoch = 0x0102030405060708ULL,
				 .first = 2,
				 .n = 1};
	size_t size = sync_ticker_part_size(1);
	uint8_t *buf = g_malloc0(size);
	sync_ticker_pack_part_head(&part, buf);
	memcpy(buf + SYNC_TICKER_HDR, eb, sizeof eb);
	sync_ticker_part d;
	sync_ticker_entry de;
	const char *why = NULL;
	ck_assert_msg(sync_ticker_unpack_part(buf, size, &d, &why) == 0, "%s", why);
	ck_assert_uint_eq(d.head.node, 5);
	ck_assert_uint_eq(d.head.root, SYNC_TICKER_NO_ROOT);
	ck_assert_int_eq(d.head.now_ns, -1);
	ck_assert_uint_eq(d.head.count, 3);
	ck_assert_uint_eq(d.epoch, 0x0102030405060708ULL);
	ck_assert_uint_eq(d.first, 2);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_msg(sync_ticker_unpack_entry(buf, 0, &de, &why) == 0, "%s", why);
	ck_assert_uint_eq(de.from.node, 0x01020304u);
	ck_assert_uint_eq(de.from.kind, SYNC_KIND_AUDIO);
	ck_assert_uint_eq(de.from.index, 2);
	ck_assert_uint_eq(de.to.kind, SYNC_KIND_GLOBAL);
	check_known_conv(&de.conv);
	g_free(buf);
}
END_TEST

START_TEST(test_fft_frame)
{
	float P[3] = {1.0f, -2.0f, 0.15625f}, Q[3];
	fft_frame_msg m = {.first = -3, .size = 4, .hop = 2, .nbins = 3, .window = 1, .rate_hz = 48000, .channel = 0x0a0b0c0du, .P = P};
	uint8_t buf[FFT_FRAME_HDR + 12];
	ck_assert_int_eq(fft_frame_encode(&m, buf, sizeof buf), (int)sizeof buf);
	expect_hex(buf, sizeof buf,
		   "46465446 0100 3000 fdffffffffffffff 04000000 02000000 03000000 01000000 000000000070e740 0d0c0b0a "
		   "00000000 0000803f 000000c0 0000203e",
		   "fft frame");
	fft_frame_msg d;
	const char *why = NULL;
	ck_assert_msg(fft_frame_decode(buf, sizeof buf, &d, Q, 3, &why) == 0, "%s", why);
	ck_assert_int_eq(d.first, -3);
	ck_assert_uint_eq(d.size, 4);
	ck_assert_uint_eq(d.hop, 2);
	ck_assert_uint_eq(d.channel, 0x0a0b0c0du);
	ck_assert(d.rate_hz == 48000 && Q[0] == 1.0f && Q[1] == -2.0f && Q[2] == 0.15625f);
}
END_TEST

/* audiod's S16_LE, S32_LE and FLOAT_LE items as detect and collab read them. */
START_TEST(test_samples_le)
{
	const uint8_t s16[] = {0x00, 0x80, 0x00, 0x40}, s32[] = {0x00, 0x00, 0x00, 0xc0}, f32[] = {0x00, 0x00, 0x20, 0x3e};
	ck_assert(dsp_sample_le(s16, 0, 2, 0) == -1.0f);
	ck_assert(dsp_sample_le(s16, 1, 2, 0) == 0.5f);
	ck_assert(dsp_sample_le(s32, 0, 4, 0) == -0.5f);
	ck_assert(dsp_sample_le(f32, 0, 4, 1) == 0.15625f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire_bytes");
	TCase *tc = tcase_create("bytes");
	tcase_add_test(tc, test_libdev_message);
	tcase_add_test(tc, test_conv_packed);
	tcase_add_test(tc, test_rbs_report);
	tcase_add_test(tc, test_ticker_part);
	tcase_add_test(tc, test_fft_frame);
	tcase_add_test(tc, test_samples_le);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
