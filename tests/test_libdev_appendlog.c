/* test_libdev_appendlog.c — durable whole lines (libdev/appendlog.h): every
 * line that was accepted is in the file, one that failed left no trace (no
 * torn line), and after the failure the next line goes in again.  A full
 * disk is made with RLIMIT_FSIZE (writes past it fail with EFBIG, as they
 * would with ENOSPC on a full filesystem; tests/test_jsonl_full.sh runs
 * detect on a real full tmpfs). */
#include <check.h>
#include <errno.h>
#include <glib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libdev/appendlog.h"
#include "tests/check_run.h"

static char *tmpfile_path(const char *name)
{
	const char *dir = g_getenv("CHORUS_RUN") ? g_getenv("CHORUS_RUN") : g_get_tmp_dir();
	g_mkdir_with_parents(dir, 0755);
	char *p = g_build_filename(dir, name, NULL);
	unlink(p);
	return p;
}

START_TEST(lines_are_appended_whole)
{
	char *path = tmpfile_path("appendlog-a.jsonl");
	int fd = dev_appendlog_open(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dev_appendlog_line(fd, "{\"a\":1}", 7), 0);
	ck_assert_int_eq(dev_appendlog_line(fd, "{\"b\":2}", 7), 0);
	ck_assert_int_eq(dev_appendlog_close(fd), 0);
	/* Opened again: appended after what is there. */
	fd = dev_appendlog_open(path);
	ck_assert_int_eq(dev_appendlog_line(fd, "{\"c\":3}", 7), 0);
	ck_assert_int_eq(dev_appendlog_close(fd), 0);
	char *text = NULL;
	ck_assert(g_file_get_contents(path, &text, NULL, NULL));
	ck_assert_str_eq(text, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
	g_free(text);
	ck_assert_int_eq(dev_appendlog_open("/nonexistent-dir/x.jsonl"), -ENOENT);
	g_free(path);
}
END_TEST

START_TEST(a_full_disk_leaves_no_torn_line)
{
	char *path = tmpfile_path("appendlog-full.jsonl");
	/* In a child of its own: the limit would stop Check's own files. */
	char line[40];
	memset(line, 'x', sizeof line);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {100, 100}; /* a disk that holds 100 bytes */
		int fd = setrlimit(RLIMIT_FSIZE, &rl) == 0 ? dev_appendlog_open(path) : -1;
		if (fd < 0)
			_exit(99);
		int ok = 0, failed = 0;
		for (int i = 0; i < 5; i++) {
			int e = dev_appendlog_line(fd, line, sizeof line);
			if (e == 0)
				ok++;
			else if (e == -EFBIG)
				failed++;
			else
				_exit(98);
		}
		_exit(ok * 10 + failed);
	}
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	/* 41 bytes a line: two fit, the third would be torn at 100. */
	ck_assert_int_eq(WEXITSTATUS(st), 2 * 10 + 3);
	char *text = NULL;
	gsize len = 0;
	ck_assert(g_file_get_contents(path, &text, &len, NULL));
	ck_assert_uint_eq(len, 2 * (sizeof line + 1));
	ck_assert_int_eq(text[len - 1], '\n');
	g_free(text);
	/* Space again (no limit here): the next line goes in whole. */
	int fd = dev_appendlog_open(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(dev_appendlog_line(fd, "{}", 2), 0);
	ck_assert_int_eq(dev_appendlog_close(fd), 0);
	ck_assert(g_file_get_contents(path, &text, &len, NULL));
	ck_assert_uint_eq(len, 2 * (sizeof line + 1) + 3);
	ck_assert(g_str_has_suffix(text, "x\n{}\n"));
	g_free(text);
	g_free(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("appendlog");
	TCase *tc = tcase_create("appendlog");
	tcase_add_test(tc, lines_are_appended_whole);
	tcase_add_test(tc, a_full_disk_leaves_no_torn_line);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
