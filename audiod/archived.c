/* archived.c — serving old frames from the archive (see archived.h). */
#include "audiod/archived.h"

#include <errno.h>
#include <string.h>

#include "archive/durable.h"
#include "archive/serve.h"
#include "archive/store.h"

struct audiod_archive {
	archive_store *s;
	uint32_t node, device, frame_bytes;
	/* the read in progress */
	uint8_t *buf;
	int64_t at, end;
};

audiod_archive *audiod_archive_open(const char *dir, uint32_t node, uint32_t device, const char *format,
				    uint32_t frame_bytes, gboolean by_time, int64_t from_ns, int64_t to_ns,
				    int64_t *first, int64_t *last, GString *reply, GError **err)
{
	if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		g_set_error(err, ARCHIVE_ERROR, ENOENT, "no archive directory %s", dir);
		return NULL;
	}
	archive_store *s = archive_store_open(dir, FALSE, err);
	if (!s)
		return NULL;
	/* An open end is resolved to the archive's last frame for the check;
	 * the stream itself runs on into the ring. */
	archive_request q = {.node = node, .device = device, .by_time = by_time, .from_ns = from_ns, .to_ns = to_ns, .first = *first, .last = *last};
	if (by_time && to_ns == INT64_MAX)
		q.to_ns = from_ns + 1000000000LL;
	if (!by_time && *last == INT64_MAX)
		q.last = *first + 1;
	archive_answer an;
	gboolean end_known = TRUE;
	GError *e1 = NULL;
	if (!archive_resolve(s, &q, &an, &e1)) {
		/* By time, the end may be newer than the archive (in the ring). */
		if (!by_time || to_ns == INT64_MAX) {
			g_propagate_error(err, e1);
			archive_store_free(s);
			return NULL;
		}
		g_clear_error(&e1);
		q.to_ns = from_ns + 1000000000LL;
		end_known = FALSE;
		if (!archive_resolve(s, &q, &an, err)) {
			archive_store_free(s);
			return NULL;
		}
	}
	if (strcmp(an.x->format, format) || an.x->channels * archive_sample_bytes(an.x->format) != frame_bytes) {
		g_set_error(err, ARCHIVE_ERROR, EPROTO, "%s holds %u channel(s) of %s, this device %u bytes of %s a frame",
			    dir, an.x->channels, an.x->format, frame_bytes, format);
		archive_store_free(s);
		return NULL;
	}
	*first = an.first;
	if (by_time && to_ns != INT64_MAX && end_known)
		*last = an.last;
	const char *t = strstr(an.reply, " t0_clock=");
	g_string_append(reply, t ? t : " source=archive");
	audiod_archive *a = g_new0(audiod_archive, 1);
	a->s = s;
	a->node = node;
	a->device = device;
	a->frame_bytes = frame_bytes;
	return a;
}

void audiod_archive_free(audiod_archive *a)
{
	if (!a)
		return;
	archive_store_free(a->s);
	g_free(a);
}

gboolean audiod_archive_below(const audiod_archive *a, int64_t from, int64_t oldest, int64_t *to)
{
	const archive_entry *en = archive_store_find_frame(a->s, a->node, a->device, from);
	if (en) {
		*to = MIN(en->x->first + en->x->frames, oldest);
		return TRUE;
	}
	/* A gap: up to the next segment that starts after from (or the ring). */
	int64_t next = oldest;
	for (guint i = 0; i < archive_store_count(a->s); i++) {
		const archive_index *x = archive_store_entry(a->s, i)->x;
		if (x->node == a->node && x->device == a->device && x->first > from && x->first < next)
			next = x->first;
	}
	*to = next;
	return FALSE;
}

static void on_data(void *user, int64_t first, const void *frames, size_t n)
{
	audiod_archive *a = user;
	if (first < a->at || first + (int64_t)n > a->end)
		return;
	memcpy(a->buf + (size_t)(first - a->at) * a->frame_bytes, frames, n * a->frame_bytes);
}

int audiod_archive_read(audiod_archive *a, int64_t first, size_t n, void *buf)
{
	static const archive_read_ops ops = {NULL, on_data, NULL};
	a->buf = buf;
	a->at = first;
	a->end = first + (int64_t)n;
	GError *err = NULL;
	int64_t got = archive_store_read(a->s, a->node, a->device, first, first + (int64_t)n, &ops, a, &err);
	if (got != (int64_t)n) {
		g_warning("audiod: archive frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "): %s", first,
			  first + (int64_t)n, err ? err->message : "not all there");
		g_clear_error(&err);
		return -EIO;
	}
	return 0;
}
