/* test_rxfilter.c — syncd's receive-filter hook (syncd/rxfilter.h): the
 * loader (rxfilter.c) with the test filters of tests/rxfilter_test.c —
 * loading, calling, and a clear error for a missing file, a wrong ABI, a
 * missing symbol and a refusing open() — and the RBS receive path (rbs.c)
 * with a filter installed through CHORUS_RX_FILTER: packets from the
 * dropped node never reach decoding, moved receive times are the ones
 * used for beacons, and our own looped-back packets go through the filter. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libsync/now.h"
#include "syncd/rbs.h"
#include "syncd/rbs_wire.h"
#include "syncd/rxbpf.h"
#include "syncd/rxfilter_load.h"
#include "tests/check_run.h"

#define S_NS 1000000000LL

static char *so(const char *name)
{
	return g_build_filename(RXF_TEST_DIR, name, NULL);
}

START_TEST(test_load_and_call)
{
	char *path = so("rxfilter_test.so");
	GError *err = NULL;
	syncd_rxf *f = syncd_rxf_load(path, "3 4 250", 1, &err);
	ck_assert_msg(f != NULL, "%s", err ? err->message : "?");
	int64_t t = 1000;
	ck_assert(!syncd_rxf_deliver(f, 3, &t));
	ck_assert_int_eq(t, 1000);
	ck_assert(syncd_rxf_deliver(f, 4, &t));
	ck_assert_int_eq(t, 1250);
	ck_assert(syncd_rxf_deliver(f, 1, &t)); /* our own packet */
	ck_assert_int_eq(t, 1250);
	GString *d = g_string_new(NULL);
	syncd_rxf_describe(f, d);
	ck_assert_str_eq(d->str, "test filter: node1 kept=2 dropped=1 own=1 shifted=1\n");
	g_string_free(d, TRUE);
	syncd_rxf_free(f);
	syncd_rxf_free(NULL);
	g_free(path);
}
END_TEST

/* Loading `name` with `arg` fails with `code` and a message naming the
 * path and containing `what`. */
static void load_fails(const char *name, const char *arg, int code, const char *what)
{
	char *path = so(name);
	GError *err = NULL;
	ck_assert_ptr_null(syncd_rxf_load(path, arg, 1, &err));
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(g_error_matches(err, SYNCD_RXFILTER_ERROR, code), "%s: code %d, not %d", name, err->code, code);
	ck_assert_msg(strstr(err->message, path), "message does not name the path: %s", err->message);
	ck_assert_msg(strstr(err->message, what), "message lacks \"%s\": %s", what, err->message);
	g_error_free(err);
	g_free(path);
}

START_TEST(test_load_errors)
{
	/* dlerror() names the file it could not open. */
	load_fails("no_such_filter.so", NULL, ENOENT, "cannot load it: ");
	load_fails("no_such_filter.so", NULL, ENOENT, "No such file");
	load_fails("rxfilter_badabi.so", "3 4 0", EPROTO, "ABI 99, but this syncd speaks ABI 2");
	load_fails("rxfilter_nosym.so", "3 4 0", ENOEXEC, "no symbol syncd_rxfilter: ");
	load_fails("rxfilter_nosym.so", "3 4 0", ENOEXEC, "undefined symbol: syncd_rxfilter");
	load_fails("rxfilter_test.so", "refuse", EINVAL, "refused node1 with argument refuse: refused on purpose");
	load_fails("rxfilter_test.so", NULL, EINVAL, "argument is not DROP SHIFT_NODE SHIFT_NS");
}
END_TEST

