/* waitfd.c — see waitfd.h. */
#include "libdev/waitfd.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

int64_t dev_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int dev_wait_fd(int fd, short ev, int64_t deadline_ms)
{
	for (;;) {
		int64_t left = deadline_ms < 0 ? -1 : deadline_ms - dev_now_ms();
		int t = deadline_ms < 0 ? -1 : left < 0    ? 0
				       : left > 0x7fffffff ? 0x7fffffff
							   : (int)left;
		struct pollfd p = {fd, ev, 0};
		int r = poll(&p, 1, t);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}
