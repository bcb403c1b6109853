/* share.c — UDP detection sharing (see share.h). */
#include "apps/collab/share.h"

#include "libdev/common.h"
#include "libdev/netkey.h"
#include "libdev/ratelog.h"
#include "libdev/replay.h"
#include "apps/collab/seen.h"
#include "apps/collab/sharemsg.h"

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

#define RESEND_TICK_MS 100

struct collab_share {
	collab_share_cfg cfg;
	uint8_t *key;
	int fd;
	guint watch, have_timer, resend_timer;
	struct sockaddr_in to;
	collab_share_fn fn;
	void *user;
	dev_replay *replay;
	collab_seen *seen;
	GTree *pending;       /* uint64_t * ids to resend, oldest first */
	uint32_t sseq[4];     /* per kind */
	int64_t start_cpu_ns; /* cfg.now_cpu when made: since when this node listens */
	collab_share_stats st;
	char why[200]; /* the last refused datagram's reason */
};

GString *collab_share_encode(const det_event *e, uint64_t boot, uint32_t sseq, const uint8_t *key, size_t klen)
{
	collab_msg m = {.kind = COLLAB_MSG_DET, .boot = boot, .sseq = sseq, .e = *e};
	return collab_msg_encode(&m, key, klen);
}

int collab_share_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, det_event *e, uint64_t *boot,
			uint32_t *sseq, char *why, size_t len)
{
	collab_msg *m = g_new(collab_msg, 1);
	int rc = collab_msg_decode(buf, n, key, klen, m, why, len);
	if (!rc && m->kind != COLLAB_MSG_DET) {
		g_snprintf(why, len, "not a DET datagram");
		rc = -EBADMSG;
	}
	if (!rc) {
		*e = m->e;
		*boot = m->boot;
		*sseq = m->sseq;
	}
	g_free(m);
	return rc;
}

static void refuse(collab_share *s, guint64 *counter, const char *why, const struct sockaddr_in *from)
{
	++*counter;
	g_snprintf(s->why, sizeof s->why, "%s (from %s)", why, inet_ntoa(from->sin_addr));
	ratelog(G_LOG_LEVEL_WARNING, *counter, "collab: datagram refused: %s", s->why);
}

static gint cmp_id(gconstpointer a, gconstpointer b, gpointer unused)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Send m (its boot and sequence number filled in).  0 or -errno. */
static int send_msg(collab_share *s, collab_msg *m)
{
	m->boot = s->cfg.boot;
	m->sseq = s->sseq[m->kind]++;
	GString *g = collab_msg_encode(m, s->key, s->cfg.klen);
	ssize_t k = sendto(s->fd, g->str, g->len, 0, (struct sockaddr *)&s->to, sizeof s->to);
	int rc = k < 0 ? -errno : 0;
	g_string_free(g, TRUE);
	return rc;
}

/* A DET: the detection, once. */
static void take_det(collab_share *s, const collab_msg *m)
{
	guint late = m->late;
	if (m->oid && s->seen) {
		collab_seen_verdict v = collab_seen_add(s->seen, m->e.node, m->epoch, m->oid, m->late != 0);
		if (v != SEEN_NEW) {
			s->st.duplicates += v != SEEN_FULL;
			return;
		}
	}
	s->st.accepted++;
	s->st.late += late != 0;
	s->fn(s->user, &m->e, late);
}

/* A WANT since_ms= for this node: which of its ids are from that time
 * (HAVE to= since=). */
static void take_since(collab_share *s, const collab_msg *m)
{
	if (!s->cfg.now_cpu)
		return;
	int64_t now = s->cfg.now_cpu(s->cfg.now_ctx);
	collab_msg *a = g_new0(collab_msg, 1);
	a->kind = COLLAB_MSG_HAVE;
	a->sender = s->cfg.self;
	a->epoch = m->epoch;
	collab_outbox_range(s->cfg.outbox, &a->first, &a->last);
	a->asked = m->sender;
	a->since = collab_outbox_first_since(s->cfg.outbox, now - (int64_t)m->since_ms * 1000000);
	if (send_msg(s, a) == 0)
		s->st.since_answered++;
	g_free(a);
}

