/* archived.h — audio/<k>/data requests older than audiod's ring, served
 * from chorus-archive's segments (docs/audiod.md §6, docs/archive.md §4;
 * issue 21 item 3): the same reply, the same samples, gaps as gaps.
 *
 * One per client stream: the archive directory is scanned when the stream
 * opens (archive/store.h) and its segments of nodeN:audioK are read as the
 * stream needs them, on audiod's main thread (the capture thread never
 * waits for a disk).  The archive's frames carry audiod's numbering, so a
 * stream runs from the archive into the ring without a seam, provided the
 * ring reaches back past the archive's newest closed segment (ring_s
 * longer than the archive's segment_s + flush_s).
 */
#ifndef CHORUS_AUDIOD_ARCHIVED_H
#define CHORUS_AUDIOD_ARCHIVED_H

#include <glib.h>
#include <stdint.h>

typedef struct audiod_archive audiod_archive;

/* Open dir for nodeN:audioK whose frames are `frame_bytes` bytes in
 * `format` (the device's: the archive must have recorded the same).  A
 * request by time (by_time: from_ns..to_ns global, to_ns INT64_MAX: open)
 * or by frames (first..last, last INT64_MAX: open) is resolved against it:
 * *first and, by time when the archive holds the range's end, *last are
 * set (else *last is left as the caller had it: the ring's), and `reply`
 * gets the first frame's time as the archive places it (" t0_clock=global
 * t0=… t0_se=… period=… period_se=…[ t0_root=N] source=archive").  NULL +
 * *err (ERANGE: no segment holds the range; ENOENT: no such directory, or
 * by time and no segment there was placed in global time; EPROTO: another
 * format). */
audiod_archive *audiod_archive_open(const char *dir, uint32_t node, uint32_t device, const char *format,
				    uint32_t frame_bytes, gboolean by_time, int64_t from_ns, int64_t to_ns,
				    int64_t *first, int64_t *last, GString *reply, GError **err);

void audiod_archive_free(audiod_archive *a);

/* For `from` below the ring's oldest frame: TRUE when [from, *to) is in
 * one segment (*to <= oldest); FALSE when [from, *to) is in no segment (a
 * gap; *to = from when the archive holds nothing at or after from below
 * oldest).  As dev_sensor_ops.below. */
gboolean audiod_archive_below(const audiod_archive *a, int64_t from, int64_t oldest, int64_t *to);

/* Read whole frames [first, first + n) (inside one segment, as _below
 * said) into buf.  0 or -EIO (the segment does not decode; logged). */
int audiod_archive_read(audiod_archive *a, int64_t first, size_t n, void *buf);

#endif
