/* test_libdev_cmdquery.c — Command and Query devices: replies and errors,
 * usage, credential rejection, per-client ordering of queries across
 * clients, asynchronous completion, completion after the client left or the
 * device was freed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

static int run_cmd(void *user, const dev_creds *who, const char *cmd, GString *reply)
{
	int *calls = user;
	(*calls)++;
	if (g_str_has_prefix(cmd, "echo ")) {
		g_string_append(reply, cmd + 5);
		return 0;
	}
	if (strcmp(cmd, "whoami") == 0) {
		g_string_append_printf(reply, "%u %u %d", (unsigned)who->uid, (unsigned)who->gid, (int)who->pid);
		return 0;
	}
	g_string_append_printf(reply, "unknown command '%s'", cmd);
	return -EINVAL;
}

static void usage(void *user, GString *out) { g_string_append(out, "echo TEXT | whoami\n"); }

typedef struct {
	int n;
	int err[16];
	int status[16];
	char data[16][128];
	size_t len[16];
} replies;

static void on_reply(void *user, int err, int status, const char *data, size_t len)
{
	replies *r = user;
	if (r->n < 16) {
		r->err[r->n] = err;
		r->status[r->n] = status;
		g_strlcpy(r->data[r->n], data, sizeof r->data[0]);
		r->len[r->n] = len;
		memcpy(r->data[r->n], data, MIN(len, sizeof r->data[0] - 1));
	}
	r->n++;
}

static void on_state(void *user, gboolean up, int err) { *(gboolean *)user = up; }

START_TEST(test_command_replies_and_errors)
{
	int calls = 0;
	dev_command *d = dev_command_new("t/cmd", NULL, NULL, run_cmd, usage, &calls, NULL);
	ck_assert_ptr_nonnull(d);
	gboolean up = FALSE;
	dev_caller *c = dev_caller_new("t/cmd", DEV_PATTERN_COMMAND, NULL, on_state, &up, NULL);
	/* not yet connected: a clear -ENOTCONN, no callback */
	replies r = {0};
	ck_assert_int_eq(dev_caller_call(c, "echo x", 6, on_reply, &r), -ENOTCONN);
	SPIN_UNTIL(up);
	ck_assert_int_eq(dev_caller_call(c, "echo hello", 10, on_reply, &r), 0);
	ck_assert_int_eq(dev_caller_call(c, "frobnicate", 10, on_reply, &r), 0);
	ck_assert_int_eq(dev_caller_call(c, "whoami", 6, on_reply, &r), 0);
	ck_assert_int_eq(dev_caller_usage(c, on_reply, &r), 0);
	ck_assert_int_eq(r.n, 0); /* never called from inside call */
	SPIN_UNTIL(r.n == 4);
	ck_assert_int_eq(r.err[0], 0);
	ck_assert_int_eq(r.status[0], 0);
	ck_assert_str_eq(r.data[0], "hello");
	ck_assert_int_eq(r.status[1], -EINVAL);
	ck_assert_str_eq(r.data[1], "unknown command 'frobnicate'");
	char want[64];
	snprintf(want, sizeof want, "%u %u %d", (unsigned)getuid(), (unsigned)getgid(), (int)getpid());
	ck_assert_str_eq(r.data[2], want);
	ck_assert_str_eq(r.data[3], "echo TEXT | whoami\n");
	ck_assert_int_eq(calls, 3);
	/* invalid command text is refused on the client side */
	ck_assert_int_eq(dev_caller_call(c, "a\0b", 3, on_reply, &r), -EINVAL);
	/* a command to a query device is refused by pattern */
	dev_caller *wrong = dev_caller_new("t/cmd", DEV_PATTERN_QUERY, NULL, NULL, NULL, NULL);
	tu_drain(5);
	ck_assert(!dev_caller_connected(wrong));
	dev_caller_free(wrong);
	dev_caller_free(c);
	dev_command_free(d);
}
END_TEST

