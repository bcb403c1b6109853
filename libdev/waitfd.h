/* waitfd.h — the monotonic clock in ms and a poll for one descriptor with a
 * deadline, for libdev's blocking paths (link.c, remote.c).  No state. */
#ifndef CHORUS_LIBDEV_WAITFD_H
#define CHORUS_LIBDEV_WAITFD_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, ms. */
int64_t dev_now_ms(void);

/* Wait until fd has one of the poll events `ev` or the deadline (ms of
 * dev_now_ms; < 0: none) passes.  Returns 0, -ETIMEDOUT, or -errno of
 * poll (EINTR is retried). */
int dev_wait_fd(int fd, short ev, int64_t deadline_ms);

#endif
