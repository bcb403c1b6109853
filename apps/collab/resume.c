/* resume.c — collab's place in detect/events (see resume.h). */
#include "apps/collab/resume.h"

#include "apps/collab/sharemsg.h"
#include "archive/cursor.h"

struct collab_resume {
	char *dir;
	uint64_t boot0, next0; /* the cursor this start resumed from */
	int64_t start_cpu_ns;
	double keep_s;
	guint64 replayed, expired, errors;
};

collab_resume *collab_resume_new(const char *dir, int64_t start_cpu_ns, double keep_s)
{
	collab_resume *r = g_new0(collab_resume, 1);
	r->dir = g_strdup(dir);
	r->start_cpu_ns = start_cpu_ns;
	r->keep_s = keep_s;
	GError *err = NULL;
	if (!archive_cursor_load(dir, COLLAB_CURSOR, &r->boot0, &r->next0, &err)) {
		g_warning("collab: %s; taking new detections only", err->message);
		g_error_free(err);
	} else if (r->boot0) {
		g_message("detect/events: resuming after message %" G_GUINT64_FORMAT " of instance %" G_GUINT64_FORMAT,
			  r->next0 - 1, r->boot0);
	}
	return r;
}

void collab_resume_free(collab_resume *r)
{
	if (!r)
		return;
	g_free(r->dir);
	g_free(r);
}

void collab_resume_from(const collab_resume *r, uint64_t *boot, uint64_t *next)
{
	*boot = r->boot0;
	*next = r->next0;
}

guint collab_resume_classify(collab_resume *r, const det_event *e, gboolean *expired)
{
	int64_t end = e->cpu_ns + (int64_t)(e->duration_s * 1e9);
	*expired = FALSE;
	if (end >= r->start_cpu_ns)
		return 0; /* heard while this collab ran */
	if ((double)(r->start_cpu_ns - end) > r->keep_s * 1e9) {
		*expired = TRUE;
		r->expired++;
		return 0;
	}
	r->replayed++;
	return COLLAB_LATE_RESENT;
}

gboolean collab_resume_save(collab_resume *r, uint64_t boot, uint64_t seq, GError **err)
{
	if (archive_cursor_save(r->dir, COLLAB_CURSOR, boot, seq + 1, err))
		return TRUE;
	r->errors++;
	return FALSE;
}

void collab_resume_describe(const collab_resume *r, uint64_t boot, uint64_t next, GString *out)
{
	g_string_append_printf(out, "resume cursor=%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " from=%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " replayed=%" G_GUINT64_FORMAT " expired=%" G_GUINT64_FORMAT " cursor_errors=%" G_GUINT64_FORMAT "\n",
			       boot, next, r->boot0, r->next0, r->replayed, r->expired, r->errors);
}
