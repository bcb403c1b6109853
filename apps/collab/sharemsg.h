/* sharemsg.h — the datagrams collab nodes exchange (docs/protocol.md
 * "Shared detections", "Catching up").  Pure codec: no I/O, no clocks.
 *
 * Every datagram is text:
 *   "CHORUS-COLLAB 2 " KIND " boot=B sseq=S " BODY [" mac=" 64 hex digits]
 * B is the sending collab's boot number, S its sequence number of datagrams
 * of that KIND (each kind has its own replay window); with the field's key
 * the mac, HMAC-SHA256 of every byte before " mac=", is required.  KINDs:
 *
 *   DET   [ob=E oid=I] [late=W] DETECTION      (apps/detect/event.h)
 *         A detection of the sending node.  E is its outbox's epoch and I
 *         the detection's outbox id (outbox.h); late=W (1..3, the bits of
 *         COLLAB_LATE_*) marks a resend of one queued earlier (1), or one
 *         whose global time came later (2, held.h).  Senders without an
 *         outbox send neither (and older receivers ignore both:
 *         det_event_parse skips unknown keys).
 *   HAVE  node=N ob=E first=F last=L [to=M since=K]
 *         Node N queues ids F..L of outbox epoch E (F = L + 1: none).
 *         Sent every few seconds; a receiver's holes in F..L are missed
 *         detections.  With to= and since=, also the answer to node M's
 *         WANT since_ms=: K is the first id N queued within the time M
 *         asked about (L + 1: none).
 *   WANT  node=N from=M ob=E ids=A-B[,C-D…]
 *         Node M asks node N to resend those ids of its epoch E (at most
 *         COLLAB_WANT_MAX_RANGES ranges).
 *   WANT  node=N from=M ob=E since_ms=U
 *         Node M, which first heard N now and has listened for U ms, asks
 *         which of N's queued ids are from those U ms (its HAVE to=M
 *         since=K answers; M then asks for them by id).
 */
#ifndef CHORUS_COLLAB_SHAREMSG_H
#define CHORUS_COLLAB_SHAREMSG_H

#include <glib.h>
#include <stdint.h>

#include "apps/detect/event.h"

#define COLLAB_WANT_MAX_RANGES 16
#define COLLAB_SINCE_MAX_MS (400ull * 24 * 3600 * 1000) /* since_ms= at most (400 days) */

/* Why a detection (and so a group, a result) is late: bits. */
#define COLLAB_LATE_RESENT 1u /* caught up: resent to a node that could not hear it first */
#define COLLAB_LATE_HELD 2u   /* held until its onset converted to global time (held.h) */
#define COLLAB_LATE_ALL (COLLAB_LATE_RESENT | COLLAB_LATE_HELD)
/* Local to a node's groups, never on the wire (not in COLLAB_LATE_ALL): a
 * detection timed again after the node joined another root's timescale
 * (group.h collab_grouper_retime). */
#define COLLAB_LATE_RETIMED 4u

typedef enum { COLLAB_MSG_DET = 1,
	       COLLAB_MSG_HAVE = 2,
	       COLLAB_MSG_WANT = 3 } collab_msg_kind;

typedef struct {
	collab_msg_kind kind;
	uint64_t boot;
	uint32_t sseq;
	uint32_t sender; /* DET: e.node; HAVE: node; WANT: from */
	uint64_t epoch;  /* ob= (DET: 0 when absent) */
	/* DET */
	det_event e;
	uint64_t oid; /* 0 when absent */
	guint late;   /* COLLAB_LATE_* bits, 0: news */
	/* HAVE */
	uint64_t first, last;
	uint64_t since; /* since=: the first id of the asked span (0: absent) */
	/* WANT; HAVE with since: to= */
	uint32_t asked; /* node= / to= : who is asked, or answered */
	guint n_ranges;
	uint64_t ranges[COLLAB_WANT_MAX_RANGES][2];
	uint64_t since_ms; /* WANT since_ms= (then no ranges; 0: absent) */
} collab_msg;

/* The datagram for m (its kind's fields), with a mac when klen > 0. */
GString *collab_msg_encode(const collab_msg *m, const uint8_t *key, size_t klen);

/* Check and parse a datagram of n bytes: 0 with *m, or -EBADMSG (not a
 * version 2 datagram, malformed, out of range) / -EACCES (mac missing or
 * wrong when klen > 0), with the reason in why[len]. */
int collab_msg_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, collab_msg *m, char *why, size_t len);

#endif
