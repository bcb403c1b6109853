/* share.h — detections shared between nodes over UDP (docs/protocol.md
 * "Shared detections").
 *
 * Datagram (text):
 *   "CHORUS-COLLAB 2 DET boot=B sseq=S " + the detection's text
 *   (apps/detect/event.h) [+ " mac=" + 64 hex digits]
 * B is the sending collab's boot number (libdev/bootid.h), S its sequence
 * number of shared detections.  With the field's key the mac, an
 * HMAC-SHA256 under the key of every byte before " mac=", is required and
 * checked; B and S then go through a replay window per sending node
 * (libdev/replay.h), so a recorded datagram sent again is refused.  Every
 * field of the detection is range-checked (det_event_check).  Sent to a
 * broadcast (or any) address and port; every node binds the port with
 * SO_REUSEADDR/SO_REUSEPORT so several simulated nodes share one host.
 * Soft state: a lost datagram loses that node's arrival for the call; there
 * is no retransmission (the call is over by then anyway).
 */
#ifndef CHORUS_COLLAB_SHARE_H
#define CHORUS_COLLAB_SHARE_H

#include <glib.h>

#include "apps/detect/event.h"

typedef struct collab_share collab_share;

/* A received, well-formed, authentic, fresh detection from another node. */
typedef void (*collab_share_fn)(void *user, const det_event *e);

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
} collab_share_cfg;

/* Bind and get ready to send.  Malformed, unauthenticated and replayed
 * datagrams are counted and logged (rate-limited), never fatal.  NULL +
 * *err. */
collab_share *collab_share_new(const collab_share_cfg *cfg, collab_share_fn fn, void *user, GError **err);

/* Send e to every node.  Returns 0 or a negative errno. */
int collab_share_send(collab_share *s, const det_event *e);

typedef struct {
	guint64 sent, accepted;
	guint64 rejected; /* malformed or out of range */
	guint64 bad_auth; /* no or a wrong mac on a keyed field */
	guint64 replays;  /* refused by the replay windows */
	guint64 cut_off;  /* from a node that could not reach us then (reachable) */
} collab_share_stats;

/* Datagrams sent, accepted and refused. */
void collab_share_counts(const collab_share *s, collab_share_stats *st);

/* The last refused datagram's reason ("" when none). */
const char *collab_share_last_refusal(const collab_share *s);

/* Build the datagram for e (pure: for tests and tools). */
GString *collab_share_encode(const det_event *e, uint64_t boot, uint32_t sseq, const uint8_t *key, size_t klen);

/* Check and parse a datagram: 0 with *e, *boot, *sseq, or -EBADMSG (not a
 * version 2 datagram, malformed, out of range) / -EACCES (mac missing or
 * wrong when klen > 0) with the reason in why[len] (pure). */
int collab_share_decode(const char *buf, size_t n, const uint8_t *key, size_t klen, det_event *e, uint64_t *boot,
			uint32_t *sseq, char *why, size_t len);

void collab_share_free(collab_share *s);

#endif
