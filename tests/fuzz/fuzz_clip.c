/* fuzz_clip.c — libFuzzer target over the clip service's lines
 * (apps/collab/clipmsg.h): the request a server parses and the reply header
 * a client parses (the first input byte chooses).  Beyond "no crash, no
 * sanitizer report": whatever is accepted is in range, and printed back in
 * the protocol's form it parses again to the same values. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "apps/collab/clipmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1024)
		return 0;
	char *text = g_strndup((const char *)data + 1, size - 1); /* as read_line: NUL-terminated */
	char why[200], again[512];
	if (data[0] & 1) {
		clip c = {0}, c2 = {0};
		int rc = clip_parse_reply(text, &c, why, sizeof why);
		assert(rc == 0 || rc == -EBADMSG);
		if (rc == 0) {
			assert(c.rate_hz >= 1000 && c.rate_hz <= 1e6 && c.n >= 1 && c.n <= 10000000);
			assert(isfinite(c.se_ns) && c.se_ns >= 0 && fabs(c.t0_frac_ns) <= 1 && c.rate_eff_hz >= 0);
			char r[G_ASCII_DTOSTR_BUF_SIZE], f[G_ASCII_DTOSTR_BUF_SIZE], s[G_ASCII_DTOSTR_BUF_SIZE],
				e[G_ASCII_DTOSTR_BUF_SIZE];
			g_snprintf(again, sizeof again,
				   "OK v=1 node=%u rate=%s first=%" PRId64 " n=%zu t0_ns=%" PRId64 " t0_frac=%s se_ns=%s rate_eff=%s",
				   c.node, g_ascii_dtostr(r, sizeof r, c.rate_hz), c.first, c.n, c.t0_ns,
				   g_ascii_dtostr(f, sizeof f, c.t0_frac_ns), g_ascii_dtostr(s, sizeof s, c.se_ns),
				   g_ascii_dtostr(e, sizeof e, c.rate_eff_hz));
			assert(clip_parse_reply(again, &c2, why, sizeof why) == 0);
			assert(c2.node == c.node && c2.rate_hz == c.rate_hz && c2.first == c.first && c2.n == c.n &&
			       c2.t0_ns == c.t0_ns && c2.t0_frac_ns == c.t0_frac_ns && c2.se_ns == c.se_ns);
		}
	} else {
		int64_t t0, t1, a0, a1;
		int ch, ch2;
		int rc = clip_parse_request(text, &t0, &t1, &ch, why, sizeof why);
		assert(rc == 0 || rc == -EBADMSG);
		if (rc == 0) {
			assert(t1 > t0 && (uint64_t)t1 - (uint64_t)t0 <= (uint64_t)CLIP_MAX_NS && ch >= 0 && ch <= 63);
			g_snprintf(again, sizeof again, "GET v=2 from=%" PRId64 " to=%" PRId64 " channel=%d", t0, t1, ch);
			assert(clip_parse_request(again, &a0, &a1, &ch2, why, sizeof why) == 0);
			assert(a0 == t0 && a1 == t1 && ch2 == ch);
		}
	}
	g_free(text);
	return 0;
}
