/* appendlog.c — durable whole lines (appendlog.h). */
#include "libdev/appendlog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dev_appendlog_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

/* write(2) all of buf[len]; 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

int dev_appendlog_line(int fd, const char *text, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	int rc = write_all(fd, text, len);
	if (rc == 0)
		rc = write_all(fd, "\n", 1);
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	if (rc < 0) {
		/* No torn line: back to where the file was. */
		while (ftruncate(fd, st.st_size) < 0 && errno == EINTR)
			;
	}
	return rc;
}

int dev_appendlog_close(int fd)
{
	return close(fd) < 0 ? -errno : 0;
}
