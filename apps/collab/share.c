/* share.c — UDP detection sharing (see share.h). */
#include "apps/collab/share.h"

#include "libdev/common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PREFIX "CHORUS-COLLAB 1 DET "

struct collab_share {
	uint32_t self;
	int fd;
	guint watch;
	struct sockaddr_in to;
	collab_share_fn fn;
	void *user;
	guint64 sent, accepted, rejected;
	char why[160]; /* the last malformed datagram's reason */
};

static gboolean on_in(gint fd, GIOCondition cond, gpointer data)
{
	collab_share *s = data;
	char buf[2048];
	for (;;) {
		ssize_t k = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
		if (k < 0)
			break;
		buf[k] = 0;
		det_event e;
		size_t pl = strlen(PREFIX);
		if ((size_t)k < pl || memcmp(buf, PREFIX, pl) ||
		    det_event_parse(buf + pl, (size_t)k - pl, &e, s->why, sizeof s->why) < 0) {
			if (s->rejected++ % 100 == 0)
				g_warning("collab: datagram rejected (%s): %.60s", (size_t)k < pl || memcmp(buf, PREFIX, pl) ? "not a CHORUS-COLLAB 1 DET datagram" : s->why, buf);
			continue;
		}
		if (e.node == s->self)
			continue;
		s->accepted++;
		s->fn(s->user, &e);
	}
	return G_SOURCE_CONTINUE;
}

collab_share *collab_share_new(uint32_t self, const char *address, int port, collab_share_fn fn, void *user,
			       GError **err)
{
	collab_share *s = g_new0(collab_share, 1);
	s->self = self;
	s->fn = fn;
	s->user = user;
	s->to.sin_family = AF_INET;
	s->to.sin_port = htons((uint16_t)port);
	int one = 1;
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	if (inet_pton(AF_INET, address, &s->to.sin_addr) != 1) {
		g_set_error(err, DEV_ERROR, EINVAL, "share address \"%s\" is not an IPv4 address", address);
		goto fail;
	}
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0 ||
	    bind(s->fd, (struct sockaddr *)&any, sizeof any) < 0) {
		g_set_error(err, DEV_ERROR, errno, "UDP port %d: %s", port, g_strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		goto fail;
	}
	s->watch = g_unix_fd_add(s->fd, G_IO_IN, on_in, s);
	return s;
fail:
	g_free(s);
	return NULL;
}

int collab_share_send(collab_share *s, const det_event *e)
{
	GString *m = g_string_new(PREFIX);
	det_event_format(e, m);
	ssize_t k = sendto(s->fd, m->str, m->len, 0, (struct sockaddr *)&s->to, sizeof s->to);
	int rc = k < 0 ? -errno : 0;
	g_string_free(m, TRUE);
	if (!rc)
		s->sent++;
	return rc;
}

void collab_share_counts(const collab_share *s, guint64 *sent, guint64 *accepted, guint64 *rejected)
{
	*sent = s->sent;
	*accepted = s->accepted;
	*rejected = s->rejected;
}

void collab_share_free(collab_share *s)
{
	if (!s)
		return;
	g_source_remove(s->watch);
	close(s->fd);
	g_free(s);
}
