/* srp_heap.c — the steered response's heap of squares (srp_heap.h). */
#include "apps/dsp/srp_heap.h"

#include <errno.h>
#include <stdlib.h>

typedef struct {
	double v;
	size_t i;
} heap_node;

struct srp_heap {
	heap_node *a;
	size_t n, cap;
	cell *pool;
	size_t np, pcap;
};

static void heap_free(srp_heap *h)
{
	if (!h)
		return;
	free(h->a);
	free(h->pool);
	free(h);
}

/* p (capacity *cap elements of size sz, n used) with room for one more:
 * doubled from 1024; p itself when there is room, NULL when out of
 * memory (p is then still valid). */
static void *grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? 2 * *cap : 1024;
	void *a = realloc(p, c * sz);
	if (a)
		*cap = c;
	return a;
}

int srp_heap_push(srp_heap *h, cell c)
{
	heap_node *a = grow(h->a, &h->cap, h->n, sizeof *h->a);
	if (!a)
		return -ENOMEM;
	h->a = a;
	cell *pool = grow(h->pool, &h->pcap, h->np, sizeof *h->pool);
	if (!pool)
		return -ENOMEM;
	h->pool = pool;
	h->pool[h->np] = c;
	heap_node e = {c.v, h->np++};
	size_t i = h->n++;
	while (i > 0 && h->a[(i - 1) / 2].v < e.v) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = e;
	return 0;
}

cell srp_heap_pop(srp_heap *h)
{
	heap_node top = h->a[0], last = h->a[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1].v > h->a[c].v)
			c++;
		if (h->a[c].v <= last.v)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return h->pool[top.i];
}


/* The heap a released one left for this thread's next (at most one). */
static _Thread_local srp_heap *spare;

srp_heap *srp_heap_take(void)
{
	srp_heap *h = spare ? spare : calloc(1, sizeof *h);
	spare = NULL;
	return h;
}

void srp_heap_release(srp_heap *h)
{
	if (!spare)
		spare = h;
	else
		heap_free(h);
}

void srp_heap_clear(srp_heap *h)
{
	h->n = h->np = 0;
}

size_t srp_heap_size(const srp_heap *h)
{
	return h->n;
}

cell srp_heap_top(const srp_heap *h)
{
	return h->pool[h->a[0].i];
}
