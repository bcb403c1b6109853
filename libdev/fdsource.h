/* fdsource.h — a GSource watching one fd whose condition can change
 * (G_IO_OUT only while something waits to be written).  Internal. */
#ifndef CHORUS_DEV_FDSOURCE_H
#define CHORUS_DEV_FDSOURCE_H

#include <glib.h>

/* Called with the returned events; return FALSE to remove the source. */
typedef gboolean (*dev_fd_fn)(gpointer user, GIOCondition revents);

/* A new source for fd with condition `cond`, attached to ctx (NULL =
 * default); the caller owns one reference.  Never fails. */
GSource *dev_fd_source_new(int fd, GIOCondition cond, dev_fd_fn fn, gpointer user, GMainContext *ctx);

/* Change the watched condition (no-op when unchanged). */
void dev_fd_source_set(GSource *s, GIOCondition cond);

/* Destroy and unref s (NULL is fine). */
void dev_fd_source_drop(GSource *s);

#endif
