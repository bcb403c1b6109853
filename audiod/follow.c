/* follow.c — ring followers, server side (see follow.h). */
#include "audiod/follow.h"

#include <errno.h>
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audiod/devsock.h"
#include "libdev/dev.h"

struct follow_set {
	GMutex lock;
	unsigned max, n;
	int *fds;
	uint64_t notifies, failed;
};

follow_set *follow_set_new(unsigned max)
{
	follow_set *s = g_new0(follow_set, 1);
	g_mutex_init(&s->lock);
	s->max = max;
	s->fds = g_new(int, max ? max : 1);
	return s;
}

void follow_set_free(follow_set *s)
{
	if (!s)
		return;
	g_mutex_clear(&s->lock);
	g_free(s->fds);
	g_free(s);
}

int follow_set_add(follow_set *s, int fd)
{
	int rc = -ENOSPC;
	g_mutex_lock(&s->lock);
	if (s->n < s->max) {
		s->fds[s->n++] = fd;
		rc = 0;
	}
	g_mutex_unlock(&s->lock);
	return rc;
}

void follow_set_remove(follow_set *s, int fd)
{
	g_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n; i++)
		if (s->fds[i] == fd) {
			s->fds[i] = s->fds[--s->n];
			break;
		}
	g_mutex_unlock(&s->lock);
}

unsigned follow_set_notify(follow_set *s, unsigned *members)
{
	const uint64_t one = 1;
	unsigned bad = 0;
	g_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->n; i++)
		if (write(s->fds[i], &one, sizeof one) != (ssize_t)sizeof one)
			bad++;
	s->notifies++;
	s->failed += bad;
	if (members)
		*members = s->n;
	g_mutex_unlock(&s->lock);
	return bad;
}

void follow_set_counts(follow_set *s, unsigned *members, uint64_t *notifies, uint64_t *failed)
{
	g_mutex_lock(&s->lock);
	*members = s->n;
	*notifies = s->notifies;
	*failed = s->failed;
	g_mutex_unlock(&s->lock);
}

/* ---- the device ---- */

typedef struct follower_conn follower_conn;

struct followserver {
	int fd;
	char path[DEV_PATH_MAX];
	audio_ring *ring;
	follow_set *set;
	GMainContext *ctx;
	GSource *src;
	guint resume; /* re-arms the listener after EMFILE */
	GList *conns; /* follower_conn* */
	uint64_t served, refused, accept_errors;
};

struct follower_conn {
	followserver *s;
	int cfd, efd;
	GSource *src;
};

static void conn_close(follower_conn *c)
{
	followserver *s = c->s;
	follow_set_remove(s->set, c->efd); /* no write to efd after this */
	s->conns = g_list_remove(s->conns, c);
	g_source_destroy(c->src);
	g_source_unref(c->src);
	close(c->efd);
	close(c->cfd);
	g_free(c);
}

/* A follower sends nothing: readable means it hung up (or broke the rule). */
static gboolean on_conn(gint fd, GIOCondition cond, gpointer data)
{
	conn_close(data);
	return G_SOURCE_REMOVE;
}

static void refuse(followserver *s, int cfd, const char *why)
{
	char text[160];
	int n = snprintf(text, sizeof text, "CHFOLLOW refused: %s", why);
	if (send(cfd, text, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		g_debug("%s: refusal not sent: %s", s->path, g_strerror(errno));
	close(cfd);
	s->refused++;
}

static gboolean listen_again(gpointer data);

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data)
{
	followserver *s = data;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* The connection stays queued and the watch would fire at
			 * once, forever: stop listening for a second. */
			if (s->accept_errors++ % 100 == 0)
				g_warning("%s: cannot accept a follower (%s); pausing 1 s", s->path, g_strerror(errno));
			g_source_unref(s->src);
			s->src = NULL;
			GSource *t = g_timeout_source_new(1000);
			g_source_set_callback(t, listen_again, s, NULL);
			s->resume = g_source_attach(t, s->ctx);
			g_source_unref(t);
			return G_SOURCE_REMOVE;
		}
		return G_SOURCE_CONTINUE;
	}
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		refuse(s, cfd, g_strerror(errno));
		return G_SOURCE_CONTINUE;
	}
	/* Added before the send: a frame committed meanwhile is notified. */
	if (follow_set_add(s->set, efd) < 0) {
		unsigned members;
		uint64_t notifies, failed;
		follow_set_counts(s->set, &members, &notifies, &failed);
		char why[64];
		g_snprintf(why, sizeof why, "%u followers (the most)", members);
		close(efd);
		refuse(s, cfd, why);
		return G_SOURCE_CONTINUE;
	}
	const audio_ring_hdr *h = audio_ring_header(s->ring);
	char text[64];
	int n = snprintf(text, sizeof text, "CHFOLLOW 1 %u %llu", h->frame_bytes, (unsigned long long)h->capacity);
	int fds[2] = {audio_ring_reader_fd(s->ring), efd};
	int rc = devsock_send(cfd, text, (size_t)n, fds, 2);
	if (rc < 0) {
		g_debug("%s: follower not served: %s", s->path, g_strerror(-rc));
		follow_set_remove(s->set, efd);
		close(efd);
		close(cfd);
		s->refused++;
		return G_SOURCE_CONTINUE;
	}
	follower_conn *c = g_new0(follower_conn, 1);
	c->s = s;
	c->cfd = cfd;
	c->efd = efd;
	c->src = g_unix_fd_source_new(cfd, G_IO_IN | G_IO_HUP | G_IO_ERR);
	g_source_set_callback(c->src, (GSourceFunc)(void (*)(void))on_conn, c, NULL);
	g_source_attach(c->src, s->ctx);
	s->conns = g_list_prepend(s->conns, c);
	s->served++;
	return G_SOURCE_CONTINUE;
}

static void watch_listener(followserver *s)
{
	s->src = g_unix_fd_source_new(s->fd, G_IO_IN);
	g_source_set_callback(s->src, (GSourceFunc)(void (*)(void))on_accept, s, NULL);
	g_source_attach(s->src, s->ctx);
}

static gboolean listen_again(gpointer data)
{
	followserver *s = data;
	s->resume = 0;
	watch_listener(s);
	return G_SOURCE_REMOVE;
}

followserver *followserver_new(const char *name, unsigned mode, audio_ring *r, follow_set *set, GMainContext *ctx,
			       GError **err)
{
	followserver *s = g_new0(followserver, 1);
	s->fd = -1;
	s->ring = r;
	s->set = set;
	s->ctx = ctx;
	if ((s->fd = devsock_listen(name, mode, s->path, sizeof s->path, err)) < 0) {
		followserver_free(s);
		return NULL;
	}
	watch_listener(s);
	return s;
}

void followserver_counts(const followserver *s, uint64_t *served, uint64_t *refused)
{
	*served = s->served;
	*refused = s->refused;
}

void followserver_free(followserver *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_close(s->conns->data);
	if (s->resume) {
		GSource *t = g_main_context_find_source_by_id(s->ctx, s->resume);
		if (t)
			g_source_destroy(t);
	}
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
