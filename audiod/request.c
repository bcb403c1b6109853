/* request.c — audio request parameters (see request.h). */
#include "audiod/request.h"

#include "audiod/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		return -1;
	*v = x;
	return 0;
}

static int parse_channels(const char *s, uint32_t channels, audio_request *r, GError **err)
{
	gchar **parts = g_strsplit(s, ",", -1);
	int rc = 0;
	r->nchan = 0;
	for (gchar **p = parts; *p; p++) {
		int64_t c;
		if (parse_i64(*p, &c) < 0 || c < 0 || c >= channels) {
			g_set_error(err, AUDIOD_ERROR, EINVAL, "channels: \"%s\" is not a channel of this device (0..%u)",
				    *p, channels - 1);
			rc = -EINVAL;
			break;
		}
		if (r->nchan == AUDIO_MAX_CHANNELS) {
			g_set_error(err, AUDIOD_ERROR, EINVAL, "channels: more than %d listed", AUDIO_MAX_CHANNELS);
			rc = -EINVAL;
			break;
		}
		r->chan[r->nchan++] = (uint16_t)c;
	}
	if (!rc && r->nchan == 0) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "channels: empty list");
		rc = -EINVAL;
	}
	g_strfreev(parts);
	return rc;
}

int audio_request_parse(const char *params, size_t len, uint32_t channels, uint32_t node, audio_request *out,
			GError **err)
{
	audio_request r = {0};
	int have_from = 0, have_clock = 0, rc = 0;
	unsigned seen = 0;
	r.to = INT64_MAX;
	char *text = g_strndup(params ? params : "", len);
	if (strlen(text) != len) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "parameters contain a NUL byte");
		g_free(text);
		return -EINVAL;
	}
	gchar **tok = g_strsplit_set(text, " \t\n", -1);
	for (gchar **t = tok; *t && !rc; t++) {
		if (!**t)
			continue;
		char *eq = strchr(*t, '=');
		if (!eq) {
			g_set_error(err, AUDIOD_ERROR, EINVAL, "parameter \"%s\" is not key=value", *t);
			rc = -EINVAL;
			break;
		}
		*eq = 0;
		const char *k = *t, *v = eq + 1;
		/* Each key once: "channels=0 channels=1" is a mistake, not a
		 * choice of the last. */
		static const char *const keys[] = {"channels", "clock", "from", "to"};
		for (unsigned i = 0; i < G_N_ELEMENTS(keys); i++)
			if (!strcmp(k, keys[i]) && (seen & (1u << i))) {
				g_set_error(err, AUDIOD_ERROR, EINVAL, "parameter %s given twice", k);
				rc = -EINVAL;
			} else if (!strcmp(k, keys[i]))
				seen |= 1u << i;
		if (rc)
			break;
		if (!strcmp(k, "channels")) {
			rc = parse_channels(v, channels, &r, err);
		} else if (!strcmp(k, "clock")) {
			const char *why;
			if (sync_clock_parse(v, node, &r.clock, &why) < 0) {
				g_set_error(err, AUDIOD_ERROR, EINVAL, "clock \"%s\": %s", v, why);
				rc = -EINVAL;
			}
			have_clock = 1;
		} else if (!strcmp(k, "from") || !strcmp(k, "to")) {
			int64_t x;
			if (parse_i64(v, &x) < 0) {
				g_set_error(err, AUDIOD_ERROR, EINVAL, "%s: \"%s\" is not an integer time", k, v);
				rc = -EINVAL;
			} else if (*k == 'f') {
				r.from = x;
				have_from = 1;
			} else {
				r.to = x;
			}
		} else {
			g_set_error(err, AUDIOD_ERROR, EINVAL, "unknown parameter \"%s\" (channels, clock, from, to)",
				    k);
			rc = -EINVAL;
		}
	}
	g_strfreev(tok);
	g_free(text);
	if (rc)
		return rc;
	if (have_clock != have_from) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "%s",
			    have_clock ? "clock given without from" : "from given without clock");
		return -EINVAL;
	}
	if (have_clock && r.to != INT64_MAX && r.to <= r.from) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "to (%" G_GINT64_FORMAT ") must be after from (%" G_GINT64_FORMAT ")",
			    r.to, r.from);
		return -EINVAL;
	}
	r.by_time = have_clock;
	*out = r;
	return 0;
}

const char *audio_reply_field(const char *reply, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = reply; (p = strstr(p, key)); p += kl) {
		/* A whole key: at the start or after a blank, followed by '='. */
		if ((p != reply && p[-1] != ' ') || p[kl] != '=')
			continue;
		p += kl + 1;
		size_t n = strcspn(p, " ");
		g_strlcpy(buf, p, n + 1 < len ? n + 1 : len);
		return buf;
	}
	return NULL;
}
