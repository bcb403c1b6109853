/* devsock.h — the SOCK_SEQPACKET sockets of audiod's shared-memory devices
 * (audio/<k>/ring, audio/<k>/follow): listening at a device's path, and a
 * client's connect to one.  They hand out descriptors, not libdev messages.
 */
#ifndef CHORUS_AUDIOD_DEVSOCK_H
#define CHORUS_AUDIOD_DEVSOCK_H

#include <glib.h>
#include <stddef.h>
#include <sys/types.h>

/* Listen (non-blocking) at the path of device `name`, made with its parent
 * directories and `mode` (0: 0660); the path goes to path (len bytes).
 * Returns the socket, or -1 with err set (DEV_ERROR: the name or path and
 * why). */
int devsock_listen(const char *name, unsigned mode, char *path, size_t len, GError **err);

/* Connect (blocking) to device `name`; the path tried goes to path.
 * Returns the socket, or -errno with err set (AUDIOD_ERROR: the path and
 * why). */
int devsock_connect(const char *name, char *path, size_t len, GError **err);

/* Send one message `text` (n bytes) with descriptors fds[0..nfds) (at most
 * DEVSOCK_MAX_FDS) attached (SCM_RIGHTS), not blocking.  Returns 0, or
 * -errno (-EMSGSIZE for a short send). */
int devsock_send(int fd, const char *text, size_t n, const int *fds, int nfds);

/* Receive the server's one message into text (cap bytes, NUL-terminated)
 * and up to `max` of its descriptors into fds (*nfds of them; any beyond
 * are closed).  Returns the message's length, or -errno. */
ssize_t devsock_receive(int fd, char *text, size_t cap, int *fds, int max, int *nfds);

#define DEVSOCK_MAX_FDS 4

#endif
