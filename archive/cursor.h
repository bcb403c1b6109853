/* cursor.h — where a client is in a packet device's numbering
 * (libdev/packet.h "History"), kept in a small file so that a restarted
 * client resumes after the last message it handled and misses nothing the
 * service's history still holds: chorus-mqtt's inputs (docs/mqtt.md
 * "Restarts", files cursor.detections and cursor.locations in its queue
 * directory) and collab's detect/events (collab.cursor in its state
 * directory, docs/protocol.md "Catching up").
 *
 * The file holds "BOOT NEXT\n" (the device instance and the next sequence
 * number not yet handled) and is written atomically (archive/durable.h)
 * after each message is handled: a crash between the two repeats that
 * message once (at least once), never loses one.
 */
#ifndef CHORUS_ARCHIVE_CURSOR_H
#define CHORUS_ARCHIVE_CURSOR_H

#include <glib.h>
#include <stdint.h>

/* Read dir/name into *boot, *next.  A missing file is no cursor (both 0,
 * TRUE).  FALSE + *err for a file that cannot be read or is not two
 * positive numbers (both then 0: the caller starts afresh, and says so). */
gboolean archive_cursor_load(const char *dir, const char *name, uint64_t *boot, uint64_t *next, GError **err);

/* Write dir/name atomically.  FALSE + *err. */
gboolean archive_cursor_save(const char *dir, const char *name, uint64_t boot, uint64_t next, GError **err);

#endif
