/* frame.c — libdev messages over a byte stream (see frame.h). */
#include "libdev/frame.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "libdev/le.h"
#include "libdev/wire.h"

void dev_framer_init(dev_framer *f)
{
	f->buf = g_byte_array_new();
	f->off = 0;
}

void dev_framer_clear(dev_framer *f)
{
	if (f->buf)
		g_byte_array_unref(f->buf);
	f->buf = NULL;
	f->off = 0;
}

void dev_framer_reset(dev_framer *f)
{
	g_byte_array_set_size(f->buf, 0);
	f->off = 0;
}

/* Drop the bytes already taken once they are most of the buffer. */
static void compact(dev_framer *f)
{
	if (f->off == 0)
		return;
	if (f->off == f->buf->len) {
		g_byte_array_set_size(f->buf, 0);
		f->off = 0;
	} else if (f->off >= 65536 || f->off * 2 >= f->buf->len) {
		g_byte_array_remove_range(f->buf, 0, (guint)f->off);
		f->off = 0;
	}
}

void dev_framer_feed(dev_framer *f, const void *p, size_t n)
{
	compact(f);
	if (n)
		g_byte_array_append(f->buf, p, (guint)n);
}

ssize_t dev_framer_read(dev_framer *f, int fd, size_t max)
{
	compact(f);
	guint old = f->buf->len;
	g_byte_array_set_size(f->buf, old + (guint)max);
	ssize_t r = read(fd, f->buf->data + old, max);
	int e = errno;
	g_byte_array_set_size(f->buf, old + (guint)(r > 0 ? r : 0));
	errno = e;
	return r;
}

size_t dev_framer_pending(const dev_framer *f) { return f->buf->len - f->off; }

int dev_framer_next(dev_framer *f, const uint8_t **msg, size_t *len, const char **why)
{
	size_t have = f->buf->len - f->off;
	if (have < DEV_FRAME_HDR)
		return 0;
	const uint8_t *p = f->buf->data + f->off;
	uint32_t n = le_get32(p);
	if (n > 0 && n < DEV_WIRE_HDR) {
		if (why)
			*why = "frame shorter than a message header";
		return -EBADMSG;
	}
	if (n > DEV_WIRE_MAX_MSG) {
		if (why)
			*why = "frame longer than the largest message";
		return -EMSGSIZE;
	}
	if (have - DEV_FRAME_HDR < n)
		return 0;
	*msg = p + DEV_FRAME_HDR;
	*len = n;
	f->off += DEV_FRAME_HDR + n;
	return 1;
}

void dev_frame_append(GByteArray *b, const void *p, size_t n)
{
	uint8_t h[DEV_FRAME_HDR];
	le_put32(h, (uint32_t)n);
	g_byte_array_append(b, h, DEV_FRAME_HDR);
	if (n)
		g_byte_array_append(b, p, (guint)n);
}
