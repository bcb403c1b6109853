/* share.c — UDP detection sharing (see share.h). */
#include "apps/collab/share.h"

#include "libdev/common.h"
#include "libdev/netkey.h"
#include "libdev/ratelog.h"
#include "libdev/replay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PREFIX "CHORUS-COLLAB 2 DET "
#define MAC_TAG " mac="
#define MAC_HEX 64

struct collab_share {
	collab_share_cfg cfg;
	uint8_t *key;
	int fd;
	guint watch;
	struct sockaddr_in to;
	collab_share_fn fn;
	void *user;
	dev_replay *replay;
	uint32_t sseq;
	collab_share_stats st;
	char why[200]; /* the last refused datagram's reason */
};

GString *collab_share_encode(const det_event *e, uint64_t boot, uint32_t sseq, const uint8_t *key, size_t klen)
{
	GString *m = g_string_new(PREFIX);
	g_string_append_printf(m, "boot=%" PRIu64 " sseq=%u ", boot, sseq);
	det_event_format(e, m);
	while (m->len && (m->str[m->len - 1] == '\n' || m->str[m->len - 1] == ' '))
		g_string_truncate(m, m->len - 1);
	if (klen) {
		gchar *mac = dev_netkey_mac_hex(key, klen, m->str, m->len);
		g_string_append_printf(m, MAC_TAG "%s", mac);
		g_free(mac);
	}
	return m;
}

static int word(const char *p, const char *key, const char **val)
{
	size_t k = strlen(key);
	if (strncmp(p, key, k))
		return -1;
	*val = p + k;
	return 0;
}

int collab_share_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, det_event *e, uint64_t *boot,
			uint32_t *sseq, char *why, size_t len)
{
	size_t pl = strlen(PREFIX);
	if (n < pl || memcmp(buf, PREFIX, pl)) {
		g_snprintf(why, len, "not a CHORUS-COLLAB 2 DET datagram");
		return -EBADMSG;
	}
	/* The mac, if any, ends the datagram. */
	size_t body = n;
	const char *mac = NULL;
	if (n >= pl + strlen(MAC_TAG) + MAC_HEX && !memcmp(buf + n - MAC_HEX - strlen(MAC_TAG), MAC_TAG, strlen(MAC_TAG))) {
		mac = buf + n - MAC_HEX;
		body = n - MAC_HEX - strlen(MAC_TAG);
	}
	if (klen) {
		if (!mac) {
			g_snprintf(why, len, "no mac on a keyed field");
			return -EACCES;
		}
		gchar *want = dev_netkey_mac_hex(key, klen, buf, body);
		gboolean same = dev_netkey_same(want, mac, MAC_HEX, TRUE);
		g_free(want);
		if (!same) {
			g_snprintf(why, len, "mac does not match (wrong key or altered datagram)");
			return -EACCES;
		}
	}
	char *text = g_strndup(buf + pl, body - pl);
	const char *b = NULL, *q = NULL;
	char *sp = strchr(text, ' '), *sp2 = sp ? strchr(sp + 1, ' ') : NULL;
	int rc = 0;
	if (!sp || !sp2 || word(text, "boot=", &b) < 0 || word(sp + 1, "sseq=", &q) < 0) {
		g_snprintf(why, len, "expected boot=B sseq=S before the detection");
		rc = -EBADMSG;
	} else {
		*sp = *sp2 = 0;
		char *end1, *end2;
		errno = 0;
		unsigned long long bv = strtoull(b, &end1, 10);
		unsigned long sv = strtoul(q, &end2, 10);
		if (errno || *end1 || *end2 || end1 == b || end2 == q || sv > UINT32_MAX || *b == '-' || *q == '-') {
			g_snprintf(why, len, "boot or sseq is not an unsigned number");
			rc = -EBADMSG;
		} else {
			*boot = bv;
			*sseq = (uint32_t)sv;
			if (det_event_parse(sp2 + 1, strlen(sp2 + 1), e, why, len) < 0)
				rc = -EBADMSG;
		}
	}
	g_free(text);
	return rc;
}

