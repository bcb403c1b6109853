/* remote_async.c — dev_remote_connect in a worker thread (see remote.h). */
#include "libdev/remote.h"

typedef struct {
	dev_remote_target t;
	int timeout_ms;
	GMainContext *ctx;
	dev_remote_done_fn done;
	void *user;
	int err;
	dev_remote_conn c;
	char why[400];
} job;

static gboolean finish(gpointer data)
{
	job *j = data;
	j->done(j->user, j->err, &j->c, j->why);
	g_main_context_unref(j->ctx);
	g_free(j);
	return G_SOURCE_REMOVE;
}

static gpointer run(gpointer data)
{
	job *j = data;
	j->err = dev_remote_connect(&j->t, j->timeout_ms, &j->c, j->why, sizeof j->why);
	/* an idle source, not g_main_context_invoke: that could run `done` in
	 * this thread when the context happens to be free */
	GSource *s = g_idle_source_new();
	g_source_set_callback(s, finish, j, NULL);
	g_source_attach(s, j->ctx);
	g_source_unref(s);
	return NULL;
}

void dev_remote_connect_async(const dev_remote_target *t, int timeout_ms, GMainContext *ctx, dev_remote_done_fn done,
			      void *user)
{
	job *j = g_new0(job, 1);
	j->t = *t;
	j->timeout_ms = timeout_ms;
	j->ctx = g_main_context_ref(ctx ? ctx : g_main_context_default());
	j->done = done;
	j->user = user;
	g_thread_unref(g_thread_new("chorus-remote", run, j));
}
