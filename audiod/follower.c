/* follower.c — a ring follower, client side (see follower.h). */
#include "audiod/follower.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "audiod/devsock.h"
#include "audiod/error.h"
#include "libdev/dev.h"

struct ring_follower {
	int cfd, efd;
	audio_ring *ring;
	int64_t cursor;
};

int ring_follow_open(const char *name, int64_t from, ring_follower **out, GError **err)
{
	char path[DEV_PATH_MAX], text[160];
	int rc, fd = devsock_connect(name, path, sizeof path, err);
	if (fd < 0)
		return fd;
	int fds[2] = {-1, -1}, nfds = 0;
	ssize_t n = devsock_receive(fd, text, sizeof text, fds, 2, &nfds);
	if (n > 0 && g_str_has_prefix(text, "CHFOLLOW refused: ")) {
		g_set_error(err, AUDIOD_ERROR, EBUSY, "%s: %s", path, text + 9);
		rc = -EBUSY;
	} else if (n <= 0 || nfds != 2 || !g_str_has_prefix(text, "CHFOLLOW 1 ")) {
		g_set_error(err, AUDIOD_ERROR, EBADMSG, "%s: not an audio follow device%s%s", path,
			    n < 0 ? ": " : "", n < 0 ? g_strerror((int)-n) : "");
		rc = -EBADMSG;
	} else {
		audio_ring *ring = NULL;
		if ((rc = audio_ring_map(fds[0], &ring)) < 0) {
			g_set_error(err, AUDIOD_ERROR, -rc, "%s: cannot map the ring: %s", path, g_strerror(-rc));
		} else {
			ring_follower *f = g_new0(ring_follower, 1);
			f->cfd = fd;
			f->efd = fds[1];
			f->ring = ring;
			int64_t oldest, next;
			audio_ring_span(ring, &oldest, &next);
			f->cursor = from == RING_FOLLOW_FROM_NEXT ? next : from;
			close(fds[0]);
			*out = f;
			return 0;
		}
	}
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	close(fd);
	return rc;
}

int ring_follow_fd(const ring_follower *f)
{
	return f->efd;
}

int ring_follow_conn_fd(const ring_follower *f)
{
	return f->cfd;
}

const audio_ring *ring_follow_ring(const ring_follower *f)
{
	return f->ring;
}

int64_t ring_follow_cursor(const ring_follower *f)
{
	return f->cursor;
}

static int have_frames(const ring_follower *f)
{
	int64_t oldest, next;
	audio_ring_span(f->ring, &oldest, &next);
	return next > f->cursor;
}

int ring_follow_wait(ring_follower *f, int timeout_ms)
{
	if (have_frames(f))
		return 1;
	struct pollfd p[2] = {{.fd = f->efd, .events = POLLIN}, {.fd = f->cfd, .events = POLLIN}};
	for (;;) {
		int rc = poll(p, 2, timeout_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (have_frames(f))
			return 1;
		if (p[1].revents)
			return -EPIPE;
		if (rc == 0)
			return 0;
		/* A wakeup whose frames were already read: consume it, wait on. */
		uint64_t v;
		if (read(f->efd, &v, sizeof v) < 0 && errno != EAGAIN)
			return -errno;
	}
}

long ring_follow_read(ring_follower *f, void *dst, uint64_t max, int64_t *first, uint64_t *lost)
{
	uint64_t v, skipped = 0;
	/* Consume the wakeups first: a commit after this one wakes again. */
	if (read(f->efd, &v, sizeof v) < 0 && errno != EAGAIN)
		return -errno;
	const audio_ring_hdr *h = audio_ring_header(f->ring);
	for (;;) {
		int64_t oldest, next;
		audio_ring_span(f->ring, &oldest, &next);
		if (f->cursor < oldest) {
			/* Frames before the ring's origin never existed (the
			 * numbering continued from an earlier run): not lost. */
			int64_t from = f->cursor > h->origin ? f->cursor : h->origin;
			if (oldest > from)
				skipped += (uint64_t)(oldest - from);
			f->cursor = oldest;
		}
		uint64_t n = next > f->cursor ? (uint64_t)(next - f->cursor) : 0;
		if (n > max)
			n = max;
		if (n > h->capacity)
			n = h->capacity;
		if (!n) {
			if (lost)
				*lost = skipped;
			*first = f->cursor;
			return 0;
		}
		int rc = audio_ring_read(f->ring, f->cursor, n, dst, NULL);
		if (rc == -ERANGE || rc == -ESTALE)
			continue; /* overwritten meanwhile: from the new oldest */
		if (rc < 0)
			return rc;
		*first = f->cursor;
		f->cursor += (int64_t)n;
		if (lost)
			*lost = skipped;
		return (long)n;
	}
}

void ring_follow_free(ring_follower *f)
{
	if (!f)
		return;
	audio_ring_free(f->ring);
	close(f->efd);
	close(f->cfd);
	g_free(f);
}
