/* ringserver.h — hands the ring's memfd to bulk readers (SCM_RIGHTS).
 *
 * A socket at dev_path("audio/<k>/ring") (SOCK_SEQPACKET): a client that
 * connects receives one message, "CHRING 1 <frame_bytes> <capacity>", with
 * the memfd attached, and the connection is closed.  The client maps the fd
 * read-only (audiod/ring.h audio_ring_map).  Clients are counted.
 */
#ifndef CHORUS_AUDIOD_RINGSERVER_H
#define CHORUS_AUDIOD_RINGSERVER_H

#include <glib.h>

#include "audiod/ring.h"

typedef struct ringserver ringserver;

/* Listen on device `name` (mode `mode`) for ring `r` on ctx.  NULL + *err. */
ringserver *ringserver_new(const char *name, unsigned mode, audio_ring *r, GMainContext *ctx, GError **err);

/* Bulk readers served so far. */
guint64 ringserver_served(const ringserver *s);

/* Close and remove the socket (NULL is fine). */
void ringserver_free(ringserver *s);

/* Client side: connect to `name`, receive the memfd and map the ring.
 * Returns 0 and *out, or -errno (-ENOENT no such device, -EBADMSG not a
 * ring) with err set (AUDIOD_ERROR, code the errno, the path tried and
 * why; err may be NULL). */
int ring_bulk_open(const char *name, audio_ring **out, GError **err);

#endif
