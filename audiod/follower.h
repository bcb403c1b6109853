/* follower.h — the client side of a ring follower (audiod/follow.h): map
 * audiod's ring and be woken by its capture thread the moment frames are
 * committed, then read them straight from shared memory.
 *
 * For local clients that want the lowest latency (a detector, a live
 * spectrogram).  Remote and simple clients keep the sensor device
 * audio/<k>/data, which also serves frames older than the ring (the
 * archive) and requests by time.
 *
 *   ring_follower *f;
 *   ring_follow_open("audio/0/follow", RING_FOLLOW_FROM_NEXT, &f, &err);
 *   while (ring_follow_wait(f, -1) > 0)
 *       while ((n = ring_follow_read(f, buf, max, &first, &lost)) > 0)
 *           ... frames [first, first + n); `lost` frames were overwritten
 *               before this reader got to them ...
 *
 * Two descriptors for a main loop: ring_follow_fd (readable when frames
 * were committed) and ring_follow_conn_fd (readable or hung up when audiod
 * went away; the mapping stays valid, so what was read is intact).
 * Frames lost by audiod (an overrun) are zeros in the ring and listed in
 * its gap table: audio_ring_has_gap(ring_follow_ring(f), first, n).
 * Errors are negative errno values.  Not thread-safe: one reader per follower.
 */
#ifndef CHORUS_AUDIOD_FOLLOWER_H
#define CHORUS_AUDIOD_FOLLOWER_H

#include <glib.h>
#include <stdint.h>

#include "audiod/ring.h"

/* Start at the frame after the last one committed when the follower opens. */
#define RING_FOLLOW_FROM_NEXT INT64_MIN

typedef struct ring_follower ring_follower;

/* Connect to device `name` (audio/<k>/follow) and map the ring; the first
 * frame read is `from` (RING_FOLLOW_FROM_NEXT: the next one committed; an
 * index older than the ring holds starts at the oldest and counts the rest
 * as lost).  Returns 0 and *out, or -errno with err set (the path and why):
 * -ENOENT no such device, -EBUSY refused (its text says why), -EBADMSG not
 * a follow device. */
int ring_follow_open(const char *name, int64_t from, ring_follower **out, GError **err);

/* The eventfd the capture thread writes after each commit. */
int ring_follow_fd(const ring_follower *f);

/* The connection to audiod: readable (EOF) or hung up once audiod closed it. */
int ring_follow_conn_fd(const ring_follower *f);

/* The mapped ring (its header, its gap table). */
const audio_ring *ring_follow_ring(const ring_follower *f);

/* The next frame this follower will read. */
int64_t ring_follow_cursor(const ring_follower *f);

/* Wait up to timeout_ms (-1: forever) until frames past the cursor are
 * committed.  Returns 1 when there are, 0 on timeout, -EPIPE when audiod
 * went away (frames already committed stay readable), or -errno of poll. */
int ring_follow_wait(ring_follower *f, int timeout_ms);

/* Copy up to `max` frames from the cursor into dst (max * frame_bytes) and
 * advance past them; *first is the index of the first.  When the cursor
 * fell behind the oldest frame the ring holds, it moves there and *lost
 * (may be NULL) is the frames skipped, else 0.  Returns the frames copied,
 * 0 when nothing new is committed. */
long ring_follow_read(ring_follower *f, void *dst, uint64_t max, int64_t *first, uint64_t *lost);

/* Disconnect and unmap.  NULL is fine. */
void ring_follow_free(ring_follower *f);

#endif
