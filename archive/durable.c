/* durable.c — checked, crash-safe file operations (see durable.h). */
#include "archive/durable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK(chorus - archive - error - quark, archive_error)

static gboolean fail(GError **err, int e, const char *what, const char *path)
{
	g_set_error(err, ARCHIVE_ERROR, e, "%s: %s: %s", path, what, g_strerror(e));
	return FALSE;
}

gboolean archive_write_all(int fd, const char *path, const void *buf, size_t len, GError **err)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return fail(err, errno, "write", path);
		if (w == 0)
			return fail(err, EIO, "write wrote nothing", path);
		p += w;
		len -= (size_t)w;
	}
	return TRUE;
}

gboolean archive_fsync_path(const char *path, GError **err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errno, "open for fsync", path);
	int rc;
	while ((rc = fsync(fd)) < 0 && errno == EINTR)
		;
	int e = errno;
	close(fd); /* only read from */
	if (rc < 0)
		return fail(err, e, "fsync", path);
	return TRUE;
}

gboolean archive_write_atomic(const char *dir, const char *name, const void *buf, size_t len, GError **err)
{
	char *tmp = g_strdup_printf("%s/%s.tmp", dir, name), *dst = g_strdup_printf("%s/%s", dir, name);
	gboolean ok = FALSE;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail(err, errno, "create", tmp);
		goto out;
	}
	if (!archive_write_all(fd, tmp, buf, len, err)) {
		close(fd);
		goto out_unlink;
	}
	if (fsync(fd) < 0) {
		fail(err, errno, "fsync", tmp);
		close(fd);
		goto out_unlink;
	}
	if (close(fd) < 0) {
		fail(err, errno, "close", tmp);
		goto out_unlink;
	}
	if (rename(tmp, dst) < 0) {
		fail(err, errno, "rename", dst);
		goto out_unlink;
	}
	ok = archive_fsync_path(dir, err);
	goto out;
out_unlink:
	unlink(tmp);
out:
	g_free(tmp);
	g_free(dst);
	return ok;
}

gboolean archive_rename(const char *dir, const char *from, const char *to, GError **err)
{
	char *a = g_strdup_printf("%s/%s", dir, from), *b = g_strdup_printf("%s/%s", dir, to);
	gboolean ok = rename(a, b) == 0 ? TRUE : fail(err, errno, "rename", b);
	g_free(a);
	g_free(b);
	return ok && archive_fsync_path(dir, err);
}

gboolean archive_read_file(const char *path, char **text, size_t *len, GError **err)
{
	GError *e = NULL;
	gsize n;
	if (!g_file_get_contents(path, text, &n, &e)) {
		int code = e->code == G_FILE_ERROR_NOENT ? ENOENT : EIO;
		g_set_error(err, ARCHIVE_ERROR, code, "%s", e->message);
		g_error_free(e);
		return FALSE;
	}
	*len = n;
	return TRUE;
}
