/* reader.c — non-blocking reader of chorus_kpatch records from the kernel
 * module's device or a file/FIFO (the simulator's side channel).
 *
 * Framing: the module returns whole records per read(2); a FIFO may not
 * (a producer may write part of a record, or garbage), so bytes are
 * buffered until a whole record is there, and a record whose magic is
 * wrong makes the reader scan forward to the next magic.
 */
#include "kpatch/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC_SIZE ((size_t)sizeof(struct chorus_kpatch_record))
/* Bytes read per call at most: bounds the work done per wakeup. */
#define BUF_RECORDS 64

struct kpatch_reader {
	int fd;
	char *path;
	int is_module;                   /* fd is the module's device (ioctls work) */
	int want_pcm;                    /* reject records for another substream */
	struct chorus_kpatch_select sel; /* the substream, when want_pcm */
	struct kpatch_seq_tracker seq;
	struct kpatch_reader_stats st;
	int in_resync;     /* inside a run of bad bytes (counted once) */
	uint64_t offset;   /* bytes consumed so far, for messages */
	char problem[160]; /* last problem, "" for none */
	size_t len;        /* bytes in buf */
	unsigned char buf[BUF_RECORDS * sizeof(struct chorus_kpatch_record)];
};

int kpatch_reader_path_for_pcm(int card, int device, int subdevice, int stream,
			       char *buf, size_t len)
{
	const char *dev = getenv("CHORUS_KPATCH_DEV");
	int n;

	if (card < 0 || card > 0xffff || device < 0 || device > 0xff ||
	    subdevice < 0 || subdevice > 0xff || (stream != 0 && stream != 1))
		return -EINVAL;
	n = snprintf(buf, len, "%s", dev && *dev ? dev : CHORUS_KPATCH_DEV_PATH);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return n;
}

/* Returns a new reader on fd (taking it), or NULL without memory. */
static struct kpatch_reader *reader_new(int fd, const char *path)
{
	struct kpatch_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->path = strdup(path);
	if (!r->path) {
		free(r);
		return NULL;
	}
	r->fd = fd;
	return r;
}

int kpatch_reader_open_for_pcm(int card, int device, int subdevice, int stream,
			       struct kpatch_reader **out)
{
	char path[256];
	struct kpatch_reader *r;
	int fd, n, err;

	n = kpatch_reader_path_for_pcm(card, device, subdevice, stream, path,
				       sizeof(path));
	if (n < 0)
		return n;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = reader_new(fd, path);
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->sel.card = (uint16_t)card;
	r->sel.device = (uint8_t)device;
	r->sel.subdevice = (uint8_t)subdevice;
	r->sel.stream = (uint8_t)stream;
	if (ioctl(fd, CHORUS_KPATCH_IOC_SELECT, &r->sel) < 0) {
		/* A file that is not the module answers ENOTTY; under qemu-user
		 * (an emulator that does not know the ioctl) or a seccomp
		 * filter it is ENOSYS.  Either way the path is not the module,
		 * which this function's contract says with -ENOTTY. */
		err = errno == ENOSYS ? -ENOTTY : -errno;
		kpatch_reader_free(r);
		return err;
	}
	r->is_module = 1;
	r->want_pcm = 1;
	/* SELECT zeroed the module's drop count: any drop is news. */
	kpatch_seq_init(&r->seq, 1);
	*out = r;
	return 0;
}

int kpatch_reader_open_path(const char *path, struct kpatch_reader **out)
{
	struct kpatch_reader *r;
	struct stat sb;
	int fd, flags = O_RDONLY;

	if (stat(path, &sb) < 0)
		return -errno;
	if (S_ISFIFO(sb.st_mode))
		flags = O_RDWR; /* never EOF, never POLLHUP between producers */
	fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = reader_new(fd, path);
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	/* A side channel may have run before us: its first record's count is
	 * history, not news. */
	kpatch_seq_init(&r->seq, 0);
	*out = r;
	return 0;
}

void kpatch_reader_free(struct kpatch_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->path);
	free(r);
}

int kpatch_reader_fd(const struct kpatch_reader *r)
{
	return r->fd;
}

const char *kpatch_reader_path(const struct kpatch_reader *r)
{
	return r->path;
}

