/* serve.h — answering a request for audio from the archive the way
 * audiod's audio/<k>/data answers it (docs/audiod.md §6): a frame range, or
 * a global time range resolved to frames through the segments' kept
 * conversions (archive/timeline.h), and the reply text with the first
 * frame's time and its uncertainty.  For audioget's fallback and
 * chorus-export.  File I/O through archive/store.h; main thread.
 */
#ifndef CHORUS_ARCHIVE_SERVE_H
#define CHORUS_ARCHIVE_SERVE_H

#include <glib.h>
#include <stdint.h>

#include "archive/store.h"
#include "archive/timeline.h"

typedef struct {
	uint32_t node, device;
	int by_time; /* from/to are global ns; else first/last are frames */
	int64_t from_ns, to_ns;
	int64_t first, last;
} archive_request;

typedef struct {
	int64_t first, last;    /* frames [first, last) */
	const archive_index *x; /* the segment holding (or nearest) first: format, rate, channels */
	int has_time;           /* when: the global time of `first` */
	archive_when when;
	char reply[512]; /* "first=F last=L rate=R channels=C format=… t0_clock=global t0=… t0_se=… period=… period_se=… source=archive" */
} archive_answer;

/* Resolve q against s into *a.  TRUE, or FALSE + *err: ERANGE (no segment
 * of that node and device holds the range; with the range kept), ENOENT
 * (by time, and no segment there was placed in global time), EINVAL
 * (an empty range). */
gboolean archive_resolve(const archive_store *s, const archive_request *q, archive_answer *a, GError **err);

/* Parse a time for --from/--to: an integer (ns), an ISO 8601 date-time
 * (UTC unless it says otherwise) or HH:MM:SS[.frac] today in UTC.  0 and
 * *out (ns since the Unix epoch for the text forms), or -EINVAL.  Reads
 * the wall clock only for the HH:MM:SS form. */
int archive_parse_time(const char *s, int64_t *out);

#endif
