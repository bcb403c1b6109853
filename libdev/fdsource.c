/* fdsource.c — see fdsource.h.  GLib's default check() dispatches a source
 * whose unix fd has revents, so only dispatch() is needed. */
#include "libdev/fdsource.h"

typedef struct {
	GSource src;
	gpointer tag;
	GIOCondition cond;
	dev_fd_fn fn;
	gpointer user;
} fd_source;

static gboolean fd_dispatch(GSource *s, GSourceFunc cb, gpointer ud)
{
	fd_source *f = (fd_source *)s;
	GIOCondition r = g_source_query_unix_fd(s, f->tag);
	if (!r)
		return G_SOURCE_CONTINUE;
	return f->fn(f->user, r);
}

static GSourceFuncs fd_funcs = {NULL, NULL, fd_dispatch, NULL, NULL, NULL};

GSource *dev_fd_source_new(int fd, GIOCondition cond, dev_fd_fn fn, gpointer user, GMainContext *ctx)
{
	GSource *s = g_source_new(&fd_funcs, sizeof(fd_source));
	fd_source *f = (fd_source *)s;
	f->fn = fn;
	f->user = user;
	f->cond = cond;
	f->tag = g_source_add_unix_fd(s, fd, cond);
	g_source_set_name(s, "chorus-dev-fd");
	g_source_attach(s, ctx);
	return s;
}

void dev_fd_source_set(GSource *s, GIOCondition cond)
{
	fd_source *f = (fd_source *)s;
	if (f->cond == cond)
		return;
	f->cond = cond;
	g_source_modify_unix_fd(s, f->tag, cond);
}

void dev_fd_source_drop(GSource *s)
{
	if (!s)
		return;
	g_source_destroy(s);
	g_source_unref(s);
}
