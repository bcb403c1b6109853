/* cursor.h — where chorus-mqtt is in each input's numbering (libdev/packet.h
 * "History"), kept in its queue directory so that a restarted chorus-mqtt
 * resumes after the last message it queued and misses nothing the
 * service's history still holds (docs/mqtt.md "Restarts").
 *
 * One small file per input, `cursor.<input>`, text "BOOT NEXT\n" (the
 * device instance and the next sequence number not yet queued), written
 * atomically (archive/durable.h) after each message is queued: a crash
 * between the two repeats that message once (at least once, like the
 * broker's QoS 1), never loses one.
 */
#ifndef CHORUS_MQTT_CURSOR_H
#define CHORUS_MQTT_CURSOR_H

#include <glib.h>
#include <stdint.h>

/* Read dir/cursor.<input> into *boot, *next.  A missing file is no cursor
 * (both 0, TRUE).  FALSE + *err for a file that cannot be read or is not
 * two positive numbers (both then 0: the caller starts afresh, and says
 * so). */
gboolean mqtt_cursor_load(const char *dir, const char *input, uint64_t *boot, uint64_t *next, GError **err);

/* Write dir/cursor.<input> atomically.  FALSE + *err. */
gboolean mqtt_cursor_save(const char *dir, const char *input, uint64_t boot, uint64_t next, GError **err);

#endif
