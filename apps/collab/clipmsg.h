/* clipmsg.h — the clip service's request and reply lines (clip.h, pure:
 * no I/O).  Both ends of a TCP connection are outside input to the other:
 * every number is parsed strictly (no overflow, no trailing junk) and
 * range-checked, and a line that is not exactly what clip.h describes is
 * refused with its reason.  Fuzzed by tests/fuzz/fuzz_clip.c.
 */
#ifndef CHORUS_COLLAB_CLIPMSG_H
#define CHORUS_COLLAB_CLIPMSG_H

#include <stddef.h>
#include <stdint.h>

#include "apps/collab/clip.h"

/* "GET v=2 from=T0 to=T1 channel=C[ mac=M]": 0 with the range and channel
 * (0 < T1 - T0 <= CLIP_MAX_NS, channel 0..63; the mac is clip_check_mac's
 * business), or -EBADMSG with the reason in why[len]. */
int clip_parse_request(const char *line, int64_t *t0_ns, int64_t *t1_ns, int *channel, char *why, size_t len);

/* The header line of an OK reply, "OK v=1 node=N rate=R first=F n=M
 * t0_ns=A t0_frac=B se_ns=S[ rate_eff=E]": 0 with the fields of *out (x
 * untouched), or -EBADMSG with the reason (rate 1000..1e6 Hz, n 1..1e7
 * samples, |t0_frac| <= 1 ns, se_ns and rate_eff finite and >= 0). */
int clip_parse_reply(const char *head, clip *out, char *why, size_t len);

#endif
