/* ring.c — the audio ring in a memfd (see ring.h). */
#include "audiod/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct audio_ring {
	audio_ring_hdr *hdr; /* start of the mapping */
	uint8_t *data;       /* frame data */
	size_t map_bytes;
	int fd;    /* owner's memfd, -1 for readers */
	int ro_fd; /* owner's read-only descriptor of it, for readers; -1 for readers */
};

/* The counters live in shared memory: access them atomically. */
static int64_t load(const int64_t *p)
{
	return atomic_load_explicit((_Atomic int64_t *)p, memory_order_acquire);
}

static void store(int64_t *p, int64_t v)
{
	atomic_store_explicit((_Atomic int64_t *)p, v, memory_order_release);
}

int audio_ring_create(uint32_t frame_bytes, uint64_t capacity, uint32_t rate_hz, uint32_t channels,
		      uint32_t format, int64_t origin, audio_ring **out)
{
	if (!frame_bytes || !capacity || capacity > (1ull << 40) / frame_bytes)
		return -EINVAL;
	int fd = memfd_create("chorus-audio-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	size_t bytes = AUDIO_RING_HDR_BYTES + (size_t)(capacity * frame_bytes);
	if (ftruncate(fd, (off_t)bytes) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	/* Readers may not resize it under us. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = -errno;
		close(fd);
		return e;
	}
	audio_ring *r = calloc(1, sizeof *r);
	if (!r) {
		munmap(m, bytes);
		close(fd);
		return -ENOMEM;
	}
	r->hdr = m;
	r->data = (uint8_t *)m + AUDIO_RING_HDR_BYTES;
	r->map_bytes = bytes;
	r->fd = fd;
	/* A read-only open of the same memfd: what readers are handed, so no
	 * reader can map it writable and change what the others read. */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	r->ro_fd = open(self, O_RDONLY | O_CLOEXEC);
	if (r->ro_fd < 0) {
		int e = -errno;
		munmap(m, bytes);
		close(fd);
		free(r);
		return e;
	}
	audio_ring_hdr *h = r->hdr;
	h->magic = AUDIO_RING_MAGIC;
	h->version = AUDIO_RING_VERSION;
	h->hdr_bytes = AUDIO_RING_HDR_BYTES;
	h->frame_bytes = frame_bytes;
	h->capacity = capacity;
	h->rate_hz = rate_hz;
	h->channels = channels;
	h->format = format;
	h->origin = origin;
	store(&h->wnext, origin);
	store(&h->next, origin);
	*out = r;
	return 0;
}

int audio_ring_map(int fd, audio_ring **out)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < AUDIO_RING_HDR_BYTES)
		return -EBADMSG;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	const audio_ring_hdr *h = m;
	if (h->magic != AUDIO_RING_MAGIC || h->version != AUDIO_RING_VERSION ||
	    h->hdr_bytes != AUDIO_RING_HDR_BYTES || !h->frame_bytes ||
	    (size_t)st.st_size < AUDIO_RING_HDR_BYTES + h->capacity * h->frame_bytes) {
		munmap(m, (size_t)st.st_size);
		return -EBADMSG;
	}
	audio_ring *r = calloc(1, sizeof *r);
	if (!r) {
		munmap(m, (size_t)st.st_size);
		return -ENOMEM;
	}
	r->hdr = m;
	r->data = (uint8_t *)m + AUDIO_RING_HDR_BYTES;
	r->map_bytes = (size_t)st.st_size;
	r->fd = -1;
	r->ro_fd = -1;
	*out = r;
	return 0;
}

void audio_ring_free(audio_ring *r)
{
	if (!r)
		return;
	munmap(r->hdr, r->map_bytes);
	if (r->fd >= 0)
		close(r->fd);
	if (r->ro_fd >= 0)
		close(r->ro_fd);
	free(r);
}

int audio_ring_fd(const audio_ring *r)
{
	return r->fd;
}

int audio_ring_reader_fd(const audio_ring *r)
{
	return r->ro_fd;
}

const audio_ring_hdr *audio_ring_header(const audio_ring *r)
{
	return r->hdr;
}

