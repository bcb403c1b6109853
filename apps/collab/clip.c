/* clip.c — clip service, server and client halves (see clip.h). */
#include "audiod/request.h"
#include "apps/collab/clip.h"
#include "apps/collab/clipmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <math.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "apps/dsp/sample.h"
#include "libdev/dev.h"
#include "libdev/netkey.h"

#define REQ_MAX 512

struct clip_server {
	uint32_t node;
	int device;
	int fd;
	guint watch, resume; /* the listener's watch; the timer that re-arms it after EMFILE */
	sync_client *clocks;
	GMainContext *ctx;
	GList *conns;
	guint nconns, max_conns;
	uint8_t *key; /* the field's key, or NULL */
	size_t klen;
	int64_t reach_ns; /* clip_server_cfg.reach_ns */
	double tokens;    /* request rate bucket: CLIP_RATE per second, CLIP_BURST at most */
	gint64 refill_us;
	guint64 served, refused, accept_errors, bad_auth;
};

#define CLIP_RATE 20.0  /* requests per second, sustained */
#define CLIP_BURST 40.0 /* ... and in a burst */
#define REQ_TIMEOUT_S 5 /* a request line not complete by then is refused */

typedef struct {
	clip_server *s;
	int fd;
	guint watch;
	char req[REQ_MAX];
	size_t len;
	dev_sensor_reader *r;
	clip c;
	size_t got;
	int sample_bytes;
	gboolean is_float;
	char err[256];
	gboolean again; /* err is temporary: the reply says ERR again */
	gboolean done;
	guint timer;
	char nonce[33];  /* the challenge sent on connecting, hex */
	GByteArray *out; /* the reply being sent (header and samples) */
	size_t sent;     /* bytes of out already on the socket */
} conn;

#define SEND_TIMEOUT_S 5 /* a reply the client does not take by then is dropped */

gchar *clip_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line)
{
	gchar *text = g_strconcat(nonce, "\n", line, NULL);
	gchar *hex = dev_netkey_mac_hex(key, klen, text, strlen(text));
	g_free(text);
	return hex;
}

gchar *clip_reply_mac(const uint8_t *key, size_t klen, const char *nonce, const char *req, const char *head,
		      const void *samples, size_t nbytes)
{
	GByteArray *b = g_byte_array_new();
	gchar *text = g_strconcat("reply\n", nonce, "\n", req, "\n", head, "\n", NULL);
	g_byte_array_append(b, (const guint8 *)text, (guint)strlen(text));
	g_byte_array_append(b, samples, (guint)nbytes);
	gchar *hex = dev_netkey_mac_hex(key, klen, b->data, b->len);
	g_free(text);
	g_byte_array_unref(b);
	return hex;
}

int clip_check_mac(const uint8_t *key, size_t klen, const char *nonce, const char *req)
{
	const char *m = strstr(req, " mac=");
	if (!m || strlen(m + 5) != 64)
		return -EACCES;
	char *line = g_strndup(req, (gsize)(m - req));
	gchar *want = clip_mac(key, klen, nonce, line);
	gboolean same = dev_netkey_same(want, m + 5, 64, TRUE);
	g_free(want);
	g_free(line);
	return same ? 0 : -EACCES;
}

static void conn_free(conn *c)
{
	if (c->watch)
		g_source_remove(c->watch);
	if (c->timer)
		g_source_remove(c->timer);
	dev_sensor_reader_free(c->r);
	if (c->fd >= 0)
		close(c->fd);
	if (c->out)
		g_byte_array_unref(c->out);
	g_free(c->c.x);
	c->s->conns = g_list_remove(c->s->conns, c);
	c->s->nconns--;
	g_free(c);
}

/* Send what the socket takes of the reply now; the rest when it is
 * writable again (on_writable), so a client that reads slowly never holds
 * collab's main loop.  TRUE while there is more to send. */
