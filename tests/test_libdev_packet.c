/* test_libdev_packet.c — Packet devices: filters, per-client queues, both
 * overflow policies (drop-oldest with the count reported, back-pressure with
 * the writable callback), client writes and their policy. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

typedef struct {
	int n;
	char msg[64][32];
	uint32_t dropped[64];
	gboolean up;
} sub_rx;

static void on_packet(void *user, const char *msg, size_t len, uint32_t dropped)
{
	sub_rx *r = user;
	if (r->n < 64) {
		g_strlcpy(r->msg[r->n], msg, sizeof r->msg[0]);
		r->dropped[r->n] = dropped;
	}
	r->n++;
}

static void on_state(void *user, gboolean up, int err) { ((sub_rx *)user)->up = up; }

static int sendf(dev_packet *d, const char *s) { return dev_packet_send(d, s, strlen(s)); }

START_TEST(test_filters)
{
	dev_packet *d = dev_packet_new("t/pkt", NULL, NULL, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(d);
	sub_rx a = {0}, b = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pkt", "det:", 4, NULL, on_packet, on_state, &a, NULL);
	dev_packet_sub *sb = dev_packet_sub_new("t/pkt", NULL, 0, NULL, on_packet, on_state, &b, NULL);
	SPIN_UNTIL(a.up && b.up && dev_packet_subscribers(d) == 2);
	ck_assert_int_eq(sendf(d, "det:1"), 2);
	ck_assert_int_eq(sendf(d, "noise"), 1);
	ck_assert_int_eq(sendf(d, "det:2"), 2);
	SPIN_UNTIL(a.n == 2 && b.n == 3);
	ck_assert_str_eq(a.msg[0], "det:1");
	ck_assert_str_eq(a.msg[1], "det:2");
	ck_assert_str_eq(b.msg[1], "noise");
	/* change the filter on the fly */
	dev_packet_sub_set_filter(sa, "noise", 5);
	tu_drain(5);
	sendf(d, "det:3");
	sendf(d, "noise");
	SPIN_UNTIL(a.n == 3 && b.n == 5);
	ck_assert_str_eq(a.msg[2], "noise");
	ck_assert_uint_eq(a.dropped[2], 0);
	dev_packet_sub_free(sa);
	dev_packet_sub_free(sb);
	SPIN_UNTIL(dev_packet_subscribers(d) == 0);
	ck_assert_int_eq(sendf(d, "nobody"), 0);
	dev_packet_free(d);
}
END_TEST

/* A service-supplied filter: the client's filter is a decimal minimum and
 * messages carry a number. */
static gboolean min_filter(void *user, const void *f, size_t fl, const void *msg, size_t len)
{
	char fb[16] = "0", mb[16] = "0";
	if (fl && fl < sizeof fb)
		memcpy(fb, f, fl), fb[fl] = 0;
	if (len < sizeof mb)
		memcpy(mb, msg, len), mb[len] = 0;
	return atoi(mb) >= atoi(fb);
}

START_TEST(test_service_filter)
{
	dev_packet_ops ops = {.filter = min_filter};
	dev_packet *d = dev_packet_new("t/pktf", NULL, NULL, &ops, NULL, NULL);
	sub_rx a = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pktf", "50", 2, NULL, on_packet, on_state, &a, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	for (int i = 0; i < 100; i += 10) {
		char m[8];
		snprintf(m, sizeof m, "%d", i);
		sendf(d, m);
	}
	SPIN_UNTIL(a.n == 5);
	tu_drain(3);
	ck_assert_int_eq(a.n, 5);
	ck_assert_str_eq(a.msg[0], "50");
	ck_assert_str_eq(a.msg[4], "90");
	dev_packet_sub_free(sa);
	dev_packet_free(d);
}
END_TEST

/* Drop-oldest: 10 messages into a queue of 4 before the loop runs; the
 * client gets the last 4 and learns that 6 were dropped. */
