/* rxfilter.h — the receive-filter hook of syncd's RBS socket.
 *
 * syncd can load one shared object that sees every RBS packet before it is
 * decoded and may drop it or move its receive time.  It is how a test
 * harness puts a network model between the nodes without the daemon knowing
 * anything about the model: chorus-sim installs its radio (range, loss,
 * receive-timestamp jitter from the scenario) this way, as chrony's
 * clknetsim stays outside chronyd.  A node in the field runs with no filter.
 *
 * Installing: the environment variable CHORUS_RX_FILTER names the object
 * (a path for dlopen); CHORUS_RX_FILTER_ARG, when set, is passed to open().
 * The object exports one symbol, `syncd_rxfilter`, of the type below; its
 * `abi` must equal SYNCD_RXFILTER_ABI or syncd refuses to start.  collab
 * loads the same object for its `reachable` (ABI 2).
 *
 * All callbacks run on syncd's main thread.  Times are the receiving node's
 * cpu clock in ns (the same clock as sync_now(SYNC_KIND_CPU)).
 */
#ifndef CHORUS_SYNCD_RXFILTER_H
#define CHORUS_SYNCD_RXFILTER_H

#include <stddef.h>
#include <stdint.h>

#define SYNCD_RXFILTER_ABI 2

typedef struct {
	int abi; /* SYNCD_RXFILTER_ABI */
	/* Start filtering for node `self`; `arg` is CHORUS_RX_FILTER_ARG or
	 * NULL.  Returns the filter's handle, or NULL with *why set to a
	 * malloc'd message (syncd frees it) saying what was wrong. */
	void *(*open)(uint32_t self, const char *arg, char **why);
	/* A packet from node `sender` (the header's sender field; our own
	 * number for our looped-back packets) arrived at *rx_ns.  Return 1 to
	 * keep it (after moving *rx_ns if the model says so), 0 to drop it. */
	int (*deliver)(void *h, uint32_t sender, int64_t *rx_ns);
	/* One line (no newline) describing the filter and its counters, for
	 * sync/rbs; writes at most `len` bytes including the NUL. */
	void (*describe)(void *h, char *buf, size_t len);
	/* Stop and free the handle. */
	void (*close)(void *h);
	/* Whether node `peer` and we can reach each other at all at our cpu
	 * time now_ns, however many hops apart (an outage cuts a node off;
	 * range and loss, which routing or retransmission overcome, do not):
	 * 1 or 0.  For traffic other than RBS beacons (collab's shares).
	 * NULL: always. */
	int (*reachable)(void *h, uint32_t peer, int64_t now_ns);
} syncd_rxfilter_ops;

/* The symbol the object exports. */
extern const syncd_rxfilter_ops syncd_rxfilter;

/* Optional second symbol, `syncd_rxfilter_senders`: the senders whose
 * packets deliver() could ever keep (our own number included), so that
 * syncd can have the kernel drop every other packet before it wakes
 * (syncd/rxbpf.h).  It matters for a large simulated field, where loopback
 * broadcast hands every packet to every node.  Writes up to `max` node
 * numbers to out and returns how many there are (more than max: syncd
 * filters nothing in the kernel), or -1: any sender, no kernel filter. */
typedef int (*syncd_rxfilter_senders_fn)(void *h, uint32_t *out, size_t max);

#endif
