/* server.c — the pattern-independent server half (see server.h). */
#include "libdev/server.h"
#include "libdev/heap.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "libdev/fdsource.h"

/* Messages read from one peer per dispatch, so one chatty client cannot
 * starve the others. */
#define READS_PER_DISPATCH 32

void *dev_set_error(GError **error, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_set_error_literal(error, DEV_ERROR, err < 0 ? -err : err, m);
	g_free(m);
	return NULL;
}

dev_peer *dev_peer_ref(dev_peer *p)
{
	p->refs++;
	return p;
}

void dev_peer_unref(dev_peer *p)
{
	if (--p->refs > 0)
		return;
	g_queue_clear_full(&p->out, (GDestroyNotify)g_bytes_unref);
	g_free(p);
}

static void peer_close(dev_peer *p)
{
	if (p->closed)
		return;
	dev_server *s = p->srv;
	if (s && s->ops->peer_gone)
		s->ops->peer_gone(s, p);
	p->closed = TRUE;
	dev_fd_source_drop(p->src);
	p->src = NULL;
	close(p->fd);
	p->fd = -1;
	g_queue_clear_full(&p->out, (GDestroyNotify)g_bytes_unref);
	p->out_bytes = 0;
	if (s) {
		s->peers = g_list_remove(s->peers, p);
		if (p->pump_queued)
			g_ptr_array_remove(s->pumps, p) ? dev_peer_unref(p) : (void)0;
		p->pump_queued = FALSE;
	}
	dev_peer_unref(p);
}

void dev_peer_update(dev_peer *p)
{
	if (p->closed || !p->srv)
		return;
	dev_server *s = p->srv;
	GIOCondition c = G_IO_HUP | G_IO_ERR;
	gboolean in = p->out_bytes < s->opt.out_limit &&
		      (!s->ops->want_input || s->ops->want_input(s, p));
	if (in)
		c |= G_IO_IN;
	if (p->blocked || p->out.length || p->broken)
		c |= G_IO_OUT;
	dev_fd_source_set(p->src, c);
}

/* Send the queued messages; FALSE when the socket is full again. */
static gboolean flush(dev_peer *p)
{
	while (p->out.length) {
		GBytes *b = g_queue_peek_head(&p->out);
		gsize n;
		const void *d = g_bytes_get_data(b, &n);
		ssize_t r = send(p->fd, d, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				p->blocked = TRUE;
				return FALSE;
			}
			p->broken = TRUE;
			return FALSE;
		}
		g_queue_pop_head(&p->out);
		p->out_bytes -= n;
		g_bytes_unref(b);
	}
	p->blocked = FALSE;
	return TRUE;
}

void dev_peer_queue(dev_peer *p, const GByteArray *b)
{
	if (p->closed || p->broken)
		return;
	if (!p->blocked && !p->out.length) {
		/* the common case: straight out, no copy */
		if (send(p->fd, b->data, b->len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)b->len)
			return;
		if (errno != EAGAIN && errno != EINTR) {
			p->broken = TRUE;
			dev_peer_update(p);
			return;
		}
		p->blocked = TRUE;
	}
	g_queue_push_tail(&p->out, g_bytes_new(b->data, b->len));
	p->out_bytes += b->len;
	if (!p->blocked)
		flush(p);
	dev_peer_update(p);
}

void dev_peer_error(dev_peer *p, uint32_t id, uint8_t ref_type, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	GByteArray *b = g_byte_array_new();
	dev_wire_error(b, id, ref_type, err < 0 ? -err : err, m);
	dev_peer_queue(p, b);
	g_byte_array_unref(b);
	g_free(m);
}

int dev_peer_sendv(dev_peer *p, const struct iovec *iov, int n)
{
	if (p->closed || p->broken)
		return -EPIPE;
	if (p->blocked || p->out.length)
		return -EAGAIN;
	struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
	if (sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			p->blocked = TRUE;
			dev_peer_update(p);
			return -EAGAIN;
		}
		p->broken = TRUE;
		dev_peer_update(p);
		return -EPIPE;
	}
	return 0;
}

static gboolean pump_dispatch(gpointer user)
{
	dev_server *s = user;
	/* take the list: pumps may queue peers again (budget used up) */
	GPtrArray *now = s->pumps;
	s->pumps = g_ptr_array_new();
	for (guint i = 0; i < now->len; i++) {
		dev_peer *p = now->pdata[i];
		p->pump_queued = FALSE;
		if (!p->closed && p->srv && !p->blocked && !p->out.length && s->ops->pump)
			s->ops->pump(s, p);
		dev_peer_unref(p);
	}
	g_ptr_array_unref(now);
	if (s->pumps->len)
		return G_SOURCE_CONTINUE;
	g_source_unref(s->pump_src);
	s->pump_src = NULL;
	return G_SOURCE_REMOVE;
}

