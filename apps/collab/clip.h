/* clip.h — the clip service: a small TCP service on every node that serves
 * short stretches of its own audio by global time (docs/protocol.md).
 *
 * On connecting the server greets:   CHORUS-CLIP 2 nonce=N\n   (N: 32 hex
 * digits, fresh per connection).  Request, one line, within 5 s:
 *   GET v=2 from=T0 to=T1 channel=C [mac=M]\n
 *   T0, T1: global time, ns (integers), T1 - T0 <= 2 s.  M: HMAC-SHA256
 *   (hex) under the field's key of "N\n" and the line before " mac=";
 *   required when the server has the key, so only a node of the field can
 *   fetch audio, and a recorded request is useless on another connection.
 * Reply, one line, then the samples:
 *   OK v=1 node=N rate=R first=F n=M t0_ns=A t0_frac=B se_ns=S rate_eff=E\n
 *   followed by M little-endian float32 samples (full scale 1.0): frames
 *   [F, F+M) of audio channel C, F the first whole frame at or after T0.
 *   A + B (ns, B fractional) is the global time of frame F as this node
 *   converts it, S its standard error; E the clip's sample rate in global
 *   time (frames per global second: the sound card's true rate as far as
 *   the clocks know it, R(1 + skew)).  With the key the line ends
 *   " mac=M2": HMAC-SHA256 (hex) of "reply\n" N "\n" the request line
 *   (with its mac) "\n" the header before " mac=" "\n" and the sample
 *   bytes; a keyed client refuses a reply without it or with a wrong one,
 *   so a machine that takes over the port cannot serve other samples or
 *   times.  Or:   ERR reason\n   and close (not authenticated: it
 *   carries no data); ERR again reason\n when the refusal is temporary
 *   (the node has no conversion from global to its audio yet — its clocks
 *   are converging, it has just joined another timescale — or the audio
 *   did not complete in time): the client may ask again in a few seconds.
 * At most max_conns connections at once and 20 per second (40 in a burst)
 * are served; more are refused at once with ERR busy.  A listener out of
 * descriptors (EMFILE) pauses for a second rather than spin.
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

typedef struct {
	uint32_t node;      /* this node */
	int device;         /* its audio device k */
	int port;           /* TCP port */
	const char *bind;   /* listening address (IPv4 or IPv6 literal; "::" every interface) */
	const uint8_t *key; /* the field's key, or NULL: requests need no mac */
	size_t klen;
	unsigned max_conns; /* connections served at once */
	int64_t reach_ns;   /* how much further into the past than the clocks' tolerance a clip's
			     * times may convert (sync_client_convert_past: a node cut off from its
			     * very start); 0 none */
} clip_server_cfg;

/* Serve clips, converting with `clocks` (not owned).  NULL + *err. */
clip_server *clip_server_new(const clip_server_cfg *cfg, sync_client *clocks, GMainContext *ctx, GError **err);

/* The counters as a status line ("clips served=… refused=… bad_auth=…"). */
void clip_server_describe(const clip_server *s, GString *out);

/* Whether a clip_bind address is loopback only (127/8, ::1). */
gboolean collab_clip_bind_is_loopback(const char *bind);

/* The request mac: HMAC-SHA256 hex of nonce "\n" line (g_free it). */
gchar *clip_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line);

/* The reply mac (above) over the connection's nonce, the request line as
 * sent (with its " mac="), the reply header before " mac=" and the
 * nbytes of samples: HMAC-SHA256 hex (g_free it). */
gchar *clip_reply_mac(const uint8_t *key, size_t klen, const char *nonce, const char *req, const char *head,
		      const void *samples, size_t nbytes);

/* Check the " mac=" of a request line against the connection's nonce.
 * Returns 0 or -EACCES. */
int clip_check_mac(const uint8_t *key, size_t klen, const char *nonce, const char *req);

/* Requests served and refused so far. */
void clip_server_counts(const clip_server *s, guint64 *served, guint64 *refused);

/* Close every connection and the listener.  NULL is fine. */
void clip_server_free(clip_server *s);

/* Fetch [t0_ns, t1_ns) global of channel `channel` from host:port (with the
 * field's key when klen > 0), waiting
 * at most timeout_ms for the whole answer.  Blocking (call it from a worker
 * thread).  Returns 0 and *out (free out->x), or a negative errno with the
 * reason in why (the server's ERR text, connection or timeout; -EAGAIN
 * when the server said ERR again, -EREMOTEIO for another ERR; -EACCES for
 * a keyed fetch whose reply has no mac or a wrong one). */
int clip_fetch(const char *host, int port, int64_t t0_ns, int64_t t1_ns, int channel, const uint8_t *key, size_t klen,
	       int timeout_ms, clip *out, char *why, size_t len);

#endif
