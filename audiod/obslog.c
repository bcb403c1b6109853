/* obslog.c — audiod's observation log (see obslog.h). */
#include "audiod/obslog.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct obslog {
	char *path;
	FILE *f;
	guint64 lines;
	char *error; /* the first failure, or NULL */
};

obslog *obslog_open(const char *path, GError **err)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		int e = errno;
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "--obs-log %s: %s", path, g_strerror(e));
		return NULL;
	}
	/* A line at a time: the log is whole up to the last observation even
	 * when audiod is killed. */
	setvbuf(f, NULL, _IOLBF, 0);
	obslog *l = g_new0(obslog, 1);
	l->path = g_strdup(path);
	l->f = f;
	if (fprintf(f, "# audiod observation log: device segment frame cpu_ns raw_ns\n") < 0) {
		int e = errno;
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "--obs-log %s: %s", path, g_strerror(e));
		obslog_close(l);
		return NULL;
	}
	return l;
}

/* The first failure: logged, kept for the status, the file closed. */
static void fail(obslog *l, int e)
{
	l->error = g_strdup_printf("write failed: %s", g_strerror(e));
	g_warning("--obs-log %s: %s; the log stops here", l->path, l->error);
	fclose(l->f); /* already failed: its own result adds nothing */
	l->f = NULL;
}

void obslog_note(obslog *l, int k, const char *text)
{
	if (l && l->f && fprintf(l->f, "# device %d: %s\n", k, text) < 0)
		fail(l, errno);
}

void obslog_add(obslog *l, int k, unsigned segment, int64_t frame, int64_t cpu_ns, int64_t raw_ns)
{
	if (!l || !l->f)
		return;
	if (fprintf(l->f, "%d %u %" PRId64 " %" PRId64 " %" PRId64 "\n", k, segment, frame, cpu_ns, raw_ns) < 0)
		fail(l, errno);
	else
		l->lines++;
}

void obslog_status(const obslog *l, GString *out)
{
	if (!l)
		return;
	g_string_append_printf(out, "obs_log path=%s lines=%" G_GUINT64_FORMAT "%s%s\n", l->path, l->lines,
			       l->error ? " error=" : "", l->error ? l->error : "");
}

int obslog_close(obslog *l)
{
	if (!l)
		return 0;
	int rc = l->error ? -1 : 0;
	if (l->f && fclose(l->f) != 0) {
		g_warning("--obs-log %s: close failed: %s", l->path, g_strerror(errno));
		rc = -1;
	}
	g_free(l->path);
	g_free(l->error);
	g_free(l);
	return rc;
}
