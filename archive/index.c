/* index.c — a segment's sidecar index as text (see index.h). */
#include "archive/index.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

archive_index *archive_index_new(void)
{
	archive_index *x = g_new0(archive_index, 1);
	x->times = g_array_new(FALSE, FALSE, sizeof(archive_timept));
	x->gaps = g_array_new(FALSE, FALSE, sizeof(archive_gap));
	return x;
}

void archive_index_free(archive_index *x)
{
	if (!x)
		return;
	g_array_free(x->times, TRUE);
	g_array_free(x->gaps, TRUE);
	g_free(x);
}

char *archive_name(const archive_index *x, char *buf, size_t len)
{
	time_t s = (time_t)(x->run_ns >= 0 ? x->run_ns / 1000000000 : 0);
	struct tm tm;
	char when[32];
	gmtime_r(&s, &tm);
	strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
	g_snprintf(buf, len, "node%" PRIu32 "-audio%" PRIu32 "-%s-f%015" PRId64, x->node, x->device, when, x->first);
	return buf;
}

unsigned archive_sample_bytes(const char *format)
{
	if (!strcmp(format, "S16_LE"))
		return 2;
	if (!strcmp(format, "S24_3LE"))
		return 3;
	return 0;
}

void archive_index_format_head(const archive_index *x, GString *out)
{
	g_string_append_printf(out,
			       "chorus-archive-index 1\nsegment node=%" PRIu32 " device=%" PRIu32 " rate_hz=%" PRIu32
			       " channels=%" PRIu32 " format=%s first=%" PRId64 " run_ns=%" PRId64 " wall_ns=%" PRId64 "\n",
			       x->node, x->device, x->rate_hz, x->channels, x->format, x->first, x->run_ns, x->wall_ns);
}

void archive_index_format_time(const archive_timept *t, GString *out)
{
	g_string_append_printf(out, "time frame=%" PRId64 " cpu_ns=%" PRId64 " cpu_se_ns=%.3f", t->frame, t->cpu_ns,
			       t->cpu_se_ns);
	if (t->has_global && t->root != ARCHIVE_ROOT_UNKNOWN)
		g_string_append_printf(out, " global_ns=%" PRId64 " global_se_ns=%.3f root=%" PRIu32 "\n", t->global_ns,
				       t->global_se_ns, t->root);
	else if (t->has_global)
		g_string_append_printf(out, " global_ns=%" PRId64 " global_se_ns=%.3f\n", t->global_ns, t->global_se_ns);
	else
		g_string_append(out, " global_ns=none global_se_ns=none\n");
}

void archive_index_format_gap(const archive_gap *g, GString *out)
{
	g_string_append_printf(out, "gap from=%" PRId64 " to=%" PRId64 " reason=%s\n", g->from, g->to, g->reason);
}

void archive_index_format_end(const archive_index *x, GString *out)
{
	g_string_append_printf(out, "end frames=%" PRId64 " wall_end_ns=%" PRId64 "\n", x->frames, x->wall_end_ns);
}

void archive_index_format(const archive_index *x, GString *out)
{
	archive_index_format_head(x, out);
	for (guint i = 0; i < x->gaps->len; i++)
		archive_index_format_gap(&g_array_index(x->gaps, archive_gap, i), out);
	for (guint i = 0; i < x->times->len; i++)
		archive_index_format_time(&g_array_index(x->times, archive_timept, i), out);
	if (x->closed)
		archive_index_format_end(x, out);
}

/* The value of key=… among the fields of a line, or NULL. */
static const char *field(char **f, const char *key)
{
	size_t k = strlen(key);
	for (; *f; f++)
		if (!strncmp(*f, key, k) && (*f)[k] == '=')
			return *f + k + 1;
	return NULL;
}

