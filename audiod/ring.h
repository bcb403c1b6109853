/* ring.h — the audio ring: the last H seconds of frames in a memfd, indexed
 * by absolute frame number (docs/architecture.md §4.5).
 *
 * One writer (audiod's capture path) and any number of readers: audiod's own
 * sensor device, and bulk readers in other processes that received the
 * memfd over the socket (SCM_RIGHTS) and mapped it read-only.  No locks: the
 * writer publishes two counters in the shared header,
 *   wnext  end of the frames being written (stored before the copy),
 *   next   end of the frames written     (stored after the copy),
 * so a reader that copied [a, b) knows the copy is intact iff, read after
 * the copy, a >= wnext - capacity.  Lost frames (xruns) are written as zeros
 * and listed in a small gap table in the header.
 *
 * Shared header layout (native little-endian, version AUDIO_RING_VERSION;
 * docs/protocol.md "audio ring"): see struct audio_ring_hdr.
 * Errors are negative errno values.
 */
#ifndef CHORUS_AUDIOD_RING_H
#define CHORUS_AUDIOD_RING_H

#include <stddef.h>
#include <stdint.h>

#define AUDIO_RING_MAGIC 0x474e5243u /* "CRNG" */
#define AUDIO_RING_VERSION 1
#define AUDIO_RING_HDR_BYTES 4096
#define AUDIO_RING_GAPS 32

typedef struct {
	uint32_t magic;       /* AUDIO_RING_MAGIC */
	uint32_t version;     /* AUDIO_RING_VERSION */
	uint32_t hdr_bytes;   /* offset of frame data in the memfd, bytes */
	uint32_t frame_bytes; /* bytes per frame (all channels) */
	uint64_t capacity;    /* frames the ring holds */
	uint32_t rate_hz;     /* nominal frames per second */
	uint32_t channels;    /* interleaved channels per frame */
	uint32_t format;      /* snd_pcm_format_t of the samples */
	uint32_t gap_count;   /* gaps ever recorded; the last AUDIO_RING_GAPS are kept */
	int64_t origin;       /* first frame ever written (index of the stream start) */
	int64_t wnext;        /* atomic: end of frames being written */
	int64_t next;         /* atomic: end of frames completely written */
	struct {
		int64_t from, to; /* lost frames [from, to) */
	} gaps[AUDIO_RING_GAPS];  /* slot gap_count % AUDIO_RING_GAPS is the next one */
} audio_ring_hdr;

typedef struct audio_ring audio_ring;

/* Create a ring in a new memfd holding `capacity` frames of frame_bytes,
 * starting at absolute frame `origin`.  Returns 0 and *out, or -EINVAL /
 * -ENOMEM / the errno of memfd_create, ftruncate or mmap. */
int audio_ring_create(uint32_t frame_bytes, uint64_t capacity, uint32_t rate_hz, uint32_t channels,
		      uint32_t format, int64_t origin, audio_ring **out);

/* Map an existing ring read-only from its memfd (a bulk reader).  The fd is
 * not kept.  Returns 0 and *out, or -EBADMSG (not a ring / wrong version),
 * or the errno of fstat/mmap. */
int audio_ring_map(int fd, audio_ring **out);

/* Unmap and free (closes the memfd if this process created it).  NULL is fine. */
void audio_ring_free(audio_ring *r);

/* The memfd (owner only; -1 for mapped rings). */
int audio_ring_fd(const audio_ring *r);

/* A read-only descriptor of the same memfd (owner only; -1 for mapped
 * rings): what bulk readers and followers are handed, so none can map the
 * ring writable and change what the others read. */
int audio_ring_reader_fd(const audio_ring *r);

/* The shared header (read-only for readers). */
const audio_ring_hdr *audio_ring_header(const audio_ring *r);

/* Number a ring that holds nothing yet from `origin` instead (owner only).
 * Returns 0, or -EBUSY once frames were written. */
int audio_ring_set_origin(audio_ring *r, int64_t origin);

/* Append n frames at the ring's next index (owner only). */
void audio_ring_write(audio_ring *r, const void *frames, uint64_t n);

/* Declare n frames lost at the next index: written as zeros, recorded as
 * a gap (owner only). */
void audio_ring_skip(audio_ring *r, uint64_t n);

/* Frames held now: [*oldest, *next). */
void audio_ring_span(const audio_ring *r, int64_t *oldest, int64_t *next);

/* Copy frames [first, first+n) into dst.  Returns 0; -ERANGE if `first` is
 * older than the oldest frame held (*oldest tells which); -EAGAIN if the
 * range is not all written yet; -ESTALE if the writer overwrote part of it
 * during the copy (retry with a newer range).  `oldest` may be NULL. */
int audio_ring_read(const audio_ring *r, int64_t first, uint64_t n, void *dst, int64_t *oldest);

/* True when [first, first+n) overlaps a recorded gap still in the table. */
int audio_ring_has_gap(const audio_ring *r, int64_t first, uint64_t n);

#endif
