/* test_libdev_wire.c — the wire codec and device paths: round trips of
 * every message type, and rejection of every malformed form. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/path.h"
#include "libdev/wire.h"
#include "tests/check_run.h"

static GByteArray *enc(uint8_t type, uint16_t flags, uint32_t id, const void *p, size_t n)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, type, flags, id);
	dev_wire_bytes(b, p, n);
	ck_assert_int_eq(dev_wire_end(b), 0);
	return b;
}

START_TEST(test_header_layout)
{
	GByteArray *b = enc(DEV_MSG_CMD, 0, 0x01020304, "go", 2);
	const uint8_t want[] = {0x43, 0x48, 1, 0x20, 0, 0, 0, 0, 2, 0, 0, 0, 4, 3, 2, 1, 'g', 'o'};
	ck_assert_uint_eq(b->len, sizeof want);
	ck_assert(memcmp(b->data, want, sizeof want) == 0);
	dev_msg m;
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_uint_eq(m.type, DEV_MSG_CMD);
	ck_assert_uint_eq(m.id, 0x01020304);
	ck_assert_uint_eq(m.len, 2);
	g_byte_array_unref(b);
}
END_TEST

START_TEST(test_roundtrip_sensor)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_SENS_OPEN, 0, 7);
	dev_wire_i64(b, -5);
	dev_wire_i64(b, INT64_MAX);
	dev_wire_u32(b, DEV_SENSOR_FROM_NEXT);
	dev_wire_u32(b, 0);
	dev_wire_bytes(b, "abc", 3);
	dev_wire_end(b);
	dev_msg m;
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_int_eq(m.u.open.first, -5);
	ck_assert_int_eq(m.u.open.last, INT64_MAX);
	ck_assert_uint_eq(m.u.open.flags, DEV_SENSOR_FROM_NEXT);
	ck_assert_uint_eq(m.u.open.params_len, 3);
	ck_assert(memcmp(m.u.open.params, "abc", 3) == 0);

	dev_wire_begin(b, DEV_MSG_SENS_DATA, 0, 7);
	dev_wire_i64(b, 1000);
	dev_wire_u32(b, 2);
	dev_wire_u32(b, 0);
	dev_wire_bytes(b, "01234567", 8);
	dev_wire_end(b);
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_int_eq(m.u.data.first, 1000);
	ck_assert_uint_eq(m.u.data.count, 2);
	ck_assert_uint_eq(m.u.data.bytes, 8);

	dev_wire_begin(b, DEV_MSG_SENS_GAP, 0, 7);
	dev_wire_i64(b, 10);
	dev_wire_i64(b, 20);
	dev_wire_end(b);
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_int_eq(m.u.gap.from, 10);
	ck_assert_int_eq(m.u.gap.to, 20);
	/* a gap must have positive length */
	dev_wire_begin(b, DEV_MSG_SENS_GAP, 0, 7);
	dev_wire_i64(b, 20);
	dev_wire_i64(b, 20);
	dev_wire_end(b);
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(b);
}
END_TEST

START_TEST(test_error_and_reply)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_error(b, 9, DEV_MSG_CMD, EPERM, "denied");
	dev_msg m;
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_int_eq(m.u.error.err, EPERM);
	ck_assert_uint_eq(m.u.error.ref_type, DEV_MSG_CMD);
	ck_assert_uint_eq(m.u.error.text_len, 6);
	ck_assert(memcmp(m.u.error.text, "denied", 6) == 0);
	dev_wire_begin(b, DEV_MSG_CMD_REPLY, 0, 9);
	dev_wire_u32(b, (uint32_t)-22);
	dev_wire_bytes(b, "bad", 3);
	dev_wire_end(b);
	ck_assert_int_eq(dev_wire_decode(b->data, b->len, &m, NULL), 0);
	ck_assert_int_eq(m.u.reply.status, -22);
	ck_assert_uint_eq(m.u.reply.len, 3);
	g_byte_array_unref(b);
}
END_TEST