void dev_peer_kick(dev_peer *p)
{
	dev_server *s = p->srv;
	if (p->closed || !s || p->pump_queued)
		return;
	p->pump_queued = TRUE;
	g_ptr_array_add(s->pumps, dev_peer_ref(p));
	if (!s->pump_src) {
		/* default priority, not idle: under steady client traffic an idle
		 * source would starve */
		s->pump_src = g_idle_source_new();
		g_source_set_priority(s->pump_src, G_PRIORITY_DEFAULT);
		g_source_set_callback(s->pump_src, pump_dispatch, s, NULL);
		g_source_attach(s->pump_src, s->ctx);
	}
}

int dev_server_check_write(dev_server *s, dev_peer *p, char *why, size_t len)
{
	const dev_options *o = &s->opt;
	if (o->n_write_uids || o->n_write_gids) {
		gboolean ok = FALSE;
		for (size_t i = 0; i < o->n_write_uids; i++)
			ok |= o->write_uids[i] == p->creds.uid;
		for (size_t i = 0; i < o->n_write_gids; i++)
			ok |= o->write_gids[i] == p->creds.gid;
		if (!ok) {
			g_snprintf(why, len, "device %s: write denied to uid %u gid %u (not in the allowed uids/gids)",
				   s->name, (unsigned)p->creds.uid, (unsigned)p->creds.gid);
			return -EPERM;
		}
	}
	if (o->write_check) {
		char r[DEV_WHY_MAX] = "";
		int e = o->write_check(o->write_check_user, &p->creds, r, sizeof r);
		if (e < 0) {
			g_snprintf(why, len, "device %s: write denied to uid %u gid %u: %s", s->name, (unsigned)p->creds.uid,
				   (unsigned)p->creds.gid, *r ? r : "refused by the service's policy");
			return e;
		}
	}
	return 0;
}

static gboolean peer_read_some(dev_server *s, dev_peer *p);

/* Read and handle up to READS_PER_DISPATCH messages; FALSE when p closed. */
static gboolean peer_read(dev_server *s, dev_peer *p)
{
	gboolean ok = peer_read_some(s, p);
	if (s->rbuf_hw > DEV_HEAP_RBUF_KEEP) {
		/* a large message (a client's upload) touched the buffer's tail */
		dev_heap_release_tail(s->rbuf, DEV_WIRE_MAX_MSG + 1, DEV_HEAP_RBUF_KEEP);
		s->rbuf_hw = 0;
	}
	return ok;
}

/* peer_read's loop. */
static gboolean peer_read_some(dev_server *s, dev_peer *p)
{
	for (int i = 0; i < READS_PER_DISPATCH && !p->closed; i++) {
		if (p->out_bytes >= s->opt.out_limit || (s->ops->want_input && !s->ops->want_input(s, p)))
			break;
		/* MSG_TRUNC: the return is the datagram's real size, so an
		 * oversized message is recognised instead of silently cut */
		ssize_t r = recv(p->fd, s->rbuf, DEV_WIRE_MAX_MSG + 1, MSG_DONTWAIT | MSG_TRUNC);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			peer_close(p);
			return FALSE;
		}
		if (r == 0) {
			/* 0 is EOF, or an empty datagram (legal on SEQPACKET):
			 * only a hang-up tells them apart */
			struct pollfd pf = {p->fd, POLLRDHUP, 0};
			if (poll(&pf, 1, 0) != 0) {
				peer_close(p);
				return FALSE;
			}
			dev_peer_error(p, 0, 0, EBADMSG, "device %s: empty message", s->name);
			continue;
		}
		if ((size_t)r > s->rbuf_hw)
			s->rbuf_hw = (size_t)r;
		dev_msg m;
		const char *why;
		int e = dev_wire_decode(s->rbuf, (size_t)r > DEV_WIRE_MAX_MSG + 1 ? DEV_WIRE_MAX_MSG + 1 : (size_t)r,
					&m, &why);
		if (e < 0) {
			uint32_t id = r >= 16 ? (uint32_t)(s->rbuf[12] | s->rbuf[13] << 8 | s->rbuf[14] << 16 |
							   (uint32_t)s->rbuf[15] << 24)
					      : 0;
			dev_peer_error(p, id, r >= 4 ? s->rbuf[3] : 0, -e, "device %s: malformed message (%zd bytes): %s",
				       s->name, r, why);
			continue;
		}
		if (!dev_wire_from_client(m.type)) {
			dev_peer_error(p, m.id, m.type, EPROTO, "device %s: %s is not a client message",
				       s->name, dev_wire_type_name(m.type));
			continue;
		}
		s->ops->msg(s, p, &m);
	}
	return !p->closed;
}