/* Drops n bytes from the front of the buffer. */
static void consume(struct kpatch_reader *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->len - n);
	r->len -= n;
	r->offset += n;
}

/* Records a problem for kpatch_reader_last_problem(). */
static void note(struct kpatch_reader *r, const char *why)
{
	snprintf(r->problem, sizeof(r->problem), "%s: %s at byte %llu",
		 r->path, why, (unsigned long long)r->offset);
}

/* Returns the offset of the first magic in buf[from..len), or -1. */
static long find_magic(const struct kpatch_reader *r, size_t from)
{
	const uint32_t magic = CHORUS_KPATCH_MAGIC;
	size_t i;

	for (i = from; i + sizeof(magic) <= r->len; i++)
		if (memcmp(r->buf + i, &magic, sizeof(magic)) == 0)
			return (long)i;
	return -1;
}

/* Takes one record off the front of the buffer into *rec; returns 1 for a
 * valid record, 0 when more bytes are needed, -1 when bytes were dropped. */
static int take_one(struct kpatch_reader *r, struct chorus_kpatch_record *rec)
{
	const char *why;
	long at;

	if (r->len < sizeof(uint32_t))
		return 0;
	if (find_magic(r, 0) != 0) {
		if (!r->in_resync) {
			r->st.malformed++;
			note(r, "bad magic, resynchronizing");
			r->in_resync = 1;
		}
		at = find_magic(r, 1);
		/* Keep a tail that may be the start of a magic. */
		size_t drop = at > 0 ? (size_t)at : r->len - (sizeof(uint32_t) - 1);
		r->st.skipped_bytes += drop;
		consume(r, drop);
		return -1;
	}
	r->in_resync = 0;
	if (r->len < REC_SIZE)
		return 0;
	memcpy(rec, r->buf, REC_SIZE);
	why = kpatch_record_problem(rec);
	if (why) {
		r->st.malformed++;
		note(r, why);
		/* The magic said a producer framed it: skip that one record. */
		consume(r, REC_SIZE);
		return -1;
	}
	if (r->want_pcm &&
	    (rec->card != r->sel.card || rec->device != r->sel.device ||
	     rec->subdevice != r->sel.subdevice ||
	     !(rec->flags & CHORUS_KPATCH_F_CAPTURE) != !r->sel.stream)) {
		r->st.foreign++;
		note(r, "record for another substream");
		consume(r, REC_SIZE);
		return -1;
	}
	consume(r, REC_SIZE);
	kpatch_seq_feed(&r->seq, rec);
	return 1;
}

int kpatch_reader_read(struct kpatch_reader *r,
		       struct chorus_kpatch_record *recs, int max)
{
	int n = 0, got;
	ssize_t rd;
	size_t want;

	if (max <= 0)
		return max < 0 ? -EINVAL : 0;
	while (n < max) {
		got = take_one(r, &recs[n]);
		if (got > 0) {
			n++;
			continue;
		}
		if (got < 0)
			continue;
		/* Here r->len < REC_SIZE.  Read no more than the records still
		 * wanted, so no whole record stays hidden in our buffer
		 * behind a quiet fd. */
		want = (size_t)(max - n) * REC_SIZE - r->len;
		if (want > sizeof(r->buf) - r->len)
			want = sizeof(r->buf) - r->len;
		rd = read(r->fd, r->buf + r->len, want);
		if (rd < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return n > 0 ? n : -errno;
		}
		if (rd == 0) {
			r->st.eof = 1;
			break;
		}
		r->len += (size_t)rd;
		r->st.bytes += (uint64_t)rd;
	}
	return n;
}

void kpatch_reader_get_stats(const struct kpatch_reader *r,
			     struct kpatch_reader_stats *st)
{
	*st = r->st;
	st->seq = r->seq.st;
}

const char *kpatch_reader_last_problem(const struct kpatch_reader *r)
{
	return r->problem[0] ? r->problem : NULL;
}

int kpatch_reader_kernel_stats(const struct kpatch_reader *r,
			       struct chorus_kpatch_stats *st)
{
	if (!r->is_module)
		return -ENOTTY;
	if (ioctl(r->fd, CHORUS_KPATCH_IOC_STATS, st) < 0)
		return -errno;
	return 0;
}