START_TEST(test_load_env)
{
	syncd_rxf *f = (syncd_rxf *)(void *)&f;
	GError *err = NULL;
	g_unsetenv("CHORUS_RX_FILTER");
	ck_assert(syncd_rxf_load_env(2, &f, &err));
	ck_assert_ptr_null(f);
	g_setenv("CHORUS_RX_FILTER", "", TRUE);
	ck_assert(syncd_rxf_load_env(2, &f, &err));
	ck_assert_ptr_null(f);
	/* Set but not loadable: an error, so syncd refuses to start. */
	char *path = so("no_such_filter.so");
	g_setenv("CHORUS_RX_FILTER", path, TRUE);
	ck_assert(!syncd_rxf_load_env(2, &f, &err));
	ck_assert_ptr_null(f);
	ck_assert_ptr_nonnull(strstr(err->message, path));
	g_clear_error(&err);
	g_free(path);
	path = so("rxfilter_test.so");
	g_setenv("CHORUS_RX_FILTER", path, TRUE);
	g_setenv("CHORUS_RX_FILTER_ARG", "7 8 0", TRUE);
	ck_assert(syncd_rxf_load_env(2, &f, &err));
	ck_assert_ptr_nonnull(f);
	int64_t t = 5;
	ck_assert(!syncd_rxf_deliver(f, 7, &t));
	syncd_rxf_free(f);
	g_unsetenv("CHORUS_RX_FILTER");
	g_unsetenv("CHORUS_RX_FILTER_ARG");
	g_free(path);
}
END_TEST

/* --- the RBS receive path ------------------------------------------------ */

static gboolean stop(gpointer data)
{
	*(gboolean *)data = TRUE;
	return G_SOURCE_REMOVE;
}

/* Run ctx for ms milliseconds. */
static void spin(GMainContext *ctx, guint ms)
{
	gboolean done = FALSE;
	GSource *t = g_timeout_source_new(ms);
	g_source_set_callback(t, stop, &done, NULL);
	g_source_attach(t, ctx);
	g_source_unref(t);
	while (!done)
		g_main_context_iteration(ctx, TRUE);
}

static int changes;

static void on_change(void *user, syncd_change what)
{
	if (what != SYNCD_SETTLED)
		changes++;
}

/* The value of `key=` in text, or -1. */
static long long field(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? g_ascii_strtoll(p + strlen(key), NULL, 10) : -1;
}

