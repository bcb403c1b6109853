/* share.h — detections shared between nodes over UDP, and caught up after
 * an outage (docs/protocol.md "Shared detections", "Catching up").
 *
 * The datagrams are sharemsg.h's.  With the field's key every one carries
 * an HMAC-SHA256 mac, checked; its boot and sequence number then go through
 * a replay window per sending node and kind (libdev/replay.h), so a
 * recorded datagram sent again is refused.  Every field of a detection is
 * range-checked (det_event_check).  Sent to a broadcast (or any) address
 * and port; every node binds the port with SO_REUSEADDR/SO_REUSEPORT so
 * several simulated nodes share one host.
 *
 * With an outbox (outbox.h) a node queues every detection it shares on disk
 * and numbers it; every have_ms it says what it queues (HAVE), and a node
 * that finds holes in another's numbering — detections it missed while a
 * radio was down or the field was split — asks for them (WANT, at the same
 * period while they are missing).  The asked node resends them, oldest
 * first and at most resend_per_s, marked late; every node takes each
 * detection once (seen.h: a resend it holds is a duplicate), so catching up
 * delivers each missed detection, in its sender's order, exactly once.
 * A node heard for the first time (one cut off from its very start) is
 * asked which of its ids it queued while this one listened (WANT
 * since_ms=, answered by a HAVE to= since=): those are missed too, not
 * history (seen.h).
 * Without an outbox sharing is soft state, as before: a lost datagram loses
 * that node's arrival for the call.
 */
#ifndef CHORUS_COLLAB_SHARE_H
#define CHORUS_COLLAB_SHARE_H

#include <glib.h>

#include "apps/collab/outbox.h"
#include "apps/detect/event.h"

typedef struct collab_share collab_share;

/* A received, well-formed, authentic, fresh detection from another node,
 * taken once; late: COLLAB_LATE_* bits (sharemsg.h), 0 for news —
 * RESENT a resend of one queued while this node could not hear it, HELD
 * one its sender held until its onset converted. */
typedef void (*collab_share_fn)(void *user, const det_event *e, guint late);

typedef struct {
	uint32_t self;       /* this node (its own datagrams, looped back, are ignored) */
	const char *address; /* IPv4 literal to send to (broadcast allowed) */
	int port;            /* UDP port, bound on every address */
	const uint8_t *key;  /* the field's key, or NULL: no MAC sent or required */
	size_t klen;
	uint64_t boot;        /* this collab's boot number */
	uint32_t max_senders; /* replay windows kept (>= 1) */
	/* Whether node `peer` can reach us now at all (NULL: always): a
	 * datagram from one that cannot is dropped and counted.  chorus-sim's
	 * radio answers it in simulation (syncd/rxfilter.h `reachable`), so a
	 * node's outage cuts its shares too. */
	gboolean (*reachable)(void *ctx, uint32_t peer);
	void *reachable_ctx;
	/* Catching up (NULL: none): this node's queue, not owned; ids tracked
	 * per node (seen.h span: the outbox bound); HAVE/WANT period (0:
	 * 2000 ms); resends per second at most (0: 200). */
	collab_outbox *outbox;
	uint32_t span;
	guint have_ms;
	guint resend_per_s;
	/* Before a queued detection is resent (NULL: as queued): may time
	 * *e again (collab: its onset converted now, across the outage it was
	 * made in); TRUE when it did (counted as retimed). */
	gboolean (*retime)(void *ctx, det_event *e);
	void *retime_ctx;
	/* This node's cpu clock, ns (the clock of det_event.cpu_ns; NULL: no
	 * WANT since_ms= is asked or answered).  How long this node has
	 * listened, and which of its queued ids a node asks about, are
	 * measured on it. */
	int64_t (*now_cpu)(void *ctx);
	void *now_ctx;
} collab_share_cfg;

/* Bind and get ready to send.  Malformed, unauthenticated and replayed
 * datagrams are counted and logged (rate-limited), never fatal.  NULL +
 * *err. */
collab_share *collab_share_new(const collab_share_cfg *cfg, collab_share_fn fn, void *user, GError **err);

/* Queue e (with an outbox) and send it to every node; late: 0, or
 * COLLAB_LATE_HELD when it is not news (a detection whose global time came
 * later, held.h), so receivers take it as a late one.  Returns 0 or a negative errno (of the send; a
 * queue that failed is counted in the outbox's write_errors). */
int collab_share_send(collab_share *s, const det_event *e, guint late);

typedef struct {
	guint64 sent, accepted;
	guint64 rejected; /* malformed or out of range */
	guint64 bad_auth; /* no or a wrong mac on a keyed field */
	guint64 replays;  /* refused by the replay windows */
	guint64 cut_off;  /* from a node that could not reach us then (reachable) */
	/* catching up */
	guint64 late;                 /* detections taken late (resends we lacked) */
	guint64 duplicates;           /* resends we held already, or from before we listened */
	guint64 have_sent, want_sent; /* HAVE and WANT datagrams sent */
	guint64 wanted;               /* ids other nodes asked this one for */
	guint64 resent;               /* detections resent */
	guint64 gone;                 /* asked for but no longer queued here */
	guint64 retimed;              /* resent with their onset timed again (cfg.retime) */
	guint pending;                /* resends waiting for their turn */
	guint64 missing, lost;        /* of others' detections: missing now; given up */
	guint64 since_sent;           /* WANT since_ms= sent (nodes first heard) */
	guint64 since_answered;       /* WANT since_ms= answered (HAVE to= since=) */
	guint64 pulled;               /* ids of nodes first heard queued while we listened, asked for */
} collab_share_stats;

/* Datagrams sent, accepted and refused. */
void collab_share_counts(const collab_share *s, collab_share_stats *st);

/* The last refused datagram's reason ("" when none). */
const char *collab_share_last_refusal(const collab_share *s);

/* Build the DET datagram for e, without outbox id (pure: for tests and
 * tools; collab_msg_encode builds every kind). */
GString *collab_share_encode(const det_event *e, uint64_t boot, uint32_t sseq, const uint8_t *key, size_t klen);

/* Check and parse a DET datagram: 0 with *e, *boot, *sseq, or -EBADMSG (not
 * a version 2 DET datagram, malformed, out of range) / -EACCES (mac missing
 * or wrong when klen > 0) with the reason in why[len] (pure). */
int collab_share_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, det_event *e, uint64_t *boot,
			uint32_t *sseq, char *why, size_t len);

void collab_share_free(collab_share *s);

#endif