START_TEST(test_drop_oldest)
{
	dev_options o;
	dev_options_init(&o);
	o.queue_limit = 4;
	o.overflow = DEV_OVERFLOW_DROP_OLDEST;
	dev_packet *d = dev_packet_new("t/pktd", &o, NULL, NULL, NULL, NULL);
	sub_rx a = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pktd", NULL, 0, NULL, on_packet, on_state, &a, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	for (int i = 0; i < 10; i++) {
		char m[8];
		snprintf(m, sizeof m, "m%d", i);
		ck_assert_int_eq(sendf(d, m), 1);
	}
	SPIN_UNTIL(a.n == 4);
	tu_drain(3);
	ck_assert_int_eq(a.n, 4);
	ck_assert_str_eq(a.msg[0], "m6");
	ck_assert_uint_eq(a.dropped[0], 6);
	ck_assert_str_eq(a.msg[3], "m9");
	ck_assert_uint_eq(a.dropped[3], 0);
	dev_packet_sub_free(sa);
	dev_packet_free(d);
}
END_TEST

/* A subscriber that never reads (raw socket) fills its socket and then its
 * queue; the service is never blocked, and other subscribers get
 * everything. */
/* Device t/pkts with queue_limit, and a raw client subscribed to it (its
 * fd in *raw, its HELLO still unread). */
static dev_packet *with_raw_subscriber(size_t queue_limit, int *raw)
{
	dev_options o;
	dev_options_init(&o);
	o.queue_limit = queue_limit;
	dev_packet *d = dev_packet_new("t/pkts", &o, NULL, NULL, NULL, NULL);
	*raw = tu_raw_connect("t/pkts");
	tu_raw_msg(*raw, DEV_MSG_PKT_SUB, 0, 1, NULL, 0);
	return d;
}

START_TEST(test_stalled_subscriber)
{
	int raw;
	dev_packet *d = with_raw_subscriber(8, &raw);
	sub_rx a = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pkts", NULL, 0, NULL, on_packet, on_state, &a, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 2);
	char big[4000];
	memset(big, 'x', sizeof big);
	for (int i = 0; i < 2000; i++) {
		snprintf(big, 16, "%015d", i);
		ck_assert_int_eq(dev_packet_send(d, big, sizeof big), 2);
		if (i % 4 == 3)
			SPIN_UNTIL(a.n == i + 1); /* the live reader keeps up */
	}
	SPIN_UNTIL(a.n == 2000);
	for (int i = 0; i < 64 && i < a.n; i++)
		ck_assert_uint_eq(a.dropped[i], 0);
	/* the stalled one: read what it has; somewhere the drop count shows */
	GByteArray *buf = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(raw, buf, &m); /* HELLO */
	ck_assert_uint_eq(m.type, DEV_MSG_HELLO);
	uint64_t got = 0, dropped = 0;
	while (tu_readable(raw)) {
		tu_raw_recv(raw, buf, &m);
		ck_assert_uint_eq(m.type, DEV_MSG_PKT_DATA);
		got++;
		dropped += m.u.pkt.dropped;
		tu_drain(1);
	}
	ck_assert_uint_eq(got + dropped, 2000);
	ck_assert_uint_gt(dropped, 0);
	g_byte_array_unref(buf);
	close(raw);
	dev_packet_sub_free(sa);
	dev_packet_free(d);
}
END_TEST

/* A burst into a stalled client's long queue (a service catching up after
 * a stall): its queue grows far past its first capacity while the pump
 * sends from its head, and again after the client read part of it (the
 * ring wrapped), and every message arrives once, whole and in order. */
