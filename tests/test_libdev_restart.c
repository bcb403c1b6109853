/* test_libdev_restart.c — crashproof clients: the service is freed and
 * created again on the same path; every client half is told about the
 * outage, reconnects by itself and re-sends its configuration (status
 * subscription, packet filter, sensor stream resumed from the next index
 * not received). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

typedef struct {
	int ups, downs, last_err;
	gboolean up;
} conn;

static void on_state(void *user, gboolean up, int err)
{
	conn *c = user;
	c->up = up;
	if (up)
		c->ups++;
	else
		c->downs++;
	c->last_err = err;
}

typedef struct {
	conn c;
	int updates;
	char last[64];
} st_reader;

static void on_update(void *user, int err, const char *data, size_t len)
{
	st_reader *r = user;
	r->updates++;
	g_strlcpy(r->last, data, sizeof r->last);
}

static int text_v(void *user, GString *out)
{
	g_string_append(out, (const char *)user);
	return 0;
}

START_TEST(test_status_restart)
{
	dev_status *d = dev_status_new("t/rs", NULL, NULL, text_v, NULL, "version 1", NULL);
	st_reader r = {0};
	dev_status_reader *rd = dev_status_reader_new("t/rs", FALSE, NULL, on_update, on_state, &r, NULL);
	SPIN_UNTIL(r.updates == 1);
	ck_assert_str_eq(r.last, "version 1");
	ck_assert_int_eq(r.c.ups, 1);
	dev_status_free(d);
	SPIN_UNTIL(!r.c.up);
	ck_assert_int_eq(r.c.downs, 1);
	ck_assert_int_eq(r.c.last_err, -ECONNRESET);
	tu_drain(3);
	ck_assert_int_eq(r.c.downs, 1); /* failed retries are not reported again */
	d = dev_status_new("t/rs", NULL, NULL, text_v, NULL, "version 2", NULL);
	SPIN_UNTIL(r.updates == 2);
	ck_assert_str_eq(r.last, "version 2");
	ck_assert_int_eq(r.c.ups, 2);
	ck_assert_uint_eq(dev_status_subscribers(d), 1);
	dev_status_reader_free(rd);
	dev_status_free(d);
}
END_TEST

/* A client started before its service: told it is down, then connects. */
START_TEST(test_client_first)
{
	st_reader r = {0};
	dev_status_reader *rd = dev_status_reader_new("t/late", FALSE, NULL, on_update, on_state, &r, NULL);
	SPIN_UNTIL(r.c.downs == 1);
	ck_assert_int_eq(r.c.last_err, -ENOENT);
	dev_status *d = dev_status_new("t/late", NULL, NULL, text_v, NULL, "here", NULL);
	SPIN_UNTIL(r.updates == 1);
	ck_assert_str_eq(r.last, "here");
	dev_status_reader_free(rd);
	dev_status_free(d);
}
END_TEST

typedef struct {
	conn c;
	int n;
	char msg[8][16];
} pk_rx;

static void on_packet(void *user, const char *msg, size_t len, uint32_t dropped)
{
	pk_rx *r = user;
	if (r->n < 8)
		g_strlcpy(r->msg[r->n], msg, sizeof r->msg[0]);
	r->n++;
}