/* A WANT for this node: queue what it still holds. */
static void take_want(collab_share *s, const collab_msg *m)
{
	if (!s->cfg.outbox || m->asked != s->cfg.self || m->epoch != collab_outbox_epoch(s->cfg.outbox))
		return;
	if (m->since_ms) {
		take_since(s, m);
		return;
	}
	uint64_t first, last;
	collab_outbox_range(s->cfg.outbox, &first, &last);
	for (guint r = 0; r < m->n_ranges; r++) {
		uint64_t lo = MAX(m->ranges[r][0], first), hi = MIN(m->ranges[r][1], last);
		if (m->ranges[r][0] < first) /* asked for, no longer queued (first >= 1) */
			s->st.gone += MIN(m->ranges[r][1], first - 1) - m->ranges[r][0] + 1;
		for (uint64_t id = lo; id <= hi && g_tree_nnodes(s->pending) < (gint)s->cfg.span; id++) {
			s->st.wanted++;
			if (!g_tree_lookup(s->pending, &id)) {
				uint64_t *k = g_new(uint64_t, 1);
				*k = id;
				g_tree_insert(s->pending, k, k);
			}
		}
	}
}

static gboolean on_in(gint fd, GIOCondition cond, gpointer data)
{
	collab_share *s = data;
	char buf[2048];
	collab_msg *m = g_new(collab_msg, 1);
	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		ssize_t k = recvfrom(fd, buf, sizeof buf - 1, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (k < 0)
			break;
		buf[k] = 0;
		char why[160];
		int rc = collab_msg_decode(buf, (size_t)k, s->key, s->cfg.klen, m, why, sizeof why);
		if (rc < 0) {
			refuse(s, rc == -EACCES ? &s->st.bad_auth : &s->st.rejected, why, &from);
			continue;
		}
		if (m->sender == s->cfg.self)
			continue;
		if (s->cfg.reachable && !s->cfg.reachable(s->cfg.reachable_ctx, m->sender)) {
			s->st.cut_off++;
			continue;
		}
		replay_verdict v = dev_replay_check(s->replay, m->sender, m->kind, m->boot, m->sseq);
		if (v != REPLAY_OK) {
			g_snprintf(why, sizeof why, "replay (%s) of node%u's datagram", dev_replay_name(v), m->sender);
			refuse(s, &s->st.replays, why, &from);
			continue;
		}
		if (m->kind == COLLAB_MSG_DET)
			take_det(s, m);
		else if (m->kind == COLLAB_MSG_HAVE && s->seen) {
			collab_seen_have(s->seen, m->sender, m->epoch, m->first, m->last);
			if (m->since && m->asked == s->cfg.self)
				collab_seen_since(s->seen, m->sender, m->epoch, m->since);
		} else if (m->kind == COLLAB_MSG_WANT)
			take_want(s, m);
	}
	g_free(m);
	return G_SOURCE_CONTINUE;
}

/* Every have_ms: what this node queues, and what it misses of others. */
static gboolean on_have(gpointer data)
{
	collab_share *s = data;
	collab_msg *m = g_new0(collab_msg, 1);
	m->kind = COLLAB_MSG_HAVE;
	m->sender = s->cfg.self;
	m->epoch = collab_outbox_epoch(s->cfg.outbox);
	collab_outbox_range(s->cfg.outbox, &m->first, &m->last);
	if (send_msg(s, m) == 0)
		s->st.have_sent++;
	GArray *nodes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	GArray *r = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	collab_seen_lacking(s->seen, nodes);
	for (guint i = 0; i < nodes->len; i++) {
		uint32_t node = g_array_index(nodes, uint32_t, i);
		g_array_set_size(r, 0);
		uint64_t epoch = 0;
		collab_seen_missing(s->seen, node, r, COLLAB_WANT_MAX_RANGES, &epoch);
		memset(m, 0, sizeof *m);
		m->kind = COLLAB_MSG_WANT;
		m->sender = s->cfg.self;
		m->asked = node;
		m->epoch = epoch;
		for (guint k = 0; k + 1 < r->len; k += 2) {
			m->ranges[m->n_ranges][0] = g_array_index(r, uint64_t, k);
			m->ranges[m->n_ranges][1] = g_array_index(r, uint64_t, k + 1);
			m->n_ranges++;
		}
		if (m->n_ranges && send_msg(s, m) == 0)
			s->st.want_sent++;
	}
	/* Nodes first heard: which of their ids are from while we listened. */
	g_array_set_size(nodes, 0);
	if (s->cfg.now_cpu)
		collab_seen_pulls(s->seen, nodes);
	for (guint i = 0; i < nodes->len; i++) {
		uint32_t node = g_array_index(nodes, uint32_t, i);
		memset(m, 0, sizeof *m);
		m->kind = COLLAB_MSG_WANT;
		m->sender = s->cfg.self;
		m->asked = node;
		m->epoch = collab_seen_pull_asked(s->seen, node);
		int64_t up_ns = s->cfg.now_cpu(s->cfg.now_ctx) - s->start_cpu_ns;
		m->since_ms = (uint64_t)CLAMP(up_ns / 1000000, 1, (int64_t)COLLAB_SINCE_MAX_MS);
		if (m->epoch && send_msg(s, m) == 0)
			s->st.since_sent++;
	}
	g_array_free(nodes, TRUE);
	g_array_free(r, TRUE);
	g_free(m);
	return G_SOURCE_CONTINUE;
}

