/* heap.c — periodic malloc_trim and malloc's own figures (see heap.h). */
#include "libdev/heap.h"

#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static gint trims, returned; /* atomics: a worker thread may trim too */

gboolean dev_heap_policy(void)
{
#if defined(__SANITIZE_ADDRESS__)
	/* malloc is AddressSanitizer's, which has no such thresholds (and
	 * whose mallopt refuses): nothing to set. */
	return TRUE;
#endif
	/* Setting either turns glibc's dynamic thresholds off (mallopt(3)). */
	return mallopt(M_MMAP_THRESHOLD, DEV_HEAP_THRESHOLD_BYTES) == 1 &&
	       mallopt(M_TRIM_THRESHOLD, DEV_HEAP_THRESHOLD_BYTES) == 1;
}

gboolean dev_heap_trim(void)
{
	gboolean r = malloc_trim(0) != 0;
	g_atomic_int_inc(&trims);
	if (r)
		g_atomic_int_inc(&returned);
	return r;
}

void dev_heap_release_tail(void *buf, size_t size, size_t keep)
{
	if (!buf || keep >= size)
		return;
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)buf + keep + ps - 1) & ~(ps - 1), hi = ((uintptr_t)buf + size) & ~(ps - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: a refusal loses nothing */
}

static gboolean on_trim(gpointer user)
{
	(void)user;
	dev_heap_trim();
	return G_SOURCE_CONTINUE;
}

guint dev_heap_trim_start(guint interval_s)
{
	if (!dev_heap_policy())
		g_warning("mallopt refused the heap's thresholds: freed memory may stay resident");
	return g_timeout_add_seconds(MAX(interval_s, 1u), on_trim, NULL);
}

gboolean dev_heap_slices_malloc(void)
{
#if GLIB_CHECK_VERSION(2, 76, 0)
	return TRUE; /* g_slice_* is g_malloc since 2.76 */
#else
	/* GLib read it when it made its first slice (before main), and the
	 * environment is the process's own since: what it says now is what
	 * GLib saw.  (g_slice_get_config answers g_slice_set_config's
	 * defaults, not the environment.) */
	const char *v = g_getenv("G_SLICE");
	return v && strstr(v, "always-malloc");
#endif
}

void dev_heap_usage_get(dev_heap_usage *out)
{
	struct mallinfo2 m = mallinfo2();
	out->in_use_bytes = (guint64)m.uordblks + (guint64)m.hblkhd;
	out->free_bytes = (guint64)m.fordblks;
	out->trims = (guint64)g_atomic_int_get(&trims);
	out->returned = (guint64)g_atomic_int_get(&returned);
}

void dev_heap_usage_append(GString *out)
{
	dev_heap_usage u;
	dev_heap_usage_get(&u);
	g_string_append_printf(out, "heap: %" G_GUINT64_FORMAT " kB in use, %" G_GUINT64_FORMAT " kB free in malloc's arenas (%" G_GUINT64_FORMAT " trims, %" G_GUINT64_FORMAT " returned memory) slices=%s\n",
			       u.in_use_bytes / 1024, u.free_bytes / 1024, u.trims, u.returned,
			       dev_heap_slices_malloc() ? "malloc" : "glib");
}
