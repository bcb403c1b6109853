/* netkey.c — the field's shared network key (see netkey.h). */
#include "libdev/netkey.h"

#include <arpa/inet.h>
#include <errno.h>

#include "libdev/common.h"

gboolean dev_netkey_load(const char *group, const char *path, uint8_t **key, size_t *len, GError **err)
{
	gchar *k = NULL;
	gsize kl = 0;
	GError *e = NULL;
	*key = NULL;
	*len = 0;
	if (!g_file_get_contents(path, &k, &kl, &e)) {
		g_set_error(err, DEV_ERROR, EACCES, "[%s] key_file %s: %s", group, path, e->message);
		g_error_free(e);
		return FALSE;
	}
	if (kl < 16) {
		g_set_error(err, DEV_ERROR, EINVAL, "[%s] key_file %s: %zu bytes; a key needs 16 or more", group, path,
			    (size_t)kl);
		g_free(k);
		return FALSE;
	}
	*key = (uint8_t *)k;
	*len = kl;
	return TRUE;
}

gboolean dev_netkey_is_loopback(const char *address)
{
	struct in_addr a;
	return inet_pton(AF_INET, address, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

gchar *dev_netkey_mac_hex(const uint8_t *key, size_t klen, const void *data, size_t n)
{
	return g_compute_hmac_for_data(G_CHECKSUM_SHA256, key, klen, data, n);
}

gboolean dev_netkey_same(const void *a, const void *b, size_t n, gboolean fold_case)
{
	const uint8_t *x = a, *y = b;
	unsigned diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned)(x[i] ^ (fold_case ? (uint8_t)g_ascii_tolower((char)y[i]) : y[i]));
	return diff == 0;
}
