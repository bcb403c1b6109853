/* test_clip_serve.c — collab's clip service against a real audiod and syncd
 * (tests/audiod_harness.h): a client that reads its reply only after 3 s
 * gets all of it, others are served meanwhile, and a client that never
 * reads is dropped after the send deadline with its connection freed.
 * (The reply goes out as the socket takes it, apps/collab/clip.c; on
 * loopback the kernel's send buffer takes a whole 2 s clip at once, so this
 * does not show the main loop staying free when the buffer fills: the
 * earlier blocking send passes it too, with its 2 s timeout.) */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "apps/collab/clip.h"
#include "apps/collab/clipmsg.h"
#include "libsync/client.h"
#include "libsync/now.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"
#include "tests/collab_testutil.h"

#define NODE 2

typedef struct {
	int port;
	int64_t t0, t1;
	int rc;
	size_t n;
	char why[256];
} fetch_job;

static gpointer fetch_thread(gpointer data)
{
	fetch_job *j = data;
	clip c;
	int rc = clip_fetch("127.0.0.1", j->port, j->t0, j->t1, 0, NULL, 0, 8000, &c, j->why, sizeof j->why);
	j->n = rc == 0 ? c.n : 0;
	g_free(c.x);
	g_atomic_int_set(&j->rc, rc);
	return NULL;
}

/* Connect with a small receive buffer, take the greeting, send a request
 * for [t0, t1) and read nothing yet. */
static int slow_client(int port, int64_t t0, int64_t t1)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int small = 2048;
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	char hello[80];
	size_t h = 0;
	while (h < sizeof hello - 1 && (h == 0 || hello[h - 1] != '\n')) {
		tu_spin(5);
		ssize_t k = recv(fd, hello + h, 1, MSG_DONTWAIT);
		if (k > 0)
			h++;
	}
	char req[128];
	g_snprintf(req, sizeof req, "GET v=2 from=%" G_GINT64_FORMAT " to=%" G_GINT64_FORMAT " channel=0\n", t0, t1);
	ck_assert_int_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	return fd;
}

/* Everything the socket holds until it closes (spinning the main context). */
static GByteArray *drain(int fd, int max_ms)
{
	GByteArray *b = g_byte_array_new();
	guint8 buf[65536];
	for (int waited = 0; waited < max_ms; waited += 5) {
		tu_spin(5);
		ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (k == 0)
			break;
		if (k > 0) {
			g_byte_array_append(b, buf, (guint)k);
			waited = 0;
		}
	}
	return b;
}

START_TEST(slow_clients_do_not_hold_the_service)
{
	ah_node h;
	ah_start(&h, NODE, "clip", NULL);
	ah_wait_frames(3 * (int64_t)h.rate_hz);
	GError *e = NULL;
	sync_client *sc = sync_client_new(NULL, NULL, NULL, NULL, &e);
	ck_assert_msg(sc, "%s", e ? e->message : "");
	ck_assert_int_eq(sync_client_wait(sc, AH_SAFETY_S * 1000), 0);
	int port = tu_udp_port();
	clip_server_cfg cfg = {NODE, 0, port, "127.0.0.1", NULL, 0, 4, 0};
	clip_server *srv = clip_server_new(&cfg, sc, NULL, &e);
	ck_assert_msg(srv, "%s", e ? e->message : "");
	sync_graph_result g;
	char why[256];
	ck_assert_msg(sync_client_convert(sc, sync_clock_cpu(NODE), sync_clock_global(), sync_tval_of(sync_now(SYNC_KIND_CPU)),
					  &g, why, sizeof why) == 0,
		      "%s", why);
	int64_t now_g = g.value.i;
	/* Two seconds of audio (128 kB of float samples) to a client that
	 * reads nothing for 3 s: more than its socket holds. */
	int slow = slow_client(port, now_g - 2500000000LL, now_g - 500000000LL);
	tu_spin(500);
	/* Meanwhile another client is served. */
	fetch_job j = {port, now_g - 1000000000LL, now_g - 900000000LL, 1, 0, ""};
	GThread *t = g_thread_new("fetch", fetch_thread, &j);
	while (g_atomic_int_get(&j.rc) == 1)
		tu_spin(10);
	g_thread_join(t);
	ck_assert_msg(j.rc == 0 && j.n > 0, "fetch while a slow client waits: %d %s", j.rc, j.why);
	/* The slow client, reading at last after 3 s, gets its whole reply. */
	tu_spin(2500);
	GByteArray *r = drain(slow, 4000);
	close(slow);
	const char *nl = memchr(r->data, '\n', r->len);
	ck_assert_msg(nl && !strncmp((char *)r->data, "OK v=1 ", 7), "slow client's reply: %.*s", (int)MIN(r->len, 200),
		      r->data);
	char *head = g_strndup((char *)r->data, (gsize)(nl - (char *)r->data));
	clip c = {0};
	char pw[200];
	ck_assert_msg(clip_parse_reply(head, &c, pw, sizeof pw) == 0, "%s", pw);
	ck_assert_uint_eq(r->len - (size_t)(nl + 1 - (char *)r->data), c.n * sizeof(float));
	ck_assert_uint_ge(c.n, 2 * h.rate_hz - 1);
	g_free(head);
	g_byte_array_unref(r);
	/* A client that never reads is dropped after the send deadline (5 s)
	 * and its connection freed. */
	int mute = slow_client(port, now_g - 2500000000LL, now_g - 500000000LL);
	tu_spin(7000);
	GString *d = g_string_new("");
	clip_server_describe(srv, d);
	ck_assert_msg(strstr(d->str, "served=3") && strstr(d->str, " open=0 "), "%s", d->str);
	g_string_free(d, TRUE);
	close(mute);
	clip_server_free(srv);
	sync_client_free(sc);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clip_serve");
	TCase *tc = tcase_create("serve");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, slow_clients_do_not_hold_the_service);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