static gboolean send_some(conn *c)
{
	while (c->sent < c->out->len) {
		ssize_t k = send(c->fd, c->out->data + c->sent, c->out->len - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return TRUE;
		if (k <= 0)
			return FALSE; /* the client went away: nothing to keep */
		c->sent += (size_t)k;
	}
	return FALSE;
}

static gboolean on_writable(gint fd, GIOCondition cond, gpointer data)
{
	conn *c = data;
	if (send_some(c))
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	conn_free(c);
	return G_SOURCE_REMOVE;
}

static gboolean on_send_timeout(gpointer data)
{
	conn *c = data;
	c->timer = 0;
	g_message("clip: a client took %zu of %u bytes of its reply in %d s; dropped", c->sent, c->out->len,
		  SEND_TIMEOUT_S);
	conn_free(c);
	return G_SOURCE_REMOVE;
}

static gboolean reply_idle(gpointer data)
{
	conn *c = data;
	char head[512];
	dev_sensor_reader_free(c->r); /* done: nothing more to read */
	c->r = NULL;
	if (c->timer) {
		g_source_remove(c->timer);
		c->timer = 0;
	}
	if (c->watch) {
		g_source_remove(c->watch);
		c->watch = 0;
	}
	c->out = g_byte_array_new();
	if (*c->err) {
		c->s->refused++;
		g_snprintf(head, sizeof head, "ERR %snode%u: %s\n", c->again ? "again " : "", c->s->node, c->err);
		g_byte_array_append(c->out, (const guint8 *)head, (guint)strlen(head));
	} else {
		c->s->served++;
		char b[4][G_ASCII_DTOSTR_BUF_SIZE];
		g_snprintf(head, sizeof head,
			   "OK v=1 node=%u rate=%s first=%" G_GINT64_FORMAT " n=%zu t0_ns=%" G_GINT64_FORMAT " t0_frac=%s se_ns=%s"
			   " rate_eff=%s\n",
			   c->s->node, g_ascii_formatd(b[0], sizeof b[0], "%.6g", c->c.rate_hz), c->c.first, c->c.n, c->c.t0_ns,
			   g_ascii_formatd(b[1], sizeof b[1], "%.6f", c->c.t0_frac_ns),
			   g_ascii_formatd(b[2], sizeof b[2], "%.4g", c->c.se_ns),
			   g_ascii_formatd(b[3], sizeof b[3], "%.10g", c->c.rate_eff_hz));
		if (c->s->klen) {
			/* The reply's own mac, bound to this connection's nonce
			 * and request: a machine that takes over the port cannot
			 * serve other samples or times. */
			g_strchomp(head);
			gchar *m = clip_reply_mac(c->s->key, c->s->klen, c->nonce, c->req, head, c->c.x,
						  c->c.n * sizeof(float));
			g_strlcat(head, " mac=", sizeof head);
			g_strlcat(head, m, sizeof head);
			g_strlcat(head, "\n", sizeof head);
			g_free(m);
		}
		g_byte_array_append(c->out, (const guint8 *)head, (guint)strlen(head));
		g_byte_array_append(c->out, (const guint8 *)c->c.x, (guint)(c->c.n * sizeof(float)));
	}
	if (send_some(c)) {
		c->watch = g_unix_fd_add(c->fd, G_IO_OUT, on_writable, c);
		c->timer = g_timeout_add_seconds(SEND_TIMEOUT_S, on_send_timeout, c);
	} else {
		conn_free(c);
	}
	return G_SOURCE_REMOVE;
}

static void finish(conn *c)
{
	if (c->done)
		return;
	c->done = TRUE;
	g_idle_add(reply_idle, c); /* not inside the reader's callback: it is freed there */
}

static void r_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	conn *c = user;
	char *r = g_strndup(reply, len), b[32];
	c->is_float = g_strcmp0(audio_reply_field(r, "format", b, sizeof b), "FLOAT_LE") == 0;
	c->sample_bytes = (int)item_size;
	if (audio_reply_field(r, "rate", b, sizeof b))
		c->c.rate_hz = g_ascii_strtod(b, NULL);
	g_free(r);
}

static void r_data(void *user, int64_t first, const void *items, size_t n)
{
	conn *c = user;
	for (size_t i = 0; i < n; i++) {
		int64_t k = first + (int64_t)i - c->c.first;
		if (k < 0 || k >= (int64_t)c->c.n)
			continue;
		float v = dsp_sample_le(items, i, c->sample_bytes, c->is_float);
		c->c.x[k] = v;
		c->got++;
	}
}