static gboolean peer_dispatch(gpointer user, GIOCondition rev)
{
	dev_peer *p = dev_peer_ref(user);
	dev_server *s = p->srv;
	if (rev & G_IO_OUT && !p->broken && flush(p) && s->ops->pump)
		s->ops->pump(s, p);
	if (!p->closed && (rev & G_IO_IN))
		peer_read(s, p);
	if (!p->closed && (p->broken || ((rev & (G_IO_HUP | G_IO_ERR)) && !(rev & G_IO_IN))))
		peer_close(p);
	if (!p->closed)
		dev_peer_update(p);
	gboolean keep = !p->closed;
	dev_peer_unref(p);
	return keep ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void send_hello(dev_server *s, dev_peer *p)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, DEV_MSG_HELLO, 0, 0);
	uint8_t pat[4] = {(uint8_t)s->ops->pattern, 0, 0, 0};
	dev_wire_bytes(b, pat, 4);
	dev_wire_u32(b, s->item_size);
	dev_wire_u32(b, DEV_WIRE_MAX_MSG);
	dev_wire_bytes(b, s->name, strlen(s->name));
	dev_wire_end(b);
	dev_peer_queue(p, b);
	g_byte_array_unref(b);
}

static gboolean listen_dispatch(gpointer user, GIOCondition rev)
{
	dev_server *s = user;
	for (int i = 0; i < 16; i++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR)
				g_warning("device %s: accept: %s", s->name, g_strerror(errno));
			break;
		}
		struct ucred uc;
		socklen_t ul = sizeof uc;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0) {
			close(fd);
			continue;
		}
		dev_peer *p = g_new0(dev_peer, 1);
		p->srv = s;
		p->fd = fd;
		p->refs = 1; /* the server's list */
		p->creds = (dev_creds){uc.pid, uc.uid, uc.gid};
		g_queue_init(&p->out);
		p->src = dev_fd_source_new(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, peer_dispatch, p, s->ctx);
		s->peers = g_list_prepend(s->peers, p);
		if (s->ops->peer_new) /* first: the pattern's state is used from here on */
			s->ops->peer_new(s, p);
		send_hello(s, p);
	}
	return G_SOURCE_CONTINUE;
}

