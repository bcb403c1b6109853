/* group.h — grouping the detections of one call across nodes (pure).
 *
 * A sound reaches every node of the array within the acoustic aperture
 * A = (largest inter-node distance) / c of its first arrival, so detections
 * (global onset g_i, standard error s_i) belong together when
 *     |g_i - g_first| <= A + margin + 3 s_i,
 * one per node (a second detection from the same node within the window is
 * the next call, and starts a group of its own), and of the same kind: the
 * same profile and the same matched template (two species calling at once
 * are two calls; template 0, no match, is compatible with any), or two
 * templates the profile names one call type (det_event.call: the forms of
 * one call, which nodes may match differently).  A group stays open for
 * `hold` of local time after it was created, long enough for the farthest
 * node's detection to cross the network, then it is handed out once; one
 * too small to be tested waits longer (collab_grouper_hold_more).
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
 * off).  With a history (collab_grouper_keep), closed groups are
 * remembered for keep_ns.  A late detection joins an open group as usual; failing that
 * it joins the closed group it belongs to.  A closed group that had fewer
 * than min_nodes detections when it closed — never located — and now has
 * min_nodes is opened again, late, and closes `hold` later like any other,
 * so every node hands it out once more and the rule picks its one reporter.
 * A closed group that was large enough when it closed was located then: a
 * late detection is kept with it and nothing more happens (one call, one
 * answer) — unless it closed with too few to be tested (fewer than the
 * tested_nodes of collab_grouper_hold_more, and its answer `untested`): it
 * is remembered whole, and when late detections bring it to tested_nodes
 * it opens again (`again`), and the node that reported it answers it a
 * second time, superseding its first answer (docs/protocol.md: the chaos
 * soak's start-up, where two nodes' detections were held until their
 * clocks converged, and the call was answered from the four in time).
 * A late detection belonging to no group opens one.
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
	GArray *resent;     /* uint32 nodes whose detection here came as a resend (missed live:
			     * COLLAB_LATE_RESENT), or NULL */
	guint64 id;         /* the grouper's number for the call (kept when the group opens again) */
	gboolean again;     /* answered untested once, completed by late detections since and open
			     * again: `reporter` answers it again (collab_group_reporter) */
	uint32_t reporter;  /* with again: the node that reported it when it closed */
} collab_group;

typedef struct collab_grouper collab_grouper;

/* A grouper with aperture and margin in ns (window = aperture + margin +
 * 3 se) and groups held for hold_ns.  Never fails. */
collab_grouper *collab_grouper_new(int64_t aperture_ns, int64_t margin_ns, int64_t hold_ns);

void collab_grouper_free(collab_grouper *g);

/* Remember closed groups for keep_ns (at most max_groups of each sort,
 * the oldest forgotten first); min_nodes: the fewest a located group had.
 * A group that closed too small is remembered whole (late detections may
 * complete it); a located one only as what a late detection is matched
 * against (earliest onset, kind, each detection's node and seq), in a ring
 * of max_groups fixed-size records mapped and faulted in here, so the
 * hour of calls remembered by default takes its memory at start-up
 * (about 160 bytes a group; 4096: 640 kB) instead of growing the process
 * as it fills (a whole group of six took 1.1 kB). */
void collab_grouper_keep(collab_grouper *g, guint min_nodes, int64_t keep_ns, guint max_groups);

/* A group with fewer than tested_nodes detections — too few for an
 * answer that can be tested: fewer than min_nodes, or min_nodes with the
 * sources' height unknown — stays open hold_more_ns (when longer than
 * hold) instead of hold_ns: a detector publishes a call that others
 * overlap when the last of them ends, a second or more after the nodes
 * that heard it alone (seen in the chaos soak: four nodes' detections
 * within the hold, two more after it, and the call `untested` where six
 * arrivals would have tested it).  Never set (0): every group waits hold. */
void collab_grouper_hold_more(collab_grouper *g, guint tested_nodes, int64_t hold_more_ns);

/* Add detection e received at caller time now_ns.  Returns 1 when it joined
 * an open group, 0 when it opened one, -EINVAL without global time, -EALREADY
 * for a duplicate (same node and seq already held). */
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

