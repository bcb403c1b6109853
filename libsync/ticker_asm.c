/* ticker_asm.c — a ticker from its parts (see ticker_asm.h). */
#include "libsync/ticker_asm.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>

struct sync_ticker_asm {
	sync_ticker_part cur; /* head and epoch of the snapshot being assembled */
	size_t next;          /* next entry wanted */
	GArray *ent;          /* sync_ticker_entry, well-formed ones */
	size_t skipped;
	char why[160];
};

sync_ticker_asm *sync_ticker_asm_new(void)
{
	sync_ticker_asm *a = g_new0(sync_ticker_asm, 1);
	a->ent = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	return a;
}

void sync_ticker_asm_free(sync_ticker_asm *a)
{
	if (!a)
		return;
	g_array_free(a->ent, TRUE);
	g_free(a);
}

int sync_ticker_asm_add(sync_ticker_asm *a, const uint8_t *buf, size_t len, char *why, size_t wlen)
{
	sync_ticker_part p;
	const char *r;
	int rc = sync_ticker_unpack_part(buf, len, &p, &r);
	if (rc < 0) {
		snprintf(why, wlen, "%s", r);
		return rc;
	}
	if (p.first == 0) {
		a->cur = p;
		a->next = 0;
		a->skipped = 0;
		a->why[0] = 0;
		g_array_set_size(a->ent, 0);
	} else if (p.epoch != a->cur.epoch) {
		snprintf(why, wlen, "ticker part of epoch %" G_GUINT64_FORMAT " while assembling epoch %" G_GUINT64_FORMAT,
			 p.epoch, a->cur.epoch);
		return -ESTALE;
	} else if (p.first != a->next || p.head.count != a->cur.head.count || p.head.node != a->cur.head.node) {
		snprintf(why, wlen,
			 "ticker part of epoch %" G_GUINT64_FORMAT " starts at entry %zu of %zu, but entry %zu of %zu was wanted",
			 p.epoch, p.first, p.head.count, a->next, a->cur.head.count);
		return -EPROTO;
	}
	if (p.n == 0 && p.first < p.head.count) {
		snprintf(why, wlen, "ticker part of epoch %" G_GUINT64_FORMAT " is empty before the end of its snapshot",
			 p.epoch);
		return -EPROTO;
	}
	for (size_t i = 0; i < p.n; i++) {
		sync_ticker_entry e;
		if (sync_ticker_unpack_entry(buf, i, &e, &r) < 0) {
			snprintf(a->why, sizeof a->why, "entry %zu: %s", p.first + i, r);
			a->skipped++;
		} else {
			g_array_append_val(a->ent, e);
		}
	}
	a->next = p.first + p.n;
	return a->next == a->cur.head.count;
}

int sync_ticker_asm_complete(const sync_ticker_asm *a)
{
	return a->cur.epoch != 0 && a->next == a->cur.head.count;
}

uint64_t sync_ticker_asm_epoch(const sync_ticker_asm *a)
{
	return a->cur.epoch;
}

size_t sync_ticker_asm_next(const sync_ticker_asm *a)
{
	return a->next;
}

const sync_ticker_head *sync_ticker_asm_head(const sync_ticker_asm *a)
{
	return &a->cur.head;
}

const sync_ticker_entry *sync_ticker_asm_entries(const sync_ticker_asm *a, size_t *n)
{
	*n = a->ent->len;
	return (const sync_ticker_entry *)a->ent->data;
}

size_t sync_ticker_asm_skipped(const sync_ticker_asm *a, const char **why)
{
	if (why)
		*why = a->why;
	return a->skipped;
}
