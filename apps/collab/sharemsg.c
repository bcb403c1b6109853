/* sharemsg.c — collab's datagram codec (see sharemsg.h). */
#include "apps/collab/sharemsg.h"

#include "libdev/netkey.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "CHORUS-COLLAB 2 "
#define MAC_TAG " mac="
#define MAC_HEX 64

static const char *const kinds[] = {NULL, "DET", "HAVE", "WANT"};

GString *collab_msg_encode(const collab_msg *m, const uint8_t *key, size_t klen)
{
	GString *s = g_string_new(PREFIX);
	g_string_append_printf(s, "%s boot=%" PRIu64 " sseq=%u ", kinds[m->kind], m->boot, m->sseq);
	switch (m->kind) {
	case COLLAB_MSG_DET:
		if (m->oid)
			g_string_append_printf(s, "ob=%" PRIu64 " oid=%" PRIu64 " ", m->epoch, m->oid);
		if (m->late)
			g_string_append_printf(s, "late=%u ", m->late & COLLAB_LATE_ALL);
		det_event_format(&m->e, s);
		break;
	case COLLAB_MSG_HAVE:
		g_string_append_printf(s, "node=%u ob=%" PRIu64 " first=%" PRIu64 " last=%" PRIu64, m->sender, m->epoch,
				       m->first, m->last);
		if (m->since)
			g_string_append_printf(s, " to=%u since=%" PRIu64, m->asked, m->since);
		break;
	case COLLAB_MSG_WANT:
		g_string_append_printf(s, "node=%u from=%u ob=%" PRIu64 " ", m->asked, m->sender, m->epoch);
		if (m->since_ms) {
			g_string_append_printf(s, "since_ms=%" PRIu64, m->since_ms);
			break;
		}
		g_string_append(s, "ids=");
		for (guint i = 0; i < m->n_ranges; i++)
			g_string_append_printf(s, "%s%" PRIu64 "-%" PRIu64, i ? "," : "", m->ranges[i][0], m->ranges[i][1]);
		break;
	}
	while (s->len && (s->str[s->len - 1] == '\n' || s->str[s->len - 1] == ' '))
		g_string_truncate(s, s->len - 1);
	if (klen) {
		gchar *mac = dev_netkey_mac_hex(key, klen, s->str, s->len);
		g_string_append_printf(s, MAC_TAG "%s", mac);
		g_free(mac);
	}
	return s;
}

/* "key=N" at *p (an unsigned decimal up to max): the value, *p past it and
 * its space.  FALSE when *p is not that key or the number is malformed. */
static gboolean uint_tok(char **p, const char *key, uint64_t max, uint64_t *v)
{
	size_t k = strlen(key);
	if (strncmp(*p, key, k) || (*p)[k] != '=')
		return FALSE;
	char *q = *p + k + 1, *end;
	if (*q < '0' || *q > '9')
		return FALSE;
	errno = 0;
	unsigned long long x = strtoull(q, &end, 10);
	if (errno || x > max || (*end != ' ' && *end != 0))
		return FALSE;
	*v = x;
	*p = *end ? end + 1 : end;
	return TRUE;
}

static int bad(char *why, size_t len, const char *what)
{
	g_snprintf(why, len, "%s", what);
	return -EBADMSG;
}

static int body_det(char *p, collab_msg *m, char *why, size_t len)
{
	uint64_t v;
	if (uint_tok(&p, "ob", UINT64_MAX, &m->epoch)) {
		if (!uint_tok(&p, "oid", UINT64_MAX, &m->oid) || !m->oid || !m->epoch)
			return bad(why, len, "ob= must be followed by oid= (both above 0)");
	}
	if (uint_tok(&p, "late", COLLAB_LATE_ALL, &v))
		m->late = (guint)v;
	if (det_event_parse(p, strlen(p), &m->e, why, len) < 0)
		return -EBADMSG;
	m->sender = m->e.node;
	return 0;
}

