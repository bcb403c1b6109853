/* libdev_testutil.h — helpers for the libdev tests: spin the default main
 * context until a condition holds (no timed assertions: a generous safety
 * limit only turns a hang into a failure), and raw-socket access to devices
 * for malformed-input tests. */
#ifndef CHORUS_TESTS_LIBDEV_TESTUTIL_H
#define CHORUS_TESTS_LIBDEV_TESTUTIL_H

#include <check.h>
#include <glib.h>

#include "libdev/dev.h"

/* Safety limit for any wait, seconds: only reached when something hangs. */
#define TU_SAFETY_S 30

/* Run the default context until `cond` holds; fail the test on the safety
 * limit.  A 5 ms heartbeat keeps iterations coming when nothing else runs. */
#define SPIN_UNTIL(cond) \
	do { \
		gint64 end_ = g_get_monotonic_time() + TU_SAFETY_S * G_USEC_PER_SEC; \
		guint hb_ = g_timeout_add(5, tu_tick, NULL); \
		while (!(cond) && g_get_monotonic_time() < end_) \
			g_main_context_iteration(NULL, TRUE); \
		g_source_remove(hb_); \
		ck_assert_msg((cond), "gave up waiting for: %s", #cond); \
	} while (0)

/* Heartbeat callback (keeps the source). */
gboolean tu_tick(gpointer unused);

/* Run the default context until nothing is ready, `rounds` times over (lets
 * queued pumps and replies happen without waiting for a condition). */
void tu_drain(int rounds);

/* Connect a raw SOCK_SEQPACKET socket to device `name`; returns the fd
 * (blocking) or fails the test. */
int tu_raw_connect(const char *name);

/* True when fd has something to read now. */
gboolean tu_readable(int fd);

/* Receive one message on a raw fd after spinning the loop until it is
 * readable; decodes into *m (pointers into buf). */
void tu_raw_recv(int fd, GByteArray *buf, dev_msg *m);

/* Send raw bytes as one datagram; fails the test on error. */
void tu_raw_send(int fd, const void *p, size_t n);

/* Encode and send a message with the given type, flags, id and payload. */
void tu_raw_msg(int fd, uint8_t type, uint16_t flags, uint32_t id, const void *payload, size_t n);

#endif
