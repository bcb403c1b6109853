/* store.c — the archive directory: listing, retention, reading (see store.h). */
#include "archive/store.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "archive/durable.h"
#include "archive/segment.h"
#include "archive/timeline.h"

struct archive_store {
	char *dir;
	GArray *e; /* archive_entry, by name */
	int bad;
	char bad_why[256];
	size_t bridged;
};

static int64_t file_bytes(const char *dir, const char *name, const char *ext)
{
	char *p = g_strdup_printf("%s/%s%s", dir, name, ext);
	struct stat st;
	int64_t b = stat(p, &st) == 0 ? (int64_t)st.st_size : -errno;
	g_free(p);
	return b;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
	return strcmp(((const archive_entry *)a)->name, ((const archive_entry *)b)->name);
}

static void load_one(archive_store *s, const char *base)
{
	char *path = g_strdup_printf("%s/%s.idx", s->dir, base), *text = NULL, why[256];
	size_t len;
	GError *e = NULL;
	archive_index *x = archive_index_new();
	int64_t fb = file_bytes(s->dir, base, ".flac"), ib = file_bytes(s->dir, base, ".idx");
	if (!archive_read_file(path, &text, &len, &e)) {
		if (!s->bad++)
			g_strlcpy(s->bad_why, e->message, sizeof s->bad_why);
		g_error_free(e);
	} else if (archive_index_parse(text, len, 0, x, why, sizeof why) < 0 || !x->closed || fb < 0) {
		if (!s->bad++)
			g_snprintf(s->bad_why, sizeof s->bad_why, "%s:%s", path,
				   fb < 0 ? " its FLAC file is missing" : !x->closed ? " no end line"
										     : why);
	} else {
		archive_entry en = {.x = x, .bytes = fb + ib};
		g_strlcpy(en.name, base, sizeof en.name);
		g_array_append_val(s->e, en);
		x = NULL;
	}
	archive_index_free(x);
	g_free(text);
	g_free(path);
}

/* The global time point of entry j nearest frame f, or NULL. */
static const archive_timept *nearest_global(const archive_store *s, guint j, int last)
{
	const archive_index *x = g_array_index(s->e, archive_entry, j).x;
	for (guint k = 0; k < x->times->len; k++) {
		guint i = last ? x->times->len - 1 - k : k;
		const archive_timept *t = &g_array_index(x->times, archive_timept, i);
		if (t->has_global)
			return t;
	}
	return NULL;
}

/* A segment that kept no global time (closed before syncd's first ticker
 * reached the recorder, or in an outage nothing bridged) borrows the
 * nearest points of the segments before and after it in the same run:
 * frames are one clock across a run, so its frames are placed between
 * them (timeline.h).  In memory only. */
static void lend_times(archive_store *s)
{
	for (guint i = 0; i < s->e->len; i++) {
		archive_index *x = g_array_index(s->e, archive_entry, i).x;
		gboolean any = FALSE;
		for (guint k = 0; k < x->times->len && !any; k++)
			any = g_array_index(x->times, archive_timept, k).has_global != 0;
		if (any)
			continue;
		const archive_timept *before = NULL, *after = NULL;
		for (guint j = i; j-- > 0 && !before;) {
			const archive_index *y = g_array_index(s->e, archive_entry, j).x;
			if (y->node == x->node && y->device == x->device && y->run_ns == x->run_ns && y->first < x->first)
				before = nearest_global(s, j, 1);
		}
		for (guint j = i + 1; j < s->e->len && !after; j++) {
			const archive_index *y = g_array_index(s->e, archive_entry, j).x;
			if (y->node == x->node && y->device == x->device && y->run_ns == x->run_ns && y->first > x->first)
				after = nearest_global(s, j, 0);
		}
		/* Copies first: inserting may move the arrays they point into
		 * only for this x, whose points none of them is. */
		archive_timept b = before ? *before : (archive_timept){0}, a = after ? *after : (archive_timept){0};
		if (before) {
			b.has_global = 2;
			g_array_prepend_val(x->times, b);
		}
		if (after) {
			a.has_global = 2;
			g_array_append_val(x->times, a);
		}
	}
}

archive_store *archive_store_open(const char *dir, gboolean tidy, GError **err)
{
	GError *e = NULL;
	GDir *d = g_dir_open(dir, 0, &e);
	if (!d) {
		g_set_error(err, ARCHIVE_ERROR, e->code == G_FILE_ERROR_NOENT ? ENOENT : EIO, "%s", e->message);
		g_error_free(e);
		return NULL;
	}
	archive_store *s = g_new0(archive_store, 1);
	s->dir = g_strdup(dir);
	s->e = g_array_new(FALSE, FALSE, sizeof(archive_entry));
	const char *n;
	while ((n = g_dir_read_name(d))) {
		if (g_str_has_suffix(n, ".idx")) {
			char *base = g_strndup(n, strlen(n) - 4);
			load_one(s, base);
			g_free(base);
		} else if (tidy && g_str_has_suffix(n, ".flac")) {
			char *base = g_strndup(n, strlen(n) - 5);
			if (file_bytes(dir, base, ".idx") == -ENOENT && file_bytes(dir, base, ".idx.part") == -ENOENT) {
				char *p = g_strdup_printf("%s/%s", dir, n);
				unlink(p); /* a deletion cut short: its index went first */
				g_free(p);
			}
			g_free(base);
		}
	}
	g_dir_close(d);
	g_array_sort(s->e, by_name);
	/* Outages bridged with what was learned after them (timeline.h). */
	archive_index **xs = g_new(archive_index *, s->e->len + 1);
	for (guint i = 0; i < s->e->len; i++)
		xs[i] = g_array_index(s->e, archive_entry, i).x;
	s->bridged = archive_bridge(xs, s->e->len, ARCHIVE_BRIDGE_WANDER);
	g_free(xs);
	lend_times(s);
	return s;
}

