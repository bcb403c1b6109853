/* proxy_wire.c — the remote device handshake (see proxy_wire.h). */
#include "libdev/proxy_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libdev/netkey.h"
#include "libdev/path.h"

void dev_proxy_nonce(char *out)
{
	static GRand *r;
	if (!r) {
		guint32 seed[8] = {0};
		FILE *f = fopen("/dev/urandom", "rb");
		size_t got = f ? fread(seed, 1, sizeof seed, f) : 0;
		if (f)
			fclose(f);
		if (got != sizeof seed) /* no urandom: time and pid, still per process */
			seed[0] = (guint32)g_get_real_time() ^ (guint32)getpid() << 16;
		r = g_rand_new_with_seed_array(seed, 8);
	}
	for (int i = 0; i < DEV_PROXY_NONCE_LEN; i += 8)
		g_snprintf(out + i, 9, "%08x", g_rand_int(r));
	out[DEV_PROXY_NONCE_LEN] = 0;
}

/* Length of the line before " mac=", or before its newline. */
static size_t signed_len(const char *line)
{
	const char *m = strstr(line, " mac=");
	if (m)
		return (size_t)(m - line);
	size_t n = strcspn(line, "\n");
	return n;
}

gchar *dev_proxy_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line)
{
	GString *s = g_string_new(nonce);
	g_string_append_c(s, '\n');
	g_string_append_len(s, line, (gssize)signed_len(line));
	gchar *m = dev_netkey_mac_hex(key, klen, s->str, s->len);
	g_string_free(s, TRUE);
	return m;
}

int dev_proxy_check_mac(const uint8_t *key, size_t klen, const char *nonce, const char *line, const char **why)
{
	const char *m = strstr(line, " mac=");
	if (!m) {
		*why = "no mac (this proxy requires the network key)";
		return -EACCES;
	}
	m += 5;
	size_t n = strcspn(m, " \n");
	gchar *want = dev_proxy_mac(key, klen, nonce, line);
	gboolean ok = n == strlen(want) && dev_netkey_same(want, m, n, TRUE);
	g_free(want);
	if (!ok) {
		*why = "wrong mac (another key, or a response to another challenge)";
		return -EACCES;
	}
	return 0;
}

static gchar *with_mac(GString *s, const uint8_t *key, size_t klen, const char *nonce)
{
	if (key) {
		gchar *m = dev_proxy_mac(key, klen, nonce, s->str);
		g_string_append_printf(s, " mac=%s", m);
		g_free(m);
	}
	g_string_append_c(s, '\n');
	return g_string_free(s, FALSE);
}

gchar *dev_proxy_greeting_line(uint32_t node, const char *nonce)
{
	return g_strdup_printf("CHORUS-PROXY %d node=%u nonce=%s\n", DEV_PROXY_VERSION, node, nonce);
}

gchar *dev_proxy_open_line(const char *dev, const char *cnonce, const uint8_t *key, size_t klen, const char *snonce)
{
	GString *s = g_string_new(NULL);
	g_string_printf(s, "OPEN v=%d dev=%s cnonce=%s", DEV_PROXY_VERSION, dev, cnonce);
	return with_mac(s, key, klen, snonce);
}

gchar *dev_proxy_list_line(const char *cnonce, const uint8_t *key, size_t klen, const char *snonce)
{
	GString *s = g_string_new(NULL);
	g_string_printf(s, "LIST v=%d cnonce=%s", DEV_PROXY_VERSION, cnonce);
	return with_mac(s, key, klen, snonce);
}

gchar *dev_proxy_ok_line(gboolean write, int keepalive_ms, const uint8_t *key, size_t klen, const char *cnonce)
{
	GString *s = g_string_new(NULL);
	g_string_printf(s, "OK v=%d write=%d keepalive_ms=%d", DEV_PROXY_VERSION, write ? 1 : 0, keepalive_ms);
	return with_mac(s, key, klen, cnonce);
}

