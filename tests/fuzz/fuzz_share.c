/* fuzz_share.c — libFuzzer target over collab's datagram decoder
 * (apps/collab/sharemsg.h: DET, HAVE and WANT, their mac, and the detection
 * text of apps/detect/event.h), with and without the network key (the first
 * input byte chooses).  Beyond "no crash, no sanitizer report": whatever is
 * accepted passes the range checks, and re-encoded under the key it decodes
 * again to the same datagram. */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "apps/collab/sharemsg.h"

static const uint8_t KEY[] = "fuzzing-key-of-the-field";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	int keyed = data[0] & 1;
	char *text = g_strndup((const char *)data + 1, size - 1); /* as on_in: NUL-terminated */
	static collab_msg m, m2;
	char why[200];
	int rc = collab_msg_decode(text, strlen(text), keyed ? KEY : NULL, keyed ? sizeof KEY - 1 : 0, &m, why, sizeof why);
	if (rc == 0) {
		if (m.kind == COLLAB_MSG_DET)
			assert(det_event_check(&m.e, why, sizeof why) == 0);
		if (m.kind == COLLAB_MSG_HAVE)
			assert(m.first >= 1 && m.first <= m.last + 1 && (!m.since || (m.since >= m.first && m.since <= m.last + 1)));
		if (m.kind == COLLAB_MSG_WANT) {
			for (guint i = 0; i < m.n_ranges; i++)
				assert(m.ranges[i][0] >= 1 && m.ranges[i][0] <= m.ranges[i][1]);
			assert(!m.since_ms == (m.n_ranges > 0) && m.since_ms <= COLLAB_SINCE_MAX_MS);
		}
		GString *g = collab_msg_encode(&m, KEY, sizeof KEY - 1);
		assert(collab_msg_decode(g->str, g->len, KEY, sizeof KEY - 1, &m2, why, sizeof why) == 0);
		assert(m2.kind == m.kind && m2.sender == m.sender && m2.boot == m.boot && m2.sseq == m.sseq &&
		       m2.epoch == m.epoch && m2.oid == m.oid && m2.late == m.late && m2.first == m.first &&
		       m2.last == m.last && m2.asked == m.asked && m2.n_ranges == m.n_ranges &&
		       m2.since == m.since && m2.since_ms == m.since_ms);
		g_string_free(g, TRUE);
	} else {
		assert(rc == -EBADMSG || rc == -EACCES);
	}
	g_free(text);
	return 0;
}
