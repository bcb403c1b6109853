/* clipmsg.c — strict parsing of the clip service's lines (see clipmsg.h). */
#include "apps/collab/clipmsg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

/* "key=" at *p, then an integer in [lo, hi]; *p past it and one space (or
 * at the end).  FALSE when anything differs. */
static gboolean int_tok(const char **p, const char *key, long long lo, long long hi, long long *v)
{
	size_t k = strlen(key);
	if (strncmp(*p, key, k) || (*p)[k] != '=')
		return FALSE;
	const char *q = *p + k + 1;
	if (!((*q >= '0' && *q <= '9') || (*q == '-' && q[1] >= '0' && q[1] <= '9')))
		return FALSE;
	char *end;
	errno = 0;
	long long x = strtoll(q, &end, 10);
	if (errno || x < lo || x > hi || (*end != ' ' && *end != 0))
		return FALSE;
	*v = x;
	*p = *end ? end + 1 : end;
	return TRUE;
}

/* The same for a finite real in [lo, hi]. */
static gboolean real_tok(const char **p, const char *key, double lo, double hi, double *v)
{
	size_t k = strlen(key);
	if (strncmp(*p, key, k) || (*p)[k] != '=')
		return FALSE;
	const char *q = *p + k + 1;
	char *end;
	double x = g_ascii_strtod(q, &end);
	if (end == q || !isfinite(x) || x < lo || x > hi || (*end != ' ' && *end != 0))
		return FALSE;
	*v = x;
	*p = *end ? end + 1 : end;
	return TRUE;
}

int clip_parse_request(const char *line, int64_t *t0_ns, int64_t *t1_ns, int *channel, char *why, size_t len)
{
	const char *p = line;
	long long v, a, b, ch;
	if (strncmp(p, "GET ", 4) ||
	    !(p += 4, int_tok(&p, "v", 0, 1000, &v)) || v != 2 || !int_tok(&p, "from", INT64_MIN, INT64_MAX, &a) ||
	    !int_tok(&p, "to", INT64_MIN, INT64_MAX, &b) || !int_tok(&p, "channel", -1000000, 1000000, &ch) ||
	    (*p && strncmp(p, "mac=", 4))) {
		g_snprintf(why, len, "bad request (expected \"GET v=2 from=T0 to=T1 channel=C [mac=M]\")");
		return -EBADMSG;
	}
	/* b - a in unsigned arithmetic: no overflow for any two int64. */
	if (b <= a || (uint64_t)b - (uint64_t)a > (uint64_t)CLIP_MAX_NS || ch < 0 || ch > 63) {
		g_snprintf(why, len, "bad range or channel (0 < to - from <= %lld ns, channel 0..63)", CLIP_MAX_NS);
		return -EBADMSG;
	}
	*t0_ns = a;
	*t1_ns = b;
	*channel = (int)ch;
	return 0;
}

int clip_parse_reply(const char *head, clip *out, char *why, size_t len)
{
	const char *p = head;
	long long v, node, first, n, t0;
	double rate, frac, se, eff = 0;
	if (strncmp(p, "OK ", 3) || !(p += 3, int_tok(&p, "v", 0, 1000, &v)) || v != 1 ||
	    !int_tok(&p, "node", 0, UINT32_MAX - 1, &node) || !real_tok(&p, "rate", 1000, 1e6, &rate) ||
	    !int_tok(&p, "first", INT64_MIN, INT64_MAX, &first) || !int_tok(&p, "n", 1, 10000000, &n) ||
	    !int_tok(&p, "t0_ns", INT64_MIN, INT64_MAX, &t0) || !real_tok(&p, "t0_frac", -1, 1, &frac) ||
	    !real_tok(&p, "se_ns", 0, 1e18, &se) || (*p && !real_tok(&p, "rate_eff", 0, 1e7, &eff)) || *p) {
		g_snprintf(why, len, "malformed reply \"%.80s\"", head);
		return -EBADMSG;
	}
	out->node = (uint32_t)node;
	out->rate_hz = rate;
	out->first = first;
	out->n = (size_t)n;
	out->t0_ns = t0;
	out->t0_frac_ns = frac;
	out->se_ns = se;
	out->rate_eff_hz = eff;
	return 0;
}
