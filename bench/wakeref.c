/* wakeref.c — bare wakeup latencies for comparison (see wakeref.h). */
#include "bench/wakeref.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench/timing.h"

static wake_q quantiles(int64_t *v, unsigned n)
{
	wake_q q = {0, 0, 0, n};
	if (!n)
		return q;
	qsort(v, n, sizeof *v, bench_cmp_i64);
	q.p50_us = v[(size_t)(0.5 * (n - 1) + 0.5)] * 1e-3;
	q.p99_us = v[(size_t)(0.99 * (n - 1) + 0.5)] * 1e-3;
	q.max_us = v[n - 1] * 1e-3;
	return q;
}

static void arm_at(int tfd, int64_t t)
{
	struct itimerspec its = {.it_value = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000}};
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		perror("wakeref: timerfd_settime");
		exit(1);
	}
}

static void wait_timer(int tfd)
{
	struct pollfd p = {.fd = tfd, .events = POLLIN};
	uint64_t x;
	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	if (read(tfd, &x, sizeof x) < 0 && errno != EAGAIN)
		perror("wakeref: timerfd read");
}

wake_q wakeref_timer(int64_t period_ns, int rounds)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int64_t *v = calloc((size_t)rounds, sizeof *v);
	if (tfd < 0 || !v) {
		perror("wakeref: timerfd_create");
		exit(1);
	}
	int64_t t = bench_now_ns() + period_ns;
	for (int i = 0; i < rounds; i++, t += period_ns) {
		arm_at(tfd, t);
		wait_timer(tfd);
		v[i] = bench_now_ns() - t;
	}
	close(tfd);
	wake_q q = quantiles(v, (unsigned)rounds);
	free(v);
	return q;
}

typedef struct {
	int fd;                 /* this waiter's end */
	size_t bytes;           /* 0: eventfd */
	_Atomic int64_t *start; /* the writer's time of this round */
	int64_t *lat;           /* one per round */
	int rounds;
} waiter;

static void *waiter_main(void *data)
{
	waiter *w = data;
	char *buf = malloc(w->bytes ? w->bytes : 8);
	struct pollfd p = {.fd = w->fd, .events = POLLIN};
	for (int i = 0; i < w->rounds; i++) {
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		ssize_t n = read(w->fd, buf, w->bytes ? w->bytes : 8);
		int64_t now = bench_now_ns();
		w->lat[i] = n > 0 ? now - atomic_load(w->start) : 0;
	}
	free(buf);
	return NULL;
}

wake_q wakeref_fanout(int waiters, size_t bytes, int64_t period_ns, int rounds)
{
	_Atomic int64_t start = 0;
	waiter *ws = calloc((size_t)waiters, sizeof *ws);
	int *wfd = calloc((size_t)waiters, sizeof *wfd);
	pthread_t *th = calloc((size_t)waiters, sizeof *th);
	int64_t *all = calloc((size_t)waiters * (size_t)rounds, sizeof *all);
	char *msg = calloc(1, bytes ? bytes : 8);
	if (!ws || !wfd || !th || !all || !msg) {
		fprintf(stderr, "wakeref: out of memory\n");
		exit(1);
	}
	for (int i = 0; i < waiters; i++) {
		int sv[2];
		if (bytes) {
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
				perror("wakeref: socketpair");
				exit(1);
			}
			wfd[i] = sv[0];
			ws[i].fd = sv[1];
		} else {
			wfd[i] = ws[i].fd = eventfd(0, EFD_CLOEXEC);
		}
		ws[i].bytes = bytes;
		ws[i].start = &start;
		ws[i].lat = all + (size_t)i * (size_t)rounds;
		ws[i].rounds = rounds;
		if (pthread_create(&th[i], NULL, waiter_main, &ws[i]) != 0) {
			fprintf(stderr, "wakeref: cannot start a waiter thread\n");
			exit(1);
		}
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int64_t t = bench_now_ns() + period_ns;
	const uint64_t one = 1;
	for (int r = 0; r < rounds; r++, t += period_ns) {
		arm_at(tfd, t);
		wait_timer(tfd);
		atomic_store(&start, bench_now_ns());
		for (int i = 0; i < waiters; i++) {
			ssize_t n = bytes ? send(wfd[i], msg, bytes, MSG_NOSIGNAL) : write(wfd[i], &one, sizeof one);
			if (n < 0)
				perror("wakeref: write");
		}
	}
	for (int i = 0; i < waiters; i++)
		pthread_join(th[i], NULL);
	close(tfd);
	for (int i = 0; i < waiters; i++) {
		if (bytes)
			close(wfd[i]);
		close(ws[i].fd);
	}
	wake_q q = quantiles(all, (unsigned)(waiters * rounds));
	free(ws);
	free(wfd);
	free(th);
	free(all);
	free(msg);
	return q;
}
