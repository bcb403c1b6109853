/* test_libdev_status.c — Status devices: several readers, coalesced
 * notification, no rendering when nobody reads, binary form, blocking reads
 * from another thread. */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

typedef struct {
	int value;
	int text_calls, bin_calls;
} svc;

static int svc_text(void *user, GString *out)
{
	svc *s = user;
	s->text_calls++;
	g_string_append_printf(out, "value %d\n", s->value);
	return 0;
}

static int svc_bin(void *user, GByteArray *out)
{
	svc *s = user;
	s->bin_calls++;
	int32_t v = s->value;
	g_byte_array_append(out, (const guint8 *)&v, 4);
	return 0;
}

typedef struct {
	int updates;
	int err;
	char last[64];
	int32_t last_bin;
	gboolean up;
	int ups, downs;
} rd;

static void on_update(void *user, int err, const char *data, size_t len)
{
	rd *r = user;
	r->updates++;
	r->err = err;
	if (len == 4)
		memcpy(&r->last_bin, data, 4);
	g_strlcpy(r->last, data, sizeof r->last);
}

static void on_state(void *user, gboolean up, int err)
{
	rd *r = user;
	r->up = up;
	if (up)
		r->ups++;
	else
		r->downs++;
}

START_TEST(test_readers_and_coalescing)
{
	svc s = {.value = 0};
	GError *e = NULL;
	dev_status *d = dev_status_new("t/status", NULL, NULL, svc_text, svc_bin, &s, &e);
	ck_assert_msg(d, "%s", e ? e->message : "");
	rd a = {0}, b = {0}, c = {0};
	dev_status_reader *ra = dev_status_reader_new("t/status", FALSE, NULL, on_update, on_state, &a, NULL);
	dev_status_reader *rb = dev_status_reader_new("t/status", FALSE, NULL, on_update, on_state, &b, NULL);
	dev_status_reader *rc = dev_status_reader_new("t/status", TRUE, NULL, on_update, on_state, &c, NULL);
	/* a reader that connects gets the current state */
	SPIN_UNTIL(a.updates == 1 && b.updates == 1 && c.updates == 1);
	ck_assert_str_eq(a.last, "value 0\n");
	ck_assert_str_eq(b.last, "value 0\n");
	ck_assert_int_eq(c.last_bin, 0);
	ck_assert(a.up && b.up && c.up);
	ck_assert_uint_eq(dev_status_subscribers(d), 3);
	/* both text readers were served from one rendering */
	ck_assert_int_eq(s.text_calls, 1);
	ck_assert_int_eq(s.bin_calls, 1);

	/* five changes before the loop runs: each reader sees only the latest */
	for (int i = 1; i <= 5; i++) {
		s.value = i;
		dev_status_notify(d);
	}
	SPIN_UNTIL(a.updates == 2 && b.updates == 2 && c.updates == 2);
	tu_drain(5);
	ck_assert_int_eq(a.updates, 2);
	ck_assert_int_eq(b.updates, 2);
	ck_assert_str_eq(a.last, "value 5\n");
	ck_assert_str_eq(b.last, "value 5\n");
	ck_assert_int_eq(c.last_bin, 5);
	ck_assert_int_eq(s.text_calls, 2);
	ck_assert_int_eq(s.bin_calls, 2);

	/* a reader that leaves: the others go on */
	dev_status_reader_free(rb);
	SPIN_UNTIL(dev_status_subscribers(d) == 2);
	s.value = 6;
	dev_status_notify(d);
	SPIN_UNTIL(a.updates == 3 && c.updates == 3);
	ck_assert_int_eq(b.updates, 2);

	dev_status_reader_free(ra);
	dev_status_reader_free(rc);
	dev_status_free(d);
}
END_TEST

/* Nothing is rendered when nobody reads, before or after readers. */
START_TEST(test_no_callback_without_readers)
{
	svc s = {0};
	dev_status *d = dev_status_new("t/quiet", NULL, NULL, svc_text, svc_bin, &s, NULL);
	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < 10; i++) {
		s.value = i;
		dev_status_notify(d);
		tu_drain(2);
	}
	ck_assert_int_eq(s.text_calls, 0);
	ck_assert_int_eq(s.bin_calls, 0);

	rd a = {0};
	dev_status_reader *ra = dev_status_reader_new("t/quiet", FALSE, NULL, on_update, NULL, &a, NULL);
	SPIN_UNTIL(a.updates == 1);
	ck_assert_str_eq(a.last, "value 9\n");
	ck_assert_int_eq(s.text_calls, 1);
	dev_status_reader_free(ra);
	SPIN_UNTIL(dev_status_subscribers(d) == 0);
	int before = s.text_calls;
	for (int i = 0; i < 10; i++) {
		dev_status_notify(d);
		tu_drain(2);
	}
	ck_assert_int_eq(s.text_calls, before);
	ck_assert_int_eq(s.bin_calls, 0);
	dev_status_free(d);
}
END_TEST

static int fail_text(void *user, GString *out) { return -EAGAIN; }

