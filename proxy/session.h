/* session.h — one remote client of chorus-proxy: the handshake, then the
 * relay between its TCP stream (frames, libdev/frame.h) and one local
 * device's SOCK_SEQPACKET socket.
 *
 * Client to device: each frame is decoded (dev_wire_decode); a malformed
 * one gets the ERROR a service would send and the session goes on; a write
 * (CMD, QUERY, PKT_SEND) on a session without write permission gets ERROR
 * EPERM; everything else is sent to the device as it came.  A framing
 * error (a length that cannot be a message) closes the session.
 * Device to client: each message is framed and queued.  The queue is
 * bounded (queue_bytes): past it a packet device's oldest queued message
 * is dropped and counted in the `dropped` field of the next one (as a
 * local drop-oldest queue does), an older queued status notification gives
 * way to the newer one, and a sensor stream is paced by not reading the
 * device (pull: costs the service nothing).  The client's input is not read
 * while its replies are over the bound.  Heartbeats every keepalive_ms; a
 * client silent for 3 periods + 0.5 s is dropped.
 */
#ifndef CHORUS_PROXY_SESSION_H
#define CHORUS_PROXY_SESSION_H

#include "proxy/proxy.h"

/* Take accepted TCP socket fd (non-blocking; owned from now on) from peer
 * `peer` (text, for messages): greet it and wait for its OPEN.  Adds itself
 * to p->sessions and removes itself when it ends.  Never fails. */
proxy_session *proxy_session_new(proxy *p, int fd, const char *peer);

/* Refuse fd with "ERR errno=EBUSY …" and close it (too many sessions). */
void proxy_session_refuse(int fd, const char *why);

/* One line about the session for proxy/status. */
void proxy_session_describe(const proxy_session *s, GString *out);

/* Close and free (removing it from p->sessions). */
void proxy_session_free(proxy_session *s);

#endif
