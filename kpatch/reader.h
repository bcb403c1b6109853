/* reader.h — user-space reader of DMA period-interrupt timestamps.
 *
 * Reads struct chorus_kpatch_record (kpatch/chorus_kpatch.h) from either
 *   - the kernel module's device /dev/chorus_kpatch, one substream selected
 *     per open (kpatch_reader_open_for_pcm), or
 *   - any file or FIFO of records at a path (kpatch_reader_open_path): the
 *     simulator's side channel is such a FIFO.
 * Reads never block: hook kpatch_reader_fd() into poll/GLib
 * (g_unix_fd_add(fd, G_IO_IN, …)) and call kpatch_reader_read() when it is
 * readable.  Every record returned is valid; malformed input is skipped and
 * counted (the stream resynchronizes on the next magic), and loss — seq
 * gaps and producer overflow — is counted in the stats, never silent.
 *
 * Errors are negative errno values.  Not thread-safe: one reader per thread.
 */
#ifndef CHORUS_KPATCH_READER_H
#define CHORUS_KPATCH_READER_H

#include <stddef.h>
#include <stdint.h>

#include "kpatch/chorus_kpatch.h"
#include "kpatch/record.h"

struct kpatch_reader;

struct kpatch_reader_stats {
	struct kpatch_seq_stats seq; /* loss accounting of the valid records */
	uint64_t malformed;          /* records rejected (bad magic run, version, size, reserved) */
	uint64_t foreign;            /* well-formed records for another substream (rejected) */
	uint64_t skipped_bytes;      /* bytes discarded while resynchronizing on magic */
	uint64_t bytes;              /* bytes read */
	int eof;                     /* the producer closed a non-FIFO file: no more records */
};

/* Writes the device path that serves (card, device, subdevice, stream) into
 * buf; returns its length, or -ENAMETOOLONG/-EINVAL.  Today one device
 * serves every substream (selected by ioctl); $CHORUS_KPATCH_DEV overrides
 * the path (containers, tests). */
int kpatch_reader_path_for_pcm(int card, int device, int subdevice, int stream,
			       char *buf, size_t len);

/* Opens the module's device and selects one substream (stream is
 * CHORUS_KPATCH_STREAM_CAPTURE or _PLAYBACK); returns 0 and *out, or
 * -ENOENT (module not loaded), -EACCES (not root/audio), -ENODEV (no such
 * card), -EPERM (card not in the module's `cards`), -EBUSY (substream has a
 * reader), -ENOTTY (path is not the module: its SELECT ioctl failed with
 * ENOTTY, or ENOSYS as under qemu-user), -EINVAL, -ENOMEM. */
int kpatch_reader_open_for_pcm(int card, int device, int subdevice, int stream,
			       struct kpatch_reader **out);

/* Opens a file or FIFO of records; returns 0 and *out, or -errno from open.
 * A FIFO is opened read-write so a producer may come and go without an
 * end-of-file (which would make the fd readable forever). */
int kpatch_reader_open_path(const char *path, struct kpatch_reader **out);

/* Closes the reader; NULL is fine. */
void kpatch_reader_free(struct kpatch_reader *r);

/* Returns the fd to poll for input (readable when records may be there). */
int kpatch_reader_fd(const struct kpatch_reader *r);

/* Returns the path the reader was opened on. */
const char *kpatch_reader_path(const struct kpatch_reader *r);

/* Reads up to max valid records into recs without blocking; returns how
 * many (0 when none are waiting), or -errno for a read error (-EIO, …).
 * Never keeps whole records buffered, so poll on the fd stays truthful. */
int kpatch_reader_read(struct kpatch_reader *r,
		       struct chorus_kpatch_record *recs, int max);

/* Copies the reader's counters into st. */
void kpatch_reader_get_stats(const struct kpatch_reader *r,
			     struct kpatch_reader_stats *st);

/* Returns the last problem seen in the input ("…: bad magic at byte 96"),
 * or NULL; stays until the next problem. */
const char *kpatch_reader_last_problem(const struct kpatch_reader *r);

/* Asks the module for its counters of the selected substream; returns 0,
 * or -ENOTTY when the reader is not on the module's device. */
int kpatch_reader_kernel_stats(const struct kpatch_reader *r,
			       struct chorus_kpatch_stats *st);

#endif
