/* group.h — grouping the detections of one call across nodes (pure).
 *
 * A sound reaches every node of the array within the acoustic aperture
 * A = (largest inter-node distance) / c of its first arrival, so detections
 * (global onset g_i, standard error s_i) belong together when
 *     |g_i - g_first| <= A + margin + 3 s_i,
 * one per node (a second detection from the same node within the window is
 * the next call, and starts a group of its own), and of the same kind: the
 * same profile and the same matched template (two species calling at once
 * are two calls; template 0, no match, is compatible with any).  A group stays open for
 * `hold` of local time after it was created, long enough for the farthest
 * node's detection to cross the network, then it is handed out once.
 *
 * Reporting rule (docs/protocol.md): every node groups the same shared
 * detections; of a closed group only the node whose detection is the
 * earliest (smallest global onset; ties by the lowest node id) reports it.
 * Each call is therefore located once, by the node nearest the source —
 * whose clip is also the cleanest reference.  Detections without global time
 * cannot be grouped and are ignored.  Times are int64 ns; no clocks are read
 * here: the caller passes `now_ns` (its cpu clock).
 *
 * Late detections (share.h: resends of detections a node missed while cut
 * off), and detections that come after their group closed too small.  With
 * a history (collab_grouper_keep), closed groups are remembered for
 * keep_ns.  A late detection joins an open group as usual; failing that
 * it joins the closed group it belongs to.  A closed group that had fewer
 * than min_nodes detections when it closed — never located — and now has
 * min_nodes is opened again, late, and closes `hold` later like any other,
 * so every node hands it out once more and the rule picks its one reporter.
 * A closed group that was large enough when it closed was located then: a
 * late detection is kept with it and nothing more happens (one call, one
 * answer).  A late detection belonging to no group opens one.
 */
#ifndef CHORUS_COLLAB_GROUP_H
#define CHORUS_COLLAB_GROUP_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"

typedef struct {
	GArray *dets;       /* det_event, sorted by global onset */
	int64_t created_ns; /* caller's clock when the group was created (or reopened) */
	int64_t first_ns;   /* earliest global onset, ns */
	guint late;         /* holds late detections: their COLLAB_LATE_* bits (sharemsg.h) */
} collab_group;

typedef struct collab_grouper collab_grouper;

/* A grouper with aperture and margin in ns (window = aperture + margin +
 * 3 se) and groups held for hold_ns.  Never fails. */
collab_grouper *collab_grouper_new(int64_t aperture_ns, int64_t margin_ns, int64_t hold_ns);

void collab_grouper_free(collab_grouper *g);

/* Remember closed groups for keep_ns (at most max_groups, the oldest
 * forgotten first); min_nodes: the fewest a located group had. */
void collab_grouper_keep(collab_grouper *g, guint min_nodes, int64_t keep_ns, guint max_groups);

/* What collab_grouper_add did besides opening (0) or joining (1). */
enum {
	COLLAB_ADD_REOPENED = 2, /* completed a group that closed too small: open again */
	COLLAB_ADD_KEPT = 3,     /* joined a group that closed too small, still too small */
};

/* Add detection e received at caller time now_ns.  Returns 1 when it joined
 * an open group, 0 when it opened one, -EINVAL without global time, -EALREADY
 * for a duplicate (same node and seq already held).  With a history
 * (collab_grouper_keep), a detection no open group takes joins the closed
 * group it belongs to when that group closed too small to be located: the
 * call's other detections came later than the hold (a detector that waits
 * for the end of a sound publishes a call overlapped by others only when
 * the last of them ends, a second or more after its onset).  Returns
 * COLLAB_ADD_REOPENED when that makes it min_nodes (it is open again, not
 * late, and closes `hold` later), COLLAB_ADD_KEPT when still too small.  A
 * closed group that was located is not joined (its answer stands): such a
 * detection opens a group of its own. */
int collab_grouper_add(collab_grouper *g, const det_event *e, int64_t now_ns);

/* What a late detection did (collab_grouper_add_late). */
enum {
	COLLAB_LATE_OPENED = 0,   /* opened a group of its own */
	COLLAB_LATE_JOINED = 1,   /* joined an open group */
	COLLAB_LATE_REOPENED = 2, /* completed a closed group: open again */
	COLLAB_LATE_KEPT = 3,     /* joined a closed group (located already, or still too small) */
};

/* Add a late detection as above, late for the reasons `why` (COLLAB_LATE_*
 * bits of sharemsg.h, added to its group's).  Returns COLLAB_LATE_OPENED
 * etc., or -EINVAL / -EALREADY as collab_grouper_add (a duplicate of one
 * held, open or closed). */
int collab_grouper_add_late(collab_grouper *g, const det_event *e, int64_t now_ns, guint why);

/* Time again every detection of `node` the grouper holds (open groups and
 * remembered closed ones): fn(ctx, e) may change e's global_ns and
 * global_se_ns and returns TRUE when it did; the groups are sorted again.
 * For a node's own detections after its outage: what it grouped them with
 * was its own time while cut off, and its peers' late detections of the
 * same calls come with the field's (collab re-times what it resends, and
 * must group its own copies alike).  Returns how many changed. */
guint collab_grouper_retime(collab_grouper *g, uint32_t node, gboolean (*fn)(void *ctx, det_event *e), void *ctx);

/* Closed groups remembered. */
guint collab_grouper_kept(const collab_grouper *g);

/* Closed groups (held for hold_ns): moved into `out` (collab_group *,
 * free with collab_group_free), a copy of each remembered when keeping
 * history; remembered ones older than keep_ns forgotten.  Returns how many
 * closed. */
guint collab_grouper_poll(collab_grouper *g, int64_t now_ns, GPtrArray *out);

/* Groups still open. */
guint collab_grouper_open(const collab_grouper *g);

/* The node that reports group gr under the rule above. */
uint32_t collab_group_reporter(const collab_group *gr);

void collab_group_free(collab_group *gr);

#endif