/* Every kind of damage to a valid message is rejected with the right errno. */
START_TEST(test_malformed)
{
	GByteArray *b = enc(DEV_MSG_STATUS_GET, 0, 1, NULL, 0);
	dev_msg m;
	const char *why = NULL;
	uint8_t *d = b->data;
	/* truncated header */
	ck_assert_int_eq(dev_wire_decode(d, 15, &m, &why), -EBADMSG);
	ck_assert_ptr_nonnull(why);
	/* bad magic */
	d[0] ^= 0xff;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -EBADMSG);
	d[0] ^= 0xff;
	/* version */
	d[2] = 2;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -EPROTONOSUPPORT);
	d[2] = 1;
	/* reserved */
	d[6] = 1;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -EBADMSG);
	d[6] = 0;
	/* unknown flags */
	d[5] = 0x80;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -EBADMSG);
	d[5] = 0;
	/* unknown type */
	d[3] = 0x7f;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -ENOMSG);
	d[3] = DEV_MSG_STATUS_GET;
	/* length claims more than there is (truncated) */
	d[8] = 4;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), -EBADMSG);
	d[8] = 0;
	ck_assert_int_eq(dev_wire_decode(d, b->len, &m, NULL), 0);
	/* empty-payload type with a payload */
	GByteArray *e = enc(DEV_MSG_STATUS_GET, 0, 1, "x", 1);
	ck_assert_int_eq(dev_wire_decode(e->data, e->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(e);
	/* oversized */
	uint8_t *big = g_malloc0(DEV_WIRE_MAX_MSG + 1);
	memcpy(big, d, DEV_WIRE_HDR);
	ck_assert_int_eq(dev_wire_decode(big, DEV_WIRE_MAX_MSG + 1, &m, NULL), -EMSGSIZE);
	g_free(big);
	/* commands: NUL inside, invalid UTF-8 */
	e = enc(DEV_MSG_CMD, 0, 1, "a\0b", 3);
	ck_assert_int_eq(dev_wire_decode(e->data, e->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(e);
	e = enc(DEV_MSG_CMD, 0, 1, "\xff\xfe", 2);
	ck_assert_int_eq(dev_wire_decode(e->data, e->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(e);
	/* short fixed payloads */
	e = enc(DEV_MSG_SENS_OPEN, 0, 1, "12345678", 8);
	ck_assert_int_eq(dev_wire_decode(e->data, e->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(e);
	e = enc(DEV_MSG_SENS_DATA, 0, 1, "1234567812345678", 16); /* count 0x34333231 > 0 bytes */
	ck_assert_int_eq(dev_wire_decode(e->data, e->len, &m, NULL), -EBADMSG);
	g_byte_array_unref(e);
	g_byte_array_unref(b);
}
END_TEST

START_TEST(test_names)
{
	const char *bad[] = {"", "/abs", "a//b", "a/", "..", "a/../b", ".", "a/./b", "sp ace", "a\\b"};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		const char *why = NULL;
		ck_assert_msg(dev_name_check(bad[i], &why) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
	ck_assert_int_eq(dev_name_check("sync/ticker", NULL), 0);
	ck_assert_int_eq(dev_name_check("audio/0/data", NULL), 0);
	ck_assert_int_eq(dev_name_check("a.b-c_d", NULL), 0);
}
END_TEST

START_TEST(test_paths)
{
	char p[DEV_PATH_MAX];
	setenv("CHORUS_RUN", "/tmp/runx", 1);
	unsetenv("CHORUS_NODE");
	ck_assert_int_eq(dev_path("sync/ticker", p, sizeof p, NULL), 0);
	ck_assert_str_eq(p, "/tmp/runx/sync/ticker");
	setenv("CHORUS_NODE", "7", 1);
	ck_assert_int_eq(dev_path("audio/0/data", p, sizeof p, NULL), 0);
	ck_assert_str_eq(p, "/tmp/runx/sim/node7/audio/0/data");
	setenv("CHORUS_NODE", "x7", 1);
	ck_assert_int_eq(dev_path("a", p, sizeof p, NULL), -EINVAL);
	setenv("CHORUS_NODE", "-1", 1);
	ck_assert_int_eq(dev_path("a", p, sizeof p, NULL), -EINVAL);
	unsetenv("CHORUS_NODE");
	ck_assert_int_eq(dev_path("../etc", p, sizeof p, NULL), -EINVAL);
	char longname[200];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	ck_assert_int_eq(dev_path(longname, p, sizeof p, NULL), -ENAMETOOLONG);
	/* parents */
	char dir[] = "/tmp/chorus-wire-XXXXXX";
	ck_assert_ptr_nonnull(g_mkdtemp(dir));
	char *deep = g_strdup_printf("%s/a/b/c/sock", dir);
	ck_assert_int_eq(dev_path_mkparents(deep), 0);
	char *abc = g_strdup_printf("%s/a/b/c", dir);
	ck_assert(g_file_test(abc, G_FILE_TEST_IS_DIR));
	char *cmd = g_strdup_printf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	g_free(cmd);
	g_free(abc);
	g_free(deep);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_wire");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_header_layout);
	tcase_add_test(tc, test_roundtrip_sensor);
	tcase_add_test(tc, test_error_and_reply);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_paths);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