static int body_have(char *p, collab_msg *m, char *why, size_t len)
{
	uint64_t node;
	if (!uint_tok(&p, "node", UINT32_MAX - 1, &node) || !uint_tok(&p, "ob", UINT64_MAX, &m->epoch) || !m->epoch ||
	    !uint_tok(&p, "first", UINT64_MAX, &m->first) || !uint_tok(&p, "last", UINT64_MAX - 1, &m->last))
		return bad(why, len, "expected node=N ob=E first=F last=L [to=M since=K]");
	if (!m->first || m->first > m->last + 1)
		return bad(why, len, "first must be 1..last+1");
	uint64_t to;
	if (uint_tok(&p, "to", UINT32_MAX - 1, &to)) {
		if (!uint_tok(&p, "since", UINT64_MAX, &m->since) || m->since < m->first || m->since > m->last + 1)
			return bad(why, len, "to=M must be followed by since=K, first <= K <= last+1");
		m->asked = (uint32_t)to;
	}
	if (*p)
		return bad(why, len, "expected node=N ob=E first=F last=L [to=M since=K]");
	m->sender = (uint32_t)node;
	return 0;
}

static int body_want(char *p, collab_msg *m, char *why, size_t len)
{
	uint64_t asked, from;
	if (!uint_tok(&p, "node", UINT32_MAX - 1, &asked) || !uint_tok(&p, "from", UINT32_MAX - 1, &from) ||
	    !uint_tok(&p, "ob", UINT64_MAX, &m->epoch) || !m->epoch)
		return bad(why, len, "expected node=N from=M ob=E ids=A-B,… or since_ms=U");
	m->asked = (uint32_t)asked;
	m->sender = (uint32_t)from;
	if (uint_tok(&p, "since_ms", COLLAB_SINCE_MAX_MS, &m->since_ms)) {
		if (!m->since_ms || *p)
			return bad(why, len, "since_ms=U: 1 <= U <= 400 days, and last");
		return 0;
	}
	if (strncmp(p, "ids=", 4))
		return bad(why, len, "expected node=N from=M ob=E ids=A-B,… or since_ms=U");
	p += 4;
	while (*p) {
		if (m->n_ranges == COLLAB_WANT_MAX_RANGES)
			return bad(why, len, "more than 16 id ranges");
		char *end;
		errno = 0;
		if (*p < '0' || *p > '9')
			return bad(why, len, "ids: expected A-B");
		unsigned long long a = strtoull(p, &end, 10);
		if (errno || *end != '-' || end[1] < '0' || end[1] > '9')
			return bad(why, len, "ids: expected A-B");
		unsigned long long b = strtoull(end + 1, &end, 10);
		if (errno || !a || a > b || (*end && *end != ','))
			return bad(why, len, "ids: A-B with 1 <= A <= B");
		m->ranges[m->n_ranges][0] = a;
		m->ranges[m->n_ranges][1] = b;
		m->n_ranges++;
		p = *end ? end + 1 : end;
	}
	if (!m->n_ranges)
		return bad(why, len, "ids: none");
	return 0;
}

int collab_msg_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, collab_msg *m, char *why, size_t len)
{
	size_t pl = strlen(PREFIX);
	memset(m, 0, sizeof *m);
	if (n < pl || memcmp(buf, PREFIX, pl))
		return bad(why, len, "not a CHORUS-COLLAB 2 datagram");
	/* The mac, if any, ends the datagram. */
	size_t body = n;
	const char *mac = NULL;
	size_t tl = strlen(MAC_TAG);
	if (n >= pl + tl + MAC_HEX && !memcmp(buf + n - MAC_HEX - tl, MAC_TAG, tl)) {
		mac = buf + n - MAC_HEX;
		body = n - MAC_HEX - tl;
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
	char *text = g_strndup(buf + pl, body - pl), *p = text;
	int rc = -EBADMSG;
	for (int k = COLLAB_MSG_DET; k <= COLLAB_MSG_WANT; k++) {
		size_t kl = strlen(kinds[k]);
		if (!strncmp(p, kinds[k], kl) && p[kl] == ' ') {
			m->kind = (collab_msg_kind)k;
			p += kl + 1;
			break;
		}
	}
	uint64_t sseq;
	if (!m->kind)
		bad(why, len, "unknown kind (expected DET, HAVE or WANT)");
	else if (!uint_tok(&p, "boot", UINT64_MAX, &m->boot) || !uint_tok(&p, "sseq", UINT32_MAX, &sseq))
		bad(why, len, "expected boot=B sseq=S after the kind");
	else {
		m->sseq = (uint32_t)sseq;
		rc = m->kind == COLLAB_MSG_DET    ? body_det(p, m, why, len)
		     : m->kind == COLLAB_MSG_HAVE ? body_have(p, m, why, len)
						  : body_want(p, m, why, len);
	}
	g_free(text);
	return rc;
}
