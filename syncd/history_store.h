/* history_store.h — syncd's pieces of history as the bytes of its file, so
 * that a restarted syncd publishes the pieces it had (history_file.h is
 * the file; docs/clocks.md "Across a restart of syncd").
 *
 * A store holds, for one node and one *owner* of its cpu clock (this boot
 * of the kernel: CLOCK_MONOTONIC_RAW starts again at a reboot, so pieces
 * of another boot name other instants), the pieces of each pair: the
 * local pairs' (syncd/pairs.h, the active ones and those kept for an
 * expired pair) and the RBS pairs' (syncd/rbs_history.h), each as
 * syncd_history_export gives them (history.h: every piece flagged
 * SYNC_CONV_PIECE, its q2 in `wander`).  The pairs' lines (the samples
 * their q2 is measured on) are not stored: a restarted syncd measures them
 * afresh and publishes each piece with the q2 it was saved with until
 * then.
 *
 * Encoding: a GVariant "(sqsay)" — the magic HISTORY_STORE_MAGIC, the
 * version HISTORY_STORE_VERSION, the SHA-256 (hex) of the body's bytes,
 * and the body's bytes — whose body (version 1) is the GVariant
 * "(sua(yydday))": the owner, the node, and per pair its kind, fit mode,
 * nominal slope, ns per unit of x, and its pieces as a one-part sync/ticker
 * (libsync/ticker_wire.h sync_ticker_pack: the pair's clocks and each
 * piece's sync_conv in their wire form).  Both GVariants are kept
 * little-endian whatever the host.
 *
 * Pure: no I/O, no clocks.  Errors are a negative errno with the reason
 * in a caller's buffer.
 */
#ifndef CHORUS_SYNCD_HISTORY_STORE_H
#define CHORUS_SYNCD_HISTORY_STORE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libsync/clockid.h"
#include "libsync/conv.h"
#include "libsync/fit.h"

#define HISTORY_STORE_MAGIC "chorus-syncd-history"
#define HISTORY_STORE_VERSION 1
/* Pieces of one pair, at most: [fit] and [rbs] history_pieces' largest. */
#define HISTORY_STORE_MAX_PIECES 256
/* Pairs, at most: [rbs] max_peers' largest and 1024 local pairs. */
#define HISTORY_STORE_MAX_PAIRS (65535 + 1024)
/* Bytes of a store, at most (a larger one is neither written nor read). */
#define HISTORY_STORE_MAX_BYTES (64u << 20)

typedef enum {
	HISTORY_STORE_LOCAL = 1, /* a local pair (pairs.h): x -> y as it is fitted */
	HISTORY_STORE_RBS = 2,   /* an RBS pair (rbs_history.h): cpu_self -> cpu_peer */
} history_store_kind;

/* One pair's pieces. */
typedef struct {
	history_store_kind kind;
	sync_clock_id from, to; /* the pair's x and y clocks */
	sync_fit_mode mode;     /* how it is fitted (a local pair's history goes on only fitted so) */
	double nominal;         /* its nominal slope dy/dx (0: from the data) */
	double unit_ns;         /* ns per unit of x (1: ns; an audio clock's ns per frame) */
	GArray *pieces;         /* sync_conv, oldest first, each flagged SYNC_CONV_PIECE */
} history_store_pair;

typedef struct history_store history_store;

/* A new empty store of node `node` whose cpu clock's owner is `owner` (a
 * line naming this boot: history_file.h; copied).  Never fails. */
history_store *history_store_new(const char *owner, uint32_t node);

/* Free (NULL is fine). */
void history_store_free(history_store *s);

/* Add a pair's n pieces (copied; nothing is added when n is 0).  The
 * caller gives what its histories hold; history_store_unpack is what
 * checks them. */
void history_store_add(history_store *s, history_store_kind kind, sync_clock_id from, sync_clock_id to,
		       sync_fit_mode mode, double nominal, double unit_ns, const sync_conv *pieces, size_t n);

/* The owner line and node it was made for (owned by s). */
const char *history_store_owner(const history_store *s);
uint32_t history_store_node(const history_store *s);

/* Pairs held, and pair i (< that; owned by s). */
guint history_store_n_pairs(const history_store *s);
const history_store_pair *history_store_pair_at(const history_store *s, guint i);

/* Pieces held in all. */
size_t history_store_n_pieces(const history_store *s);

/* TRUE when a and b hold the same pairs with the same pieces, but for
 * their q2 (`wander`) and its span (the flags' SYNC_CONV_TAU_MASK), which
 * move with every sample of a pair's line: whether a store saved as a is
 * out of date.  NULL is a store of no pair. */
gboolean history_store_same_pieces(const history_store *a, const history_store *b);

/* The bytes of s (the encoding above; g_bytes_unref them).  NULL with the
 * reason in why[len] when it holds a pair of more than
 * HISTORY_STORE_MAX_PIECES pieces, more than HISTORY_STORE_MAX_PAIRS
 * pairs, or would take more than HISTORY_STORE_MAX_BYTES. */
GBytes *history_store_pack(const history_store *s, char *why, size_t len);

/* The file around body (the little-endian bytes of the encoding's body):
 * magic, version, the body's SHA-256 and the body, little-endian, as
 * history_store_pack writes it with HISTORY_STORE_MAGIC and
 * HISTORY_STORE_VERSION (other values make files a reader must refuse:
 * tests, the fuzzer's corpus).  Returns new bytes. */
GBytes *history_store_frame(const char *magic, guint16 version, GBytes *body);

/* Parse len bytes at data (a file's) into a new store *out (free it with
 * history_store_free), checking everything: the magic, version and
 * checksum, the encoding, the owner and node, each pair's kind (and for an
 * RBS pair cpu(node) -> cpu(another node)), mode, a nominal slope finite
 * and >= 0, a unit finite and > 0, its clocks (neither global nor utc,
 * not the same), 1 to HISTORY_STORE_MAX_PIECES pieces, each naming the
 * pair's clocks, passing sync_conv_check, flagged PIECE (no flags but
 * LOWER, UPPER, PIECE, BREAK and the span), n >= 3, slope > 0, beginning
 * at or after the end of the one before.  Returns 0, or with the reason
 * in why[len]: -EBADMSG (not such a store, truncated, corrupt, a value out
 * of range), -EPROTONOSUPPORT (another version), -ESTALE (another owner:
 * another boot's pieces), -EXDEV (another node's).  *out is untouched on
 * failure. */
int history_store_unpack(const void *data, size_t len, const char *owner, uint32_t node, history_store **out,
			 char *why, size_t wlen);

#endif