/* Bind, replacing a stale socket file (nobody accepting on it). */
static int bind_path(dev_server *s, struct sockaddr_un *sa, GError **error)
{
	if (bind(s->lfd, (struct sockaddr *)sa, sizeof *sa) == 0)
		return 0;
	int e = errno;
	if (e != EADDRINUSE) {
		dev_set_error(error, e, "device %s: bind %s: %s", s->name, s->path, g_strerror(e));
		return -e;
	}
	struct stat st;
	if (lstat(s->path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		dev_set_error(error, EEXIST, "device %s: %s exists and is not a socket", s->name, s->path);
		return -EEXIST;
	}
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int live = probe >= 0 && connect(probe, (struct sockaddr *)sa, sizeof *sa) == 0;
	int ce = errno;
	if (probe >= 0)
		close(probe);
	if (live || (ce != ECONNREFUSED && ce != ENOENT)) {
		dev_set_error(error, EADDRINUSE, "device %s: %s is served by another live process", s->name, s->path);
		return -EADDRINUSE;
	}
	unlink(s->path);
	if (bind(s->lfd, (struct sockaddr *)sa, sizeof *sa) < 0) {
		e = errno;
		dev_set_error(error, e, "device %s: bind %s: %s", s->name, s->path, g_strerror(e));
		return -e;
	}
	return 0;
}

static int resolve_group(const char *g, gid_t *out)
{
	char *end;
	unsigned long v = strtoul(g, &end, 10);
	if (*g && !*end) {
		*out = (gid_t)v;
		return 0;
	}
	struct group *gr = getgrnam(g);
	if (!gr)
		return -ENOENT;
	*out = gr->gr_gid;
	return 0;
}

int dev_server_init(dev_server *s, const char *name, const dev_options *opt, GMainContext *ctx,
		    const dev_server_ops *ops, void *owner, GError **error)
{
	const char *why;
	int e;
	memset(s, 0, sizeof *s);
	s->lfd = -1;
	if ((e = dev_path(name, s->path, sizeof s->path, &why)) < 0) {
		dev_set_error(error, e, "device %s: %s", name, why);
		return e;
	}
	g_strlcpy(s->name, name, sizeof s->name);
	dev_options_init(&s->opt);
	if (opt) {
		s->opt = *opt;
		if (!s->opt.mode)
			s->opt.mode = 0660;
		if (!s->opt.queue_limit)
			s->opt.queue_limit = 64;
		if (!s->opt.chunk_bytes)
			s->opt.chunk_bytes = 16384;
		if (!s->opt.out_limit)
			s->opt.out_limit = 1 << 20;
		s->opt.write_uids = g_memdup2(opt->write_uids, opt->n_write_uids * sizeof(uid_t));
		s->opt.write_gids = g_memdup2(opt->write_gids, opt->n_write_gids * sizeof(gid_t));
		s->opt.group = NULL;
	}
	s->ctx = ctx ? g_main_context_ref(ctx) : g_main_context_ref(g_main_context_default());
	s->ops = ops;
	s->owner = owner;
	s->pumps = g_ptr_array_new();
	s->rbuf = g_malloc(DEV_WIRE_MAX_MSG + 1);
	if ((e = dev_path_mkparents(s->path)) < 0) {
		dev_set_error(error, e, "device %s: cannot create the directories of %s: %s", name, s->path,
			      g_strerror(-e));
		goto fail;
	}
	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		e = -errno;
		dev_set_error(error, e, "device %s: socket: %s", name, g_strerror(-e));
		goto fail;
	}
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, s->path, sizeof sa.sun_path);
	if ((e = bind_path(s, &sa, error)) < 0)
		goto fail;
	struct stat st;
	if (stat(s->path, &st) == 0) {
		s->dev = st.st_dev;
		s->ino = st.st_ino;
	}
	/* bind applies the umask; set the mode asked for explicitly */
	if (chmod(s->path, s->opt.mode & 07777) < 0) {
		e = -errno;
		dev_set_error(error, e, "device %s: chmod %s: %s", name, s->path, g_strerror(-e));
		goto fail_unlink;
	}
	if (opt && opt->group) {
		gid_t gid;
		if ((e = resolve_group(opt->group, &gid)) < 0) {
			dev_set_error(error, e, "device %s: unknown group '%s'", name, opt->group);
			goto fail_unlink;
		}
		if (chown(s->path, (uid_t)-1, gid) < 0) {
			e = -errno;
			dev_set_error(error, e, "device %s: chown %s to group %s: %s", name, s->path, opt->group,
				      g_strerror(-e));
			goto fail_unlink;
		}
	}
	if (listen(s->lfd, 64) < 0) {
		e = -errno;
		dev_set_error(error, e, "device %s: listen: %s", name, g_strerror(-e));
		goto fail_unlink;
	}
	s->lsrc = dev_fd_source_new(s->lfd, G_IO_IN, listen_dispatch, s, s->ctx);
	return 0;
fail_unlink:
	unlink(s->path);
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	s->lfd = -1;
	g_free((void *)s->opt.write_uids);
	g_free((void *)s->opt.write_gids);
	g_ptr_array_unref(s->pumps);
	g_free(s->rbuf);
	g_main_context_unref(s->ctx);
	return e;
}

void dev_server_fini(dev_server *s)
{
	while (s->peers) {
		dev_peer *p = s->peers->data;
		dev_peer_ref(p);
		peer_close(p);
		p->srv = NULL;
		dev_peer_unref(p);
	}
	for (guint i = 0; i < s->pumps->len; i++)
		dev_peer_unref(s->pumps->pdata[i]);
	g_ptr_array_unref(s->pumps);
	if (s->pump_src) {
		g_source_destroy(s->pump_src);
		g_source_unref(s->pump_src);
	}
	dev_fd_source_drop(s->lsrc);
	close(s->lfd);
	/* unlink only our own socket file, not a successor's */
	struct stat st;
	if (stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
	g_free((void *)s->opt.write_uids);
	g_free((void *)s->opt.write_gids);
	g_free(s->rbuf);
	g_main_context_unref(s->ctx);
}