START_TEST(test_burst_in_order)
{
	int raw;
	dev_packet *d = with_raw_subscriber(1000, &raw);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	GByteArray *buf = g_byte_array_new();
	dev_msg m;
	tu_raw_recv(raw, buf, &m); /* HELLO */
	ck_assert_uint_eq(m.type, DEV_MSG_HELLO);
	char big[4000];
	int next = 0, sent = 0;
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 450; i++, sent++) {
			memset(big, 'a' + sent % 26, sizeof big);
			snprintf(big, 16, "%015d", sent);
			ck_assert_int_eq(dev_packet_send(d, big, sizeof big), 1);
			tu_drain(1);
		}
		/* read 150 (round 0), then everything */
		for (int k = 0; round == 1 || k < 150; k++) {
			if (round == 1 && next == sent)
				break;
			tu_raw_recv(raw, buf, &m);
			ck_assert_uint_eq(m.type, DEV_MSG_PKT_DATA);
			ck_assert_uint_eq(m.u.pkt.dropped, 0);
			ck_assert_uint_eq(m.u.pkt.len, sizeof big);
			char want[16];
			snprintf(want, sizeof want, "%015d", next);
			ck_assert_msg(memcmp(m.u.pkt.data, want, 15) == 0, "message %d out of order", next);
			ck_assert_int_eq(m.u.pkt.data[sizeof big - 1], 'a' + next % 26);
			next++;
			tu_drain(1);
		}
	}
	ck_assert_int_eq(next, 900);
	g_byte_array_unref(buf);
	close(raw);
	dev_packet_free(d);
}
END_TEST

static void on_writable(void *user) { (*(int *)user)++; }

/* Back-pressure: the fifth send is refused with -EAGAIN and nothing is
 * queued; once the queue drains the service is told, and nothing is lost. */
START_TEST(test_backpressure)
{
	int writable = 0;
	dev_options o;
	dev_options_init(&o);
	o.queue_limit = 4;
	o.overflow = DEV_OVERFLOW_BACKPRESSURE;
	dev_packet_ops ops = {.writable = on_writable};
	dev_packet *d = dev_packet_new("t/pktb", &o, NULL, &ops, &writable, NULL);
	sub_rx a = {0}, b = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pktb", NULL, 0, NULL, on_packet, on_state, &a, NULL);
	dev_packet_sub *sb = dev_packet_sub_new("t/pktb", "zz", 2, NULL, on_packet, on_state, &b, NULL);
	SPIN_UNTIL(dev_packet_subscribers(d) == 2);
	int sent = 0;
	for (int i = 0; i < 4; i++) {
		char m[8];
		snprintf(m, sizeof m, "m%d", sent);
		ck_assert_int_eq(sendf(d, m), 1);
		sent++;
	}
	ck_assert_int_eq(sendf(d, "m4"), -EAGAIN);
	ck_assert_int_eq(writable, 0);
	SPIN_UNTIL(writable == 1);
	ck_assert_int_eq(sendf(d, "m4"), 1);
	sent++;
	SPIN_UNTIL(a.n == 5);
	for (int i = 0; i < 5; i++) {
		char m[8];
		snprintf(m, sizeof m, "m%d", i);
		ck_assert_str_eq(a.msg[i], m);
		ck_assert_uint_eq(a.dropped[i], 0);
	}
	ck_assert_int_eq(b.n, 0);
	dev_packet_sub_free(sa);
	dev_packet_sub_free(sb);
	dev_packet_free(d);
}
END_TEST

static int on_recv(void *user, const dev_creds *who, const void *msg, size_t len)
{
	GPtrArray *got = user;
	if (len == 3 && memcmp(msg, "bad", 3) == 0)
		return -EINVAL;
	g_ptr_array_add(got, g_strndup(msg, len));
	return 0;
}

typedef struct {
	int n;
	int err[4];
	char text[4][160];
} acks;

static void on_ack(void *user, int err, int status, const char *data, size_t len)
{
	acks *k = user;
	k->err[k->n] = err;
	g_strlcpy(k->text[k->n], data, sizeof k->text[0]);
	k->n++;
}