static void r_gap(void *user, int64_t from, int64_t to)
{
	conn *c = user;
	g_snprintf(c->err, sizeof c->err, "frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were lost", from, to);
	finish(c);
}

static void r_end(void *user, int64_t next)
{
	finish(user);
}

static void r_error(void *user, int err, const char *msg)
{
	conn *c = user;
	g_snprintf(c->err, sizeof c->err, "audiod: %s", msg);
	finish(c);
}

static gboolean on_timeout(gpointer data)
{
	conn *c = data;
	c->timer = 0;
	g_snprintf(c->err, sizeof c->err, "audio not complete within 5 s");
	c->again = TRUE;
	finish(c);
	return G_SOURCE_REMOVE;
}

/* x converted from one clock to another for a clip: as the clocks allow,
 * or, for a time before every fit of the path by more than their
 * tolerance, those fits extrapolated back up to the server's reach (a node
 * cut off from its very start: the audio of its outage asked for by
 * global time).  As sync_client_convert. */
static int clip_convert(const clip_server *s, sync_clock_id from, sync_clock_id to, sync_tval x,
			sync_graph_result *r, char *why, size_t len)
{
	int rc = sync_client_convert(s->clocks, from, to, x, r, why, len);
	if (rc == -ERANGE && s->reach_ns > 0)
		rc = sync_client_convert_past(s->clocks, from, to, x, s->reach_ns, r, why, len);
	return rc;
}

/* Parse the request and start reading audio.  Sets c->err on a refusal. */
static void start(conn *c)
{
	clip_server *s = c->s;
	int64_t t0 = 0, t1 = 0;
	int ch = -1;
	char why[256];
	if (clip_parse_request(c->req, &t0, &t1, &ch, why, sizeof why) < 0) {
		g_snprintf(c->err, sizeof c->err, "%s", why);
		finish(c);
		return;
	}
	if (s->klen && clip_check_mac(s->key, s->klen, c->nonce, c->req) < 0) {
		s->bad_auth++;
		g_snprintf(c->err, sizeof c->err, "not authenticated (mac missing or wrong for this connection's nonce)");
		finish(c);
		return;
	}
	sync_clock_id audio = sync_clock_audio(s->node, (uint16_t)s->device);
	sync_graph_result r0, r1;
	int crc;
	if ((crc = clip_convert(s, sync_clock_global(), audio, sync_tval_of(t0), &r0, why, sizeof why)) < 0 ||
	    (crc = clip_convert(s, sync_clock_global(), audio, sync_tval_of(t1), &r1, why, sizeof why)) < 0) {
		g_snprintf(c->err, sizeof c->err, "global to audio%d: %s", s->device, why);
		/* No conversion yet (clocks converging, a timescale just joined,
		 * a fit gone stale): the client may ask again shortly.  A time
		 * outside what the fits cover (-ERANGE) stays refused. */
		c->again = crc == -ENOLINK || crc == -ENOENT || crc == -ESTALE || crc == -EAGAIN;
		finish(c);
		return;
	}
	int64_t first = r0.value.f > 0 ? r0.value.i + 1 : r0.value.i;
	int64_t last = r1.value.f > 0 ? r1.value.i + 1 : r1.value.i;
	if (last <= first) {
		g_snprintf(c->err, sizeof c->err, "empty frame range");
		finish(c);
		return;
	}
	/* The time of the whole frame `first`, converted the other way. */
	sync_graph_result rt;
	if (clip_convert(s, audio, sync_clock_global(), sync_tval_of(first), &rt, why, sizeof why) < 0) {
		g_snprintf(c->err, sizeof c->err, "audio%d to global: %s", s->device, why);
		finish(c);
		return;
	}
	/* The rate in global time: frames per global second over the clip. */
	sync_graph_result re;
	if (clip_convert(s, audio, sync_clock_global(), sync_tval_of(last), &re, why, sizeof why) == 0) {
		double dt = (double)(re.value.i - rt.value.i) + (re.value.f - rt.value.f);
		c->c.rate_eff_hz = dt > 0 ? (double)(last - first) * 1e9 / dt : 0;
	}
	c->c.first = first;
	c->c.n = (size_t)(last - first);
	c->c.t0_ns = rt.value.i;
	c->c.t0_frac_ns = rt.value.f;
	c->c.se_ns = sqrt(rt.var);
	c->c.x = g_new0(float, c->c.n);
	char name[32], params[32];
	g_snprintf(name, sizeof name, "audio/%d/data", s->device);
	g_snprintf(params, sizeof params, "channels=%d", ch);
	dev_sensor_reader_ops ops = {r_opened, r_data, r_gap, r_end, r_error, NULL};
	GError *err = NULL;
	c->timer = g_timeout_add_seconds(5, on_timeout, c);
	c->r = dev_sensor_reader_new(name, first, last, 0, params, strlen(params), s->ctx, &ops, c, &err);
	if (!c->r) {
		g_snprintf(c->err, sizeof c->err, "%s", err->message);
		g_error_free(err);
		finish(c);
	}
}

