/* test_libdev_malformed.c — malformed input of every kind through a raw
 * socket: bad magic, bad version, truncated header and payload, oversized,
 * unknown type, a server-only type, out-of-order (close before open, a
 * second open, a message of another pattern).  Each gets an ERROR with the
 * right errno, and the service keeps serving this client and the others. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

static int text_cb(void *user, GString *out)
{
	g_string_append(out, "fine");
	return 0;
}

/* Expect an ERROR with errno `err` (and, when id != 0, that id). */
static void expect_error(int fd, int err, uint32_t id, const char *what)
{
	GByteArray *b = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(fd, b, &m);
	ck_assert_msg(m.type == DEV_MSG_ERROR, "%s: got %s, not ERROR", what, dev_wire_type_name(m.type));
	ck_assert_msg(m.u.error.err == err, "%s: errno %d, want %d (%.*s)", what, m.u.error.err, err,
		      (int)m.u.error.text_len, m.u.error.text);
	if (id)
		ck_assert_uint_eq(m.id, id);
	ck_assert_uint_gt(m.u.error.text_len, 0);
	g_byte_array_unref(b);
}

static void expect_state(int fd, const char *want)
{
	GByteArray *b = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(fd, b, &m);
	ck_assert_uint_eq(m.type, DEV_MSG_STATUS_DATA);
	ck_assert_uint_eq(m.len, strlen(want));
	ck_assert(memcmp(m.payload, want, m.len) == 0);
	g_byte_array_unref(b);
}

static void on_update(void *user, int err, const char *data, size_t len) { (*(int *)user)++; }

START_TEST(test_status_device_garbage)
{
	dev_status *d = dev_status_new("t/mal", NULL, NULL, text_cb, NULL, NULL, NULL);
	int good = 0;
	dev_status_reader *other = dev_status_reader_new("t/mal", FALSE, NULL, on_update, NULL, &good, NULL);
	SPIN_UNTIL(good == 1);
	int fd = tu_raw_connect("t/mal");
	GByteArray *b = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(fd, b, &m);
	ck_assert_uint_eq(m.type, DEV_MSG_HELLO);
	ck_assert_uint_eq(m.u.hello.pattern, DEV_PATTERN_STATUS);
	ck_assert_uint_eq(m.u.hello.max_msg, DEV_WIRE_MAX_MSG);

	uint8_t h[DEV_WIRE_HDR];
	dev_wire_header(h, DEV_MSG_STATUS_GET, 0, 11, 0);
	/* bad magic */
	h[0] = 'X';
	tu_raw_send(fd, h, sizeof h);
	expect_error(fd, EBADMSG, 11, "bad magic");
	h[0] = 0x43;
	/* bad version */
	h[2] = 9;
	tu_raw_send(fd, h, sizeof h);
	expect_error(fd, EPROTONOSUPPORT, 11, "version");
	h[2] = DEV_WIRE_VERSION;
	/* truncated header */
	tu_raw_send(fd, h, 7);
	expect_error(fd, EBADMSG, 0, "short header");
	/* truncated payload: length says 100, 4 bytes follow */
	uint8_t t[DEV_WIRE_HDR + 4];
	dev_wire_header(t, DEV_MSG_STATUS_GET, 0, 12, 100);
	tu_raw_send(fd, t, sizeof t);
	expect_error(fd, EBADMSG, 12, "truncated payload");
	/* an empty datagram */
	tu_raw_send(fd, "", 0);
	expect_error(fd, EBADMSG, 0, "empty datagram");
	/* oversized */
	int sz = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	size_t big_n = DEV_WIRE_MAX_MSG + 100;
	uint8_t *big = g_malloc0(big_n);
	dev_wire_header(big, DEV_MSG_STATUS_GET, 0, 13, (uint32_t)(big_n - DEV_WIRE_HDR));
	tu_raw_send(fd, big, big_n);
	expect_error(fd, EMSGSIZE, 13, "oversized");
	g_free(big);
	/* unknown type */
	dev_wire_header(h, 0x7e, 0, 14, 0);
	tu_raw_send(fd, h, sizeof h);
	expect_error(fd, ENOMSG, 14, "unknown type");
	/* a server-only type from a client */
	tu_raw_msg(fd, DEV_MSG_STATUS_DATA, 0, 15, "x", 1);
	expect_error(fd, EPROTO, 15, "server type");
	/* another pattern's message */
	tu_raw_msg(fd, DEV_MSG_CMD, 0, 16, "reset", 5);
	expect_error(fd, EPROTO, 16, "command to a status device");
	tu_raw_msg(fd, DEV_MSG_SENS_CLOSE, 0, 17, NULL, 0);
	expect_error(fd, EPROTO, 17, "sensor close to a status device");
	/* still served on this very connection */
	tu_raw_msg(fd, DEV_MSG_STATUS_GET, 0, 18, NULL, 0);
	expect_state(fd, "fine");
	/* and the other reader still gets notifications */
	dev_status_notify(d);
	SPIN_UNTIL(good == 2);
	close(fd);
	g_byte_array_unref(b);
	dev_status_reader_free(other);
	dev_status_free(d);
}
END_TEST