void archive_store_free(archive_store *s)
{
	if (!s)
		return;
	for (guint i = 0; i < s->e->len; i++)
		archive_index_free(g_array_index(s->e, archive_entry, i).x);
	g_array_free(s->e, TRUE);
	g_free(s->dir);
	g_free(s);
}

guint archive_store_count(const archive_store *s)
{
	return s->e->len;
}

const archive_entry *archive_store_entry(const archive_store *s, guint i)
{
	return i < s->e->len ? &g_array_index(s->e, archive_entry, i) : NULL;
}

int64_t archive_store_bytes(const archive_store *s)
{
	int64_t b = 0;
	for (guint i = 0; i < s->e->len; i++)
		b += g_array_index(s->e, archive_entry, i).bytes;
	return b;
}

int archive_store_bad(const archive_store *s)
{
	return s->bad;
}

const char *archive_store_bad_why(const archive_store *s)
{
	return s->bad_why;
}

size_t archive_store_bridged(const archive_store *s)
{
	return s->bridged;
}

const char *archive_store_dir(const archive_store *s)
{
	return s->dir;
}

gboolean archive_store_add(archive_store *s, const char *name, const archive_index *x, GError **err)
{
	int64_t fb = file_bytes(s->dir, name, ".flac"), ib = file_bytes(s->dir, name, ".idx");
	if (fb < 0 || ib < 0) {
		g_set_error(err, ARCHIVE_ERROR, (int)-(fb < 0 ? fb : ib), "%s/%s: stat: %s", s->dir, name,
			    g_strerror((int)-(fb < 0 ? fb : ib)));
		return FALSE;
	}
	archive_entry en = {.bytes = fb + ib, .x = archive_index_new()};
	g_strlcpy(en.name, name, sizeof en.name);
	archive_index *c = en.x;
	GArray *t = c->times, *g = c->gaps;
	*c = *x;
	c->times = t;
	c->gaps = g;
	g_array_append_vals(t, x->times->data, x->times->len);
	g_array_append_vals(g, x->gaps->data, x->gaps->len);
	g_array_append_val(s->e, en);
	g_array_sort(s->e, by_name);
	return TRUE;
}

gboolean archive_store_drop_oldest(archive_store *s, GError **err)
{
	if (!s->e->len) {
		g_set_error(err, ARCHIVE_ERROR, ENOENT, "%s: no closed segment to drop", s->dir);
		return FALSE;
	}
	archive_entry *en = &g_array_index(s->e, archive_entry, 0);
	gboolean ok = TRUE;
	/* The index first: a FLAC without one is removed at the next scan,
	 * an index without its FLAC would be listed. */
	for (int k = 0; k < 2 && ok; k++) {
		char *p = g_strdup_printf("%s/%s%s", s->dir, en->name, k ? ".flac" : ".idx");
		if (unlink(p) < 0 && errno != ENOENT) {
			g_set_error(err, ARCHIVE_ERROR, errno, "%s: unlink: %s", p, g_strerror(errno));
			ok = FALSE;
		}
		g_free(p);
	}
	if (ok) {
		archive_index_free(en->x);
		g_array_remove_index(s->e, 0);
	}
	return ok;
}

int64_t archive_store_free_bytes(const archive_store *s)
{
	struct statvfs v;
	if (statvfs(s->dir, &v) < 0)
		return -errno;
	return (int64_t)v.f_bavail * (int64_t)v.f_frsize;
}

gboolean archive_store_enforce(archive_store *s, int64_t now_wall_ns, int64_t max_age_ns, int64_t max_bytes,
			       int64_t reserve_bytes, int *dropped, GError **err)
{
	*dropped = 0;
	while (s->e->len) {
		const archive_entry *o = &g_array_index(s->e, archive_entry, 0);
		gboolean old = max_age_ns > 0 && now_wall_ns - o->x->wall_end_ns > max_age_ns;
		gboolean big = max_bytes > 0 && archive_store_bytes(s) > max_bytes && s->e->len > 1;
		gboolean full = FALSE;
		if (reserve_bytes > 0 && s->e->len > 1) {
			int64_t fr = archive_store_free_bytes(s);
			if (fr < 0) {
				g_set_error(err, ARCHIVE_ERROR, (int)-fr, "%s: statvfs: %s", s->dir, g_strerror((int)-fr));
				return FALSE;
			}
			full = fr < reserve_bytes;
		}
		if (!old && !big && !full)
			break;
		if (!archive_store_drop_oldest(s, err))
			return FALSE;
		(*dropped)++;
	}
	return TRUE;
}

