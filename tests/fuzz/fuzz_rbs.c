/* fuzz_rbs.c — libFuzzer target over syncd's RBS packet decoder
 * (syncd/rbs_wire.h), with and without the network key (the first input
 * byte chooses).  Beyond "no crash, no sanitizer report": the header peek
 * agrees with the decoder on the sender, a decoded packet's counts add up
 * to its size, and it re-encodes to a packet that decodes to the same
 * header and counts. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "syncd/rbs_wire.h"

static const uint8_t KEY[] = "fuzzing-key-of-the-field";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int keyed = data[0] & 1;
	data++;
	size--;
	rbs_packet p;
	const char *why = NULL;
	int rc = rbs_wire_decode(data, size, keyed ? KEY : NULL, keyed ? sizeof KEY - 1 : 0, &p, &why);
	if (rc < 0) {
		assert(why != NULL);
		return 0;
	}
	uint32_t sender;
	assert(rbs_wire_peek_sender(data, size, &sender) == 0 && sender == p.sender);
	assert(p.sender != RBS_NO_NODE);
	size_t body = size - RBS_HDR - ((data[6] & RBS_FLAG_HMAC) ? RBS_HMAC_LEN : 0);
	assert(rbs_wire_size(&p, 0) - RBS_HDR == body);
	static uint8_t buf[RBS_MAX_PACKET];
	int n = rbs_wire_encode(&p, keyed ? KEY : NULL, keyed ? sizeof KEY - 1 : 0, buf, sizeof buf);
	assert(n > 0);
	rbs_packet q;
	assert(rbs_wire_decode(buf, (size_t)n, keyed ? KEY : NULL, keyed ? sizeof KEY - 1 : 0, &q, &why) == 0);
	assert(q.type == p.type && q.sender == p.sender && q.seq == p.seq && q.boot == p.boot && q.n_rx == p.n_rx &&
	       q.n_nodes == p.n_nodes && q.n_edges == p.n_edges && q.root == p.root);
	rbs_packet_clear(&q);
	rbs_packet_clear(&p);
	return 0;
}
