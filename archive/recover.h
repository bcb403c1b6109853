/* recover.h — closing the segments a crash left open (docs/archive.md §1).
 *
 * For every NAME.idx.part in the directory: the frames NAME.flac.part
 * still decodes (libsndfile reads a FLAC stream cut anywhere up to its last
 * whole block) are re-encoded into NAME.flac (temporary name, fsync,
 * rename), NAME.idx is written with their count and the journal's time
 * and gap lines, and the .part files are removed.  A segment whose
 * rename already happened (a crash between the steps of a close) is
 * completed from its NAME.flac.  A segment with no decodable frame is
 * removed.  Main-thread file I/O.
 */
#ifndef CHORUS_ARCHIVE_RECOVER_H
#define CHORUS_ARCHIVE_RECOVER_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	int recovered;    /* segments closed from their journal */
	int64_t frames;   /* frames they hold */
	int removed;      /* journals without a decodable frame, removed */
	int failed;       /* segments left as they were (an error) */
	double elapsed_s; /* wall time the recovery took, s */
} archive_recovery;

/* Recover dir at FLAC level `flac_level` (0..8); *out says what was done.
 * TRUE, or FALSE + *err with the first failure (a journal that does not
 * parse names its file and line; a write, fsync or rename that failed names
 * the file) after trying every segment. */
gboolean archive_recover(const char *dir, int flac_level, archive_recovery *out, GError **err);

/* The same for one segment, dir/base.idx.part (a segment the recorder
 * abandoned after a failed write), adding to *out.  TRUE, or FALSE + *err. */
gboolean archive_recover_segment(const char *dir, const char *base, int flac_level, archive_recovery *out,
				 GError **err);

#endif
