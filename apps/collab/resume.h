/* resume.h — collab's place in detect/events across its own restarts
 * (docs/protocol.md "Catching up"): the cursor (archive/cursor.h) in the
 * state directory, beside the outbox, saved after every detect/events
 * message; on start collab subscribes from it (libdev/packet_sub.h
 * dev_packet_sub_new_from), and detect's history replays what it heard
 * while collab was down.  Such a detection — of a call that ended before
 * this collab started — is shared and grouped late, as caught up
 * (COLLAB_LATE_RESENT), unless it is older than the queue keeps detections
 * (it is then counted and dropped: nothing in the field groups it any
 * more).  A crash between handling a message and saving the cursor
 * repeats that one message (the share is idempotent for the other nodes:
 * seen.h drops a repeat).
 */
#ifndef CHORUS_COLLAB_RESUME_H
#define CHORUS_COLLAB_RESUME_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"

typedef struct collab_resume collab_resume;

/* The file of the cursor in the state directory. */
#define COLLAB_CURSOR "collab.cursor"

/* Load the cursor from dir (a damaged file is logged, and collab takes new
 * detections only); this start is at cpu time start_cpu_ns; detections
 * are kept keep_s seconds ([collab] queue_s).  Never NULL. */
collab_resume *collab_resume_new(const char *dir, int64_t start_cpu_ns, double keep_s);

void collab_resume_free(collab_resume *r);

/* The cursor to subscribe from (0, 0: none, new detections only). */
void collab_resume_from(const collab_resume *r, uint64_t *boot, uint64_t *next);

/* How to take this node's detection e: 0 (live), COLLAB_LATE_RESENT
 * (replayed from detect's history), or *expired (too old: drop it). */
guint collab_resume_classify(collab_resume *r, const det_event *e, gboolean *expired);

/* Message (boot, seq) of detect/events is handled: save the cursor past
 * it.  FALSE + *err (counted; a restart then repeats what came since). */
gboolean collab_resume_save(collab_resume *r, uint64_t boot, uint64_t seq, GError **err);

/* Append "resume cursor=B:N from=B0:N0 replayed=… expired=…
 * cursor_errors=…\n"; (boot, next) is the subscription's cursor now. */
void collab_resume_describe(const collab_resume *r, uint64_t boot, uint64_t next, GString *out);

#endif
