/* outbox.h — the detections this node shared, queued on disk so that nodes
 * that missed them (a radio down, a partition) can ask for them later
 * (docs/protocol.md "Catching up").
 *
 * Every detection collab shares gets the next outbox id (1, 2, …) and is
 * appended to the queue file, one line "ID DETECTION" (apps/detect/event.h),
 * written and fdatasync'ed before it is sent, so a detection a node heard is
 * never lost to a crash between sharing and the radio coming back.  The
 * first line names the queue's epoch (a random number drawn when the file is
 * made: the numbering's identity) and the next id:
 *     chorus-collab-outbox 1 epoch=E next=N
 * The queue is bounded: at most max_entries, none older than max_age_ns of
 * the node's cpu clock; older ones are dropped (counted).  The file is
 * rewritten (temporary file, fsync, rename) when it holds twice the live
 * entries.  On open a torn last line (a crash mid-write) is dropped and
 * counted; any other malformed line is an error naming the file and line.
 */
#ifndef CHORUS_COLLAB_OUTBOX_H
#define CHORUS_COLLAB_OUTBOX_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"

typedef struct collab_outbox collab_outbox;

/* Open (or create) the queue file path.  NULL + *err (which file, which
 * line, why). */
collab_outbox *collab_outbox_open(const char *path, guint max_entries, int64_t max_age_ns, GError **err);

void collab_outbox_free(collab_outbox *o);

/* Queue e (durably) and give it its id in *id.  0, or a negative errno when
 * the file could not take it (the detection then has an id and is held in
 * memory, but would not survive a restart: the caller says so on status). */
int collab_outbox_add(collab_outbox *o, const det_event *e, int64_t now_cpu_ns, uint64_t *id);

/* The queued detection with this id, or NULL (never queued, or dropped). */
const det_event *collab_outbox_get(const collab_outbox *o, uint64_t id);

/* The ids queued: first..last (first = last + 1 when none). */
void collab_outbox_range(const collab_outbox *o, uint64_t *first, uint64_t *last);

/* The first (lowest) id queued with its onset at or after t_cpu_ns on this
 * node's cpu clock; last + 1 when none (a peer asking what was queued
 * while it listened: WANT since_ms=, share.h). */
uint64_t collab_outbox_first_since(const collab_outbox *o, int64_t t_cpu_ns);

/* The queue's epoch (never 0). */
uint64_t collab_outbox_epoch(const collab_outbox *o);

/* Drop entries older than max_age_ns at now_cpu_ns.  Returns how many. */
guint collab_outbox_expire(collab_outbox *o, int64_t now_cpu_ns);

typedef struct {
	guint queued;           /* entries now */
	guint64 added, dropped; /* ever added; dropped by the bounds */
	guint64 write_errors;   /* adds the file did not take */
	guint64 torn;           /* torn lines dropped at open */
	guint64 rewrites;       /* compactions */
} collab_outbox_stats;

void collab_outbox_counts(const collab_outbox *o, collab_outbox_stats *st);

/* The file's path. */
const char *collab_outbox_path(const collab_outbox *o);

#endif