/* What a collab_retime_fn found for one detection (collab_grouper_retime). */
enum {
	COLLAB_RETIME_UNKNOWN = -2, /* another node's whose onset does not convert here: its timescale unknown */
	COLLAB_RETIME_LOST = -1,    /* its onset converts to global no more: out of the grouper */
	COLLAB_RETIME_SAME = 0,     /* its global time stands */
	COLLAB_RETIME_MOVED = 1,    /* *e has its new global time (and s.e.) */
};
/* Re-converts detection e's onset to global now; returns COLLAB_RETIME_*. */
typedef int (*collab_retime_fn)(void *ctx, det_event *e);
/* After the caller's global timescale changed (its node joined another
 * root's: a node cut off from its start, the losing side of a partition),
 * the detections already grouped carry times on the old one, seconds from
 * the new: a late detection on the new one would join a group of another
 * call.  Every detection in an open group and in a remembered small group
 * is offered to fn: MOVED ones leave their group and are added again as
 * late detections (late bits `why`) on their new time, LOST ones leave it
 * and are appended to `lost` (det_event, as they were; may be NULL), and a
 * group left empty is dropped.  An UNKNOWN one (another node's, whose
 * clocks this node cannot convert: a partition rejoining, the other
 * node's pairs not yet fitted here) was timed on the timescale of the
 * group it is in: when every member fn could convert moved, by one shift
 * (the old and the new timescale differ by an offset and a rate, which
 * over one call's aperture is one offset), it moves by their mean shift,
 * its s.e. grown by their spread and the mean's own; otherwise it stays
 * (before, it always stayed: the call was grouped differently on nodes
 * that could convert different sets, two reporters or none).  Located
 * groups' records stay (their calls were answered on the timescale of the
 * time).  Returns how many moved. */
guint collab_grouper_retime(collab_grouper *g, collab_retime_fn fn, void *ctx, int64_t now_ns, guint why,
			    GArray *lost);
/* Closed groups remembered. */
guint collab_grouper_kept(const collab_grouper *g);

/* Closed groups (held for hold_ns): moved into `out` (collab_group *,
 * free with collab_group_free), a copy of each remembered when keeping
 * history; remembered ones older than keep_ns forgotten.  With a history, a
 * group that closes takes in the remembered groups that closed too small
 * and belong to its call (every detection of theirs could join it: no node
 * twice, the same kind, within the window): the call's first detections
 * came, and the hold closed on them, before the rest (a detector publishes
 * a call overlapped by others when the last of them ends, a second or more
 * after the first onset; seen in the chaos soak: three nodes' detections in
 * time, three 0.76 s later).  A small group holding a node the closing one
 * has too gives it the detections that fit it alone (collab_grouper_moved).
 * Returns how many closed. */
guint collab_grouper_poll(collab_grouper *g, int64_t now_ns, GPtrArray *out);

/* Two callers of one kind calling within the array's aperture of each
 * other (two frogs of one species 50 ms apart) have their detections in
 * two open groups, each detection in the one whose first onset is
 * nearest — which mixes the callers at some nodes (partition.h).  With
 * fn set, when a group closes and another open group of its kind has its
 * first onset within the window of its own, fn is offered both groups'
 * detections: pool[0..n) with side[i] 0 (the closing group's) or 1 (the
 * other's); it returns 1 with side[] rewritten (each node at most once
 * per side) to regroup them, or 0 (or less) to leave them.  Detections
 * keep their resend marks.  Never set (NULL): nothing is regrouped. */
typedef int (*collab_split_fn)(void *ctx, const det_event *pool, int n, int *side);
void collab_grouper_split(collab_grouper *g, collab_split_fn fn, void *ctx);

/* Pairs of open groups fn regrouped (poll). */
guint64 collab_grouper_splits(const collab_grouper *g);

/* Small groups merged into a later group of their call so far (poll). */
guint64 collab_grouper_merged(const collab_grouper *g);

/* Detections moved alone from a small group into a later group of their
 * call so far (poll: the small group held a node the later one has). */
guint64 collab_grouper_moved(const collab_grouper *g);

/* Groups still open. */
guint collab_grouper_open(const collab_grouper *g);

/* The node that reports group gr under the rule above: the earliest
 * detection's; for a group open `again`, the node that reported it when it
 * closed (it answered it once: its second answer supersedes its first). */
uint32_t collab_group_reporter(const collab_group *gr);

/* Whether gr's call was answered by other nodes without this one: at
 * least min_nodes of its detections, none of them the reporter's, came
 * here as resends (COLLAB_LATE_RESENT: this node missed them live, its
 * radio down or the field split).  Those nodes heard each other then (an
 * outage cuts a node both ways) and had enough to locate the call; their
 * reporter, the earliest of them, did.  This node, whose own detection is
 * the earliest now, would report the call a second time (the chaos soak:
 * 20 of 20 pairs of ok answers of one call were so).  Only the calls the
 * others could not complete (fewer than min_nodes of theirs) are this
 * node's to solve (issue 16: a node cut off solves the calls only it
 * could complete).  A link that fails one way only (this node heard by
 * all, hearing none) would leave such a call unanswered; not modelled. */
gboolean collab_group_answered_elsewhere(const collab_group *gr, guint min_nodes);

void collab_group_free(collab_group *gr);

#endif