START_TEST(test_rbs_receive_path)
{
	/* Node 1's RBS on 127.0.0.1 with the test filter dropping node 3 and
	 * moving node 4's receive times by +1 s.  We send it beacons from
	 * nodes 3, 4 and 5 and packets from 3 and 5 whose bodies do not
	 * decode: only node 5's broken ones may count as bad, since node 3's
	 * are dropped before decoding. */
	char *path = so("rxfilter_test.so");
	g_setenv("CHORUS_RX_FILTER", path, TRUE);
	g_setenv("CHORUS_RX_FILTER_ARG", "3 4 1000000000", TRUE);
	int port = 20000 + (int)(getpid() % 20000);
	syncd_config cfg = {
		.node = 1,
		.root = -1,
		.rtcpu_tries = 3,
		.rbs = TRUE,
		.rbs_port = port,
		.rbs_address = "127.0.0.1",
		.rbs_interface = "",
		.rbs_beacon = TRUE,
		.beacon_interval_s = 0.05,
		.report_interval_s = 10,
		.advert_interval_s = 10,
		.rbs_window = 64,
		.rbs_min = 8,
		.rbs_max_span_s = 300,
		.peer_timeout_s = 10,
		.node_timeout_s = 15,
		.edge_expire_s = 30,
		.key_file = "",
		.insecure = TRUE, /* the test's packets are unauthenticated */
		.peers = "",
		.max_peers = 256,
		.boot_file = "",
		.window = 64,
		.reject_k = 3.5,
		.wander_ppm = 0.1,
	};
	syncd_pairs_cfg pc = {.window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 600 * S_NS, .expire_ns = 120 * S_NS};
	syncd_pairs *pairs = syncd_pairs_new(&pc);
	syncd_notify n = {on_change, NULL};
	syncd_root *root = syncd_root_new(1, -1, 3, 0, n);
	GMainContext *ctx = g_main_context_new();
	GError *err = NULL;
	syncd_rbs *r = syncd_rbs_new(&cfg, pairs, root, n, ctx, &err);
	ck_assert_msg(r != NULL, "%s", err ? err->message : "?");

	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	uint8_t buf[RBS_MAX_PACKET];
	int64_t t_sent = sync_now(SYNC_KIND_CPU);
	for (uint32_t seq = 0; seq < 10; seq++)
		for (uint32_t node = 3; node <= 5; node++) {
			rbs_packet p = {.type = RBS_BEACON, .sender = node, .seq = seq};
			int len = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
			ck_assert_int_gt(len, 0);
			ck_assert_int_eq(sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&to, sizeof to), len);
		}
	for (uint32_t node = 3; node <= 5; node += 2) {
		/* A beacon with a body: the header is fine, decoding is not. */
		rbs_packet p = {.type = RBS_BEACON, .sender = node, .seq = 99};
		int len = rbs_wire_encode(&p, NULL, 0, buf, sizeof buf);
		memset(buf + len, 0xAB, 8);
		ck_assert_int_eq(sendto(fd, buf, (size_t)len + 8, 0, (struct sockaddr *)&to, sizeof to), len + 8);
	}
	spin(ctx, 400); /* our own beacons loop back meanwhile, every ~50 ms */
	close(fd);

	GString *d = g_string_new(NULL);
	syncd_rbs_describe(r, sync_now(SYNC_KIND_CPU), d);
	const char *st = d->str;
	ck_assert_msg(field(st, "rx_beacon=") == 20, "%s", st); /* 10 from node 4, 10 from node 5 */
	ck_assert_msg(field(st, "bad_size=") == 1, "%s", st);   /* node 5's broken one only */
	ck_assert_msg(field(st, "dropped=") == 11, "%s", st);   /* node 3's 10 beacons and its broken one */
	ck_assert_msg(field(st, "shifted=") == 10, "%s", st);
	long long own = field(st, "own_beacons=");
	ck_assert_msg(own >= 2 && field(st, "own=") == own, "own beacons %lld, through the filter %lld: %s", own,
		      field(st, "own="), st);
	ck_assert_msg(strstr(st, "\ntest filter: node1 "), "no filter line on sync/rbs: %s", st);
	ck_assert_int_ge(changes, 1); /* the bad packet's counter is on sync/rbs */
	/* The receptions the core keeps: node 4's moved by the filter's second,
	 * node 5's not (both were sent before t_sent + 0.4 s). */
	rbs_reception rx[256];
	size_t k = rbs_core_recent(syncd_rbs_core(r), 0, rx, G_N_ELEMENTS(rx));
	int n4 = 0, n5 = 0;
	for (size_t i = 0; i < k; i++) {
		if (rx[i].sender == 4) {
			n4++;
			ck_assert_int_gt(rx[i].t_ns, t_sent + S_NS - 1000000);
			ck_assert_int_lt(rx[i].t_ns, t_sent + S_NS + 400000000);
		} else if (rx[i].sender == 5) {
			n5++;
			ck_assert_int_gt(rx[i].t_ns, t_sent - 1000000);
			ck_assert_int_lt(rx[i].t_ns, t_sent + 400000000);
		} else {
			ck_assert_uint_ne(rx[i].sender, 3);
		}
	}
	ck_assert_int_eq(n4, 10);
	ck_assert_int_eq(n5, 10);
	g_string_free(d, TRUE);
	syncd_rbs_free(r);
	syncd_root_free(root);
	syncd_pairs_free(pairs);
	g_main_context_unref(ctx);
	g_unsetenv("CHORUS_RX_FILTER");
	g_unsetenv("CHORUS_RX_FILTER_ARG");
	g_free(path);
}
END_TEST

