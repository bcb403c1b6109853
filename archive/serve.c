/* serve.c — requests answered from the archive (see serve.h). */
#include "archive/serve.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/durable.h"

int archive_parse_time(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end != s && !*end && !errno) {
		*out = v;
		return 0;
	}
	GDateTime *t = NULL;
	GTimeZone *utc = g_time_zone_new_utc();
	if (strchr(s, 'T')) {
		t = g_date_time_new_from_iso8601(s, utc);
	} else {
		int h, m;
		double sec;
		char extra;
		if (sscanf(s, "%d:%d:%lf%c", &h, &m, &sec, &extra) == 3 && h >= 0 && h < 24 && m >= 0 && m < 60 &&
		    sec >= 0 && sec < 61) {
			GDateTime *now = g_date_time_new_now(utc);
			t = g_date_time_new(utc, g_date_time_get_year(now), g_date_time_get_month(now),
					    g_date_time_get_day_of_month(now), h, m, sec);
			g_date_time_unref(now);
		}
	}
	g_time_zone_unref(utc);
	if (!t)
		return -EINVAL;
	*out = g_date_time_to_unix(t) * 1000000000LL + (int64_t)g_date_time_get_microsecond(t) * 1000;
	g_date_time_unref(t);
	return 0;
}

/* The frame of global time t through the segment nearest it. */
static gboolean frame_of(const archive_store *s, const archive_request *q, int64_t t, int64_t *f, GError **err)
{
	const archive_entry *en = archive_store_find_global(s, q->node, q->device, t);
	char why[256];
	if (!en) {
		g_set_error(err, ARCHIVE_ERROR, ENOENT,
			    "%s: no segment of node%u:audio%u was placed in global time (none reached syncd's global timescale)",
			    archive_store_dir(s), q->node, q->device);
		return FALSE;
	}
	if (archive_frame_at(en->x, t, f, why, sizeof why) < 0) {
		g_set_error(err, ARCHIVE_ERROR, ENOENT, "%s/%s: %s", archive_store_dir(s), en->name, why);
		return FALSE;
	}
	return TRUE;
}

gboolean archive_resolve(const archive_store *s, const archive_request *q, archive_answer *a, GError **err)
{
	memset(a, 0, sizeof *a);
	a->first = q->first;
	a->last = q->last;
	if (q->by_time) {
		if (q->to_ns <= q->from_ns) {
			g_set_error(err, ARCHIVE_ERROR, EINVAL, "to (%" PRId64 ") must be after from (%" PRId64 ")", q->to_ns,
				    q->from_ns);
			return FALSE;
		}
		if (!frame_of(s, q, q->from_ns, &a->first, err) || !frame_of(s, q, q->to_ns, &a->last, err))
			return FALSE;
	}
	if (a->last <= a->first) {
		g_set_error(err, ARCHIVE_ERROR, EINVAL, "empty range [%" PRId64 ", %" PRId64 ")", a->first, a->last);
		return FALSE;
	}
	/* The segment of the first frame, else the first one inside the range. */
	const archive_entry *en = archive_store_find_frame(s, q->node, q->device, a->first);
	for (guint i = 0; !en && i < archive_store_count(s); i++) {
		const archive_entry *e = archive_store_entry(s, i);
		if (e->x->node == q->node && e->x->device == q->device && e->x->first < a->last &&
		    e->x->first + e->x->frames > a->first)
			en = e;
	}
	if (!en) {
		g_set_error(err, ARCHIVE_ERROR, ERANGE,
			    "%s: no segment of node%u:audio%u holds any frame of [%" PRId64 ", %" PRId64 ")",
			    archive_store_dir(s), q->node, q->device, a->first, a->last);
		return FALSE;
	}
	a->x = en->x;
	char why[256];
	a->has_time = archive_time_of_frame(en->x, a->first, &a->when, why, sizeof why) == 0;
	int n = g_snprintf(a->reply, sizeof a->reply, "first=%" PRId64 " last=%" PRId64 " rate=%u channels=%u format=%s",
			   a->first, a->last, en->x->rate_hz, en->x->channels, en->x->format);
	if (q->by_time)
		n += g_snprintf(a->reply + n, sizeof a->reply - (size_t)n, " clock=global from=%" PRId64 " to=%" PRId64,
				q->from_ns, q->to_ns);
	if (a->has_time)
		n += g_snprintf(a->reply + n, sizeof a->reply - (size_t)n,
				" t0_clock=global t0=%" PRId64 ".%03d t0_se=%.1f period=%.3f period_se=%.4f",
				a->when.global_ns, (int)(a->when.frac_ns * 1000), a->when.se_ns, a->when.period_ns,
				a->when.period_se_ns);
	if (a->has_time && a->when.root != ARCHIVE_ROOT_UNKNOWN)
		n += g_snprintf(a->reply + n, sizeof a->reply - (size_t)n, " t0_root=%" PRIu32, a->when.root);
	else if (!a->has_time)
		n += g_snprintf(a->reply + n, sizeof a->reply - (size_t)n, " t0_clock=global t0=none");
	g_snprintf(a->reply + n, sizeof a->reply - (size_t)n, " source=archive");
	return TRUE;
}
