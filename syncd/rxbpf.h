/* rxbpf.h — a kernel socket filter (classic BPF, SO_ATTACH_FILTER) on the
 * RBS socket that keeps only the packets of a list of senders (the
 * receive filter's syncd_rxfilter_senders, rxfilter.h), so that syncd is not
 * woken for packets its receive filter would drop anyway.  In a simulated
 * field of N nodes on loopback every packet reaches all N sockets; without
 * this each node's syncd wakes N times per packet round, and the machine,
 * not the protocol, limits the field (docs/architecture.md §5.4).
 *
 * The filter reads the sender field of the RBS header (offset 8 of the UDP
 * payload, little-endian; syncd/rbs_wire.h) and drops packets too short to
 * have one.
 */
#ifndef CHORUS_SYNCD_RXBPF_H
#define CHORUS_SYNCD_RXBPF_H

#include <stddef.h>
#include <stdint.h>

/* Most senders one filter can name (a BPF jump reaches 255 instructions). */
#define SYNCD_RXBPF_MAX 250

/* Attach to UDP socket fd a filter keeping packets from the n senders ids
 * (n <= SYNCD_RXBPF_MAX).  Returns 0, or -E2BIG (too many) / -errno of
 * setsockopt with the reason in why[len]. */
int syncd_rxbpf_attach(int fd, const uint32_t *ids, size_t n, char *why, size_t len);

#endif