/* Copy n frames in or out at absolute frame f, wrapping around the end. */
static void copy_frames(const audio_ring *r, int64_t f, uint64_t n, const void *src, void *dst)
{
	const audio_ring_hdr *h = r->hdr;
	uint64_t pos = (uint64_t)(f - h->origin) % h->capacity;
	while (n) {
		uint64_t run = h->capacity - pos < n ? h->capacity - pos : n;
		size_t bytes = (size_t)(run * h->frame_bytes);
		uint8_t *ring = r->data + pos * h->frame_bytes;
		if (src) {
			memcpy(ring, src, bytes);
			src = (const uint8_t *)src + bytes;
		} else if (dst) {
			memcpy(dst, ring, bytes);
			dst = (uint8_t *)dst + bytes;
		} else {
			memset(ring, 0, bytes);
		}
		n -= run;
		pos = 0;
	}
}

static void put(audio_ring *r, const void *frames, uint64_t n)
{
	audio_ring_hdr *h = r->hdr;
	int64_t next = load(&h->next);
	while (n) {
		/* Never more than a whole ring in one step, so wnext - capacity
		 * bounds what the copy may touch. */
		uint64_t step = n > h->capacity ? h->capacity : n;
		store(&h->wnext, next + (int64_t)step);
		atomic_thread_fence(memory_order_seq_cst);
		copy_frames(r, next, step, frames ? frames : NULL, NULL);
		if (frames)
			frames = (const uint8_t *)frames + step * h->frame_bytes;
		next += (int64_t)step;
		store(&h->next, next);
		n -= step;
	}
}

int audio_ring_set_origin(audio_ring *r, int64_t origin)
{
	audio_ring_hdr *h = r->hdr;
	if (load(&h->next) != h->origin)
		return -EBUSY;
	h->origin = origin;
	store(&h->wnext, origin);
	store(&h->next, origin);
	return 0;
}

void audio_ring_write(audio_ring *r, const void *frames, uint64_t n)
{
	put(r, frames, n);
}

void audio_ring_skip(audio_ring *r, uint64_t n)
{
	audio_ring_hdr *h = r->hdr;
	if (!n)
		return;
	int64_t from = load(&h->next);
	uint32_t slot = h->gap_count % AUDIO_RING_GAPS;
	h->gaps[slot].from = from;
	h->gaps[slot].to = from + (int64_t)n;
	atomic_thread_fence(memory_order_release);
	h->gap_count++;
	put(r, NULL, n);
}

void audio_ring_span(const audio_ring *r, int64_t *oldest, int64_t *next)
{
	const audio_ring_hdr *h = r->hdr;
	int64_t n = load(&h->next);
	int64_t o = load(&h->wnext) - (int64_t)h->capacity;
	*oldest = o > h->origin ? o : h->origin;
	*next = n;
}

int audio_ring_read(const audio_ring *r, int64_t first, uint64_t n, void *dst, int64_t *oldest)
{
	const audio_ring_hdr *h = r->hdr;
	int64_t o, next;
	audio_ring_span(r, &o, &next);
	if (oldest)
		*oldest = o;
	if (first < o)
		return -ERANGE;
	if (n > h->capacity || first + (int64_t)n > next)
		return -EAGAIN;
	copy_frames(r, first, n, NULL, dst);
	atomic_thread_fence(memory_order_seq_cst);
	int64_t o2 = load(&h->wnext) - (int64_t)h->capacity;
	if (first < o2) {
		if (oldest)
			*oldest = o2;
		return -ESTALE;
	}
	return 0;
}

int audio_ring_has_gap(const audio_ring *r, int64_t first, uint64_t n)
{
	const audio_ring_hdr *h = r->hdr;
	uint32_t count = h->gap_count;
	uint32_t kept = count < AUDIO_RING_GAPS ? count : AUDIO_RING_GAPS;
	for (uint32_t i = 0; i < kept; i++) {
		uint32_t slot = (count - 1 - i) % AUDIO_RING_GAPS;
		if (h->gaps[slot].from < first + (int64_t)n && first < h->gaps[slot].to)
			return 1;
	}
	return 0;
}
