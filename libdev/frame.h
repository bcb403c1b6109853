/* frame.h — libdev messages over a byte stream (remote devices through
 * chorus-proxy, docs/protocol.md "Remote devices").
 *
 * A frame is a u32 little-endian length, then that many bytes: one whole
 * libdev message (DEV_WIRE_HDR .. DEV_WIRE_MAX_MSG bytes, decoded with
 * dev_wire_decode as a datagram is) or, with length 0, a heartbeat that
 * carries nothing and proves the link alive.  A length of 1..15 or over
 * DEV_WIRE_MAX_MSG cannot be resynchronised: the stream is closed.
 * The reassembler is pure (no I/O but dev_framer_read); it is the fuzz
 * target tests/fuzz/fuzz_frame.c.
 */
#ifndef CHORUS_DEV_FRAME_H
#define CHORUS_DEV_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

#define DEV_FRAME_HDR 4

/* Bytes received and not yet taken as frames. */
typedef struct {
	GByteArray *buf;
	size_t off; /* start of the first frame not yet taken */
} dev_framer;

/* Initialise an empty reassembler.  Never fails. */
void dev_framer_init(dev_framer *f);

/* Free its buffer (the struct itself is the caller's). */
void dev_framer_clear(dev_framer *f);

/* Forget every buffered byte (a new connection). */
void dev_framer_reset(dev_framer *f);

/* Append n received bytes. */
void dev_framer_feed(dev_framer *f, const void *p, size_t n);

/* read(2) at most `max` bytes from fd into the reassembler; returns what
 * read returned (errno set on -1). */
ssize_t dev_framer_read(dev_framer *f, int fd, size_t max);

/* Bytes buffered and not yet taken. */
size_t dev_framer_pending(const dev_framer *f);

/* Take the next whole frame: 1 with msg and len (len 0: a heartbeat; the
 * pointer is valid until the next feed, read or next), 0 when more bytes
 * are needed, -EBADMSG (length 1..15) or -EMSGSIZE (over DEV_WIRE_MAX_MSG)
 * with a static reason in *why (may be NULL): the stream is lost. */
int dev_framer_next(dev_framer *f, const uint8_t **msg, size_t *len, const char **why);

/* Append the frame of the n-byte message at p (n 0: a heartbeat) to b. */
void dev_frame_append(GByteArray *b, const void *p, size_t n);

#endif
