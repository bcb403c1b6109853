/* bootid.c — syncd's boot number (see bootid.h). */
#include "libdev/bootid.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t dev_bootid_pick(uint64_t realtime_ns, int have_saved, uint64_t saved)
{
	if (have_saved && saved != UINT64_MAX && saved + 1 > realtime_ns)
		return saved + 1;
	return realtime_ns;
}

uint64_t dev_bootid_next(const char *path, char *why, size_t len)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t rt = ts.tv_sec > 0 ? (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec : 0;
	if (why && len)
		why[0] = 0;
	if (!path || !*path)
		return rt;
	gchar *text = NULL;
	GError *e = NULL;
	int have = 0;
	uint64_t saved = 0;
	if (g_file_get_contents(path, &text, NULL, &e)) {
		char *end = NULL;
		errno = 0;
		unsigned long long v = strtoull(text, &end, 10);
		if (errno == 0 && end != text && (*end == '\n' || *end == 0)) {
			have = 1;
			saved = v;
		} else if (why) {
			snprintf(why, len, "boot file %s: not a number; using the clock alone", path);
		}
		g_free(text);
	} else {
		if (why && !g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			snprintf(why, len, "boot file: %s; using the clock alone", e->message);
		g_clear_error(&e);
	}
	uint64_t boot = dev_bootid_pick(rt, have, saved);
	char out[32];
	snprintf(out, sizeof out, "%" PRIu64 "\n", boot);
	if (!g_file_set_contents_full(path, out, -1, G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
				      0644, &e)) {
		if (why)
			snprintf(why, len, "boot file: %s; the next start relies on the clock alone", e->message);
		g_clear_error(&e);
	}
	return boot;
}