/* Frames [a, b) of entry en, delivered through ops. */
static gboolean read_piece(const archive_store *s, const archive_entry *en, int64_t a, int64_t b,
			   const archive_read_ops *ops, void *user, GError **err)
{
	char *p = g_strdup_printf("%s/%s.flac", s->dir, en->name);
	SF_INFO in = {0};
	SNDFILE *sf = sf_open(p, SFM_READ, &in);
	gboolean ok = FALSE;
	if (!sf) {
		g_set_error(err, ARCHIVE_ERROR, EIO, "%s: %s", p, sf_strerror(NULL));
		goto out;
	}
	if (sf_seek(sf, a - en->x->first, SEEK_SET) != a - en->x->first) {
		g_set_error(err, ARCHIVE_ERROR, EIO, "%s: cannot seek to frame %" G_GINT64_FORMAT ": %s", p, a, sf_strerror(sf));
		goto close;
	}
	size_t fb = archive_sample_bytes(en->x->format) * en->x->channels, chunk = 4096;
	void *buf = g_malloc(fb * chunk);
	ok = TRUE;
	for (int64_t at = a; at < b && ok;) {
		size_t want = (size_t)MIN((int64_t)chunk, b - at);
		sf_count_t r = archive_sf_readf(sf, en->x->format, en->x->channels, buf, want);
		if (r != (sf_count_t)want) {
			g_set_error(err, ARCHIVE_ERROR, EIO, "%s: frame %" G_GINT64_FORMAT " does not decode: %s", p, at + (r > 0 ? r : 0),
				    sf_strerror(sf));
			ok = FALSE;
		}
		if (r > 0)
			ops->data(user, at, buf, (size_t)r);
		at += r > 0 ? r : 0;
	}
	g_free(buf);
close:
	sf_close(sf);
out:
	g_free(p);
	return ok;
}

int64_t archive_store_read(archive_store *s, uint32_t node, uint32_t device, int64_t first, int64_t last,
			   const archive_read_ops *ops, void *user, GError **err)
{
	int64_t at = first, delivered = 0;
	gboolean begun = FALSE;
	/* Segments in time order; frames increase along them within a run of
	 * audiod's numbering, and a renumbered run's (lower) frames are
	 * skipped here rather than delivered out of order. */
	for (guint i = 0; i < s->e->len && at < last; i++) {
		const archive_entry *en = &g_array_index(s->e, archive_entry, i);
		const archive_index *x = en->x;
		int64_t a = MAX(at, x->first), b = MIN(last, x->first + x->frames);
		if (x->node != node || x->device != device || a >= b)
			continue;
		if (!begun && ops->begin)
			ops->begin(user, x);
		begun = TRUE;
		if (a > at && ops->gap)
			ops->gap(user, at, a);
		if (!read_piece(s, en, a, b, ops, user, err))
			return -EIO;
		delivered += b - a;
		at = b;
	}
	if (!begun) {
		g_set_error(err, ARCHIVE_ERROR, ERANGE,
			    "%s: no segment of node%u:audio%u holds any frame of [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
			    s->dir, node, device, first, last);
		return -ERANGE;
	}
	if (at < last && ops->gap)
		ops->gap(user, at, last);
	return delivered;
}

const archive_entry *archive_store_find_frame(const archive_store *s, uint32_t node, uint32_t device, int64_t f)
{
	for (guint i = s->e->len; i-- > 0;) {
		const archive_entry *en = &g_array_index(s->e, archive_entry, i);
		if (en->x->node == node && en->x->device == device && f >= en->x->first && f < en->x->first + en->x->frames)
			return en;
	}
	return NULL;
}

const archive_entry *archive_store_find_global(const archive_store *s, uint32_t node, uint32_t device,
					       int64_t global_ns)
{
	const archive_entry *best = NULL;
	double best_d = INFINITY;
	for (guint i = 0; i < s->e->len; i++) {
		const archive_entry *en = &g_array_index(s->e, archive_entry, i);
		if (en->x->node != node || en->x->device != device)
			continue;
		for (guint k = 0; k < en->x->times->len; k++) {
			const archive_timept *t = &g_array_index(en->x->times, archive_timept, k);
			if (!t->has_global)
				continue;
			/* The distance from the frame range's time span. */
			double start = (double)(t->global_ns - global_ns) -
				       (double)(t->frame - en->x->first) * 1e9 / en->x->rate_hz;
			double end = start + (double)en->x->frames * 1e9 / en->x->rate_hz;
			double d = start > 0 ? start : end < 0 ? -end
							       : 0;
			if (d < best_d) {
				best_d = d;
				best = en;
			}
			break;
		}
	}
	return best;
}
