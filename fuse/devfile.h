/* devfile.h — one open file of chorus-fuse: a connection to one device,
 * made with the caller's credentials, and what read and write mean for
 * the device's pattern (docs/man/chorus-fuse.1, docs/protocol.md).
 *
 *   status   read: the state as rendered at open (cat sees one snapshot;
 *            open again for a fresh one).
 *   command  write: each line is one command; the write succeeds when every
 *            line's reply status is 0, and fails with the errno of the
 *            first failure (the reply's negative status, or the ERROR's
 *            errno: EPERM from the write policy).  read: the replies of
 *            this file's writes so far, else the usage text.
 *   query    write: the request bytes; it fails with -status when the
 *            reply's status is negative.  read: the last reply's bytes.
 *   packet   read: the messages published since the open, in order, each
 *            text message ended by a newline; write: one message (PKT_SEND;
 *            a final newline is dropped).
 *   sensor   read: the items from the device's next index on, raw; a gap
 *            is written as zero bytes so the stream keeps its time base
 *            (and logged).
 *
 * Streams (packet, sensor) never block long: a read returns what has come;
 * when nothing has, the read after one that returned data returns 0 (end
 * of file for now), and otherwise it waits up to STREAM_WAIT_MS for a
 * message (and returns 0 if none came).  So a reader sees batches, each
 * ended by an end of file: `cat` gets the first batch, `tail -f` every
 * one.  Their stat says how much has come so far, read or waiting
 * (st_size), and when the newest message arrived (st_mtime), which is how
 * `tail -f` learns there is more: it polls fstat and reads what st_size
 * grew by.
 * Thread-safe per file (FUSE may serve two requests on one file at once).
 */
#ifndef CHORUS_FUSE_DEVFILE_H
#define CHORUS_FUSE_DEVFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "fuse/creds.h"
#include "libdev/wire.h"

/* How long a stream read waits for the first message, ms. */
#define STREAM_WAIT_MS 500
/* How long a command, query or packet send waits for its reply, ms. */
#define DEVFILE_CALL_MS 10000

typedef struct devfile devfile;

/* Connect to device `name` (relative, as under $CHORUS_RUN) as `who`, for
 * open(2) flags `flags` (O_ACCMODE).  Returns the file, or NULL with *err a
 * negative errno: -ENOENT (no such device), -EACCES (the socket's mode
 * refuses the caller), -ECONNREFUSED (a stale socket), -EISDIR, -EINVAL
 * (writing a status or sensor device), or what the service answered to a
 * subscription; the reason is logged with g_message.  Blocking (bounded
 * by DEVFILE_CALL_MS). */
devfile *devfile_open(const char *name, int flags, const fuse_caller *who, int *err);

/* The device's pattern. */
dev_pattern devfile_pattern(devfile *f);

/* read(2) at offset `off` (streams ignore it); bytes or a negative errno. */
ssize_t devfile_read(devfile *f, char *buf, size_t size, off_t off);

/* write(2); size or a negative errno (see above). */
ssize_t devfile_write(devfile *f, const char *buf, size_t size);

/* Fill st_size and st_mtim of *st for this open file (streams: bytes read
 * so far plus those waiting, after taking what the socket holds without
 * blocking, and the newest arrival; others: the bytes a read from 0 would
 * give). */
void devfile_stat(devfile *f, struct stat *st);

/* Close the connection and free.  NULL is fine. */
void devfile_close(devfile *f);

/* The pattern of device `name` from its HELLO (connecting as chorus-fuse
 * itself, for stat without an open file): 0, or a negative errno. */
int devfile_probe(const char *name, dev_pattern *pattern);

#endif
