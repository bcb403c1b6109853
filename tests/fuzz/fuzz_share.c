/* fuzz_share.c — libFuzzer target over collab's shared-detection decoder
 * (apps/collab/share.h: the datagram, its mac, and the detection text of
 * apps/detect/event.h), with and without the network key (the first input
 * byte chooses).  Beyond "no crash, no sanitizer report": whatever is
 * accepted passes the range checks, and re-encoded under the key it decodes
 * again with the same node, boot and sequence number. */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "apps/collab/share.h"

static const uint8_t KEY[] = "fuzzing-key-of-the-field";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	int keyed = data[0] & 1;
	char *text = g_strndup((const char *)data + 1, size - 1); /* as on_in: NUL-terminated */
	det_event e;
	uint64_t boot;
	uint32_t sseq;
	char why[200];
	int rc = collab_share_decode(text, strlen(text), keyed ? KEY : NULL, keyed ? sizeof KEY - 1 : 0, &e, &boot, &sseq,
				     why, sizeof why);
	if (rc == 0) {
		assert(det_event_check(&e, why, sizeof why) == 0);
		GString *m = collab_share_encode(&e, boot, sseq, KEY, sizeof KEY - 1);
		det_event e2;
		uint64_t b2;
		uint32_t s2;
		assert(collab_share_decode(m->str, m->len, KEY, sizeof KEY - 1, &e2, &b2, &s2, why, sizeof why) == 0);
		assert(e2.node == e.node && b2 == boot && s2 == sseq && e2.has_global == e.has_global);
		g_string_free(m, TRUE);
	} else {
		assert(rc == -EBADMSG || rc == -EACCES);
	}
	g_free(text);
	return 0;
}