static void r_range(void *user, int64_t *oldest, int64_t *next)
{
	*oldest = 0;
	*next = 100;
}

static int r_read(void *user, void *client, int64_t first, size_t n, void *buf)
{
	memset(buf, 0, n * 4);
	return 0;
}

static const dev_sensor_ops ring_ops = {r_range, r_read, NULL, NULL, NULL};

static void open_payload(uint8_t p[24], int64_t first, int64_t last, uint32_t flags)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_i64(b, first);
	dev_wire_i64(b, last);
	dev_wire_u32(b, flags);
	dev_wire_u32(b, 0);
	memcpy(p, b->data, 24);
	g_byte_array_unref(b);
}

START_TEST(test_sensor_out_of_order)
{
	dev_sensor *d = dev_sensor_new("t/msens", NULL, NULL, 4, &ring_ops, NULL, NULL);
	int fd = tu_raw_connect("t/msens");
	GByteArray *b = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(fd, b, &m);
	ck_assert_uint_eq(m.u.hello.pattern, DEV_PATTERN_SENSOR);
	ck_assert_uint_eq(m.u.hello.item_size, 4);
	/* close before open */
	tu_raw_msg(fd, DEV_MSG_SENS_CLOSE, 0, 1, NULL, 0);
	expect_error(fd, EPROTO, 1, "close before open");
	/* data from a client */
	uint8_t data[20] = {0};
	data[8] = 1;
	tu_raw_msg(fd, DEV_MSG_SENS_DATA, 0, 2, data, sizeof data);
	expect_error(fd, EPROTO, 2, "data from a client");
	/* open with last < first, unknown flags, short payload */
	uint8_t p[24];
	open_payload(p, 50, 10, 0);
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 3, p, 24);
	expect_error(fd, EBADMSG, 3, "last < first");
	open_payload(p, 0, 10, 0x80);
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 4, p, 24);
	expect_error(fd, EBADMSG, 4, "unknown open flags");
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 5, p, 10);
	expect_error(fd, EBADMSG, 5, "short open");
	/* a good open, then a second one */
	open_payload(p, 0, 10, 0);
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 6, p, 24);
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 7, p, 24);
	int got_opened = 0, got_data = 0, got_end = 0, got_busy = 0;
	while (!(got_end && got_busy)) {
		tu_raw_recv(fd, b, &m);
		if (m.type == DEV_MSG_SENS_OPENED)
			got_opened++;
		else if (m.type == DEV_MSG_SENS_DATA)
			got_data += (int)m.u.data.count;
		else if (m.type == DEV_MSG_SENS_END)
			got_end++;
		else if (m.type == DEV_MSG_ERROR && m.u.error.err == EBUSY && m.id == 7)
			got_busy++;
		else
			ck_abort_msg("unexpected %s", dev_wire_type_name(m.type));
	}
	ck_assert_int_eq(got_opened, 1);
	ck_assert_int_eq(got_data, 10);
	/* after END, a new open on the same connection is fine */
	tu_raw_msg(fd, DEV_MSG_SENS_OPEN, 0, 8, p, 24);
	tu_raw_recv(fd, b, &m);
	ck_assert_uint_eq(m.type, DEV_MSG_SENS_OPENED);
	close(fd);
	g_byte_array_unref(b);
	dev_sensor_free(d);
}
END_TEST

static int cmd_cb(void *user, const dev_creds *who, const char *cmd, GString *reply)
{
	(*(int *)user)++;
	return 0;
}

static void count_reply(void *user, int err, int status, const char *data, size_t len)
{
	ck_assert_int_eq(err, 0);
	(*(int *)user)++;
}

/* A flood of garbage from one client does not starve another. */
START_TEST(test_flood_does_not_starve)
{
	int calls = 0;
	dev_command *d = dev_command_new("t/mflood", NULL, NULL, cmd_cb, NULL, &calls, NULL);
	int bad = tu_raw_connect("t/mflood");
	int sz = 4 << 20;
	setsockopt(bad, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	for (int i = 0; i < 500; i++)
		tu_raw_send(bad, "garbage!garbage!garbage!", 24);
	/* the flooder never reads its error replies either */
	GByteArray *out = g_byte_array_new();
	int ok = 0;
	dev_caller *good = dev_caller_new("t/mflood", DEV_PATTERN_COMMAND, NULL, NULL, NULL, NULL);
	SPIN_UNTIL(dev_caller_connected(good));
	for (int i = 0; i < 20; i++)
		tu_raw_send(bad, "garbage!garbage!garbage!", 24);
	for (int i = 0; i < 5; i++) {
		dev_caller_call(good, "ping", 4, count_reply, &ok);
	}
	SPIN_UNTIL(ok == 5);
	ck_assert_int_eq(calls, 5);
	close(bad);
	g_byte_array_unref(out);
	dev_caller_free(good);
	dev_command_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_malformed");
	TCase *tc = tcase_create("malformed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_status_device_garbage);
	tcase_add_test(tc, test_sensor_out_of_order);
	tcase_add_test(tc, test_flood_does_not_starve);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
