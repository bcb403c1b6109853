/* cursor.c — a client's place in a packet device's numbering (see cursor.h). */
#include "archive/cursor.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive/durable.h"

gboolean archive_cursor_load(const char *dir, const char *name, uint64_t *boot, uint64_t *next, GError **err)
{
	*boot = *next = 0;
	char *path = g_build_filename(dir, name, NULL), *text = NULL;
	size_t len = 0;
	gboolean ok = TRUE;
	if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
		/* none yet: the first start */
	} else if (!archive_read_file(path, &text, &len, err)) {
		ok = FALSE;
	} else {
		uint64_t b = 0, n = 0;
		int used = 0;
		if (sscanf(text, "%" SCNu64 " %" SCNu64 "\n%n", &b, &n, &used) != 2 || b == 0 || n == 0 || text[used]) {
			g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not \"BOOT NEXT\" (two positive numbers)", path);
			ok = FALSE;
		} else {
			*boot = b;
			*next = n;
		}
	}
	g_free(text);
	g_free(path);
	return ok;
}

gboolean archive_cursor_save(const char *dir, const char *name, uint64_t boot, uint64_t next, GError **err)
{
	char text[48];
	int n = snprintf(text, sizeof text, "%" PRIu64 " %" PRIu64 "\n", boot, next);
	return archive_write_atomic(dir, name, text, (size_t)n, err);
}
