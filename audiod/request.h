/* request.h — the parameters of a request on audio/<k>/data and the reply
 * audiod sends back (pure: parse and format only).
 *
 * A sensor request names a frame range [first, last) in its header; its
 * parameter blob is optional text, space-separated key=value:
 *   channels=0,2          channels wanted, in this order (default: all)
 *   clock=CLOCK           the request is by time on CLOCK (node3:cpu, global,
 *   from=T0 [to=T1]       cpu, node5:audio0 …): [T0, T1) in that clock's unit,
 *                         T1 absent = open-ended; the frame range is ignored.
 * The reply blob is text too:
 *   first=F last=L rate=R channels=C format=NAME [clock=… from=… to=…
 *   se_ns=S se_frames=E hops=H]
 * docs/protocol.md "audio/<k>/data" has the whole story.
 * Errors: negative errno with a GError (AUDIOD_ERROR, audiod/error.h) saying
 * which parameter and why.
 */
#ifndef CHORUS_AUDIOD_REQUEST_H
#define CHORUS_AUDIOD_REQUEST_H

#include <glib.h>
#include <stdint.h>

#include "libsync/clockid.h"

#define AUDIO_MAX_CHANNELS 64

typedef struct {
	uint32_t nchan;                    /* channels selected (0 = all) */
	uint16_t chan[AUDIO_MAX_CHANNELS]; /* their indices, in output order */
	int by_time;                       /* clock/from/to given */
	sync_clock_id clock;               /* the clock of from/to */
	int64_t from;                      /* clock units */
	int64_t to;                        /* clock units; INT64_MAX = open-ended */
} audio_request;

/* Parse a parameter blob (len bytes, not NUL-terminated; may be empty) for
 * a device with `channels` channels on node `node` (for bare clock kinds).
 * Returns 0 and *out, or -EINVAL with err set (code EINVAL; the message
 * quotes the offending parameter and says why).  Pure but for allocation. */
int audio_request_parse(const char *params, size_t len, uint32_t channels, uint32_t node, audio_request *out,
			GError **err);

/* The value of `key` in a reply text ("first=F last=L rate=R ..."): copied
 * into buf (len bytes, truncated to fit) and returned, or NULL when the
 * reply has no such key.  For clients of audio/<k>/data. */
const char *audio_reply_field(const char *reply, const char *key, char *buf, size_t len);

#endif
