/* rtstep.c — the realtime clock's steps through a timerfd (see rtstep.h). */
#include "syncd/rtstep.h"

#include <errno.h>
#include <glib-unix.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct rtstep {
	int fd;
	guint watch;
	void (*on_step)(void *ctx);
	void *ctx;
	guint64 steps;
};

/* Arm the timer for a far future (2^40 s: never), cancelled on a set. */
static int arm(int fd)
{
	struct itimerspec its = {0};
	its.it_value.tv_sec = (time_t)1 << 40;
	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL);
}

static gboolean on_fd(gint fd, GIOCondition cond, gpointer data)
{
	rtstep *r = data;
	uint64_t expirations;
	ssize_t n = read(fd, &expirations, sizeof expirations);
	if (n < 0 && errno == EAGAIN)
		return G_SOURCE_CONTINUE; /* woken for nothing */
	gboolean stepped = n < 0 && errno == ECANCELED;
	/* Cancelled (or, in 2^40 s, expired): armed again either way; an arm
	 * that fails leaves the fd readable, so try once more next time. */
	if (arm(fd) < 0)
		g_warning("realtime clock: cannot arm its step watch again: %s", g_strerror(errno));
	if (stepped) {
		r->steps++;
		r->on_step(r->ctx);
	}
	return G_SOURCE_CONTINUE;
}

rtstep *rtstep_new(void (*on_step)(void *ctx), void *ctx, GError **err)
{
	int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0 || arm(fd) < 0) {
		int e = errno;
		g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "a timerfd to notice steps of the realtime clock: %s",
			    g_strerror(e));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rtstep *r = g_new0(rtstep, 1);
	r->fd = fd;
	r->on_step = on_step;
	r->ctx = ctx;
	r->watch = g_unix_fd_add(fd, G_IO_IN, on_fd, r);
	return r;
}

guint64 rtstep_count(const rtstep *r)
{
	return r ? r->steps : 0;
}

void rtstep_free(rtstep *r)
{
	if (!r)
		return;
	g_source_remove(r->watch);
	close(r->fd);
	g_free(r);
}
