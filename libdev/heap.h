/* heap.h — give freed heap back to the system, and say how much is in use.
 *
 * glibc's malloc keeps what a process frees: the top of each arena is
 * returned only above M_TRIM_THRESHOLD, pages in the middle of an arena
 * never, and a worker thread's arena (collab's solver, a GLib thread pool)
 * is trimmed even less.  A daemon that breathes — a burst of clips solved,
 * a client reconnecting, a restart of the service it reads — then carries
 * its largest footprint for the rest of its life, and its resident memory
 * (what an operator and the chaos soak watch) rises with every new
 * ceiling although nothing leaked.  dev_heap_trim_start() calls
 * malloc_trim(0) periodically from the main loop, which walks every arena
 * and returns its free pages (MADV_DONTNEED), so resident memory follows
 * what is in use.  A leak is not hidden by it: leaked blocks are in use.
 *
 * malloc_trim does not reach the top of a worker thread's arena, though:
 * that is given back only by free() itself, when the top exceeds
 * M_TRIM_THRESHOLD.  And glibc raises that threshold at run time: each
 * time a block above the mmap threshold is freed, the mmap threshold
 * rises to its size and the trim threshold to twice that (up to 32 and
 * 64 MiB).  After one 8 MiB buffer (collab's SRP over a long clip), blocks
 * up to 8 MiB come from the arena and 16 MiB of free top stays resident,
 * the ceiling ratcheting up with every larger buffer: measured in the
 * chaos soak's baseline, a collab with 1.2 MB in use held 22 MB in its
 * solver's arena.  dev_heap_policy() fixes both thresholds (which turns
 * the ratchet off), so large blocks are mapped and unmapped and an
 * arena's top above 128 kB goes back when freed.
 *
 * GLib before 2.76 has its own slice allocator under GList, GQueue,
 * GHashTable nodes and GBytes: freed slices stay in its per-thread
 * magazines and slabs (allocated from malloc, so "in use" to it) at the
 * high-water mark of what was live at once.  fft publishing a 4 s backlog
 * of frames to detect after a stall kept +100 kB in use for good that way
 * (measured with the fft stall test; +25 kB with the slices from malloc).
 * `G_SLICE=always-malloc` in the environment turns it into plain malloc;
 * it has to be there when the process starts (GLib's own constructors
 * allocate slices before main), so the units in dist/ and chorus-sim's
 * launcher set it, and the heap line on every status device says which
 * (`slices=malloc` or `slices=glib`).
 */
#ifndef CHORUS_DEV_HEAP_H
#define CHORUS_DEV_HEAP_H

#include <glib.h>

/* How often the daemons trim: often enough that a 5-10 s sample of
 * resident memory (the chaos soak's) sees the trimmed footprint; a trim
 * of a few-MB heap costs about a hundred microseconds. */
#define DEV_HEAP_TRIM_S 10

/* glibc's default mmap and trim thresholds, fixed (dev_heap_policy). */
#define DEV_HEAP_THRESHOLD_BYTES (128 * 1024)

typedef struct {
	guint64 in_use_bytes; /* allocated and not freed: arenas' blocks + mmapped blocks */
	guint64 free_bytes;   /* free chunks in malloc's arenas (a trimmed chunk's pages are
			       * given back but the chunk stays: not all of this is resident) */
	guint64 trims;        /* dev_heap_trim() calls so far */
	guint64 returned;     /* of those, how many returned memory to the system */
} dev_heap_usage;

/* The thresholds a daemon's malloc keeps (DEV_HEAP_THRESHOLD_BYTES, and
 * not glibc's dynamic ones: see above): blocks from that size are mapped
 * for themselves, and an arena's free top above it is returned when a
 * block is freed.  Takes effect for every later allocation and free of
 * the process (any thread).  Returns FALSE when mallopt refused; TRUE
 * with nothing set under AddressSanitizer, whose allocator is its own. */
gboolean dev_heap_policy(void);

/* malloc_trim(0) now: every arena's free pages go back to the system.
 * Returns TRUE when some memory was returned.  Thread-safe (malloc locks
 * each arena while it trims it). */
gboolean dev_heap_trim(void);

/* TRUE when GLib's slices come from malloc (G_SLICE=always-malloc at
 * start, or GLib 2.76 and later), FALSE when its slice allocator keeps
 * them (see above). */
gboolean dev_heap_slices_malloc(void);

/* Apply dev_heap_policy() and call dev_heap_trim() every interval_s
 * seconds (>= 1) from the default main context, for the life of the
 * process.  Returns the GSource id. */
guint dev_heap_trim_start(guint interval_s);

/* How much of a receive buffer stays resident after a large message
 * (dev_heap_release_tail): the messages a service exchanges in steady
 * state fit (an audio period, a detection, a status), a catch-up's
 * backlog does not. */
#define DEV_HEAP_RBUF_KEEP (16 * 1024)

/* Give the pages of buf[keep, size) back to the system (MADV_DONTNEED on
 * the whole pages inside; the first touch after refills them with zeros):
 * for a buffer kept for the life of a client, whose contents past `keep`
 * are not needed again.  A 128 kB receive buffer (libdev's client and
 * server) is a mapping of its own, and the pages one large message
 * touched — fft reading a stall's backlog from audiod — stayed resident
 * for good, although in use to malloc all along: the chaos soak's
 * resident growth of fft (+30 to +96 kB after a stall) was that. */
void dev_heap_release_tail(void *buf, size_t size, size_t keep);

/* What malloc holds now (mallinfo2) and the trims so far. */
void dev_heap_usage_get(dev_heap_usage *out);

/* Append "heap: N kB in use, M kB free in malloc's arenas (T trims, R
 * returned memory)"
 * and a newline to out: the line a status device shows. */
void dev_heap_usage_append(GString *out);

#endif
