/* fuzz_frame.c — libFuzzer target over what a remote client or chorus-proxy
 * reads from the network (issue 19): the stream reassembler
 * (libdev/frame.c) fed the input in pieces whose sizes come from the input,
 * every frame it yields decoded as a message (libdev/wire.c), and the input's
 * lines parsed as handshake lines (libdev/proxy_wire.c).  Beyond "no crash":
 * a frame lies inside what was fed, is a heartbeat or a plausible message
 * length, the frames and what is left add up to the bytes fed, and feeding
 * the same bytes in one piece yields the same frames. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libdev/frame.h"
#include "libdev/proxy_wire.h"
#include "libdev/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Feed data in pieces (sizes from `split`, or all at once) and return a
 * checksum of the frames taken; *taken gets their bytes with headers. */
static uint64_t frames(const uint8_t *data, size_t size, gboolean split, size_t *taken, int *err)
{
	dev_framer f;
	dev_framer_init(&f);
	uint64_t sum = 1469598103934665603ull;
	size_t off = 0;
	*taken = 0;
	*err = 0;
	while (off < size && *err == 0) {
		size_t n = split ? 1 + data[off] % 37 : size;
		n = n > size - off ? size - off : n;
		dev_framer_feed(&f, data + off, n);
		off += n;
		const uint8_t *p;
		size_t len;
		const char *why = NULL;
		int e;
		while ((e = dev_framer_next(&f, &p, &len, &why)) == 1) {
			assert(len == 0 || (len >= DEV_WIRE_HDR && len <= DEV_WIRE_MAX_MSG));
			*taken += DEV_FRAME_HDR + len;
			dev_msg m;
			const char *w = NULL;
			if (len && dev_wire_decode(p, len, &m, &w) < 0)
				assert(w != NULL);
			for (size_t i = 0; i < len; i++)
				sum = (sum ^ p[i]) * 1099511628211ull;
			sum = (sum ^ len) * 1099511628211ull;
		}
		if (e < 0) {
			assert(why != NULL);
			*err = e;
		}
	}
	if (*err == 0)
		assert(*taken + dev_framer_pending(&f) == size);
	dev_framer_clear(&f);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t t1, t2;
	int e1, e2;
	uint64_t a = frames(data, size, TRUE, &t1, &e1);
	uint64_t b = frames(data, size, FALSE, &t2, &e2);
	assert(e1 == e2 && t1 == t2 && a == b);
	/* the handshake parsers, on the input as text (NUL-terminated copy) */
	char *s = g_strndup((const char *)data, size > 2048 ? 2048 : size);
	dev_proxy_greeting g;
	dev_proxy_open o;
	dev_proxy_reply r;
	const char *why = NULL;
	if (dev_proxy_parse_greeting(s, &g, &why) == 0)
		assert(strlen(g.nonce) == DEV_PROXY_NONCE_LEN);
	if (dev_proxy_parse_open(s, &o, &why) == 0)
		assert(strlen(o.cnonce) == DEV_PROXY_NONCE_LEN && (o.list ? !o.dev[0] : o.dev[0] != 0));
	if (dev_proxy_parse_reply(s, &r, &why) == 0)
		assert(r.ok ? r.keepalive_ms >= 10 : r.err > 0);
	static const uint8_t key[16] = "0123456789abcdef";
	dev_proxy_check_mac(key, sizeof key, "00000000000000000000000000000000", s, &why);
	g_free(s);
	return 0;
}