static gboolean first_key(gpointer key, gpointer value, gpointer data)
{
	*(uint64_t *)data = *(uint64_t *)key;
	return TRUE;
}

/* Every RESEND_TICK_MS: the oldest pending resends, within the rate. */
static gboolean on_resend(gpointer data)
{
	collab_share *s = data;
	guint budget = MAX(1u, s->cfg.resend_per_s * RESEND_TICK_MS / 1000);
	collab_msg *m = g_new0(collab_msg, 1);
	while (budget && g_tree_nnodes(s->pending)) {
		uint64_t id = 0;
		g_tree_foreach(s->pending, first_key, &id);
		g_tree_remove(s->pending, &id);
		const det_event *e = collab_outbox_get(s->cfg.outbox, id);
		if (!e) {
			s->st.gone++;
			continue;
		}
		memset(m, 0, sizeof *m);
		m->kind = COLLAB_MSG_DET;
		m->e = *e;
		if (s->cfg.retime && s->cfg.retime(s->cfg.retime_ctx, &m->e))
			s->st.retimed++;
		m->epoch = collab_outbox_epoch(s->cfg.outbox);
		m->oid = id;
		m->late = COLLAB_LATE_RESENT;
		int rc = send_msg(s, m);
		if (rc < 0) {
			/* Asked for again at the next WANT. */
			g_snprintf(s->why, sizeof s->why, "resending detection %" PRIu64 ": %s", id, g_strerror(-rc));
			break;
		}
		s->st.resent++;
		budget--;
	}
	g_free(m);
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
	for (int k = 0; k < 4; k++)
		s->sseq[k] = g_random_int();
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
	s->pending = g_tree_new_full(cmp_id, NULL, g_free, NULL);
	s->watch = g_unix_fd_add(s->fd, G_IO_IN, on_in, s);
	if (cfg->now_cpu)
		s->start_cpu_ns = cfg->now_cpu(cfg->now_ctx);
	if (cfg->outbox) {
		s->cfg.span = cfg->span ? cfg->span : 4096;
		s->cfg.resend_per_s = cfg->resend_per_s ? cfg->resend_per_s : 200;
		s->seen = collab_seen_new(cfg->max_senders, s->cfg.span);
		s->have_timer = g_timeout_add(cfg->have_ms ? cfg->have_ms : 2000, on_have, s);
		s->resend_timer = g_timeout_add(RESEND_TICK_MS, on_resend, s);
	}
	return s;
fail:
	g_free(s);
	return NULL;
}

int collab_share_send(collab_share *s, const det_event *e, guint late)
{
	collab_msg *m = g_new0(collab_msg, 1);
	m->kind = COLLAB_MSG_DET;
	m->e = *e;
	m->late = late;
	if (s->cfg.outbox) {
		/* Queued first: a failed queue is on the outbox's counts, and
		 * the detection still goes out live. */
		collab_outbox_add(s->cfg.outbox, e, e->cpu_ns, &m->oid);
		m->epoch = collab_outbox_epoch(s->cfg.outbox);
	}
	int rc = send_msg(s, m);
	g_free(m);
	if (!rc)
		s->st.sent++;
	return rc;
}

void collab_share_counts(const collab_share *s, collab_share_stats *st)
{
	*st = s->st;
	st->pending = (guint)g_tree_nnodes(s->pending);
	if (s->seen) {
		collab_seen_stats ss;
		collab_seen_counts(s->seen, &ss);
		st->missing = ss.missing;
		st->lost = ss.lost;
		st->pulled = ss.pulled;
	}
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
	if (s->have_timer)
		g_source_remove(s->have_timer);
	if (s->resend_timer)
		g_source_remove(s->resend_timer);
	close(s->fd);
	dev_replay_free(s->replay);
	collab_seen_free(s->seen);
	g_tree_destroy(s->pending);
	g_free(s->key);
	g_free(s);
}