static int get_i64(char **f, const char *key, int64_t *out, char *why, size_t len, int line)
{
	const char *v = field(f, key);
	char *end;
	if (!v) {
		g_snprintf(why, len, "%d: missing %s=", line, key);
		return -EINVAL;
	}
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (end == v || *end || errno) {
		g_snprintf(why, len, "%d: %s: expected an integer, got \"%s\"", line, key, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int get_u32(char **f, const char *key, uint32_t *out, char *why, size_t len, int line)
{
	int64_t v;
	int rc = get_i64(f, key, &v, why, len, line);
	if (rc < 0)
		return rc;
	if (v < 0 || v > UINT32_MAX) {
		g_snprintf(why, len, "%d: %s: %" PRId64 " out of range", line, key, v);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int get_double(char **f, const char *key, double *out, char *why, size_t len, int line)
{
	const char *v = field(f, key);
	char *end;
	if (!v) {
		g_snprintf(why, len, "%d: missing %s=", line, key);
		return -EINVAL;
	}
	*out = g_ascii_strtod(v, &end);
	if (end == v || *end) {
		g_snprintf(why, len, "%d: %s: expected a number, got \"%s\"", line, key, v);
		return -EINVAL;
	}
	return 0;
}

static int parse_line(char **f, int line, int *head, archive_index *out, char *why, size_t len)
{
	int rc = 0;
	if (!strcmp(f[0], "chorus-archive-index")) {
		if (!f[1] || strcmp(f[1], "1")) {
			g_snprintf(why, len, "%d: index version %s, expected 1", line, f[1] ? f[1] : "(none)");
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(f[0], "segment")) {
		if (*head) {
			g_snprintf(why, len, "%d: a second segment line", line);
			return -EINVAL;
		}
		const char *fmt = field(f + 1, "format");
		if ((rc = get_u32(f + 1, "node", &out->node, why, len, line)) < 0 ||
		    (rc = get_u32(f + 1, "device", &out->device, why, len, line)) < 0 ||
		    (rc = get_u32(f + 1, "rate_hz", &out->rate_hz, why, len, line)) < 0 ||
		    (rc = get_u32(f + 1, "channels", &out->channels, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "first", &out->first, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "run_ns", &out->run_ns, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "wall_ns", &out->wall_ns, why, len, line)) < 0)
			return rc;
		if (!fmt || !archive_sample_bytes(fmt)) {
			g_snprintf(why, len, "%d: format: expected S16_LE or S24_3LE, got %s", line, fmt ? fmt : "none");
			return -EINVAL;
		}
		if (!out->rate_hz || !out->channels) {
			g_snprintf(why, len, "%d: rate_hz and channels must be positive", line);
			return -EINVAL;
		}
		g_strlcpy(out->format, fmt, sizeof out->format);
		*head = 1;
		return 0;
	}
	if (!*head) {
		g_snprintf(why, len, "%d: \"%s\" before the segment line", line, f[0]);
		return -EINVAL;
	}
	if (!strcmp(f[0], "time")) {
		archive_timept t = {.root = ARCHIVE_ROOT_UNKNOWN};
		const char *g = field(f + 1, "global_ns");
		if ((rc = get_i64(f + 1, "frame", &t.frame, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "cpu_ns", &t.cpu_ns, why, len, line)) < 0 ||
		    (rc = get_double(f + 1, "cpu_se_ns", &t.cpu_se_ns, why, len, line)) < 0)
			return rc;
		if (g && strcmp(g, "none")) {
			if ((rc = get_i64(f + 1, "global_ns", &t.global_ns, why, len, line)) < 0 ||
			    (rc = get_double(f + 1, "global_se_ns", &t.global_se_ns, why, len, line)) < 0)
				return rc;
			if (field(f + 1, "root") && (rc = get_u32(f + 1, "root", &t.root, why, len, line)) < 0)
				return rc;
			t.has_global = 1;
		}
		g_array_append_val(out->times, t);
		return 0;
	}
	if (!strcmp(f[0], "gap")) {
		archive_gap g = {0};
		const char *r = field(f + 1, "reason");
		if ((rc = get_i64(f + 1, "from", &g.from, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "to", &g.to, why, len, line)) < 0)
			return rc;
		if (g.to <= g.from) {
			g_snprintf(why, len, "%d: gap to (%" PRId64 ") must be after from (%" PRId64 ")", line, g.to, g.from);
			return -EINVAL;
		}
		g_strlcpy(g.reason, r ? r : "unknown", sizeof g.reason);
		g_array_append_val(out->gaps, g);
		return 0;
	}
	if (!strcmp(f[0], "end")) {
		if ((rc = get_i64(f + 1, "frames", &out->frames, why, len, line)) < 0 ||
		    (rc = get_i64(f + 1, "wall_end_ns", &out->wall_end_ns, why, len, line)) < 0)
			return rc;
		if (out->frames < 0) {
			g_snprintf(why, len, "%d: frames: %" PRId64 " is negative", line, out->frames);
			return -EINVAL;
		}
		out->closed = 1;
		return 0;
	}
	g_snprintf(why, len, "%d: unknown record \"%s\"", line, f[0]);
	return -EINVAL;
}

int archive_index_parse(const char *text, size_t len, int journal, archive_index *out, char *why, size_t whylen)
{
	int head = 0, rc = 0, line = 0;
	const char *p = text, *end = text + len;
	while (p < end && !rc) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		line++;
		if (!nl && journal)
			break; /* the crash cut this line */
		const char *e = nl ? nl : end;
		char *l = g_strndup(p, (size_t)(e - p));
		char **f = g_strsplit_set(g_strstrip(l), " ", -1);
		if (f[0] && *f[0])
			rc = parse_line(f, line, &head, out, why, whylen);
		g_strfreev(f);
		g_free(l);
		p = nl ? nl + 1 : end;
	}
	if (!rc && !head) {
		g_snprintf(why, whylen, "%d: no segment line", line);
		rc = -EINVAL;
	}
	return rc;
}
