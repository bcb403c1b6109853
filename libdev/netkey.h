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

#endif
