/* durable.h — the file operations that make the archive crash-safe: write
 * all, fsync a file or a directory, write a small file atomically (temporary
 * name, fsync, rename, fsync of the directory).  Every call is checked and
 * EINTR retried; a failure is a GError in ARCHIVE_ERROR whose code is the
 * errno and whose message names the path and the operation.
 */
#ifndef CHORUS_ARCHIVE_DURABLE_H
#define CHORUS_ARCHIVE_DURABLE_H

#include <glib.h>
#include <stddef.h>

#define ARCHIVE_ERROR (archive_error_quark())
GQuark archive_error_quark(void);

/* write() all `len` bytes of buf to fd (path for messages), retrying EINTR
 * and partial writes.  FALSE + *err (ENOSPC, EIO, …). */
gboolean archive_write_all(int fd, const char *path, const void *buf, size_t len, GError **err);

/* fsync() the file or directory at path (opened read-only for it).
 * FALSE + *err. */
gboolean archive_fsync_path(const char *path, GError **err);

/* Write `len` bytes as dir/name atomically: dir/name.tmp, fsync, close,
 * rename, fsync(dir).  After a crash dir/name is either the old file or the
 * new one whole.  FALSE + *err (the temporary file is removed). */
gboolean archive_write_atomic(const char *dir, const char *name, const void *buf, size_t len, GError **err);

/* Rename dir/from to dir/to and fsync dir.  FALSE + *err. */
gboolean archive_rename(const char *dir, const char *from, const char *to, GError **err);

/* Read a whole small file (g_free *text).  FALSE + *err (ENOENT …). */
gboolean archive_read_file(const char *path, char **text, size_t *len, GError **err);

#endif