START_TEST(test_packet_restart)
{
	dev_packet *d = dev_packet_new("t/rp", NULL, NULL, NULL, NULL, NULL);
	pk_rx r = {0};
	dev_packet_sub *s = dev_packet_sub_new("t/rp", "keep", 4, NULL, on_packet, on_state, &r, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	dev_packet_send(d, "keep1", 5);
	SPIN_UNTIL(r.n == 1);
	dev_packet_free(d);
	SPIN_UNTIL(!r.c.up);
	d = dev_packet_new("t/rp", NULL, NULL, NULL, NULL, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	/* the filter came back with the subscription */
	ck_assert_int_eq(dev_packet_send(d, "drop", 4), 0);
	ck_assert_int_eq(dev_packet_send(d, "keep2", 5), 1);
	SPIN_UNTIL(r.n == 2);
	ck_assert_str_eq(r.msg[1], "keep2");
	ck_assert_int_eq(r.c.ups, 2);
	dev_packet_sub_free(s);
	dev_packet_free(d);
}
END_TEST

static int echo_cmd(void *user, const dev_creds *who, const char *cmd, GString *reply)
{
	g_string_append_printf(reply, "%s:%s", (const char *)user, cmd);
	return 0;
}

typedef struct {
	int n, err[4];
	char data[4][32];
} replies;

static void on_reply(void *user, int err, int status, const char *data, size_t len)
{
	replies *r = user;
	r->err[r->n] = err;
	g_strlcpy(r->data[r->n], data, sizeof r->data[0]);
	r->n++;
}

START_TEST(test_caller_restart)
{
	dev_command *d = dev_command_new("t/rc", NULL, NULL, echo_cmd, NULL, "one", NULL);
	conn c = {0};
	dev_caller *k = dev_caller_new("t/rc", DEV_PATTERN_COMMAND, NULL, on_state, &c, NULL);
	SPIN_UNTIL(c.up);
	replies r = {0};
	dev_caller_call(k, "a", 1, on_reply, &r);
	SPIN_UNTIL(r.n == 1);
	ck_assert_str_eq(r.data[0], "one:a");
	dev_command_free(d);
	SPIN_UNTIL(!c.up);
	ck_assert_int_eq(dev_caller_call(k, "b", 1, on_reply, &r), -ENOTCONN);
	d = dev_command_new("t/rc", NULL, NULL, echo_cmd, NULL, "two", NULL);
	SPIN_UNTIL(c.up);
	dev_caller_call(k, "c", 1, on_reply, &r);
	SPIN_UNTIL(r.n == 2);
	ck_assert_str_eq(r.data[1], "two:c");
	dev_caller_free(k);
	dev_command_free(d);
}
END_TEST

typedef struct {
	int64_t next, cap;
	uint32_t last_flags;
	int64_t last_first;
} ring;

static void r_range(void *user, int64_t *oldest, int64_t *next)
{
	ring *r = user;
	*next = r->next;
	*oldest = MAX(0, r->next - r->cap);
}

static int r_read(void *user, void *client, int64_t first, size_t n, void *buf)
{
	for (size_t i = 0; i < n; i++)
		((int64_t *)buf)[i] = first + (int64_t)i;
	return 0;
}

static int r_open(void *user, const dev_creds *who, dev_sensor_request *req, void **client, GByteArray *reply,
		  char *why, size_t wlen)
{
	ring *r = user;
	r->last_flags = req->flags;
	r->last_first = req->first;
	return 0;
}

static const dev_sensor_ops ring_ops = {r_range, r_read, r_open, NULL, NULL};

typedef struct {
	conn c;
	int64_t next, items, gap_from, gap_to;
	int opened, gaps;
} sn;

static void s_opened(void *u, int64_t first, int64_t last, uint32_t isz, const void *reply, size_t len)
{
	sn *s = u;
	s->opened++;
	s->next = first;
}

static void s_data(void *u, int64_t first, const void *items, size_t n)
{
	sn *s = u;
	ck_assert_int_eq(first, s->next);
	ck_assert_int_eq(((const int64_t *)items)[0], first);
	s->next = first + (int64_t)n;
	s->items += (int64_t)n;
}

static void s_gap(void *u, int64_t from, int64_t to)
{
	sn *s = u;
	ck_assert_int_eq(from, s->next);
	s->gaps++;
	s->gap_from = from;
	s->gap_to = to;
	s->next = to;
}

static void s_state(void *u, gboolean up, int err) { on_state(&((sn *)u)->c, up, err); }

START_TEST(test_sensor_restart_resumes)
{
	ring r = {.next = 500, .cap = 1000};
	dev_sensor *d = dev_sensor_new("t/rsn", NULL, NULL, 8, &ring_ops, &r, NULL);
	sn s = {0};
	dev_sensor_reader_ops ops = {s_opened, s_data, s_gap, NULL, NULL, s_state};
	dev_sensor_reader *rd = dev_sensor_reader_new("t/rsn", 0, DEV_SENSOR_OPEN_END, 0, NULL, 0, NULL, &ops, &s, NULL);
	SPIN_UNTIL(s.next == 500);
	ck_assert_int_eq(r.last_flags, 0);
	dev_sensor_free(d);
	SPIN_UNTIL(!s.c.up);
	/* while it was away the ring moved on: [700, 800) held */
	r.next = 800;
	r.cap = 100;
	d = dev_sensor_new("t/rsn", NULL, NULL, 8, &ring_ops, &r, NULL);
	SPIN_UNTIL(s.next == 800);
	ck_assert_int_eq(r.last_flags, DEV_SENSOR_RESUME);
	ck_assert_int_eq(r.last_first, 500);
	ck_assert_int_eq(s.gaps, 1);
	ck_assert_int_eq(s.gap_from, 500);
	ck_assert_int_eq(s.gap_to, 700);
	ck_assert_int_eq(s.items, 600);
	ck_assert_int_eq(s.opened, 1); /* opened is reported once */
	ck_assert_int_eq(s.c.ups, 2);
	r.next = 900;
	dev_sensor_advance(d, r.next);
	SPIN_UNTIL(s.next == 900);
	dev_sensor_reader_free(rd);
	dev_sensor_free(d);
}
END_TEST

/* A reader freed inside its own callback: nothing runs afterwards. */
static void free_in_cb(void *user, int err, const char *data, size_t len)
{
	dev_status_reader **p = user;
	dev_status_reader_free(*p);
	*p = NULL;
}

START_TEST(test_free_inside_callback)
{
	dev_status *d = dev_status_new("t/rf", NULL, NULL, text_v, NULL, "x", NULL);
	dev_status_reader *rd = NULL;
	rd = dev_status_reader_new("t/rf", FALSE, NULL, free_in_cb, NULL, &rd, NULL);
	SPIN_UNTIL(rd == NULL);
	dev_status_notify(d);
	tu_drain(5);
	SPIN_UNTIL(dev_status_subscribers(d) == 0);
	dev_status_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_restart");
	TCase *tc = tcase_create("restart");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_status_restart);
	tcase_add_test(tc, test_client_first);
	tcase_add_test(tc, test_packet_restart);
	tcase_add_test(tc, test_caller_restart);
	tcase_add_test(tc, test_sensor_restart_resumes);
	tcase_add_test(tc, test_free_inside_callback);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
