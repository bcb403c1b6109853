/* follow.h — ring followers: clients woken by the capture thread itself
 * the moment frames are committed to the ring (issue 17;
 * docs/architecture.md §4.5, docs/protocol.md "audio follow").
 *
 * The sensor device audio/<k>/data hands frames over a socket from the main
 * loop: the capture thread queues an event, the main loop wakes, copies the
 * frames into every client's socket, the client wakes.  On a two-core machine
 * each wakeup of a sleeping thread costs tens of microseconds, and the
 * copies grow with the clients.  A follower instead maps the ring (as bulk
 * readers do) and holds an eventfd that the capture thread writes right
 * after each commit: one hop, no copy through audiod, and the client reads
 * the frames straight from the shared ring.
 *
 * Server side, two halves:
 *   follow_set     the eventfds of the connected followers; the capture
 *                  thread notifies them (thread-safe, never blocks);
 *   followserver   the device audio/<k>/follow (SOCK_SEQPACKET): a client
 *                  that connects receives "CHFOLLOW 1 <frame_bytes>
 *                  <capacity>" with two descriptors, the ring's memfd and
 *                  its own eventfd, and keeps the connection open; its
 *                  hangup removes it.  At most `max` followers: one more is
 *                  sent "CHFOLLOW refused: N followers (the most)" and closed.
 * The client side is audiod/follower.h.
 */
#ifndef CHORUS_AUDIOD_FOLLOW_H
#define CHORUS_AUDIOD_FOLLOW_H

#include <glib.h>
#include <stdint.h>

#include "audiod/ring.h"

typedef struct follow_set follow_set;

/* An empty set (at most `max` members). */
follow_set *follow_set_new(unsigned max);

/* Free (the eventfds belong to whoever added them).  NULL is fine. */
void follow_set_free(follow_set *s);

/* Add eventfd `fd`.  Returns 0, or -ENOSPC when the set is full. */
int follow_set_add(follow_set *s, int fd);

/* Remove `fd` (no-op when absent).  After it returns, no notify writes to
 * fd any more, so the caller may close it. */
void follow_set_remove(follow_set *s, int fd);

/* Capture thread, after a commit: add 1 to every member's eventfd.  Never
 * blocks (the eventfds are non-blocking; a counter cannot fill in practice).
 * Returns the writes that failed; *members (may be NULL) the members
 * written to. */
unsigned follow_set_notify(follow_set *s, unsigned *members);

/* Members now, and notify calls / failed writes so far. */
void follow_set_counts(follow_set *s, unsigned *members, uint64_t *notifies, uint64_t *failed);

typedef struct followserver followserver;

/* Listen on device `name` (mode `mode`, 0 = 0660) for followers of ring
 * `r`, registering their eventfds in `set`, on ctx.  NULL + *err. */
followserver *followserver_new(const char *name, unsigned mode, audio_ring *r, follow_set *set, GMainContext *ctx,
			       GError **err);

/* Followers served since start, and refused (set full, or a descriptor
 * could not be had). */
void followserver_counts(const followserver *s, uint64_t *served, uint64_t *refused);

/* Disconnect every follower, close and remove the socket.  NULL is fine. */
void followserver_free(followserver *s);

#endif