/* A failing callback and a missing binary form reach the reader as errors. */
START_TEST(test_errors_reach_reader)
{
	dev_status *d = dev_status_new("t/failing", NULL, NULL, fail_text, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(d);
	rd a = {0}, b = {0};
	dev_status_reader *ra = dev_status_reader_new("t/failing", FALSE, NULL, on_update, NULL, &a, NULL);
	dev_status_reader *rb = dev_status_reader_new("t/failing", TRUE, NULL, on_update, NULL, &b, NULL);
	SPIN_UNTIL(a.updates == 1 && b.updates == 1);
	ck_assert_int_eq(a.err, -EAGAIN);
	ck_assert_int_eq(b.err, -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(b.last, "t/failing"));
	dev_status_reader_free(ra);
	dev_status_reader_free(rb);
	dev_status_free(d);
	/* a text callback is required */
	GError *e = NULL;
	ck_assert_ptr_null(dev_status_new("t/x", NULL, NULL, NULL, NULL, NULL, &e));
	ck_assert_int_eq(e->code, EINVAL);
	g_error_free(e);
}
END_TEST

/* Blocking reads (dev_status_read_sync) against a service on its own thread
 * and context. */
typedef struct {
	GMainContext *ctx;
	GMainLoop *loop;
	svc s;
	dev_status *d;
} thread_svc;

static gpointer run_loop(gpointer p)
{
	thread_svc *t = p;
	g_main_context_push_thread_default(t->ctx);
	g_main_loop_run(t->loop);
	g_main_context_pop_thread_default(t->ctx);
	return NULL;
}

START_TEST(test_sync_read_and_path_errors)
{
	thread_svc t = {0};
	t.s.value = 42;
	t.ctx = g_main_context_new();
	t.loop = g_main_loop_new(t.ctx, FALSE);
	t.d = dev_status_new("t/sync", NULL, t.ctx, svc_text, svc_bin, &t.s, NULL);
	ck_assert_ptr_nonnull(t.d);
	GThread *th = g_thread_new("svc", run_loop, &t);
	GByteArray *out = g_byte_array_new();
	ck_assert_int_eq(dev_status_read_sync("t/sync", FALSE, out, 5000), 0);
	ck_assert_str_eq((const char *)out->data, "value 42\n");
	ck_assert_int_eq(dev_status_read_sync("t/sync", TRUE, out, 5000), 0);
	ck_assert_uint_eq(out->len, 4);
	/* a missing device names the path it tried */
	ck_assert_int_eq(dev_status_read_sync("t/nothere", FALSE, out, 1000), -ENOENT);
	ck_assert_ptr_nonnull(strstr((const char *)out->data, "t/nothere"));
	/* a link: pattern and a second read on one connection */
	dev_link *l = dev_link_open("t/sync", 5000, NULL);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(dev_link_pattern(l), DEV_PATTERN_STATUS);
	ck_assert_int_eq(dev_link_status(l, FALSE, out, 5000), 0);
	int st;
	ck_assert_int_eq(dev_link_call(l, "x", 1, &st, out, 5000), -EPROTOTYPE);
	dev_link_close(l);
	g_main_loop_quit(t.loop);
	g_thread_join(th);
	dev_status_free(t.d);
	g_main_loop_unref(t.loop);
	g_main_context_unref(t.ctx);
	g_byte_array_unref(out);
}
END_TEST

/* Mode and group are applied to the socket file; a second live server on
 * the same path is refused; a stale file is replaced. */
START_TEST(test_socket_file)
{
	svc s = {0};
	dev_options o;
	dev_options_init(&o);
	o.mode = 0640;
	o.group = "0";
	GError *e = NULL;
	dev_status *d = dev_status_new("t/file", &o, NULL, svc_text, NULL, &s, &e);
	ck_assert_msg(d, "%s", e ? e->message : "");
	char p[DEV_PATH_MAX];
	dev_path("t/file", p, sizeof p, NULL);
	struct stat st;
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_uint_eq(st.st_gid, 0);
	ck_assert_ptr_null(dev_status_new("t/file", NULL, NULL, svc_text, NULL, &s, &e));
	ck_assert_int_eq(e->code, EADDRINUSE);
	ck_assert_ptr_nonnull(strstr(e->message, p));
	g_clear_error(&e);
	o.group = "no-such-group-chorus";
	ck_assert_ptr_null(dev_status_new("t/file2", &o, NULL, svc_text, NULL, &s, &e));
	ck_assert_int_eq(e->code, ENOENT);
	g_clear_error(&e);
	dev_status_free(d);
	ck_assert_int_ne(stat(p, &st), 0); /* removed */
	/* stale socket (bound, nobody listening) is replaced */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, p, sizeof sa.sun_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	close(fd);
	d = dev_status_new("t/file", NULL, NULL, svc_text, NULL, &s, &e);
	ck_assert_msg(d, "%s", e ? e->message : "");
	dev_status_free(d);
	/* a bad name is refused with the reason */
	ck_assert_ptr_null(dev_status_new("t/../x", NULL, NULL, svc_text, NULL, &s, &e));
	ck_assert_int_eq(e->code, EINVAL);
	g_clear_error(&e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_status");
	TCase *tc = tcase_create("status");
	tcase_add_test(tc, test_readers_and_coalescing);
	tcase_add_test(tc, test_no_callback_without_readers);
	tcase_add_test(tc, test_errors_reach_reader);
	tcase_add_test(tc, test_sync_read_and_path_errors);
	tcase_add_test(tc, test_socket_file);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