static gboolean on_conn_in(gint fd, GIOCondition cond, gpointer data)
{
	conn *c = data;
	ssize_t k = recv(fd, c->req + c->len, sizeof c->req - 1 - c->len, 0);
	if (k <= 0 && !(k < 0 && (errno == EAGAIN || errno == EINTR))) {
		c->watch = 0;
		if (!c->r && !c->done)
			conn_free(c); /* gone before asking */
		return G_SOURCE_REMOVE;
	}
	if (k < 0)
		return G_SOURCE_CONTINUE;
	c->len += (size_t)k;
	c->req[c->len] = 0;
	char *nl = strchr(c->req, '\n');
	if (!nl && c->len < sizeof c->req - 1)
		return G_SOURCE_CONTINUE;
	c->watch = 0;
	if (c->timer) {
		g_source_remove(c->timer); /* the request's own deadline */
		c->timer = 0;
	}
	if (!nl) {
		g_snprintf(c->err, sizeof c->err, "request line longer than %d bytes", REQ_MAX);
		finish(c);
	} else {
		*nl = 0;
		start(c);
	}
	return G_SOURCE_REMOVE;
}

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data);

static gboolean resume_accept(gpointer data)
{
	clip_server *s = data;
	s->resume = 0;
	s->watch = g_unix_fd_add(s->fd, G_IO_IN, on_accept, s);
	return G_SOURCE_REMOVE;
}

static gboolean on_req_timeout(gpointer data)
{
	conn *c = data;
	c->timer = 0;
	if (c->watch) {
		g_source_remove(c->watch);
		c->watch = 0;
	}
	g_snprintf(c->err, sizeof c->err, "request not complete within %d s", REQ_TIMEOUT_S);
	finish(c);
	return G_SOURCE_REMOVE;
}

/* Refuse a connection at once: one ERR line, then close. */
static void refuse_now(clip_server *s, int cfd, const char *why)
{
	char line[160];
	g_snprintf(line, sizeof line, "ERR node%u: %s\n", s->node, why);
	if (send(cfd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		g_debug("collab: clip refusal not sent: %s", g_strerror(errno));
	close(cfd);
	s->refused++;
}

static gboolean on_accept(gint fd, GIOCondition cond, gpointer data)
{
	clip_server *s = data;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* Out of descriptors: the pending connection stays queued
			 * and the watch would fire at once, forever.  Stop
			 * listening for a second. */
			if (s->accept_errors++ % 100 == 0)
				g_warning("collab: clip service cannot accept (%s); pausing 1 s", g_strerror(errno));
			s->watch = 0;
			s->resume = g_timeout_add(1000, resume_accept, s);
			return G_SOURCE_REMOVE;
		}
		return G_SOURCE_CONTINUE;
	}
	gint64 now = g_get_monotonic_time();
	s->tokens = MIN(CLIP_BURST, s->tokens + CLIP_RATE * (double)(now - s->refill_us) / 1e6);
	s->refill_us = now;
	if (s->nconns >= s->max_conns) {
		refuse_now(s, cfd, "busy (too many clip requests at once)");
		return G_SOURCE_CONTINUE;
	}
	if (s->tokens < 1) {
		refuse_now(s, cfd, "busy (more than 20 clip requests per second)");
		return G_SOURCE_CONTINUE;
	}
	s->tokens -= 1;
	conn *c = g_new0(conn, 1);
	c->s = s;
	c->fd = cfd;
	for (int i = 0; i < 4; i++)
		g_snprintf(c->nonce + 8 * i, 9, "%08x", g_random_int());
	char hello[64];
	g_snprintf(hello, sizeof hello, "CHORUS-CLIP 2 nonce=%s\n", c->nonce);
	s->conns = g_list_prepend(s->conns, c);
	s->nconns++;
	if (send(cfd, hello, strlen(hello), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)strlen(hello)) {
		conn_free(c); /* a fresh socket takes 50 bytes: the peer is gone */
		return G_SOURCE_CONTINUE;
	}
	c->watch = g_unix_fd_add(cfd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_conn_in, c);
	c->timer = g_timeout_add_seconds(REQ_TIMEOUT_S, on_req_timeout, c);
	return G_SOURCE_CONTINUE;
}

