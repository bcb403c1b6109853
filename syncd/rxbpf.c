/* rxbpf.c — the senders' kernel socket filter (see rxbpf.h). */
#include "syncd/rxbpf.h"

#include <errno.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* On a UDP socket the filter sees the packet from the UDP header (8 bytes)
 * on; the RBS sender is at payload offset 8. */
#define SENDER_OFF (8 + 8)

int syncd_rxbpf_attach(int fd, const uint32_t *ids, size_t n, char *why, size_t len)
{
	if (n > SYNCD_RXBPF_MAX) {
		snprintf(why, len, "%zu senders: a kernel filter names at most %d", n, SYNCD_RXBPF_MAX);
		return -E2BIG;
	}
	/* [0] load the sender; [1..n] equal to id i -> keep; [n+1] drop;
	 * [n+2] keep.  BPF loads words big-endian: the field is little-endian. */
	struct sock_filter prog[SYNCD_RXBPF_MAX + 3];
	prog[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SENDER_OFF);
	for (size_t i = 0; i < n; i++)
		prog[1 + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __builtin_bswap32(ids[i]),
							   (uint8_t)(n - i), 0);
	prog[n + 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	prog[n + 2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	struct sock_fprog fp = {.len = (unsigned short)(n + 3), .filter = prog};
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof fp) < 0) {
		int e = errno;
		snprintf(why, len, "SO_ATTACH_FILTER: %s", strerror(e));
		return -e;
	}
	return 0;
}
