/* recover.c — closing the segments a crash left open (see recover.h). */
#include "archive/recover.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "archive/durable.h"
#include "archive/index.h"
#include "archive/segment.h"

/* Re-encode what `part` decodes into dir/name (via name.tmp); *frames gets
 * the count (0: nothing decodable, no file written). */
static gboolean reencode(const char *dir, const char *part, const char *name, const archive_index *x, int level,
			 int64_t *frames, GError **err)
{
	SF_INFO in = {0};
	*frames = 0;
	SNDFILE *r = sf_open(part, SFM_READ, &in);
	if (!r)
		return TRUE; /* not even a header: nothing was durable */
	if ((uint32_t)in.channels != x->channels || (uint32_t)in.samplerate != x->rate_hz) {
		g_set_error(err, ARCHIVE_ERROR, EINVAL, "%s: %d channels at %d Hz, the index says %u at %u", part,
			    in.channels, in.samplerate, x->channels, x->rate_hz);
		sf_close(r);
		return FALSE;
	}
	char *tmp = g_strdup_printf("%s/%s.tmp", dir, name);
	SF_INFO info = {.samplerate = in.samplerate, .channels = in.channels, .format = archive_sf_format(x->format)};
	errno = 0;
	SNDFILE *w = sf_open(tmp, SFM_WRITE, &info);
	gboolean ok = w != NULL;
	if (!w)
		archive_sf_fail(err, tmp, "create", NULL, errno);
	else {
		double l = level / 8.0;
		sf_command(w, SFC_SET_COMPRESSION_LEVEL, &l, sizeof l);
	}
	size_t fb = archive_sample_bytes(x->format) * x->channels, chunk = 4096;
	void *buf = g_malloc(fb * chunk);
	sf_count_t n;
	while (ok && (n = archive_sf_readf(r, x->format, x->channels, buf, chunk)) > 0) {
		errno = 0;
		if (archive_sf_writef(w, x->format, x->channels, buf, (size_t)n) != n) {
			archive_sf_fail(err, tmp, "write", w, errno);
			ok = FALSE;
		}
		*frames += n;
	}
	g_free(buf);
	sf_close(r);
	if (w) {
		int rc = sf_close(w);
		if (ok && rc != 0) {
			g_set_error(err, ARCHIVE_ERROR, EIO, "%s: closing: %s", tmp, sf_error_number(rc));
			ok = FALSE;
		}
	}
	if (ok && *frames == 0)
		unlink(tmp);
	else if (ok) {
		char *tn = g_strdup_printf("%s.tmp", name);
		ok = archive_fsync_path(tmp, err) && archive_rename(dir, tn, name, err);
		g_free(tn);
	}
	if (!ok)
		unlink(tmp);
	g_free(tmp);
	return ok;
}

static gboolean recover_one(const char *dir, const char *base, int level, archive_recovery *out, GError **err)
{
	char *jpath = g_strdup_printf("%s/%s.idx.part", dir, base), *fpart = g_strdup_printf("%s/%s.flac.part", dir, base),
	     *flac = g_strdup_printf("%s.flac", base), *fpath = g_strdup_printf("%s/%s.flac", dir, base),
	     *idx = g_strdup_printf("%s.idx", base), *text = NULL;
	size_t len;
	char why[256];
	archive_index *x = archive_index_new();
	gboolean ok = archive_read_file(jpath, &text, &len, err);
	if (ok && archive_index_parse(text, len, 1, x, why, sizeof why) < 0) {
		g_set_error(err, ARCHIVE_ERROR, EINVAL, "%s:%s", jpath, why);
		ok = FALSE;
	}
	int64_t frames = 0;
	if (ok && g_file_test(fpath, G_FILE_TEST_EXISTS)) {
		/* The close got as far as the rename: the file is whole. */
		SF_INFO in = {0};
		SNDFILE *r = sf_open(fpath, SFM_READ, &in);
		if (!r) {
			g_set_error(err, ARCHIVE_ERROR, EIO, "%s: %s", fpath, sf_strerror(NULL));
			ok = FALSE;
		} else {
			frames = in.frames;
			if (frames <= 0 || frames == SF_COUNT_MAX) {
				/* Its STREAMINFO has no length (the close's rewrite of
				 * the header did not happen): count what decodes. */
				size_t fb = archive_sample_bytes(x->format) * x->channels;
				void *buf = g_malloc(fb * 4096);
				sf_count_t n;
				frames = 0;
				while ((n = archive_sf_readf(r, x->format, x->channels, buf, 4096)) > 0)
					frames += n;
				g_free(buf);
			}
			sf_close(r);
		}
		unlink(fpart);
	} else if (ok) {
		ok = reencode(dir, fpart, flac, x, level, &frames, err);
	}
	if (ok && frames > 0) {
		x->closed = 1;
		x->frames = frames;
		x->wall_end_ns = x->wall_ns + (int64_t)((double)frames * 1e9 / x->rate_hz);
		/* Conversions of frames that did not survive place nothing. */
		for (guint i = x->times->len; i-- > 0;)
			if (g_array_index(x->times, archive_timept, i).frame >= x->first + frames)
				g_array_remove_index(x->times, i);
		GString *t = g_string_new(NULL);
		archive_index_format(x, t);
		ok = archive_write_atomic(dir, idx, t->str, t->len, err);
		g_string_free(t, TRUE);
	}
	if (ok) {
		unlink(fpart);
		if (unlink(jpath) < 0 && errno != ENOENT) {
			g_set_error(err, ARCHIVE_ERROR, errno, "%s: unlink: %s", jpath, g_strerror(errno));
			ok = FALSE;
		}
	}
	if (ok && frames > 0) {
		out->recovered++;
		out->frames += frames;
	} else if (ok) {
		out->removed++;
	}
	ok = ok && archive_fsync_path(dir, err);
	g_free(jpath);
	g_free(fpart);
	g_free(flac);
	g_free(fpath);
	g_free(idx);
	g_free(text);
	archive_index_free(x);
	return ok;
}

gboolean archive_recover_segment(const char *dir, const char *base, int flac_level, archive_recovery *out,
				 GError **err)
{
	gboolean ok = recover_one(dir, base, flac_level, out, err);
	if (!ok)
		out->failed++;
	return ok;
}

gboolean archive_recover(const char *dir, int flac_level, archive_recovery *out, GError **err)
{
	memset(out, 0, sizeof *out);
	gint64 t0 = g_get_monotonic_time();
	GError *e = NULL;
	GDir *d = g_dir_open(dir, 0, &e);
	if (!d) {
		g_set_error(err, ARCHIVE_ERROR, e->code == G_FILE_ERROR_NOENT ? ENOENT : EIO, "%s", e->message);
		g_error_free(e);
		return FALSE;
	}
	GPtrArray *bases = g_ptr_array_new_with_free_func(g_free);
	const char *n;
	while ((n = g_dir_read_name(d)))
		if (g_str_has_suffix(n, ".idx.part"))
			g_ptr_array_add(bases, g_strndup(n, strlen(n) - strlen(".idx.part")));
	g_dir_close(d);
	gboolean ok = TRUE;
	for (guint i = 0; i < bases->len; i++) {
		GError *one = NULL;
		if (!recover_one(dir, bases->pdata[i], flac_level, out, &one)) {
			out->failed++;
			if (ok)
				g_propagate_error(err, one);
			else
				g_error_free(one);
			ok = FALSE;
		}
	}
	g_ptr_array_free(bases, TRUE);
	out->elapsed_s = (double)(g_get_monotonic_time() - t0) / 1e6;
	return ok;
}