/* The listening address: an IPv4 literal (as v4-mapped) or an IPv6 one. */
static int bind_addr(const char *text, int port, struct sockaddr_in6 *a)
{
	*a = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	struct in_addr v4;
	if (inet_pton(AF_INET, text, &v4) == 1) {
		a->sin6_addr.s6_addr[10] = a->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&a->sin6_addr.s6_addr[12], &v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, text, &a->sin6_addr) == 1 ? 0 : -1;
}

gboolean collab_clip_bind_is_loopback(const char *bind)
{
	struct sockaddr_in6 a;
	if (bind_addr(bind, 0, &a) < 0)
		return FALSE;
	static const uint8_t v4m[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return IN6_IS_ADDR_LOOPBACK(&a.sin6_addr) || (!memcmp(a.sin6_addr.s6_addr, v4m, 12) && a.sin6_addr.s6_addr[12] == 127);
}

clip_server *clip_server_new(const clip_server_cfg *cfg, sync_client *clocks, GMainContext *ctx, GError **err)
{
	struct sockaddr_in6 a;
	if (bind_addr(cfg->bind, cfg->port, &a) < 0) {
		g_set_error(err, DEV_ERROR, EINVAL, "clip_bind \"%s\" is not an IPv4 or IPv6 address", cfg->bind);
		return NULL;
	}
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1, zero = 0;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0) {
		g_set_error(err, DEV_ERROR, errno, "clip service on %s TCP port %d: %s", cfg->bind, cfg->port,
			    g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	clip_server *s = g_new0(clip_server, 1);
	s->node = cfg->node;
	s->device = cfg->device;
	s->reach_ns = cfg->reach_ns;
	s->fd = fd;
	s->clocks = clocks;
	s->ctx = ctx;
	s->max_conns = cfg->max_conns ? cfg->max_conns : 1;
	if (cfg->klen)
		s->key = g_memdup2(cfg->key, cfg->klen);
	s->klen = cfg->klen;
	s->tokens = CLIP_BURST;
	s->refill_us = g_get_monotonic_time();
	s->watch = g_unix_fd_add(fd, G_IO_IN, on_accept, s);
	return s;
}

void clip_server_counts(const clip_server *s, guint64 *served, guint64 *refused)
{
	*served = s->served;
	*refused = s->refused;
}

void clip_server_describe(const clip_server *s, GString *out)
{
	g_string_append_printf(out,
			       "clips served=%" G_GUINT64_FORMAT " refused=%" G_GUINT64_FORMAT " bad_auth=%" G_GUINT64_FORMAT
			       " accept_errors=%" G_GUINT64_FORMAT " open=%u max=%u %s\n",
			       s->served, s->refused, s->bad_auth, s->accept_errors, s->nconns, s->max_conns,
			       s->klen ? "authenticated" : "unauthenticated");
}

void clip_server_free(clip_server *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_free(s->conns->data);
	if (s->watch)
		g_source_remove(s->watch);
	if (s->resume)
		g_source_remove(s->resume);
	close(s->fd);
	g_free(s->key);
	g_free(s);
}

/* ---- client -------------------------------------------------------------- */

static int read_full(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (k == 0)
			return -ECONNRESET;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One line (without its newline) into buf; 0 or a negative errno. */
static int read_line(int fd, char *buf, size_t size)
{
	size_t h = 0;
	int rc;
	while (h < size - 1) {
		if ((rc = read_full(fd, buf + h, 1)) < 0)
			return rc;
		if (buf[h++] == '\n')
			break;
	}
	buf[h] = 0;
	g_strchomp(buf);
	return 0;
}

int clip_fetch(const char *host, int port, int64_t t0_ns, int64_t t1_ns, int channel, const uint8_t *key, size_t klen,
	       int timeout_ms, clip *out, char *why, size_t len)
{
	memset(out, 0, sizeof *out);
	char ps[16];
	g_snprintf(ps, sizeof ps, "%d", port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
	int rc = getaddrinfo(host, ps, &hints, &ai);
	if (rc) {
		g_snprintf(why, len, "%s: %s", host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		rc = -errno;
		g_snprintf(why, len, "connect %s:%d: %s", host, port, g_strerror(errno));
		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	freeaddrinfo(ai);
	char req[256], head[512], hello[128], nonce[40];
	if ((rc = read_line(fd, hello, sizeof hello)) < 0 || sscanf(hello, "CHORUS-CLIP 2 nonce=%39s", nonce) != 1) {
		if (rc >= 0 && !strncmp(hello, "ERR ", 4)) {
			g_snprintf(why, len, "%s", hello + 4);
			rc = -EREMOTEIO;
		} else {
			g_snprintf(why, len, "%s:%d: %s", host, port,
				   rc == -ETIMEDOUT ? "timed out" : rc < 0 ? g_strerror(-rc)
									   : "no CHORUS-CLIP 2 greeting");
			rc = rc < 0 ? rc : -EBADMSG;
		}
		close(fd);
		return rc;
	}
	g_snprintf(req, sizeof req, "GET v=2 from=%" G_GINT64_FORMAT " to=%" G_GINT64_FORMAT " channel=%d", t0_ns, t1_ns,
		   channel);
	if (klen) {
		gchar *m = clip_mac(key, klen, nonce, req);
		g_strlcat(req, " mac=", sizeof req);
		g_strlcat(req, m, sizeof req);
		g_free(m);
	}
	g_strlcat(req, "\n", sizeof req);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		rc = -errno;
		g_snprintf(why, len, "send to %s:%d: %s", host, port, g_strerror(errno));
		close(fd);
		return rc;
	}
	if ((rc = read_line(fd, head, sizeof head)) < 0) {
		g_snprintf(why, len, "%s:%d: %s", host, port, rc == -ETIMEDOUT ? "timed out" : g_strerror(-rc));
		close(fd);
		return rc;
	}
	if (!strncmp(head, "ERR again ", 10)) {
		g_snprintf(why, len, "%s (temporarily)", head + 10);
		close(fd);
		return -EAGAIN;
	}
	if (!strncmp(head, "ERR ", 4)) {
		g_snprintf(why, len, "%s", head + 4);
		close(fd);
		return -EREMOTEIO;
	}
	/* The reply's mac (last on its line) is checked once the samples are
	 * in; a keyed client takes no reply without one. */
	char mac[65] = "";
	char *m = strstr(head, " mac=");
	if (m) {
		g_strlcpy(mac, m + 5, sizeof mac);
		*m = 0;
	}
	if (klen && strlen(mac) != 64) {
		g_snprintf(why, len, "%s:%d: reply not authenticated (no mac)", host, port);
		close(fd);
		return -EACCES;
	}
	char pw[200];
	if (clip_parse_reply(head, out, pw, sizeof pw) < 0) {
		g_snprintf(why, len, "%s:%d: %s", host, port, pw);
		close(fd);
		return -EBADMSG;
	}
	out->x = g_new(float, out->n);
	if ((rc = read_full(fd, out->x, out->n * sizeof(float))) < 0) {
		g_snprintf(why, len, "%s:%d: samples: %s", host, port, rc == -ETIMEDOUT ? "timed out" : g_strerror(-rc));
		g_free(out->x);
		out->x = NULL;
	} else if (klen) {
		g_strchomp(req);
		gchar *want = clip_reply_mac(key, klen, nonce, req, head, out->x, out->n * sizeof(float));
		gboolean same = dev_netkey_same(want, mac, 64, TRUE);
		g_free(want);
		if (!same) {
			g_snprintf(why, len, "%s:%d: reply not authenticated (mac wrong for this request)", host, port);
			g_free(out->x);
			out->x = NULL;
			rc = -EACCES;
		}
	}
	close(fd);
	return rc;
}
