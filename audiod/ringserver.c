/* ringserver.c — memfd hand-out for bulk readers (see ringserver.h). */
#include "audiod/ringserver.h"

#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "audiod/devsock.h"
#include "audiod/error.h"
#include "libdev/dev.h"

struct ringserver {
	int fd;
	char path[DEV_PATH_MAX];
	audio_ring *ring;
	GSource *src;
	guint64 served;
};

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data)
{
	ringserver *s = data;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return G_SOURCE_CONTINUE;
	const audio_ring_hdr *h = audio_ring_header(s->ring);
	char text[64];
	int n = snprintf(text, sizeof text, "CHRING 1 %u %llu", h->frame_bytes, (unsigned long long)h->capacity);
	int rfd = audio_ring_reader_fd(s->ring);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {text, (size_t)n};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &rfd, sizeof rfd);
	if (sendmsg(c, &msg, MSG_NOSIGNAL) == n)
		s->served++;
	close(c);
	return G_SOURCE_CONTINUE;
}

ringserver *ringserver_new(const char *name, unsigned mode, audio_ring *r, GMainContext *ctx, GError **err)
{
	ringserver *s = g_new0(ringserver, 1);
	s->fd = -1;
	s->ring = r;
	if ((s->fd = devsock_listen(name, mode, s->path, sizeof s->path, err)) < 0) {
		ringserver_free(s);
		return NULL;
	}
	s->src = g_unix_fd_source_new(s->fd, G_IO_IN);
	g_source_set_callback(s->src, (GSourceFunc)(void (*)(void))on_accept, s, NULL);
	g_source_attach(s->src, ctx);
	return s;
}

guint64 ringserver_served(const ringserver *s)
{
	return s->served;
}

void ringserver_free(ringserver *s)
{
	if (!s)
		return;
	if (s->src) {
		g_source_destroy(s->src);
		g_source_unref(s->src);
	}
	if (s->fd >= 0) {
		close(s->fd);
		unlink(s->path);
	}
	g_free(s);
}

int ring_bulk_open(const char *name, audio_ring **out, GError **err)
{
	char path[DEV_PATH_MAX], text[64];
	int rc, fd = devsock_connect(name, path, sizeof path, err);
	if (fd < 0)
		return fd;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {text, sizeof text - 1};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
	ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	close(fd);
	struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_type != SCM_RIGHTS || strncmp(text, "CHRING 1 ", 9) != 0) {
		g_set_error(err, AUDIOD_ERROR, EBADMSG, "%s: not an audio ring device", path);
		return -EBADMSG;
	}
	int rfd;
	memcpy(&rfd, CMSG_DATA(cm), sizeof rfd);
	rc = audio_ring_map(rfd, out);
	close(rfd);
	if (rc < 0)
		g_set_error(err, AUDIOD_ERROR, -rc, "%s: cannot map the ring: %s", path, g_strerror(-rc));
	return rc;
}
