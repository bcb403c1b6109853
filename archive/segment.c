/* segment.c — writing one crash-safe segment (see segment.h). */
#include "archive/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "archive/durable.h"

struct archive_segment {
	char *dir;
	char name[ARCHIVE_NAME_MAX];
	archive_index *x;
	SNDFILE *sf;
	int idx_fd;
	GString *pending; /* index lines not journaled yet */
	int64_t frames;
};

int archive_sf_format(const char *format)
{
	return SF_FORMAT_FLAC | (archive_sample_bytes(format) == 3 ? SF_FORMAT_PCM_24 : SF_FORMAT_PCM_16);
}

sf_count_t archive_sf_writef(SNDFILE *sf, const char *format, unsigned channels, const void *frames, size_t n)
{
	if (archive_sample_bytes(format) == 2)
		return sf_writef_short(sf, frames, (sf_count_t)n);
	const uint8_t *p = frames;
	int32_t buf[4096];
	size_t per = sizeof buf / sizeof buf[0] / channels, done = 0;
	while (done < n) {
		size_t k = MIN(per, n - done);
		for (size_t i = 0; i < k * channels; i++, p += 3)
			buf[i] = (int32_t)((uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24);
		sf_count_t w = sf_writef_int(sf, buf, (sf_count_t)k);
		if (w != (sf_count_t)k)
			return (sf_count_t)done + (w > 0 ? w : 0);
		done += k;
	}
	return (sf_count_t)n;
}

sf_count_t archive_sf_readf(SNDFILE *sf, const char *format, unsigned channels, void *buf, size_t n)
{
	if (archive_sample_bytes(format) == 2)
		return sf_readf_short(sf, buf, (sf_count_t)n);
	uint8_t *p = buf;
	int32_t tmp[4096];
	size_t per = sizeof tmp / sizeof tmp[0] / channels, done = 0;
	while (done < n) {
		size_t k = MIN(per, n - done);
		sf_count_t r = sf_readf_int(sf, tmp, (sf_count_t)k);
		if (r <= 0)
			break;
		for (size_t i = 0; i < (size_t)r * channels; i++, p += 3) {
			uint32_t v = (uint32_t)tmp[i];
			p[0] = (uint8_t)(v >> 8);
			p[1] = (uint8_t)(v >> 16);
			p[2] = (uint8_t)(v >> 24);
		}
		done += (size_t)r;
		if ((size_t)r < k)
			break;
	}
	return (sf_count_t)done;
}

archive_segment *archive_segment_open(const char *dir, const archive_index *head, int flac_level, GError **err)
{
	if (!archive_sample_bytes(head->format)) {
		g_set_error(err, ARCHIVE_ERROR, EINVAL,
			    "format %s cannot be kept bit-exact in FLAC (S16_LE and S24_3LE can)", head->format);
		return NULL;
	}
	archive_segment *s = g_new0(archive_segment, 1);
	s->dir = g_strdup(dir);
	s->idx_fd = -1;
	s->pending = g_string_new(NULL);
	s->x = archive_index_new();
	*s->x = *head;
	s->x->times = g_array_new(FALSE, FALSE, sizeof(archive_timept));
	s->x->gaps = g_array_new(FALSE, FALSE, sizeof(archive_gap));
	g_array_append_vals(s->x->gaps, head->gaps->data, head->gaps->len);
	s->x->closed = 0;
	archive_name(head, s->name, sizeof s->name);

	char *idx = g_strdup_printf("%s/%s.idx.part", dir, s->name), *flac = g_strdup_printf("%s/%s.flac.part", dir, s->name);
	GString *text = g_string_new(NULL);
	archive_index_format(s->x, text);
	gboolean ok = FALSE;
	s->idx_fd = open(idx, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (s->idx_fd < 0) {
		g_set_error(err, ARCHIVE_ERROR, errno, "%s: create: %s", idx, g_strerror(errno));
		goto out;
	}
	if (!archive_write_all(s->idx_fd, idx, text->str, text->len, err))
		goto out;
	if (fsync(s->idx_fd) < 0) {
		g_set_error(err, ARCHIVE_ERROR, errno, "%s: fsync: %s", idx, g_strerror(errno));
		goto out;
	}
	SF_INFO info = {.samplerate = (int)head->rate_hz, .channels = (int)head->channels, .format = archive_sf_format(head->format)};
	errno = 0;
	s->sf = sf_open(flac, SFM_WRITE, &info);
	if (!s->sf) {
		archive_sf_fail(err, flac, "create", NULL, errno);
		goto out;
	}
	double level = flac_level / 8.0;
	sf_command(s->sf, SFC_SET_COMPRESSION_LEVEL, &level, sizeof level);
	ok = archive_fsync_path(dir, err);
out:
	g_string_free(text, TRUE);
	if (!ok) {
		archive_segment_abandon(s);
		unlink(flac);
		unlink(idx);
		s = NULL;
	}
	g_free(idx);
	g_free(flac);
	return s;
}

gboolean archive_segment_write(archive_segment *s, const void *frames, size_t n, GError **err)
{
	errno = 0;
	sf_count_t w = archive_sf_writef(s->sf, s->x->format, s->x->channels, frames, n);
	if (w != (sf_count_t)n) {
		/* libsndfile's own text can be about its encoder state; the
		 * write(2) underneath left the reason in errno. */
		int e = errno ? errno : EIO;
		g_set_error(err, ARCHIVE_ERROR, e, "%s/%s.flac.part: wrote %lld of %zu frames: %s (libsndfile: %s)", s->dir,
			    s->name, (long long)(w > 0 ? w : 0), n, g_strerror(e), sf_strerror(s->sf));
		return FALSE;
	}
	s->frames += (int64_t)n;
	return TRUE;
}

void archive_segment_add_time(archive_segment *s, const archive_timept *t)
{
	g_array_append_val(s->x->times, *t);
	archive_index_format_time(t, s->pending);
}

gboolean archive_segment_flush(archive_segment *s, GError **err)
{
	char *flac = g_strdup_printf("%s/%s.flac.part", s->dir, s->name), *idx = g_strdup_printf("%s/%s.idx.part", s->dir, s->name);
	/* libsndfile writes each finished FLAC block with write(2): an fsync
	 * of the file through any descriptor makes them durable. */
	gboolean ok = archive_fsync_path(flac, err);
	if (ok && s->pending->len) {
		ok = archive_write_all(s->idx_fd, idx, s->pending->str, s->pending->len, err);
		if (ok && fsync(s->idx_fd) < 0) {
			g_set_error(err, ARCHIVE_ERROR, errno, "%s: fsync: %s", idx, g_strerror(errno));
			ok = FALSE;
		}
		if (ok)
			g_string_truncate(s->pending, 0);
	}
	g_free(flac);
	g_free(idx);
	return ok;
}

static void segment_free(archive_segment *s)
{
	if (s->idx_fd >= 0)
		close(s->idx_fd); /* the journal's failures were reported by flush, or it is being abandoned */
	archive_index_free(s->x);
	g_string_free(s->pending, TRUE);
	g_free(s->dir);
	g_free(s);
}

gboolean archive_segment_close(archive_segment *s, int64_t wall_end_ns, GError **err)
{
	char *flac = g_strdup_printf("%s.flac.part", s->name), *done = g_strdup_printf("%s.flac", s->name),
	     *path = g_strdup_printf("%s/%s", s->dir, flac), *idxn = g_strdup_printf("%s.idx", s->name),
	     *part = g_strdup_printf("%s/%s.idx.part", s->dir, s->name);
	gboolean ok = FALSE;
	int rc = sf_close(s->sf);
	s->sf = NULL;
	if (rc != 0) {
		g_set_error(err, ARCHIVE_ERROR, EIO, "%s: closing the FLAC stream: %s", path, sf_error_number(rc));
		goto out;
	}
	if (!archive_fsync_path(path, err) || !archive_rename(s->dir, flac, done, err))
		goto out;
	s->x->closed = 1;
	s->x->frames = s->frames;
	s->x->wall_end_ns = wall_end_ns;
	GString *text = g_string_new(NULL);
	archive_index_format(s->x, text);
	ok = archive_write_atomic(s->dir, idxn, text->str, text->len, err);
	g_string_free(text, TRUE);
	if (ok && unlink(part) < 0) {
		g_set_error(err, ARCHIVE_ERROR, errno, "%s: unlink: %s", part, g_strerror(errno));
		ok = FALSE;
	}
out:
	g_free(flac);
	g_free(done);
	g_free(path);
	g_free(idxn);
	g_free(part);
	segment_free(s);
	return ok;
}

void archive_segment_abandon(archive_segment *s)
{
	if (!s)
		return;
	if (s->sf)
		sf_close(s->sf); /* what is in the file already is what recovery finds */
	segment_free(s);
}

int64_t archive_segment_frames(const archive_segment *s)
{
	return s->frames;
}

int64_t archive_segment_next(const archive_segment *s)
{
	return s->x->first + s->frames;
}

const char *archive_segment_name(const archive_segment *s)
{
	return s->name;
}

const archive_index *archive_segment_index(const archive_segment *s)
{
	return s->x;
}

void archive_sf_fail(GError **err, const char *path, const char *what, SNDFILE *sf, int e)
{
	if (e)
		g_set_error(err, ARCHIVE_ERROR, e, "%s: %s: %s (libsndfile: %s)", path, what, g_strerror(e), sf_strerror(sf));
	else
		g_set_error(err, ARCHIVE_ERROR, EIO, "%s: %s: %s", path, what, sf_strerror(sf));
}
