/* clip.h — the clip service: a small TCP service on every node that serves
 * short stretches of its own audio by global time (docs/protocol.md).
 *
 * Request, one line:   GET v=1 from=T0 to=T1 channel=C\n
 *   T0, T1: global time, ns (integers), T1 - T0 <= 2 s.
 * Reply, one line, then the samples:
 *   OK v=1 node=N rate=R first=F n=M t0_ns=A t0_frac=B se_ns=S rate_eff=E\n
 *   followed by M little-endian float32 samples (full scale 1.0): frames
 *   [F, F+M) of audio channel C, F the first whole frame at or after T0.
 *   A + B (ns, B fractional) is the global time of frame F as this node
 *   converts it, S its standard error; E the clip's sample rate in global
 *   time (frames per global second: the sound card's true rate as far as
 *   the clocks know it, R(1 + skew)).  Or:   ERR reason\n   and close.
 * The server reads its audiod through the sensor device (by frames, after
 * converting T0 to a frame with libsync) so a clip still being recorded is
 * served when it is complete.  One request per connection.
 */
#ifndef CHORUS_COLLAB_CLIP_H
#define CHORUS_COLLAB_CLIP_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "libsync/client.h"

#define CLIP_MAX_NS 2000000000LL

typedef struct {
	uint32_t node;
	double rate_hz;     /* nominal, Hz */
	double rate_eff_hz; /* frames per global second (0 if the server did not say) */
	int64_t first;      /* frame index of sample 0 */
	size_t n;           /* samples */
	int64_t t0_ns;      /* global time of sample 0, ns … */
	double t0_frac_ns;  /* … plus this fraction, ns */
	double se_ns;       /* its standard error, ns */
	float *x;           /* samples (g_free) */
} clip;

typedef struct clip_server clip_server;

/* Serve clips of audio device `device` of node `node` on TCP `port` (all
 * addresses), converting with `clocks` (not owned).  NULL + *err. */
clip_server *clip_server_new(uint32_t node, int device, int port, sync_client *clocks, GMainContext *ctx,
			     GError **err);

/* Requests served and refused so far. */
void clip_server_counts(const clip_server *s, guint64 *served, guint64 *refused);

/* Close every connection and the listener.  NULL is fine. */
void clip_server_free(clip_server *s);

/* Fetch [t0_ns, t1_ns) global of channel `channel` from host:port, waiting
 * at most timeout_ms for the whole answer.  Blocking (call it from a worker
 * thread).  Returns 0 and *out (free out->x), or a negative errno with the
 * reason in why (the server's ERR text, connection or timeout). */
int clip_fetch(const char *host, int port, int64_t t0_ns, int64_t t1_ns, int channel, int timeout_ms, clip *out,
	       char *why, size_t len);

#endif