START_TEST(test_client_writes)
{
	GPtrArray *got = g_ptr_array_new_with_free_func(g_free);
	dev_packet_ops ops = {.recv = on_recv};
	dev_packet *d = dev_packet_new("t/pktw", NULL, NULL, &ops, got, NULL);
	dev_packet *ro = dev_packet_new("t/pktro", NULL, NULL, NULL, NULL, NULL);
	dev_options o;
	dev_options_init(&o);
	uid_t other = getuid() + 1;
	o.write_uids = &other;
	o.n_write_uids = 1;
	dev_packet *locked = dev_packet_new("t/pktl", &o, NULL, &ops, got, NULL);
	sub_rx a = {0}, b = {0}, c = {0};
	dev_packet_sub *sa = dev_packet_sub_new("t/pktw", NULL, 0, NULL, NULL, on_state, &a, NULL);
	dev_packet_sub *sb = dev_packet_sub_new("t/pktro", NULL, 0, NULL, NULL, on_state, &b, NULL);
	dev_packet_sub *sc = dev_packet_sub_new("t/pktl", NULL, 0, NULL, NULL, on_state, &c, NULL);
	SPIN_UNTIL(a.up && b.up && c.up);
	acks k = {0};
	ck_assert_int_eq(dev_packet_sub_send(sa, "hello", 5, on_ack, &k), 0);
	ck_assert_int_eq(dev_packet_sub_send(sa, "bad", 3, on_ack, &k), 0);
	ck_assert_int_eq(dev_packet_sub_send(sb, "x", 1, on_ack, &k), 0);
	ck_assert_int_eq(dev_packet_sub_send(sc, "y", 1, on_ack, &k), 0);
	SPIN_UNTIL(k.n == 4);
	ck_assert_int_eq(k.err[0], 0);
	ck_assert_int_eq(k.err[1], -EINVAL);
	ck_assert_int_eq(k.err[2], -EOPNOTSUPP);
	ck_assert_int_eq(k.err[3], -EPERM);
	ck_assert_ptr_nonnull(strstr(k.text[3], "t/pktl"));
	ck_assert_uint_eq(got->len, 1);
	ck_assert_str_eq(got->pdata[0], "hello");
	/* a writer-only client (no on_packet) does not subscribe */
	ck_assert_uint_eq(dev_packet_subscribers(d), 0);
	dev_packet_sub_free(sa);
	dev_packet_sub_free(sb);
	dev_packet_sub_free(sc);
	dev_packet_free(d);
	dev_packet_free(ro);
	dev_packet_free(locked);
	g_ptr_array_unref(got);
}
END_TEST

typedef struct {
	int n;
	char msg[64][32];
	uint32_t dropped[64];
	uint64_t boot[64], seq[64];
	gboolean up;
} seq_rx;

static void on_seq(void *user, const char *msg, size_t len, uint32_t dropped, uint64_t boot, uint64_t seq)
{
	seq_rx *r = user;
	if (r->n < 64) {
		g_strlcpy(r->msg[r->n], msg, sizeof r->msg[0]);
		r->dropped[r->n] = dropped;
		r->boot[r->n] = boot;
		r->seq[r->n] = seq;
	}
	r->n++;
}

static void on_seq_state(void *user, gboolean up, int err) { ((seq_rx *)user)->up = up; }

/* History: a client that goes away and comes back with its cursor gets
 * what it missed, once, in order, then the new ones; one that missed more
 * than the history holds is told how many it lost; a cursor of an earlier
 * instance of the service gets everything the new instance holds; a client
 * without a cursor gets only new messages; plain subscribers are as
 * before. */
