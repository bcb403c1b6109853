/* ringserver.c — memfd hand-out for bulk readers (see ringserver.h). */
#include "audiod/ringserver.h"

#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
	if (devsock_send(c, text, (size_t)n, &rfd, 1) == 0)
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
	int rfd = -1, nfds = 0;
	ssize_t n = devsock_receive(fd, text, sizeof text, &rfd, 1, &nfds);
	close(fd);
	if (n <= 0 || nfds != 1 || strncmp(text, "CHRING 1 ", 9) != 0) {
		if (nfds)
			close(rfd);
		g_set_error(err, AUDIOD_ERROR, EBADMSG, "%s: not an audio ring device", path);
		return -EBADMSG;
	}
	rc = audio_ring_map(rfd, out);
	close(rfd);
	if (rc < 0)
		g_set_error(err, AUDIOD_ERROR, -rc, "%s: cannot map the ring: %s", path, g_strerror(-rc));
	return rc;
}
