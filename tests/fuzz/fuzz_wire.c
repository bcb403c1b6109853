/* fuzz_wire.c — libFuzzer target over the libdev message decoder (and the
 * device-name check).  Beyond "no crash, no sanitizer report", it checks
 * the decoder's promises: every pointer it returns lies inside the input,
 * lengths add up, and a decoded message re-encodes to the same bytes. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "libdev/path.h"
#include "libdev/wire.h"

static void inside(const uint8_t *buf, size_t len, const void *p, size_t n)
{
	const uint8_t *q = p;
	assert(n == 0 || (q >= buf && q + n <= buf + len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	dev_msg m;
	const char *why = NULL;
	int e = dev_wire_decode(data, size, &m, &why);
	if (e < 0) {
		assert(why != NULL);
	} else {
		assert(size >= DEV_WIRE_HDR && size <= DEV_WIRE_MAX_MSG);
		assert(m.len == size - DEV_WIRE_HDR);
		inside(data, size, m.payload, m.len);
		switch (m.type) {
		case DEV_MSG_HELLO: inside(data, size, m.u.hello.name, m.u.hello.name_len); break;
		case DEV_MSG_ERROR:
			inside(data, size, m.u.error.text, m.u.error.text_len);
			assert(m.u.error.err > 0);
			break;
		case DEV_MSG_CMD_REPLY:
		case DEV_MSG_QUERY_REPLY:
			inside(data, size, m.u.reply.data, m.u.reply.len);
			assert(m.u.reply.len + 4 == m.len);
			break;
		case DEV_MSG_PKT_DATA: inside(data, size, m.u.pkt.data, m.u.pkt.len); break;
		case DEV_MSG_SENS_OPEN: inside(data, size, m.u.open.params, m.u.open.params_len); break;
		case DEV_MSG_SENS_OPENED: inside(data, size, m.u.opened.reply, m.u.opened.reply_len); break;
		case DEV_MSG_SENS_DATA:
			inside(data, size, m.u.data.items, m.u.data.bytes);
			assert(m.u.data.count > 0 && m.u.data.count <= m.u.data.bytes);
			break;
		case DEV_MSG_SENS_GAP: assert(m.u.gap.to > m.u.gap.from); break;
		default: break;
		}
		(void)dev_wire_type_name(m.type);
		(void)dev_wire_from_client(m.type);
		/* re-encode: header through the encoder, payload verbatim */
		GByteArray *b = g_byte_array_new();
		dev_wire_begin(b, m.type, m.flags, m.id);
		dev_wire_bytes(b, m.payload, m.len);
		assert(dev_wire_end(b) == 0);
		assert(b->len == size && memcmp(b->data, data, size) == 0);
		g_byte_array_unref(b);
	}
	/* the same bytes as a device name */
	if (size < 256) {
		char name[256];
		memcpy(name, data, size);
		name[size] = 0;
		(void)dev_name_check(name, NULL);
	}
	return 0;
}
