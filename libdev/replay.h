/* replay.h — per-sender replay windows of chorus's network protocols (RBS,
 * collab's shared detections)
 * (docs/protocol.md "Replays").
 *
 * Every packet names its sender, its boot number (larger at every start of
 * the sender's syncd, libdev/bootid.h) and a sequence number per packet type;
 * the HMAC covers all three, so on a keyed network they cannot be forged.
 * A packet is fresh when its boot is the newest seen from that sender (a
 * larger one starts the sender's windows afresh: it restarted) and its
 * sequence number, in serial-number order (RFC 1982: they wrap), is newer
 * than the newest seen or one of the WINDOW before it not yet seen.  Anything
 * else was sent before and is a replay: dropped, counted by kind.
 *
 * The table holds at most max_senders senders; a packet from one more is
 * refused (REPLAY_FULL), never evicting one the node already knows.  Pure: no
 * I/O, no clocks; not thread safe.
 */
#ifndef CHORUS_LIBDEV_REPLAY_H
#define CHORUS_LIBDEV_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_WINDOW 64 /* sequence numbers remembered behind the newest, per type */
#define REPLAY_TYPES 4   /* packet types 0..3 (rbs_type) */

typedef enum {
	REPLAY_OK = 0,
	REPLAY_SEEN,       /* this boot, type and sequence number arrived before */
	REPLAY_OLD,        /* more than REPLAY_WINDOW behind the newest of its type */
	REPLAY_STALE_BOOT, /* from an earlier boot of the sender than the newest seen */
	REPLAY_FULL,       /* a new sender while the table holds max_senders */
	REPLAY_N
} replay_verdict;

typedef struct dev_replay dev_replay;

/* A new empty table for at most max_senders (>= 1) senders. */
dev_replay *dev_replay_new(uint32_t max_senders);

/* Free w (NULL is fine). */
void dev_replay_free(dev_replay *w);

/* Judge a packet that passed authentication, and remember it when fresh.
 * type < REPLAY_TYPES.  Returns REPLAY_OK or the kind of replay. */
replay_verdict dev_replay_check(dev_replay *w, uint32_t sender, unsigned type, uint64_t boot, uint32_t seq);

/* Senders in the table. */
size_t dev_replay_senders(const dev_replay *w);

/* Short name of a verdict ("ok", "seen", "old", "stale_boot", "full"). */
const char *dev_replay_name(replay_verdict v);

#endif
