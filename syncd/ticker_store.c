/* ticker_store.c — numbered ticker snapshots in parts (see ticker_store.h). */
#include "syncd/ticker_store.h"

#include <errno.h>
#include <string.h>

typedef struct {
	uint64_t epoch;
	guint64 gen;
	sync_ticker_head head; /* count = total entries */
	GBytes *packed;        /* head.count x SYNC_TICKER_ENTRY bytes */
} snapshot;

struct syncd_ticker_store {
	unsigned keep;
	size_t part;
	uint64_t epoch; /* newest taken; 0 = none */
	GQueue snaps;   /* snapshot *, newest first */
};

syncd_ticker_store *syncd_ticker_store_new(unsigned keep, size_t part)
{
	syncd_ticker_store *st = g_new0(syncd_ticker_store, 1);
	st->keep = keep ? keep : 1;
	st->part = CLAMP(part, 1, SYNC_TICKER_PART_MAX);
	g_queue_init(&st->snaps);
	return st;
}

static void snap_free(gpointer p)
{
	snapshot *s = p;
	g_bytes_unref(s->packed);
	g_free(s);
}

void syncd_ticker_store_free(syncd_ticker_store *st)
{
	if (!st)
		return;
	g_queue_clear_full(&st->snaps, snap_free);
	g_free(st);
}

gboolean syncd_ticker_store_fresh(const syncd_ticker_store *st, guint64 gen, int64_t now_ns, int64_t max_age_ns)
{
	const snapshot *s = g_queue_peek_head((GQueue *)&st->snaps);
	return s && s->gen == gen && now_ns - s->head.now_ns <= max_age_ns && now_ns >= s->head.now_ns;
}

uint64_t syncd_ticker_store_take(syncd_ticker_store *st, guint64 gen, const sync_ticker_head *h,
				 const sync_ticker_entry *e, size_t n)
{
	snapshot *s = g_new0(snapshot, 1);
	s->epoch = ++st->epoch;
	s->gen = gen;
	s->head = *h;
	s->head.count = n;
	uint8_t *buf = g_malloc(n * SYNC_TICKER_ENTRY + 1);
	for (size_t i = 0; i < n; i++)
		sync_ticker_pack_entry(&e[i], buf + i * SYNC_TICKER_ENTRY);
	s->packed = g_bytes_new_take(buf, n * SYNC_TICKER_ENTRY);
	g_queue_push_head(&st->snaps, s);
	while (st->snaps.length > st->keep)
		snap_free(g_queue_pop_tail(&st->snaps));
	return s->epoch;
}

int syncd_ticker_store_part(const syncd_ticker_store *st, uint64_t epoch, size_t first, GByteArray *out, char *why,
			    size_t len)
{
	const snapshot *s = NULL;
	for (GList *l = st->snaps.head; l && !s; l = l->next)
		if (epoch == 0 || ((snapshot *)l->data)->epoch == epoch)
			s = l->data;
	if (!s && !st->epoch) {
		g_snprintf(why, len, "no ticker snapshot taken yet");
		return -ENOENT;
	}
	if (!s) {
		g_snprintf(why, len, "ticker epoch %" G_GUINT64_FORMAT " is no longer held (the newest is %" G_GUINT64_FORMAT "); read it again from entry 0 of the newest",
			   epoch, st->epoch);
		return -ESTALE;
	}
	if (first > s->head.count || (first == s->head.count && first > 0)) {
		g_snprintf(why, len, "ticker epoch %" G_GUINT64_FORMAT " has %zu entries; entry %zu asked for", s->epoch,
			   s->head.count, first);
		return -ERANGE;
	}
	size_t n = MIN(st->part, s->head.count - first);
	sync_ticker_part p = {s->head, s->epoch, first, n};
	guint at = out->len;
	g_byte_array_set_size(out, at + (guint)sync_ticker_part_size(n));
	sync_ticker_pack_part_head(&p, out->data + at);
	gsize plen;
	const uint8_t *packed = g_bytes_get_data(s->packed, &plen);
	if (n)
		memcpy(out->data + at + SYNC_TICKER_HDR, packed + first * SYNC_TICKER_ENTRY, n * SYNC_TICKER_ENTRY);
	return 0;
}

uint64_t syncd_ticker_store_epoch(const syncd_ticker_store *st)
{
	return st->epoch;
}
