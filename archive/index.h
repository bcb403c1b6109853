/* index.h — a segment's sidecar index: what the FLAC file holds and how to
 * place its frames in time later (docs/archive.md §2), as text (pure: format
 * and parse only, no I/O).
 *
 *   chorus-archive-index 1
 *   segment node=2 device=0 rate_hz=48000 channels=2 format=S16_LE first=480000 run_ns=1764604000000000000 wall_ns=1764604800123456789
 *   time frame=480000 cpu_ns=81234567890 cpu_se_ns=0.2 global_ns=1764604800123456789 global_se_ns=612.4
 *   time frame=960000 cpu_ns=… cpu_se_ns=… global_ns=none global_se_ns=none
 *   gap from=470000 to=480000 reason=stream
 *   end frames=2880000 wall_end_ns=1764604860123456789
 *
 * `segment` comes first, once.  A segment's frames are contiguous: they are
 * frames [first, first + frames) of the node's nodeN:audioK clock; a gap is
 * never inside a segment, it is the span between two segments, and the
 * segment after it names it (`gap`, the frames audiod or the archive lost
 * and why).  `time` lines are conversions of a frame of the segment to the
 * node's cpu clock (the node-local audio fit, which does not depend on the
 * network) and to global time when reachable, each with its standard error,
 * taken while recording: a later request can convert the cpu time through
 * a better history than the one known then.  `end` is only in a closed
 * segment's index; an open segment's journal (NAME.idx.part) has none.
 * wall_ns is CLOCK_REALTIME at the first frame (retention, status); run_ns
 * is CLOCK_REALTIME when the recording of this run of audiod's frame
 * numbering began (the same for every segment of the run: naming).
 */
#ifndef CHORUS_ARCHIVE_INDEX_H
#define CHORUS_ARCHIVE_INDEX_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_FORMAT_MAX 16
#define ARCHIVE_NAME_MAX 96

/* One conversion of a frame, taken while recording. */
typedef struct {
	int64_t frame;       /* on nodeN:audioK */
	int64_t cpu_ns;      /* nodeN:cpu of that frame */
	double cpu_se_ns;    /* its standard error, ns */
	int has_global;      /* 0: global time was not reachable then; 2: bridged later (archive_bridge) */
	int64_t global_ns;   /* global time of that frame */
	double global_se_ns; /* its standard error, ns */
	uint32_t root;       /* the root whose timescale global_ns is in (ARCHIVE_ROOT_UNKNOWN: not recorded) */
} archive_timept;

/* archive_timept.root of an index written before roots were recorded. */
#define ARCHIVE_ROOT_UNKNOWN UINT32_MAX

/* Frames [from, to) that will never be in the archive. */
typedef struct {
	int64_t from, to;
	char reason[16]; /* "stream" (audiod's GAP), "restart" (the archive was down), "write" (a write failed) */
} archive_gap;

typedef struct {
	uint32_t node, device;
	uint32_t rate_hz, channels;
	char format[ARCHIVE_FORMAT_MAX]; /* audiod's sample format: S16_LE or S24_3LE */
	int64_t first;                   /* first frame */
	int64_t run_ns;                  /* CLOCK_REALTIME when this numbering's recording began */
	int64_t wall_ns;                 /* CLOCK_REALTIME of the first frame */
	int closed;                      /* an `end` line was read */
	int64_t frames;                  /* frames held (closed segments) */
	int64_t wall_end_ns;             /* CLOCK_REALTIME at the close */
	GArray *times;                   /* archive_timept, in frame order */
	GArray *gaps;                    /* archive_gap */
} archive_index;

/* A new empty index (times and gaps allocated).  Free with archive_index_free. */
archive_index *archive_index_new(void);

/* Free (NULL is fine). */
void archive_index_free(archive_index *x);

/* The base name of a segment, without extension, into buf (at least
 * ARCHIVE_NAME_MAX bytes): node2-audio0-20261201T154900Z-f000000000480000,
 * the run's start (UTC) and the first frame: sorted by name = sorted by
 * run, then by frame.  Pure. */
char *archive_name(const archive_index *x, char *buf, size_t len);

/* Lines of the text form.  Each appends one line with its newline to out. */
void archive_index_format_head(const archive_index *x, GString *out);
void archive_index_format_time(const archive_timept *t, GString *out);
void archive_index_format_gap(const archive_gap *g, GString *out);
void archive_index_format_end(const archive_index *x, GString *out);

/* The whole index (head, times, gaps, and end when closed). */
void archive_index_format(const archive_index *x, GString *out);

/* Parse index text (len bytes) into *out (from archive_index_new, empty).
 * A journal ends wherever the crash left it: a last line without its
 * newline is ignored when `journal` is set.  Returns 0, or -EINVAL with
 * "LINE: why" in why[len] (the first bad line: unknown record, missing or
 * malformed field, no head, a second head). */
int archive_index_parse(const char *text, size_t len, int journal, archive_index *out, char *why, size_t whylen);

/* Bytes per frame of a format name ("S16_LE" 2, "S24_3LE" 3 per channel),
 * or 0 for a format the archive cannot keep bit-exact in FLAC. */
unsigned archive_sample_bytes(const char *format);

#endif
