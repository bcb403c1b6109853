/* ticker_read.c — read sync/ticker once (ticker_read.h). */
#include "libsync/ticker_read.h"

#include <errno.h>
#include <glib.h>

#include "libdev/link.h"

int sync_ticker_read(int timeout_ms, sync_ticker_head *h, sync_ticker_entry *e, size_t max, char *why, size_t len)
{
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("sync/ticker", TRUE, b, timeout_ms);
	if (rc < 0) {
		g_snprintf(why, len, "sync/ticker: %s", b->len ? (const char *)b->data : g_strerror(-rc));
		g_byte_array_unref(b);
		return rc;
	}
	const char *r;
	rc = sync_ticker_unpack_head(b->data, b->len, h, &r);
	if (rc < 0) {
		g_snprintf(why, len, "sync/ticker: %s", r);
		g_byte_array_unref(b);
		return rc;
	}
	size_t k = 0;
	for (size_t i = 0; i < h->count && k < max; i++)
		if (sync_ticker_unpack_entry(b->data, i, &e[k], &r) == 0)
			k++;
	g_byte_array_unref(b);
	return (int)k;
}