static int deny_all(void *user, const dev_creds *who, char *why, size_t len)
{
	g_strlcpy(why, "maintenance mode", len);
	return -EPERM;
}

START_TEST(test_credential_rejection)
{
	int calls = 0;
	dev_options o;
	dev_options_init(&o);
	uid_t other = getuid() + 4242;
	o.write_uids = &other;
	o.n_write_uids = 1;
	dev_command *d = dev_command_new("t/locked", &o, NULL, run_cmd, usage, &calls, NULL);
	ck_assert_ptr_nonnull(d);
	gboolean up = FALSE;
	dev_caller *c = dev_caller_new("t/locked", DEV_PATTERN_COMMAND, NULL, on_state, &up, NULL);
	SPIN_UNTIL(up);
	replies r = {0};
	dev_caller_call(c, "echo hi", 7, on_reply, &r);
	dev_caller_usage(c, on_reply, &r); /* reading usage is not a write */
	SPIN_UNTIL(r.n == 2);
	ck_assert_int_eq(r.err[0], -EPERM);
	char want[64];
	snprintf(want, sizeof want, "uid %u gid %u", (unsigned)getuid(), (unsigned)getgid());
	ck_assert_msg(strstr(r.data[0], want) && strstr(r.data[0], "t/locked"), "message: %s", r.data[0]);
	ck_assert_int_eq(r.err[1], 0);
	ck_assert_int_eq(calls, 0);
	dev_caller_free(c);
	dev_command_free(d);

	/* a gid list that contains ours allows; a policy callback can still deny */
	gid_t mine = getgid();
	dev_options_init(&o);
	o.write_gids = &mine;
	o.n_write_gids = 1;
	o.write_check = deny_all;
	d = dev_command_new("t/locked2", &o, NULL, run_cmd, usage, &calls, NULL);
	up = FALSE;
	c = dev_caller_new("t/locked2", DEV_PATTERN_COMMAND, NULL, on_state, &up, NULL);
	SPIN_UNTIL(up);
	replies r2 = {0};
	dev_caller_call(c, "echo hi", 7, on_reply, &r2);
	SPIN_UNTIL(r2.n == 1);
	ck_assert_int_eq(r2.err[0], -EPERM);
	ck_assert_ptr_nonnull(strstr(r2.data[0], "maintenance mode"));
	dev_caller_free(c);
	dev_command_free(d);
}
END_TEST

/* The query service keeps its handles and completes them when told. */
typedef struct {
	GPtrArray *handles; /* dev_query_handle * */
	GPtrArray *reqs;    /* char *, same order */
	int max_outstanding_per_pid;
} qsvc;

static void on_query(void *user, const dev_creds *who, const void *req, size_t len, dev_query_handle *h)
{
	qsvc *q = user;
	char *s = g_strndup(req, len);
	if (strcmp(s, "now") == 0) { /* synchronous completion */
		dev_query_complete(h, 7, "at once", 7);
		g_free(s);
		return;
	}
	if (strcmp(s, "bin") == 0) { /* bytes with NULs in them */
		dev_query_complete(h, 0, "a\0b\0c", 5);
		g_free(s);
		return;
	}
	g_ptr_array_add(q->handles, h);
	g_ptr_array_add(q->reqs, s);
}

static int find_req(qsvc *q, const char *s)
{
	for (guint i = 0; i < q->reqs->len; i++)
		if (strcmp(q->reqs->pdata[i], s) == 0)
			return (int)i;
	return -1;
}

static void complete_req(qsvc *q, const char *s, int status)
{
	int i = find_req(q, s);
	ck_assert_msg(i >= 0, "request %s not with the service", s);
	char reply[64];
	snprintf(reply, sizeof reply, "re:%s", s);
	dev_query_complete(q->handles->pdata[i], status, reply, strlen(reply));
	g_ptr_array_remove_index(q->handles, i);
	g_free(q->reqs->pdata[i]);
	g_ptr_array_remove_index(q->reqs, i);
}

