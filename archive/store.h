/* store.h — the archive directory as a whole: its closed segments in time
 * order, their sizes, retention (oldest first), and reading frames back
 * with the gaps between segments marked (docs/archive.md §3-4).
 *
 * Only closed segments (NAME.flac with NAME.idx) are listed: an open
 * segment's .part files belong to the recorder and to archive_recover().
 * Segments are sorted by name, which is the wall time of their first frame
 * (archive_name).  Main-thread file I/O; errors are GErrors in
 * ARCHIVE_ERROR naming the file.
 */
#ifndef CHORUS_ARCHIVE_STORE_H
#define CHORUS_ARCHIVE_STORE_H

#include <glib.h>
#include <stdint.h>

#include "archive/index.h"

typedef struct archive_store archive_store;

typedef struct {
	char name[ARCHIVE_NAME_MAX]; /* base name (no extension) */
	archive_index *x;            /* its index, owned by the store */
	int64_t bytes;               /* NAME.flac + NAME.idx, bytes */
} archive_entry;

/* Scan dir, and bridge the outages in the segments' global times with the
 * points recorded after them (archive_bridge), and lend a segment that
 * kept no global time the nearest points of its run's neighbours (in
 * memory; the files never change).  With `tidy`, a NAME.flac that has neither NAME.idx nor a
 * journal (a deletion cut short) is removed.  An index that does not parse
 * is skipped and counted (archive_store_bad).  NULL + *err when dir cannot
 * be read. */
archive_store *archive_store_open(const char *dir, gboolean tidy, GError **err);

/* Free (NULL is fine). */
void archive_store_free(archive_store *s);

/* Segments held, and entry i (0 = oldest); owned by the store, valid
 * until it changes. */
guint archive_store_count(const archive_store *s);
const archive_entry *archive_store_entry(const archive_store *s, guint i);

/* Bytes of all segments; indices that did not parse (the first one's
 * reason in archive_store_bad_why, or ""). */
int64_t archive_store_bytes(const archive_store *s);
int archive_store_bad(const archive_store *s);
const char *archive_store_bad_why(const archive_store *s);

/* A segment was closed: add dir/name (its index is copied; its size is
 * read from the files).  FALSE + *err when the files cannot be stat'ed. */
gboolean archive_store_add(archive_store *s, const char *name, const archive_index *x, GError **err);

/* Delete the oldest segment (index first, then the FLAC).  FALSE + *err
 * when an unlink fails (ENOENT is no failure) or nothing is held. */
gboolean archive_store_drop_oldest(archive_store *s, GError **err);

/* Retention: drop the oldest segments while one ended more than max_age_ns
 * before now_wall_ns (0: no age limit), while the total exceeds max_bytes
 * (0: none), or while the file system has less than reserve_bytes free
 * (statvfs, for unprivileged users), never the newest one unless it breaks
 * the age limit.  *dropped counts them.  FALSE + *err on a failed unlink or
 * statvfs. */
gboolean archive_store_enforce(archive_store *s, int64_t now_wall_ns, int64_t max_age_ns, int64_t max_bytes,
			       int64_t reserve_bytes, int *dropped, GError **err);

/* Bytes free on dir's file system for an unprivileged user, or -errno. */
int64_t archive_store_free_bytes(const archive_store *s);

typedef struct {
	/* The first segment met, before any data: its index (format, rate,
	 * channels).  May be NULL. */
	void (*begin)(void *user, const archive_index *x);
	/* n frames from `first` (the segment's format, interleaved). */
	void (*data)(void *user, int64_t first, const void *frames, size_t n);
	/* [from, to) is not in the archive.  May be NULL. */
	void (*gap)(void *user, int64_t from, int64_t to);
} archive_read_ops;

/* Deliver frames [first, last) of nodeN:audioK from the segments, in frame
 * order, with the frames no segment holds as gaps.  Returns the frames
 * delivered; -ERANGE + *err when no segment holds any frame of the range;
 * -EIO + *err when a segment does not decode (naming it). */
int64_t archive_store_read(archive_store *s, uint32_t node, uint32_t device, int64_t first, int64_t last,
			   const archive_read_ops *ops, void *user, GError **err);

/* The closed segment of nodeN:audioK holding frame f, or NULL. */
const archive_entry *archive_store_find_frame(const archive_store *s, uint32_t node, uint32_t device, int64_t f);

/* The segment of nodeN:audioK whose time points with global time span
 * global_ns best (covering it, else the nearest), or NULL when none has a
 * global time. */
const archive_entry *archive_store_find_global(const archive_store *s, uint32_t node, uint32_t device,
					       int64_t global_ns);

/* Time points given a global time by archive_bridge at open. */
size_t archive_store_bridged(const archive_store *s);

/* The segment directory. */
const char *archive_store_dir(const archive_store *s);

#endif
