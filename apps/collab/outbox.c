/* outbox.c — the on-disk queue of shared detections (see outbox.h). */
#include "apps/collab/outbox.h"

#include "archive/durable.h"
#include "libdev/common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC "chorus-collab-outbox 1 "

typedef struct {
	uint64_t id;
	int64_t queued_cpu_ns; /* the node's cpu time when queued (the onset's) */
	det_event e;
} entry;

struct collab_outbox {
	char *path, *dir, *name;
	int fd; /* appending */
	guint max_entries;
	int64_t max_age_ns;
	uint64_t epoch, next;
	GArray *q;        /* entry, by id */
	guint file_lines; /* entries the file holds (live or not) */
	collab_outbox_stats st;
};

static GString *header(const collab_outbox *o)
{
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, MAGIC "epoch=%" PRIu64 " next=%" PRIu64 "\n", o->epoch, o->next);
	return s;
}

static void line_of(const entry *en, GString *out)
{
	g_string_append_printf(out, "%" PRIu64 " ", en->id);
	det_event_format(&en->e, out);
	while (out->len && out->str[out->len - 1] == ' ')
		g_string_truncate(out, out->len - 1);
	g_string_append_c(out, '\n');
}

/* Rewrite the file with the live entries (atomically), reopen to append. */
static gboolean rewrite(collab_outbox *o, GError **err)
{
	GString *s = header(o);
	for (guint i = 0; i < o->q->len; i++)
		line_of(&g_array_index(o->q, entry, i), s);
	gboolean ok = archive_write_atomic(o->dir, o->name, s->str, s->len, err);
	g_string_free(s, TRUE);
	if (!ok)
		return FALSE;
	if (o->fd >= 0)
		close(o->fd); /* read-only use now: the new file replaced it */
	o->fd = open(o->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (o->fd < 0) {
		g_set_error(err, DEV_ERROR, errno, "%s: open: %s", o->path, g_strerror(errno));
		return FALSE;
	}
	o->file_lines = o->q->len;
	o->st.rewrites++;
	return TRUE;
}

static gboolean parse_header(collab_outbox *o, const char *line, GError **err)
{
	if (strncmp(line, MAGIC, strlen(MAGIC)) ||
	    sscanf(line + strlen(MAGIC), "epoch=%" SCNu64 " next=%" SCNu64, &o->epoch, &o->next) != 2 || !o->epoch ||
	    !o->next) {
		g_set_error(err, DEV_ERROR, EINVAL, "%s:1: not a collab outbox (expected \"" MAGIC "epoch=E next=N\")", o->path);
		return FALSE;
	}
	return TRUE;
}

/* One queued line: "ID DETECTION".  FALSE with the reason in why. */
static gboolean parse_line(const char *line, entry *en, char *why, size_t wlen)
{
	char *end;
	errno = 0;
	unsigned long long id = strtoull(line, &end, 10);
	if (errno || end == line || *end != ' ' || !id || *line == '-') {
		g_snprintf(why, wlen, "expected an id before the detection");
		return FALSE;
	}
	en->id = id;
	if (det_event_parse(end + 1, strlen(end + 1), &en->e, why, wlen) < 0)
		return FALSE;
	en->queued_cpu_ns = en->e.cpu_ns;
	return TRUE;
}

static gboolean load(collab_outbox *o, const char *text, size_t len, GError **err)
{
	gchar **lines = g_strsplit(text, "\n", -1);
	guint n = g_strv_length(lines);
	/* A file ends in "\n": the last piece is "" — or a torn line. */
	gboolean torn = len && text[len - 1] != '\n';
	if (n == 0 || !*lines[0]) {
		g_set_error(err, DEV_ERROR, EINVAL, "%s:1: empty (expected \"" MAGIC "epoch=E next=N\")", o->path);
		g_strfreev(lines);
		return FALSE;
	}
	gboolean ok = parse_header(o, lines[0], err);
	for (guint i = 1; ok && i < n; i++) {
		if (!*lines[i])
			continue;
		entry en;
		char why[200];
		if (!parse_line(lines[i], &en, why, sizeof why)) {
			if (torn && i == n - 1) {
				o->st.torn++;
				break;
			}
			g_set_error(err, DEV_ERROR, EINVAL, "%s:%u: %s", o->path, i + 1, why);
			ok = FALSE;
			break;
		}
		if (o->q->len && en.id <= g_array_index(o->q, entry, o->q->len - 1).id) {
			g_set_error(err, DEV_ERROR, EINVAL, "%s:%u: id %" PRIu64 " is not above the one before", o->path, i + 1,
				    en.id);
			ok = FALSE;
			break;
		}
		g_array_append_val(o->q, en);
		o->next = MAX(o->next, en.id + 1);
	}
	g_strfreev(lines);
	return ok;
}

static void drop_front(collab_outbox *o, guint k)
{
	if (!k)
		return;
	g_array_remove_range(o->q, 0, k);
	o->st.dropped += k;
}

collab_outbox *collab_outbox_open(const char *path, guint max_entries, int64_t max_age_ns, GError **err)
{
	collab_outbox *o = g_new0(collab_outbox, 1);
	o->path = g_strdup(path);
	o->dir = g_path_get_dirname(path);
	o->name = g_path_get_basename(path);
	o->fd = -1;
	o->max_entries = MAX(max_entries, 1);
	o->max_age_ns = max_age_ns;
	o->q = g_array_new(FALSE, FALSE, sizeof(entry));
	char *text = NULL;
	size_t len = 0;
	GError *e = NULL;
	if (archive_read_file(path, &text, &len, &e)) {
		gboolean ok = load(o, text, len, err);
		g_free(text);
		if (!ok) {
			collab_outbox_free(o);
			return NULL;
		}
		if (o->q->len > o->max_entries)
			drop_front(o, o->q->len - o->max_entries);
	} else if (g_error_matches(e, ARCHIVE_ERROR, ENOENT)) {
		g_clear_error(&e);
		do
			o->epoch = ((uint64_t)g_random_int() << 32) | g_random_int();
		while (!o->epoch);
		o->next = 1;
	} else {
		g_propagate_error(err, e);
		collab_outbox_free(o);
		return NULL;
	}
	/* Start from a clean file: the live entries, the header current. */
	if (!rewrite(o, err)) {
		collab_outbox_free(o);
		return NULL;
	}
	return o;
}

void collab_outbox_free(collab_outbox *o)
{
	if (!o)
		return;
	if (o->fd >= 0)
		close(o->fd);
	g_array_free(o->q, TRUE);
	g_free(o->path);
	g_free(o->dir);
	g_free(o->name);
	g_free(o);
}

guint collab_outbox_expire(collab_outbox *o, int64_t now_cpu_ns)
{
	guint k = 0;
	while (k < o->q->len && now_cpu_ns - g_array_index(o->q, entry, k).queued_cpu_ns > o->max_age_ns)
		k++;
	drop_front(o, k);
	return k;
}

int collab_outbox_add(collab_outbox *o, const det_event *e, int64_t now_cpu_ns, uint64_t *id)
{
	collab_outbox_expire(o, now_cpu_ns);
	entry en = {.id = o->next++, .queued_cpu_ns = e->cpu_ns, .e = *e};
	if (o->q->len >= o->max_entries)
		drop_front(o, o->q->len - o->max_entries + 1);
	g_array_append_val(o->q, en);
	o->st.added++;
	*id = en.id;
	GError *err = NULL;
	int rc = 0;
	if (o->file_lines >= 2 * o->max_entries) {
		if (!rewrite(o, &err))
			rc = -(err ? err->code : EIO);
	} else {
		/* The header's next= is stale now; on open the last id wins. */
		GString *s = g_string_new(NULL);
		line_of(&en, s);
		if (o->fd < 0 || !archive_write_all(o->fd, o->path, s->str, s->len, &err) || fdatasync(o->fd) < 0)
			rc = err ? -err->code : -(errno ? errno : EIO);
		else
			o->file_lines++;
		g_string_free(s, TRUE);
	}
	if (rc) {
		o->st.write_errors++;
		g_warning("collab: outbox %s: %s", o->path, err ? err->message : g_strerror(-rc));
	}
	g_clear_error(&err);
	return rc;
}

const det_event *collab_outbox_get(const collab_outbox *o, uint64_t id)
{
	guint lo = 0, hi = o->q->len;
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		uint64_t m = g_array_index(o->q, entry, mid).id;
		if (m == id)
			return &g_array_index(o->q, entry, mid).e;
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void collab_outbox_range(const collab_outbox *o, uint64_t *first, uint64_t *last)
{
	*last = o->next - 1;
	*first = o->q->len ? g_array_index(o->q, entry, 0).id : o->next;
}

uint64_t collab_outbox_first_since(const collab_outbox *o, int64_t t_cpu_ns)
{
	/* Ids are in order; onsets nearly so (a held one is queued later): the
	 * first entry at or after t is the lowest id that is. */
	for (guint i = 0; i < o->q->len; i++)
		if (g_array_index(o->q, entry, i).queued_cpu_ns >= t_cpu_ns)
			return g_array_index(o->q, entry, i).id;
	return o->next;
}

uint64_t collab_outbox_epoch(const collab_outbox *o)
{
	return o->epoch;
}

void collab_outbox_counts(const collab_outbox *o, collab_outbox_stats *st)
{
	*st = o->st;
	st->queued = o->q->len;
}

const char *collab_outbox_path(const collab_outbox *o)
{
	return o->path;
}
