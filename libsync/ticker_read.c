/* ticker_read.c — read the whole ticker once (ticker_read.h). */
#include "libsync/ticker_read.h"

#include <errno.h>
#include <glib.h>
#include <string.h>

#include "libdev/link.h"

#define FETCH_TRIES 4

/* Milliseconds left until deadline (monotonic µs), at least 1. */
static int left_ms(gint64 deadline)
{
	gint64 l = (deadline - g_get_monotonic_time()) / 1000;
	return l < 1 ? 1 : (int)MIN(l, G_MAXINT);
}

/* Ask sync/ticker-part (link *l, opened on first use) for entry `first` of
 * `epoch` and add the answer to a.  Returns as sync_ticker_asm_add, or
 * -errno of the link; a refusal by syncd returns its status (-ESTALE: the
 * snapshot is gone). */
static int ask(dev_link **l, sync_ticker_asm *a, uint64_t epoch, size_t first, gint64 deadline, char *why,
	       size_t len)
{
	if (!*l) {
		GError *err = NULL;
		*l = dev_link_open(SYNC_TICKER_PART_DEVICE, left_ms(deadline), &err);
		if (!*l) {
			int rc = -(err->code ? err->code : EIO);
			g_snprintf(why, len, "%s: %s", SYNC_TICKER_PART_DEVICE, err->message);
			g_error_free(err);
			return rc;
		}
	}
	uint8_t req[SYNC_TICKER_REQ];
	sync_ticker_req r = {epoch, first};
	sync_ticker_pack_req(&r, req);
	GByteArray *out = g_byte_array_new();
	int status = 0, rc = dev_link_call(*l, req, sizeof req, &status, out, left_ms(deadline));
	if (rc < 0) {
		g_snprintf(why, len, "%s: %s", SYNC_TICKER_PART_DEVICE, out->len ? (const char *)out->data : g_strerror(-rc));
	} else if (status != 0) {
		rc = status < 0 ? status : -EPROTO;
		g_snprintf(why, len, "%s: %.*s", SYNC_TICKER_PART_DEVICE, (int)out->len, (const char *)out->data);
	} else {
		char r2[200];
		rc = sync_ticker_asm_add(a, out->data, out->len, r2, sizeof r2);
		if (rc < 0)
			g_snprintf(why, len, "%s: %s", SYNC_TICKER_PART_DEVICE, r2);
	}
	g_byte_array_unref(out);
	return rc;
}

int sync_ticker_fetch(int timeout_ms, sync_ticker_asm *a, char *why, size_t len)
{
	gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("sync/ticker", TRUE, b, timeout_ms);
	if (rc < 0) {
		g_snprintf(why, len, "sync/ticker: %s", b->len ? (const char *)b->data : g_strerror(-rc));
		g_byte_array_unref(b);
		return rc;
	}
	char r[200];
	rc = sync_ticker_asm_add(a, b->data, b->len, r, sizeof r);
	g_byte_array_unref(b);
	if (rc < 0) {
		g_snprintf(why, len, "sync/ticker: %s", r);
		return rc;
	}
	dev_link *l = NULL;
	int tries = 0;
	while (rc == 0) {
		rc = ask(&l, a, sync_ticker_asm_epoch(a), sync_ticker_asm_next(a), deadline, why, len);
		if (rc == -ESTALE) {
			/* Dropped while we read it: start again with the newest. */
			if (++tries >= FETCH_TRIES) {
				g_snprintf(why, len, "sync/ticker: the snapshot changed %d times while it was read", tries);
				rc = -EAGAIN;
				break;
			}
			rc = ask(&l, a, 0, 0, deadline, why, len);
		}
		if (rc == 0 && g_get_monotonic_time() > deadline) {
			g_snprintf(why, len, "sync/ticker: not all of it within %d ms", timeout_ms);
			rc = -ETIMEDOUT;
		}
	}
	dev_link_close(l);
	return rc < 0 ? rc : (int)sync_ticker_asm_head(a)->count;
}

int sync_ticker_read(int timeout_ms, sync_ticker_head *h, sync_ticker_entry *e, size_t max, char *why, size_t len)
{
	sync_ticker_asm *a = sync_ticker_asm_new();
	int rc = sync_ticker_fetch(timeout_ms, a, why, len);
	if (rc >= 0) {
		size_t n;
		const sync_ticker_entry *all = sync_ticker_asm_entries(a, &n);
		*h = *sync_ticker_asm_head(a);
		n = MIN(n, max);
		if (n)
			memcpy(e, all, n * sizeof *e);
		rc = (int)n;
	}
	sync_ticker_asm_free(a);
	return rc;
}
