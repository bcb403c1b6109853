/* appendlog.h — a durable record appended one line at a time (detect's
 * and collab's JSON-lines files, issue 15's "no silent data loss").
 *
 * Each line is written whole with one write(2) loop onto a file opened
 * O_APPEND, then fsync(2)ed: once dev_appendlog_line returns 0 the line is
 * on the disk.  When any step fails (a full disk, an I/O error) the file
 * is cut back to its length before the line (ftruncate), so a reader never
 * meets a torn line and the failure is the caller's to count and report;
 * the next line is tried afresh.  Not thread-safe (one writer).
 */
#ifndef CHORUS_LIBDEV_APPENDLOG_H
#define CHORUS_LIBDEV_APPENDLOG_H

#include <stddef.h>

/* Open (create, mode 0644 less the umask) path for appending.  Returns the
 * descriptor, or -errno. */
int dev_appendlog_open(const char *path);

/* Append text[len] and a newline to fd, durably.  Returns 0, or -errno
 * with the file as it was before (as far as ftruncate could restore it). */
int dev_appendlog_line(int fd, const char *text, size_t len);

/* Close fd; 0 or -errno (a close that fails may have lost data). */
int dev_appendlog_close(int fd);

#endif
