/* test_libdev_tools.c — chorus-cat and chorus-ctl against real devices
 * served from a thread of this process: listing, status (text, binary),
 * command replies and exit codes, query, packet write and follow, sensor
 * follow to the end, and the errors for a missing device. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "tests/libdev_testutil.h"
#include "tests/check_run.h"

static char *bindir;

typedef struct {
	GMainContext *ctx;
	GMainLoop *loop;
	dev_status *st;
	dev_command *cmd;
	dev_query *q;
	dev_packet *pk;
	dev_sensor *sn;
	GThread *th;
	int value;
} svc;

static int st_text(void *u, GString *o)
{
	g_string_append_printf(o, "value %d\n", ((svc *)u)->value);
	return 0;
}

static int st_bin(void *u, GByteArray *o)
{
	g_byte_array_append(o, (const guint8 *)"\x01\x02\x03", 3);
	return 0;
}

static int cmd_run(void *u, const dev_creds *w, const char *c, GString *r)
{
	svc *s = u;
	if (g_str_has_prefix(c, "set ")) {
		s->value = atoi(c + 4);
		dev_status_notify(s->st);
		g_string_append_printf(r, "value set to %d", s->value);
		return 0;
	}
	g_string_append_printf(r, "no such command: %s", c);
	return -EINVAL;
}

static void cmd_usage(void *u, GString *o) { g_string_append(o, "set N   set the value\n"); }

static void q_fn(void *u, const dev_creds *w, const void *req, size_t len, dev_query_handle *h)
{
	char *up = g_ascii_strup(req, (gssize)len);
	dev_query_complete(h, 0, up, len);
	g_free(up);
}

static int pk_recv(void *u, const dev_creds *w, const void *m, size_t len)
{
	svc *s = u;
	/* echo what a client wrote to every subscriber */
	dev_packet_send(s->pk, m, len);
	return 0;
}

static void sn_range(void *u, int64_t *o, int64_t *n)
{
	*o = 0;
	*n = 1000;
}

static int sn_read(void *u, void *c, int64_t first, size_t n, void *buf)
{
	for (size_t i = 0; i < n; i++)
		((int16_t *)buf)[i] = (int16_t)(first + (int64_t)i);
	return 0;
}

static gpointer run(gpointer p)
{
	svc *s = p;
	g_main_context_push_thread_default(s->ctx);
	g_main_loop_run(s->loop);
	g_main_context_pop_thread_default(s->ctx);
	return NULL;
}

static svc *start(void)
{
	svc *s = g_new0(svc, 1);
	s->ctx = g_main_context_new();
	s->loop = g_main_loop_new(s->ctx, FALSE);
	s->st = dev_status_new("demo/status", NULL, s->ctx, st_text, st_bin, s, NULL);
	s->cmd = dev_command_new("demo/ctl", NULL, s->ctx, cmd_run, cmd_usage, s, NULL);
	s->q = dev_query_new("demo/query", NULL, s->ctx, q_fn, s, NULL);
	dev_packet_ops pops = {.recv = pk_recv};
	s->pk = dev_packet_new("demo/events", NULL, s->ctx, &pops, s, NULL);
	dev_sensor_ops sops = {sn_range, sn_read, NULL, NULL, NULL};
	s->sn = dev_sensor_new("demo/data", NULL, s->ctx, 2, &sops, s, NULL);
	ck_assert(s->st && s->cmd && s->q && s->pk && s->sn);
	s->th = g_thread_new("svc", run, s);
	return s;
}

static void stop(svc *s)
{
	g_main_loop_quit(s->loop);
	g_thread_join(s->th);
	dev_status_free(s->st);
	dev_command_free(s->cmd);
	dev_query_free(s->q);
	dev_packet_free(s->pk);
	dev_sensor_free(s->sn);
	g_main_loop_unref(s->loop);
	g_main_context_unref(s->ctx);
	g_free(s);
}

/* Run a tool; returns its exit code, output in *out / *err (g_free). */
static int tool(char **out, char **err, const char *prog, ...)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	g_ptr_array_add(argv, g_build_filename(bindir, prog, NULL));
	va_list ap;
	va_start(ap, prog);
	const char *a;
	while ((a = va_arg(ap, const char *)))
		g_ptr_array_add(argv, g_strdup(a));
	va_end(ap);
	g_ptr_array_add(argv, NULL);
	int status;
	GError *e = NULL;
	gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, 0, NULL, NULL, out, err, &status, &e);
	ck_assert_msg(ok, "spawn %s: %s", prog, e ? e->message : "");
	g_ptr_array_unref(argv);
	ck_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

