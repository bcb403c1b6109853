/* devsock.c — the shared-memory devices' sockets (see devsock.h). */
#include "audiod/devsock.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "audiod/error.h"
#include "libdev/dev.h"

int devsock_listen(const char *name, unsigned mode, char *path, size_t len, GError **err)
{
	const char *why = NULL;
	int rc = dev_path(name, path, len, &why);
	if (rc == 0)
		rc = dev_path_mkparents(path);
	if (rc < 0) {
		g_set_error(err, DEV_ERROR, -rc, "%s: %s", name, why ? why : g_strerror(-rc));
		return -1;
	}
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	g_strlcpy(a.sun_path, path, sizeof a.sun_path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0) {
		g_set_error(err, DEV_ERROR, errno, "%s: cannot listen: %s", path, g_strerror(errno));
	} else if (chmod(path, mode ? mode : 0660) < 0) {
		g_set_error(err, DEV_ERROR, errno, "%s: chmod: %s", path, g_strerror(errno));
		unlink(path);
	} else {
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

int devsock_connect(const char *name, char *path, size_t len, GError **err)
{
	const char *why = NULL;
	int rc = dev_path(name, path, len, &why);
	if (rc < 0) {
		g_set_error(err, AUDIOD_ERROR, -rc, "%s: %s", name, why);
		return rc;
	}
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	g_strlcpy(a.sun_path, path, sizeof a.sun_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		rc = -errno;
		g_set_error(err, AUDIOD_ERROR, errno, "%s: %s", path, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}
