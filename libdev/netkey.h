/* netkey.h — the field's shared network key (syncd's RBS packets, collab's
 * shared detections): a file whose bytes, 16 or more, are the HMAC-SHA256
 * key every node holds (docs/deployment.md "The network key"). */
#ifndef CHORUS_LIBDEV_NETKEY_H
#define CHORUS_LIBDEV_NETKEY_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* Read the key in path into *key (g_free it), *len bytes.  Returns TRUE, or
 * FALSE with *err naming "[group] key_file PATH" and why (unreadable, fewer
 * than 16 bytes). */
gboolean dev_netkey_load(const char *group, const char *path, uint8_t **key, size_t *len, GError **err);

/* Whether an IPv4 literal is on the loopback network (127.0.0.0/8): a
 * service that talks only there is not on the field's network. */
gboolean dev_netkey_is_loopback(const char *address);

/* HMAC-SHA256 under key of the n bytes at data, as 64 lowercase hex digits
 * (g_free it): the text protocols' mac (collab's shared detections, the
 * clip service's requests). */
gchar *dev_netkey_mac_hex(const uint8_t *key, size_t klen, const void *data, size_t n);

/* Whether the n bytes at a and b are equal, in time that does not depend on
 * where they differ (a mac compare must be no timing oracle); with
 * `fold_case`, ASCII letters of b compare as lowercase (hex macs). */
gboolean dev_netkey_same(const void *a, const void *b, size_t n, gboolean fold_case);

#endif