gchar *dev_proxy_err_line(int err, const char *text)
{
	gchar *t = g_strndup(text, 480);
	for (char *p = t; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	gchar *l = g_strdup_printf("ERR errno=%d %s\n", err, t);
	g_free(t);
	return l;
}

/* Split a line into words (newline dropped); NULL when too long or empty. */
static gchar **words(const char *line, const char **why)
{
	size_t n = strcspn(line, "\n");
	if (n == 0 || n > DEV_PROXY_LINE_MAX || strchr(line, '\r') || memchr(line, '\t', n)) {
		*why = n == 0 ? "empty line" : n > DEV_PROXY_LINE_MAX ? "line too long"
								      : "tab or CR in the line";
		return NULL;
	}
	gchar *l = g_strndup(line, n);
	gchar **w = g_strsplit(l, " ", -1);
	g_free(l);
	return w;
}

/* The value of KEY=VALUE word w, or NULL. */
static const char *val(const char *w, const char *key)
{
	size_t k = strlen(key);
	return strncmp(w, key, k) == 0 && w[k] == '=' ? w + k + 1 : NULL;
}

static gboolean hex_nonce(const char *v, char *out)
{
	if (!v || strlen(v) != DEV_PROXY_NONCE_LEN)
		return FALSE;
	for (const char *p = v; *p; p++)
		if (!g_ascii_isxdigit(*p))
			return FALSE;
	memcpy(out, v, DEV_PROXY_NONCE_LEN + 1);
	return TRUE;
}

static gboolean parse_u32(const char *v, uint32_t *out)
{
	if (!v || !*v || strlen(v) > 10)
		return FALSE;
	for (const char *p = v; *p; p++)
		if (!g_ascii_isdigit(*p))
			return FALSE;
	unsigned long long x = strtoull(v, NULL, 10);
	if (x > UINT32_MAX)
		return FALSE;
	*out = (uint32_t)x;
	return TRUE;
}

static int version(const char *w, const char **why)
{
	uint32_t v;
	if (!parse_u32(w, &v)) {
		*why = "bad version";
		return -EBADMSG;
	}
	if (v != DEV_PROXY_VERSION) {
		*why = "another protocol version";
		return -EPROTONOSUPPORT;
	}
	return 0;
}

int dev_proxy_parse_greeting(const char *line, dev_proxy_greeting *g, const char **why)
{
	gchar **w = words(line, why);
	if (!w)
		return -EBADMSG;
	int e = -EBADMSG;
	*why = "expected CHORUS-PROXY 1 node=N nonce=HEX";
	if (g_strv_length(w) == 4 && !strcmp(w[0], "CHORUS-PROXY") && (e = version(w[1], why)) == 0) {
		e = -EBADMSG;
		if (parse_u32(val(w[2], "node"), &g->node) && hex_nonce(val(w[3], "nonce"), g->nonce))
			e = 0;
	}
	g_strfreev(w);
	return e;
}

int dev_proxy_parse_open(const char *line, dev_proxy_open *o, const char **why)
{
	gchar **w = words(line, why);
	if (!w)
		return -EBADMSG;
	memset(o, 0, sizeof *o);
	guint n = g_strv_length(w);
	int e = -EBADMSG;
	if (n >= 1 && !strcmp(w[0], "LIST")) {
		*why = "expected LIST v=1 cnonce=HEX [mac=HEX]";
		const char *lv = n >= 2 ? val(w[1], "v") : NULL;
		const char *mac = n == 4 ? val(w[3], "mac") : NULL;
		if ((n == 3 || n == 4) && lv && (e = version(lv, why)) == 0) {
			e = -EBADMSG;
			if (hex_nonce(val(w[2], "cnonce"), o->cnonce) && (n == 3 || (mac && strlen(mac) == 64))) {
				o->list = TRUE;
				o->has_mac = n == 4;
				e = 0;
			}
		}
		g_strfreev(w);
		return e;
	}
	*why = "expected OPEN v=1 dev=NAME cnonce=HEX [mac=HEX]";
	const char *v = n >= 2 ? val(w[1], "v") : NULL;
	if ((n == 4 || n == 5) && !strcmp(w[0], "OPEN") && v && (e = version(v, why)) == 0) {
		e = -EBADMSG;
		const char *dev = val(w[2], "dev");
		const char *mac = n == 5 ? val(w[4], "mac") : NULL;
		if (dev && strlen(dev) < sizeof o->dev && hex_nonce(val(w[3], "cnonce"), o->cnonce) &&
		    (n == 4 || (mac && strlen(mac) == 64))) {
			if (dev_name_check(dev, why) < 0) {
				e = -EINVAL;
			} else {
				g_strlcpy(o->dev, dev, sizeof o->dev);
				o->has_mac = n == 5;
				e = 0;
			}
		}
	}
	g_strfreev(w);
	return e;
}

int dev_proxy_parse_reply(const char *line, dev_proxy_reply *r, const char **why)
{
	memset(r, 0, sizeof *r);
	if (strncmp(line, "ERR errno=", 10) == 0) {
		char *end;
		long e = strtol(line + 10, &end, 10);
		if (end == line + 10 || e <= 0 || e > 4095 || (*end != ' ' && *end != '\n' && *end)) {
			*why = "bad ERR line";
			return -EBADMSG;
		}
		r->err = (int)e;
		const char *t = *end == ' ' ? end + 1 : end;
		g_strlcpy(r->text, t, MIN(sizeof r->text, strcspn(t, "\n") + 1));
		return 0;
	}
	gchar **w = words(line, why);
	if (!w)
		return -EBADMSG;
	guint n = g_strv_length(w);
	int e = -EBADMSG;
	*why = "expected OK v=1 write=0|1 keepalive_ms=K [mac=HEX] or ERR errno=E text";
	const char *v = n >= 2 ? val(w[1], "v") : NULL;
	if ((n == 4 || n == 5) && !strcmp(w[0], "OK") && v && (e = version(v, why)) == 0) {
		e = -EBADMSG;
		const char *wr = val(w[2], "write");
		uint32_t ka;
		if (wr && (!strcmp(wr, "0") || !strcmp(wr, "1")) && parse_u32(val(w[3], "keepalive_ms"), &ka) && ka >= 10 &&
		    ka <= 600000 && (n == 4 || val(w[4], "mac"))) {
			r->ok = TRUE;
			r->write = wr[0] == '1';
			r->keepalive_ms = (int)ka;
			r->has_mac = n == 5;
			e = 0;
		}
	}
	g_strfreev(w);
	return e;
}