START_TEST(test_cat_and_ctl)
{
	svc *s = start();
	char *out, *err;
	/* list */
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", NULL), 0);
	ck_assert_msg(strstr(out, "demo/status") && strstr(out, "demo/data") && strstr(out, "sensor"), "%s", out);
	ck_assert_ptr_nonnull(strstr(out, "query"));
	g_free(out), g_free(err);
	/* status */
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "demo/status", NULL), 0);
	ck_assert_str_eq(out, "value 0\n");
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "-b", "demo/status", NULL), 0);
	ck_assert_str_eq(out, "00000000  01 02 03\n");
	g_free(out), g_free(err);
	/* command: ok, error status -> errno exit code, usage */
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/ctl", "set", "7", NULL), 0);
	ck_assert_str_eq(out, "value set to 7");
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/ctl", "explode", NULL), EINVAL);
	ck_assert_str_eq(err, "no such command: explode");
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/ctl", NULL), 0);
	ck_assert_str_eq(out, "set N   set the value\n");
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "demo/ctl", NULL), 0);
	ck_assert_str_eq(out, "set N   set the value\n");
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "demo/status", NULL), 0);
	ck_assert_str_eq(out, "value 7\n");
	g_free(out), g_free(err);
	/* query */
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/query", "hello", "world", NULL), 0);
	ck_assert_str_eq(out, "HELLO WORLD");
	g_free(out), g_free(err);
	/* sensor: a past range to its end */
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "--from=10", "--to=20", "demo/data", NULL), 0);
	ck_assert_str_eq(out, "open 10 .. 20, 2 bytes per item\ndata 10 +10\nend 20\n");
	g_free(out), g_free(err);
	/* wrong uses and missing devices: exit 125 / 1 with the path */
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/status", "x", NULL), 125);
	ck_assert_ptr_nonnull(strstr(err, "status device"));
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/none", "x", NULL), 125);
	ck_assert_msg(strstr(err, "demo/none") && strstr(err, "No such file"), "%s", err);
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "demo/none", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "demo/none"));
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-cat", "../etc", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, ".."));
	g_free(out), g_free(err);
	stop(s);
}
END_TEST

typedef struct {
	char *out;
	int code;
	gboolean done;
} bg;

static void child_done(GPid pid, gint status, gpointer user)
{
	bg *b = user;
	b->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	b->done = TRUE;
	g_spawn_close_pid(pid);
}

/* Follow a status device and a packet device in the background while
 * chorus-ctl writes; they stop after -n updates/packets. */
START_TEST(test_follow)
{
	svc *s = start();
	char *cat = g_build_filename(bindir, "chorus-cat", NULL);
	char *sargv[] = {cat, "-f", "-n", "2", "demo/status", NULL};
	char *pargv[] = {cat, "-n", "1", "--filter=ev", "demo/events", NULL};
	GPid sp, pp;
	int sfd, pfd;
	ck_assert(g_spawn_async_with_pipes(NULL, sargv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &sp, NULL, &sfd,
					   NULL, NULL));
	ck_assert(g_spawn_async_with_pipes(NULL, pargv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pp, NULL, &pfd,
					   NULL, NULL));
	bg sb = {0}, pb = {0};
	g_child_watch_add(sp, child_done, &sb);
	g_child_watch_add(pp, child_done, &pb);
	/* wait for both to subscribe, then change the state and write packets */
	SPIN_UNTIL(dev_status_subscribers(s->st) == 1 && dev_packet_subscribers(s->pk) == 1);
	char *out, *err;
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/ctl", "set", "3", NULL), 0);
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/events", "noise", NULL), 0);
	g_free(out), g_free(err);
	ck_assert_int_eq(tool(&out, &err, "chorus-ctl", "demo/events", "ev", "1", NULL), 0);
	g_free(out), g_free(err);
	SPIN_UNTIL(sb.done && pb.done);
	ck_assert_int_eq(sb.code, 0);
	ck_assert_int_eq(pb.code, 0);
	char buf[256];
	ssize_t n = read(sfd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	ck_assert_str_eq(buf, "value 0\nvalue 3\n");
	n = read(pfd, buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = 0;
	ck_assert_str_eq(buf, "ev 1\n");
	close(sfd);
	close(pfd);
	g_free(cat);
	stop(s);
}
END_TEST

int main(int argc, char **argv)
{
	/* the tools live in ../bin relative to this test program */
	char *dir = g_path_get_dirname(argv[0]);
	bindir = g_build_filename(dir, "..", "bin", NULL);
	g_free(dir);
	Suite *s = suite_create("libdev_tools");
	TCase *tc = tcase_create("tools");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cat_and_ctl);
	tcase_add_test(tc, test_follow);
	suite_add_tcase(s, tc);
	int nf = tu_check_run(s);
	g_free(bindir);
	return nf ? 1 : 0;
}
