/* devsock.c — the shared-memory devices' sockets (see devsock.h). */
#include "audiod/devsock.h"

#include <errno.h>
#include <string.h>
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

int devsock_send(int fd, const char *text, size_t n, const int *fds, int nfds)
{
	if (nfds < 0 || nfds > DEVSOCK_MAX_FDS)
		return -EINVAL;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(DEVSOCK_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = {(void *)text, n};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t k = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (k < 0)
		return -errno;
	return (size_t)k == n ? 0 : -EMSGSIZE;
}

ssize_t devsock_receive(int fd, char *text, size_t cap, int *fds, int max, int *nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(DEVSOCK_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = {text, cap - 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	*nfds = 0;
	if (n < 0)
		return -errno;
	text[n] = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (int i = 0; i < k; i++) {
			int d;
			memcpy(&d, CMSG_DATA(cm) + (size_t)i * sizeof(int), sizeof d);
			if (*nfds < max)
				fds[(*nfds)++] = d;
			else
				close(d); /* more than asked for: not kept open */
		}
	}
	return n;
}