START_TEST(test_rbs_refuses_bad_filter)
{
	/* syncd_rbs_new fails (so syncd does not start) when CHORUS_RX_FILTER
	 * names an object that does not load. */
	char *path = so("rxfilter_badabi.so");
	g_setenv("CHORUS_RX_FILTER", path, TRUE);
	syncd_config cfg = {.node = 1, .root = -1, .rtcpu_tries = 3, .rbs = TRUE, .rbs_port = 9, .rbs_address = "127.0.0.1", .rbs_interface = "", .beacon_interval_s = 1, .report_interval_s = 1, .advert_interval_s = 1, .rbs_window = 64, .rbs_min = 8, .rbs_max_span_s = 300, .peer_timeout_s = 10, .node_timeout_s = 15, .edge_expire_s = 30, .key_file = "", .insecure = TRUE, .peers = "", .max_peers = 256, .boot_file = "", .reject_k = 3.5, .wander_ppm = 0.1};
	syncd_pairs_cfg pc = {.window = 64, .reject_k = 3.5, .wander = 1e-7, .max_span_ns = 600 * S_NS, .expire_ns = 120 * S_NS};
	syncd_pairs *pairs = syncd_pairs_new(&pc);
	syncd_root *root = syncd_root_new(1, -1, 3, 0, (syncd_notify){NULL, NULL});
	GError *err = NULL;
	ck_assert_ptr_null(syncd_rbs_new(&cfg, pairs, root, (syncd_notify){NULL, NULL}, NULL, &err));
	ck_assert(g_error_matches(err, SYNCD_RXFILTER_ERROR, EPROTO));
	ck_assert_ptr_nonnull(strstr(err->message, path));
	g_error_free(err);
	syncd_root_free(root);
	syncd_pairs_free(pairs);
	g_unsetenv("CHORUS_RX_FILTER");
	g_free(path);
}
END_TEST

/* A datagram whose RBS header names `sender` (offset 8, little-endian),
 * `len` bytes long, from tx to port. */
static void send_from(int tx, int port, uint32_t sender, size_t len)
{
	uint8_t b[64] = {0};
	b[8] = (uint8_t)sender;
	b[9] = (uint8_t)(sender >> 8);
	b[10] = (uint8_t)(sender >> 16);
	b[11] = (uint8_t)(sender >> 24);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(sendto(tx, b, len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)len);
}

/* The kernel filter (syncd/rxbpf.h) keeps only the named senders' packets,
 * and drops one too short to name a sender. */
START_TEST(test_kernel_filter)
{
	int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	ck_assert_int_eq(bind(rx, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(getsockname(rx, (struct sockaddr *)&a, &al), 0);
	int port = ntohs(a.sin_port);
	const uint32_t keep[] = {2, 0x01020305u, 77};
	char why[160];
	ck_assert_int_eq(syncd_rxbpf_attach(rx, keep, 3, why, sizeof why), 0);
	uint32_t many[SYNCD_RXBPF_MAX + 1] = {0};
	ck_assert_int_eq(syncd_rxbpf_attach(rx, many, SYNCD_RXBPF_MAX + 1, why, sizeof why), -E2BIG);
	send_from(tx, port, 3, 24);
	send_from(tx, port, 2, 24);
	send_from(tx, port, 0x05030201u, 24); /* the bytes of a kept id, reversed */
	send_from(tx, port, 77, 11);          /* too short to hold the sender */
	send_from(tx, port, 0x01020305u, 40);
	send_from(tx, port, 77, 12);
	uint32_t got[8];
	int n = 0;
	uint8_t b[64];
	ssize_t r;
	g_usleep(50000);
	while (n < 8 && (r = recv(rx, b, sizeof b, MSG_DONTWAIT)) > 0)
		got[n++] = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(got[0], 2);
	ck_assert_uint_eq(got[1], 0x01020305u);
	ck_assert_uint_eq(got[2], 77);
	close(rx);
	close(tx);
}
END_TEST

int main(void)
{
	const char *why = NULL;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "test_rxfilter: %s\n", why);
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("rxfilter");
	TCase *tc = tcase_create("loader");
	tcase_add_test(tc, test_load_and_call);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_load_env);
	tcase_add_test(tc, test_kernel_filter);
	suite_add_tcase(s, tc);
	TCase *tr = tcase_create("rbs");
	tcase_add_test(tr, test_rbs_receive_path);
	tcase_add_test(tr, test_rbs_refuses_bad_filter);
	suite_add_tcase(s, tr);
	return tu_check_run(s);
}
