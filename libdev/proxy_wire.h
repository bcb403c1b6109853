/* proxy_wire.h — the handshake of a remote device connection (chorus-proxy,
 * docs/protocol.md "Remote devices"): pure text codec, no I/O.
 *
 * One line each way, then libdev frames (frame.h) in both directions:
 *
 *   proxy:  CHORUS-PROXY 1 node=N nonce=S\n
 *   client: OPEN v=1 dev=NAME cnonce=C[ mac=M]\n
 *   proxy:  OK v=1 write=W keepalive_ms=K[ mac=R]\n     (or ERR errno=E text\n, close)
 *
 * or, to list the devices the proxy exports (names only; then it closes):
 *
 *   client: LIST v=1 cnonce=C[ mac=M]\n
 *   proxy:  OK … as above, then DEV NAME\n per device, then END N\n
 *
 * S and C are 32 hex digits, fresh per connection.  M is HMAC-SHA256 (hex)
 * under the field's network key of "S\n" followed by the OPEN line before
 * " mac=": a recorded OPEN is useless on another connection.  R is the
 * same over "C\n" and the OK line before " mac=": the proxy proves the key
 * too.  W is 1 when this connection may write (CMD, QUERY, PKT_SEND), K the
 * heartbeat period.  Lines are at most DEV_PROXY_LINE_MAX bytes.
 * Errors are negative errno values with a static reason.
 */
#ifndef CHORUS_DEV_PROXY_WIRE_H
#define CHORUS_DEV_PROXY_WIRE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define DEV_PROXY_VERSION 1
#define DEV_PROXY_PORT 7402
#define DEV_PROXY_LINE_MAX 1024
#define DEV_PROXY_NONCE_LEN 32

typedef struct {
	uint32_t node;
	char nonce[DEV_PROXY_NONCE_LEN + 1];
} dev_proxy_greeting;

typedef struct {
	gboolean list; /* a LIST, not an OPEN (dev is empty) */
	char dev[256];
	char cnonce[DEV_PROXY_NONCE_LEN + 1];
	gboolean has_mac;
} dev_proxy_open;

typedef struct {
	gboolean ok;      /* OK; FALSE: ERR */
	gboolean write;   /* OK: writes allowed */
	int keepalive_ms; /* OK: heartbeat period */
	gboolean has_mac; /* OK: the proxy proved the key */
	int err;          /* ERR: positive errno */
	char text[512];   /* ERR: the reason */
} dev_proxy_reply;

/* A fresh nonce of DEV_PROXY_NONCE_LEN hex digits (from GLib's random
 * generator seeded from /dev/urandom) into out[DEV_PROXY_NONCE_LEN + 1]. */
void dev_proxy_nonce(char *out);

/* The mac of a line: HMAC-SHA256 hex of nonce "\n" and the line up to
 * " mac=" (or its end, without the newline).  g_free it. */
gchar *dev_proxy_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line);

/* Check the " mac=" of `line` against nonce: 0, or -EACCES with *why
 * ("no mac", "wrong mac").  Constant time in the mac. */
int dev_proxy_check_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line, const char **why);

/* Lines, newline included (g_free them).  `key` NULL: no mac. */
gchar *dev_proxy_greeting_line(uint32_t node, const char *nonce);
gchar *dev_proxy_open_line(const char *dev, const char *cnonce, const uint8_t *key, size_t klen, const char *snonce);
gchar *dev_proxy_list_line(const char *cnonce, const uint8_t *key, size_t klen, const char *snonce);
gchar *dev_proxy_ok_line(gboolean write, int keepalive_ms, const uint8_t *key, size_t klen, const char *cnonce);
gchar *dev_proxy_err_line(int err, const char *text);

/* Parse one line (without or with its newline).  0, or -EBADMSG /
 * -EPROTONOSUPPORT (another version) with *why.  Pure. */
int dev_proxy_parse_greeting(const char *line, dev_proxy_greeting *g, const char **why);
int dev_proxy_parse_open(const char *line, dev_proxy_open *o, const char **why); /* OPEN or LIST */
int dev_proxy_parse_reply(const char *line, dev_proxy_reply *r, const char **why);

#endif
