/* libdev_testutil.c — see libdev_testutil.h. */
#include "tests/libdev_testutil.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

gboolean tu_tick(gpointer unused) { return G_SOURCE_CONTINUE; }

void tu_drain(int rounds)
{
	for (int i = 0; i < rounds; i++)
		while (g_main_context_iteration(NULL, FALSE))
			;
}

int tu_raw_connect(const char *name)
{
	char path[DEV_PATH_MAX];
	ck_assert_int_eq(dev_path(name, path, sizeof path, NULL), 0);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect %s: %s", path, strerror(errno));
	return fd;
}

gboolean tu_readable(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, 0) > 0;
}

void tu_raw_recv(int fd, GByteArray *buf, dev_msg *m)
{
	SPIN_UNTIL(tu_readable(fd));
	g_byte_array_set_size(buf, DEV_WIRE_MAX_MSG);
	ssize_t r = recv(fd, buf->data, buf->len, 0);
	ck_assert_int_gt(r, 0);
	g_byte_array_set_size(buf, (guint)r);
	const char *why = "";
	int e = dev_wire_decode(buf->data, buf->len, m, &why);
	ck_assert_msg(e == 0, "server sent an undecodable message: %s", why);
}

void tu_raw_send(int fd, const void *p, size_t n)
{
	ssize_t r = send(fd, p, n, MSG_NOSIGNAL);
	ck_assert_msg(r == (ssize_t)n, "send %zu bytes: %s", n, strerror(errno));
}

void tu_raw_msg(int fd, uint8_t type, uint16_t flags, uint32_t id, const void *payload, size_t n)
{
	GByteArray *b = g_byte_array_new();
	dev_wire_begin(b, type, flags, id);
	dev_wire_bytes(b, payload, n);
	ck_assert_int_eq(dev_wire_end(b), 0);
	tu_raw_send(fd, b->data, b->len);
	g_byte_array_unref(b);
}