START_TEST(test_history_resume)
{
	dev_options o;
	dev_options_init(&o);
	o.history = 8;
	dev_packet *d = dev_packet_new("t/pkth", &o, NULL, NULL, NULL, NULL);
	seq_rx a = {0};
	sub_rx plain = {0};
	dev_packet_sub *sa = dev_packet_sub_new_from("t/pkth", "det:", 4, 0, 0, NULL, on_seq, on_seq_state, &a, NULL);
	dev_packet_sub *sp = dev_packet_sub_new("t/pkth", NULL, 0, NULL, on_packet, on_state, &plain, NULL);
	SPIN_UNTIL(a.up && plain.up && dev_packet_subscribers(d) == 2);
	sendf(d, "det:1");
	sendf(d, "noise");
	sendf(d, "det:2");
	SPIN_UNTIL(a.n == 2 && plain.n == 3);
	ck_assert_str_eq(a.msg[1], "det:2");
	ck_assert_uint_eq(a.seq[0], 1);
	ck_assert_uint_eq(a.seq[1], 3); /* the device's numbering: "noise" was 2 */
	ck_assert_uint_ne(a.boot[0], 0);
	uint64_t boot, next;
	dev_packet_sub_cursor(sa, &boot, &next);
	ck_assert_uint_eq(boot, a.boot[0]);
	ck_assert_uint_eq(next, 4);
	/* the client restarts: three messages while it is away */
	dev_packet_sub_free(sa);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	sendf(d, "det:3");
	sendf(d, "noise");
	sendf(d, "det:4");
	seq_rx b = {0};
	sa = dev_packet_sub_new_from("t/pkth", "det:", 4, boot, next, NULL, on_seq, on_seq_state, &b, NULL);
	SPIN_UNTIL(b.n == 2);
	sendf(d, "det:5");
	SPIN_UNTIL(b.n == 3);
	tu_drain(3);
	ck_assert_int_eq(b.n, 3);
	ck_assert_str_eq(b.msg[0], "det:3");
	ck_assert_str_eq(b.msg[1], "det:4");
	ck_assert_str_eq(b.msg[2], "det:5");
	ck_assert_uint_eq(b.dropped[0], 0);
	dev_packet_sub_cursor(sa, &boot, &next);
	dev_packet_sub_free(sa);
	SPIN_UNTIL(dev_packet_subscribers(d) == 1);
	/* away for more than the history holds: 12 while away, 8 kept */
	for (int i = 6; i < 18; i++) {
		char m[16];
		snprintf(m, sizeof m, "det:%d", i);
		sendf(d, m);
	}
	seq_rx c = {0};
	sa = dev_packet_sub_new_from("t/pkth", "det:", 4, boot, next, NULL, on_seq, on_seq_state, &c, NULL);
	SPIN_UNTIL(c.n == 8);
	tu_drain(3);
	ck_assert_int_eq(c.n, 8);
	ck_assert_str_eq(c.msg[0], "det:10");
	ck_assert_uint_eq(c.dropped[0], 4); /* det:6 .. det:9 */
	ck_assert_str_eq(c.msg[7], "det:17");
	dev_packet_sub_free(sa);
	/* no cursor: new messages only */
	seq_rx e = {0};
	sa = dev_packet_sub_new_from("t/pkth", NULL, 0, 0, 0, NULL, on_seq, on_seq_state, &e, NULL);
	SPIN_UNTIL(e.up && dev_packet_subscribers(d) == 2);
	tu_drain(3);
	ck_assert_int_eq(e.n, 0);
	sendf(d, "det:18");
	SPIN_UNTIL(e.n == 1);
	ck_assert_str_eq(e.msg[0], "det:18");
	dev_packet_sub_cursor(sa, &boot, &next);
	dev_packet_sub_free(sa);
	ck_assert_int_eq(plain.n, 3 + 3 + 1 + 12 + 1);
	dev_packet_sub_free(sp);
	/* the service restarts: a cursor of the old instance gets all the new
	 * one holds, from its first message */
	dev_packet_free(d);
	d = dev_packet_new("t/pkth", &o, NULL, NULL, NULL, NULL);
	sendf(d, "det:a");
	sendf(d, "det:b");
	seq_rx f = {0};
	sa = dev_packet_sub_new_from("t/pkth", NULL, 0, boot, next, NULL, on_seq, on_seq_state, &f, NULL);
	SPIN_UNTIL(f.n == 2);
	ck_assert_str_eq(f.msg[0], "det:a");
	ck_assert_uint_eq(f.seq[0], 1);
	ck_assert_uint_ne(f.boot[0], boot);
	ck_assert_uint_eq(f.dropped[0], 0);
	dev_packet_sub_free(sa);
	dev_packet_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_packet");
	TCase *tc = tcase_create("packet");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_filters);
	tcase_add_test(tc, test_service_filter);
	tcase_add_test(tc, test_drop_oldest);
	tcase_add_test(tc, test_stalled_subscriber);
	tcase_add_test(tc, test_backpressure);
	tcase_add_test(tc, test_client_writes);
	tcase_add_test(tc, test_history_resume);
	tcase_add_test(tc, test_burst_in_order);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
