/* collab_testutil.c — collab's socket tests' helpers (see collab_testutil.h). */
#include "tests/collab_testutil.h"

#include <arpa/inet.h>
#include <check.h>
#include <glib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

int tu_udp_port(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	getsockname(fd, (struct sockaddr *)&a, &l);
	close(fd);
	return ntohs(a.sin_port);
}

void tu_spin(int ms)
{
	gint64 end = g_get_monotonic_time() + ms * 1000;
	while (g_get_monotonic_time() < end)
		if (!g_main_context_iteration(NULL, FALSE))
			g_usleep(1000);
}