START_TEST(test_query_order_and_async)
{
	qsvc q = {g_ptr_array_new(), g_ptr_array_new(), 0};
	dev_query *d = dev_query_new("t/query", NULL, NULL, on_query, &q, NULL);
	ck_assert_ptr_nonnull(d);
	gboolean upa = FALSE, upb = FALSE;
	dev_caller *a = dev_caller_new("t/query", DEV_PATTERN_QUERY, NULL, on_state, &upa, NULL);
	dev_caller *b = dev_caller_new("t/query", DEV_PATTERN_QUERY, NULL, on_state, &upb, NULL);
	SPIN_UNTIL(upa && upb);
	replies ra = {0}, rb = {0};
	for (int i = 0; i < 3; i++) {
		char s[8];
		snprintf(s, sizeof s, "a%d", i);
		ck_assert_int_eq(dev_caller_call(a, s, strlen(s), on_reply, &ra), 0);
		snprintf(s, sizeof s, "b%d", i);
		ck_assert_int_eq(dev_caller_call(b, s, strlen(s), on_reply, &rb), 0);
	}
	/* one request per client is with the service at a time */
	SPIN_UNTIL(q.reqs->len == 2);
	tu_drain(5);
	ck_assert_uint_eq(q.reqs->len, 2);
	ck_assert_int_ge(find_req(&q, "a0"), 0);
	ck_assert_int_ge(find_req(&q, "b0"), 0);
	/* completing b's first lets b's second in; a is not affected */
	complete_req(&q, "b0", 0);
	SPIN_UNTIL(rb.n == 1 && find_req(&q, "b1") >= 0);
	ck_assert_int_eq(ra.n, 0);
	ck_assert_str_eq(rb.data[0], "re:b0");
	complete_req(&q, "b1", 1);
	complete_req(&q, "a0", 2);
	SPIN_UNTIL(find_req(&q, "a1") >= 0 && find_req(&q, "b2") >= 0);
	complete_req(&q, "a1", 3);
	SPIN_UNTIL(find_req(&q, "a2") >= 0);
	complete_req(&q, "a2", 4);
	complete_req(&q, "b2", 5);
	SPIN_UNTIL(ra.n == 3 && rb.n == 3);
	ck_assert_str_eq(ra.data[0], "re:a0");
	ck_assert_str_eq(ra.data[1], "re:a1");
	ck_assert_str_eq(ra.data[2], "re:a2");
	ck_assert_int_eq(ra.status[2], 4);
	ck_assert_str_eq(rb.data[1], "re:b1");
	ck_assert_str_eq(rb.data[2], "re:b2");
	ck_assert_int_eq(rb.status[2], 5);
	/* synchronous completion inside the callback */
	dev_caller_call(a, "now", 3, on_reply, &ra);
	SPIN_UNTIL(ra.n == 4);
	ck_assert_int_eq(ra.status[3], 7);
	ck_assert_str_eq(ra.data[3], "at once");
	/* a binary reply arrives whole, NULs and all */
	dev_caller_call(a, "bin", 3, on_reply, &ra);
	SPIN_UNTIL(ra.n == 5);
	ck_assert_uint_eq(ra.len[4], 5);
	ck_assert(memcmp(ra.data[4], "a\0b\0c", 5) == 0);

	/* completion after the client left: a no-op returning -ENOTCONN */
	dev_caller_call(b, "late", 4, on_reply, &rb);
	SPIN_UNTIL(find_req(&q, "late") >= 0);
	dev_caller_free(b);
	int i = find_req(&q, "late");
	dev_query_handle *h = q.handles->pdata[i];
	SPIN_UNTIL(!dev_query_handle_alive(h));
	ck_assert_int_eq(dev_query_complete(h, 0, "x", 1), -ENOTCONN);
	g_ptr_array_remove_index(q.handles, i);
	g_free(q.reqs->pdata[i]);
	g_ptr_array_remove_index(q.reqs, i);
	ck_assert_int_eq(rb.n, 3);

	/* completion after the device was freed: also a no-op */
	dev_caller_call(a, "orphan", 6, on_reply, &ra);
	SPIN_UNTIL(find_req(&q, "orphan") >= 0);
	h = q.handles->pdata[0];
	ck_assert_int_eq(dev_query_handle_creds(h)->uid, getuid());
	dev_query_free(d);
	SPIN_UNTIL(ra.n == 6); /* the caller sees the connection reset */
	ck_assert_int_eq(ra.err[5], -ECONNRESET);
	ck_assert_int_eq(dev_query_complete(h, 0, "x", 1), -ENOTCONN);
	dev_caller_free(a);
	g_ptr_array_free(q.handles, TRUE);
	for (guint j = 0; j < q.reqs->len; j++)
		g_free(q.reqs->pdata[j]);
	g_ptr_array_free(q.reqs, TRUE);
}
END_TEST

