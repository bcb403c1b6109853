/* test_proxy_peers.c — a node the nodes file does not list is found where
 * this node's syncd hears its sync packets (sync/peers, issue 19 item 1):
 * demo devices in a thread of this process and a real chorus-proxy child
 * (tests/proxy_fixture.h), as in tests/test_proxy.c. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libdev/remote.h"
#include "tests/proxy_fixture.h"
#include "tests/check_run.h"

#define KEEPALIVE_MS 200
#define TMO_MS 2000

static char *bindir;
static pfx *F;

static void setup(void) { F = pfx_start(bindir, KEEPALIVE_MS, NULL); }
static void teardown(void)
{
	pfx_stop(F);
	F = NULL;
}

/* A stand-in for syncd's sync/peers (syncd_rbs_describe_peers): where the
 * sync protocol's packets of node 7 come from. */
static dev_status *peers;
static int peers_text(void *user, GString *out)
{
	g_string_append(out, "node=2 addr=192.0.2.9 age_s=1.0 authenticated\nnode=7 addr=127.0.0.1 age_s=0.4 authenticated\n");
	return 0;
}

static void peers_up(pfx *f, void *data)
{
	GError *e = NULL;
	peers = data ? dev_status_new("sync/peers", NULL, f->ctx, peers_text, NULL, NULL, &e) : NULL;
	if (data && !peers)
		g_error("sync/peers: %s", e->message);
}

static void peers_down(pfx *f, void *data)
{
	dev_status_free(peers);
	peers = NULL;
}

/* A node the nodes file does not list is found where this node's syncd
 * hears its beacons (sync/peers), by name or under CHORUS_REMOTE (which
 * must not send the sync/peers lookup itself to the remote node); without
 * that device the error says both places were looked in. */
START_TEST(found_by_beacons)
{
	GByteArray *b = g_byte_array_new();
	ck_assert_int_eq(dev_status_read_sync("node7:demo/status", FALSE, b, TMO_MS), -ENXIO);
	ck_assert_msg(strstr((char *)b->data, "has not heard it (sync/peers)"), "%s", b->data);
	pfx_call(F, peers_up, (void *)1);
	ck_assert_int_eq(dev_status_read_sync("node7:demo/status", FALSE, b, TMO_MS), 0);
	ck_assert_str_eq((char *)b->data, "value 0\n");
	g_setenv("CHORUS_REMOTE", "7", TRUE);
	ck_assert_int_eq(dev_status_read_sync("demo/status", FALSE, b, TMO_MS), 0);
	ck_assert_str_eq((char *)b->data, "value 0\n");
	g_unsetenv("CHORUS_REMOTE");
	/* The nodes file wins over what was heard (node 3 listed, 2 heard elsewhere). */
	ck_assert_int_eq(dev_status_read_sync("node3:demo/status", FALSE, b, TMO_MS), 0);
	pfx_call(F, peers_down, NULL);
	g_byte_array_unref(b);
}
END_TEST

int main(int argc, char **argv)
{
	if (!(bindir = pfx_bindir(argv[0], "test_proxy_peers")))
		return 77;
	Suite *s = suite_create("proxy_peers");
	TCase *tc = tcase_create("peers");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, found_by_beacons);
	suite_add_tcase(s, tc);
	int nf = tu_check_run(s);
	g_free(bindir);
	return nf ? 1 : 0;
}
