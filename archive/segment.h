/* segment.h — writing one segment: a FLAC file (libsndfile) of contiguous
 * frames and its index journal, crash-safe (docs/archive.md §1).
 *
 * While open, the segment is NAME.flac.part (the FLAC stream as libFLAC
 * writes it: every finished block is in the file) and NAME.idx.part (the
 * index head, then time and gap lines as they come).  archive_segment_flush
 * makes both durable (fsync); a crash loses only what came after the last
 * flush plus the frames still in the encoder's current block.  Closing
 * finishes the FLAC stream, fsyncs it, renames it to NAME.flac, writes
 * NAME.idx atomically and removes the journal; a closed segment never
 * changes again.  Anything left as .part is archive_recover()'s
 * (archive/recover.h).  Main-thread I/O; every failure is a GError in
 * ARCHIVE_ERROR naming the file and the operation.
 */
#ifndef CHORUS_ARCHIVE_SEGMENT_H
#define CHORUS_ARCHIVE_SEGMENT_H

#include <glib.h>
#include <sndfile.h>
#include <stdint.h>

#include "archive/index.h"

typedef struct archive_segment archive_segment;

/* The libsndfile format of a segment: FLAC, 16 or 24 bits. */
int archive_sf_format(const char *format);

/* Create NAME.idx.part (head and the gaps of `head`, fsync) and
 * NAME.flac.part in dir, NAME = archive_name(head).  `flac_level` 0..8.
 * NULL + *err (create, write, fsync failures; a format other than S16_LE
 * or S24_3LE is EINVAL). */
archive_segment *archive_segment_open(const char *dir, const archive_index *head, int flac_level, GError **err);

/* Append n frames (head's format, interleaved, little-endian) to the FLAC
 * stream.  FALSE + *err when libsndfile wrote fewer (the disk is full, an
 * I/O error): the segment must then be abandoned. */
gboolean archive_segment_write(archive_segment *s, const void *frames, size_t n, GError **err);

/* Note a conversion for the index (journaled at the next flush). */
void archive_segment_add_time(archive_segment *s, const archive_timept *t);

/* Make everything written so far durable: fsync the FLAC file, append the
 * new index lines to the journal and fsync it.  FALSE + *err. */
gboolean archive_segment_flush(archive_segment *s, GError **err);

/* Finish: close the FLAC stream, fsync, rename to NAME.flac, write
 * NAME.idx (with `end`), remove the journal.  The segment is freed whatever
 * happens; on failure (FALSE + *err) its files stay for archive_recover(). */
gboolean archive_segment_close(archive_segment *s, int64_t wall_end_ns, GError **err);

/* Stop writing after a failure, leave the .part files for
 * archive_recover(), free.  NULL is fine. */
void archive_segment_abandon(archive_segment *s);

/* Frames written; the next frame's index; the base name; the head. */
int64_t archive_segment_frames(const archive_segment *s);
int64_t archive_segment_next(const archive_segment *s);
const char *archive_segment_name(const archive_segment *s);
const archive_index *archive_segment_index(const archive_segment *s);

/* Write n frames of `format` to an open libsndfile handle (S24_3LE is
 * widened into the top 24 bits of ints, libsndfile's convention).  Returns
 * the frames written (n on success).  Used by the recovery and the export. */
sf_count_t archive_sf_writef(SNDFILE *sf, const char *format, unsigned channels, const void *frames, size_t n);

/* A libsndfile call on `path` failed (sf: its handle, or NULL for a failed
 * sf_open); e: errno as the call left it (set errno = 0 before it).  Sets
 * *err to "PATH: WHAT: REASON": the system's reason when e is set — on a
 * full disk libsndfile's own text is "problem with initialization of the
 * flac decoder" — with libsndfile's after it, else libsndfile's alone; the
 * code is e, else EIO. */
void archive_sf_fail(GError **err, const char *path, const char *what, SNDFILE *sf, int e);

/* Read up to n frames of `format` from sf into buf (packed S24_3LE
 * narrowed from libsndfile's ints).  Returns the frames read (0 at the
 * end or on a decoding error). */
sf_count_t archive_sf_readf(SNDFILE *sf, const char *format, unsigned channels, void *buf, size_t n);

#endif