/* Blocking helpers for commands and queries, service on another thread. */
typedef struct {
	GMainContext *ctx;
	GMainLoop *loop;
} thr;

static gpointer run_loop(gpointer p)
{
	thr *t = p;
	g_main_context_push_thread_default(t->ctx);
	g_main_loop_run(t->loop);
	g_main_context_pop_thread_default(t->ctx);
	return NULL;
}

static void q_upper(void *user, const dev_creds *who, const void *req, size_t len, dev_query_handle *h)
{
	char *s = g_ascii_strup(req, (gssize)len);
	dev_query_complete(h, (int)len, s, len);
	g_free(s);
}

START_TEST(test_sync_helpers)
{
	thr t = {g_main_context_new(), NULL};
	t.loop = g_main_loop_new(t.ctx, FALSE);
	int calls = 0;
	dev_command *dc = dev_command_new("t/scmd", NULL, t.ctx, run_cmd, usage, &calls, NULL);
	dev_query *dq = dev_query_new("t/squery", NULL, t.ctx, q_upper, NULL, NULL);
	ck_assert(dc && dq);
	GThread *th = g_thread_new("svc", run_loop, &t);
	int st = 99;
	GString *msg = g_string_new(NULL);
	ck_assert_int_eq(dev_command_run_sync("t/scmd", "echo sync", &st, msg, 5000), 0);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(msg->str, "sync");
	ck_assert_int_eq(dev_command_run_sync("t/scmd", "nope", &st, msg, 5000), 0);
	ck_assert_int_eq(st, -EINVAL);
	ck_assert_int_eq(dev_command_run_sync("t/squery", "echo x", &st, msg, 5000), -EPROTOTYPE);
	ck_assert_int_eq(dev_command_run_sync("t/absent", "echo x", &st, msg, 5000), -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg->str, "t/absent"));
	GByteArray *out = g_byte_array_new();
	ck_assert_int_eq(dev_query_run_sync("t/squery", "abc", 3, &st, out, 5000), 0);
	ck_assert_int_eq(st, 3);
	ck_assert_uint_eq(out->len, 3);
	ck_assert(memcmp(out->data, "ABC", 3) == 0);
	dev_link *l = dev_link_open("t/scmd", 5000, NULL);
	ck_assert_int_eq(dev_link_usage(l, out, 5000), 0);
	ck_assert_uint_eq(out->len, strlen("echo TEXT | whoami\n"));
	dev_link_close(l);
	g_main_loop_quit(t.loop);
	g_thread_join(th);
	dev_command_free(dc);
	dev_query_free(dq);
	g_main_loop_unref(t.loop);
	g_main_context_unref(t.ctx);
	g_string_free(msg, TRUE);
	g_byte_array_unref(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_cmdquery");
	TCase *tc = tcase_create("cmdquery");
	tcase_add_test(tc, test_command_replies_and_errors);
	tcase_add_test(tc, test_credential_rejection);
	tcase_add_test(tc, test_query_order_and_async);
	tcase_add_test(tc, test_sync_helpers);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
