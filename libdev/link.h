/* link.h — blocking helpers for tools, tests and benchmarks.
 *
 * A dev_link is one blocking connection to a device (no main loop, no
 * reconnect); every call has a timeout.  The one-shot helpers connect, do
 * one thing and disconnect.  Errors are negative errno values; when the
 * device answered an ERROR, the return is its errno and `msg`/`out` holds
 * its text; when the connection failed, the text names the path tried.
 * A name "nodeN:NAME" (or any name under CHORUS_REMOTE=N) is a device of
 * node N, reached through its chorus-proxy (remote.h): the same calls, the
 * same timeouts, the text naming the node, the address and the reason.
 */
#ifndef CHORUS_DEV_LINK_H
#define CHORUS_DEV_LINK_H

#include "libdev/common.h"

typedef struct dev_link dev_link;

/* Connect to device `name` and read its HELLO within timeout_ms.  Returns
 * NULL with *error (DEV_ERROR, errno code: ENOENT, ECONNREFUSED, ETIMEDOUT,
 * EPROTO …, message naming the path). */
dev_link *dev_link_open(const char *name, int timeout_ms, GError **error);

/* The device's pattern, from its HELLO. */
dev_pattern dev_link_pattern(dev_link *l);

/* The device's item size (sensor devices; 0 for others). */
uint32_t dev_link_item_size(dev_link *l);

/* The socket fd (for poll), owned by the link. */
int dev_link_fd(dev_link *l);

/* Send one encoded message (b from dev_wire_begin/end).  0 or -errno. */
int dev_link_send(dev_link *l, const GByteArray *b, int timeout_ms);

/* Receive one message into `buf` (resized) and decode it into *m (pointers
 * into buf).  0, -ETIMEDOUT, -ECONNRESET (service gone), -EBADMSG. */
int dev_link_recv(dev_link *l, GByteArray *buf, dev_msg *m, int timeout_ms);

/* Read the status once (text, or `binary`) into `out` (replaced).  0 or -errno. */
int dev_link_status(dev_link *l, gboolean binary, GByteArray *out, int timeout_ms);

/* Run a command (text) or query (bytes) according to the device's pattern:
 * 0 with *status and the reply in `out`, or -errno (ERROR reply text in out). */
int dev_link_call(dev_link *l, const void *req, size_t len, int *status, GByteArray *out,
		  int timeout_ms);

/* Read a command device's usage text into `out`.  0 or -errno. */
int dev_link_usage(dev_link *l, GByteArray *out, int timeout_ms);

/* Close and free.  NULL is fine. */
void dev_link_close(dev_link *l);

/* One-shot: read a status device once into `out` (a NUL is appended after
 * the data, not counted in out->len).  0 or -errno (message in out). */
int dev_status_read_sync(const char *name, gboolean binary, GByteArray *out, int timeout_ms);

/* One-shot: this node's own status device `name` (never a remote one,
 * whatever CHORUS_REMOTE says), as text, into `out` (NUL after it).  0 or
 * -errno. */
int dev_status_read_local_sync(const char *name, GByteArray *out, int timeout_ms);

/* One-shot: run command `cmd`; 0 with *status and message, or -errno. */
int dev_command_run_sync(const char *name, const char *cmd, int *status, GString *msg,
			 int timeout_ms);

/* One-shot: run a query; 0 with *status and reply in out, or -errno. */
int dev_query_run_sync(const char *name, const void *req, size_t len, int *status,
		       GByteArray *out, int timeout_ms);

#endif
