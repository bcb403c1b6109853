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
 */
#ifndef CHORUS_DEV_HEAP_H
#define CHORUS_DEV_HEAP_H

#include <glib.h>

/* How often the daemons trim: often enough that a 5-10 s sample of
 * resident memory (the chaos soak's) sees the trimmed footprint; a trim
 * of a few-MB heap costs about a hundred microseconds. */
#define DEV_HEAP_TRIM_S 10

typedef struct {
	guint64 in_use_bytes; /* allocated and not freed: arenas' blocks + mmapped blocks */
	guint64 free_bytes;   /* free chunks in malloc's arenas (a trimmed chunk's pages are
			       * given back but the chunk stays: not all of this is resident) */
	guint64 trims;        /* dev_heap_trim() calls so far */
	guint64 returned;     /* of those, how many returned memory to the system */
} dev_heap_usage;

/* malloc_trim(0) now: every arena's free pages go back to the system.
 * Returns TRUE when some memory was returned.  Thread-safe (malloc locks
 * each arena while it trims it). */
gboolean dev_heap_trim(void);

/* Call dev_heap_trim() every interval_s seconds (>= 1) from the default
 * main context, for the life of the process.  Returns the GSource id. */
guint dev_heap_trim_start(guint interval_s);

/* What malloc holds now (mallinfo2) and the trims so far. */
void dev_heap_usage_get(dev_heap_usage *out);

/* Append "heap: N kB in use, M kB free in malloc's arenas (T trims, R
 * returned memory)"
 * and a newline to out: the line a status device shows. */
void dev_heap_usage_append(GString *out);

#endif