static void refuse(collab_share *s, guint64 *counter, const char *why, const struct sockaddr_in *from)
{
	++*counter;
	g_snprintf(s->why, sizeof s->why, "%s (from %s)", why, inet_ntoa(from->sin_addr));
	ratelog(G_LOG_LEVEL_WARNING, *counter, "collab: datagram refused: %s", s->why);
}

static gboolean on_in(gint fd, GIOCondition cond, gpointer data)
{
	collab_share *s = data;
	char buf[2048];
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		ssize_t k = recvfrom(fd, buf, sizeof buf - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (k < 0)
			break;
		buf[k] = 0;
		det_event e;
		uint64_t boot;
		uint32_t sseq;
		char why[160];
		int rc = collab_share_decode(buf, (size_t)k, s->key, s->cfg.klen, &e, &boot, &sseq, why, sizeof why);
		if (rc < 0) {
			refuse(s, rc == -EACCES ? &s->st.bad_auth : &s->st.rejected, why, &from);
			continue;
		}
		if (e.node == s->cfg.self)
			continue;
		if (s->cfg.reachable && !s->cfg.reachable(s->cfg.reachable_ctx, e.node)) {
			s->st.cut_off++;
			continue;
		}
		replay_verdict v = dev_replay_check(s->replay, e.node, 1, boot, sseq);
		if (v != REPLAY_OK) {
			g_snprintf(why, sizeof why, "replay (%s) of node%u's detection", dev_replay_name(v), e.node);
			refuse(s, &s->st.replays, why, &from);
			continue;
		}
		s->st.accepted++;
		s->fn(s->user, &e);
	}
	return G_SOURCE_CONTINUE;
}

collab_share *collab_share_new(const collab_share_cfg *cfg, collab_share_fn fn, void *user, GError **err)
{
	collab_share *s = g_new0(collab_share, 1);
	s->cfg = *cfg;
	s->cfg.address = NULL;
	s->fn = fn;
	s->user = user;
	s->to.sin_family = AF_INET;
	s->to.sin_port = htons((uint16_t)cfg->port);
	s->sseq = g_random_int();
	int one = 1;
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	if (inet_pton(AF_INET, cfg->address, &s->to.sin_addr) != 1) {
		g_set_error(err, DEV_ERROR, EINVAL, "share address \"%s\" is not an IPv4 address", cfg->address);
		goto fail;
	}
	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0 ||
	    bind(s->fd, (struct sockaddr *)&any, sizeof any) < 0) {
		g_set_error(err, DEV_ERROR, errno, "UDP port %d: %s", cfg->port, g_strerror(errno));
		if (s->fd >= 0)
			close(s->fd);
		goto fail;
	}
	if (cfg->klen)
		s->key = g_memdup2(cfg->key, cfg->klen);
	s->cfg.key = NULL;
	s->replay = dev_replay_new(cfg->max_senders);
	s->watch = g_unix_fd_add(s->fd, G_IO_IN, on_in, s);
	return s;
fail:
	g_free(s);
	return NULL;
}

int collab_share_send(collab_share *s, const det_event *e)
{
	GString *m = collab_share_encode(e, s->cfg.boot, s->sseq++, s->key, s->cfg.klen);
	ssize_t k = sendto(s->fd, m->str, m->len, 0, (struct sockaddr *)&s->to, sizeof s->to);
	int rc = k < 0 ? -errno : 0;
	g_string_free(m, TRUE);
	if (!rc)
		s->st.sent++;
	return rc;
}

void collab_share_counts(const collab_share *s, collab_share_stats *st)
{
	*st = s->st;
}

const char *collab_share_last_refusal(const collab_share *s)
{
	return s->why;
}

void collab_share_free(collab_share *s)
{
	if (!s)
		return;
	g_source_remove(s->watch);
	close(s->fd);
	dev_replay_free(s->replay);
	g_free(s->key);
	g_free(s);
}
