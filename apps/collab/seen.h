/* seen.h — which of each node's queued detections this node holds, and
 * which it is missing (docs/protocol.md "Shared detections", "Catching up").
 *
 * Every node numbers the detections it shares (outbox ids, outbox.h: 1, 2,
 * … for as long as its state directory lasts).  A receiver remembers, per
 * sending node, the ids it has had since it first heard that node in this
 * run (its base): a resent detection it already holds is a duplicate, and a
 * hole between the base and the newest id the sender says it has (its HAVE,
 * share.h) is a detection missed while a radio was down — to be asked for
 * (WANT).  Ids below the base are history from before this node listened:
 * never asked for, and refused if they come (a node that restarts does not
 * pull the whole field's backlog).  But what a node queued while this one
 * listened and could not hear it — a node cut off from its very start,
 * heard now for the first time — is not history: when a node is first
 * heard this one asks it once (WANT since_ms=, up to SEEN_PULL_ASKS times
 * until answered) which of its ids are from the time it has listened, and
 * the answer lowers the base to the first of them (collab_seen_since), so
 * they are holes, asked for by id.  Ids the sender no longer queues (below
 * the first of its HAVE) are lost, counted and forgotten.
 *
 * At most `span` ids behind the newest are tracked per node (the outbox's
 * bound); older holes are given up as lost.  At most max_nodes nodes; one
 * more is refused, never evicting a known one.  Pure: no I/O, no clocks.
 */
#ifndef CHORUS_COLLAB_SEEN_H
#define CHORUS_COLLAB_SEEN_H

#include <glib.h>
#include <stdint.h>

typedef struct collab_seen collab_seen;

/* WANT since_ms= asked of a node first heard, at most, until answered. */
#define SEEN_PULL_ASKS 3

typedef enum {
	SEEN_NEW = 0, /* not held before: deliver it */
	SEEN_DUP,     /* held already (a resend this node had) */
	SEEN_BEFORE,  /* below the node's base: history from before we listened */
	SEEN_TOO_OLD, /* more than span behind the node's newest */
	SEEN_FULL,    /* a new node while max_nodes are tracked */
} collab_seen_verdict;

/* A table for at most max_nodes (>= 1) nodes, span (>= 1) ids each. */
collab_seen *collab_seen_new(uint32_t max_nodes, uint32_t span);

void collab_seen_free(collab_seen *s);

/* Judge and remember id (>= 1) of node's outbox `epoch` (outbox.h: a new
 * epoch is a new numbering, after the sender lost its state: the node is
 * tracked afresh).  `late`: a resend (for another node's catch-up); from a
 * node not heard before it is history (SEEN_BEFORE) and sets nothing, so
 * a node that has just started does not take in a backlog meant for
 * others. */
collab_seen_verdict collab_seen_add(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t id, gboolean late);

/* The sender `node` (outbox epoch) says it queues ids first..last (first <= last + 1;
 * first = last + 1: nothing queued).  Holes below `first` are counted lost
 * and forgotten.  A node never heard before is started at last + 1 (its
 * backlog is history).  Returns the holes now lost. */
uint64_t collab_seen_have(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t first, uint64_t last);

/* The ids missing from node, in [base, newest the sender claimed], as
 * inclusive ranges (pairs lo, hi appended to out as uint64_t), at most
 * max_ranges of them, oldest first, and the numbering's epoch in *epoch.
 * Returns the number of ids in them. */
uint64_t collab_seen_missing(const collab_seen *s, uint32_t node, GArray *out, guint max_ranges, uint64_t *epoch);

/* Nodes first heard whose answer to WANT since_ms= is still due (asked
 * fewer than SEEN_PULL_ASKS times), appended to out (uint32_t). */
void collab_seen_pulls(const collab_seen *s, GArray *out);

/* This node was asked (WANT since_ms= sent): one ask fewer left.  Returns
 * the node's epoch (for the WANT), 0 when it is not due. */
uint64_t collab_seen_pull_asked(collab_seen *s, uint32_t node);

/* The answer (HAVE to= since=): node's epoch-`epoch` ids from `since` on
 * were queued while this node listened.  The base comes down to since (not
 * below the span), so the ids between are missing.  Returns how many ids
 * that added; no further asks. */
uint64_t collab_seen_since(collab_seen *s, uint32_t node, uint64_t epoch, uint64_t since);

/* Nodes with at least one missing id, appended to out (uint32_t). */
void collab_seen_lacking(const collab_seen *s, GArray *out);

typedef struct {
	guint64 dups, before, too_old, full, lost;
	guint64 pulled;  /* ids taken in by answers to WANT since_ms= */
	guint64 missing; /* ids missing now, all nodes */
} collab_seen_stats;

void collab_seen_counts(const collab_seen *s, collab_seen_stats *st);

/* Short name of a verdict ("new", "dup", "before", "too_old", "full"). */
const char *collab_seen_name(collab_seen_verdict v);

#endif
