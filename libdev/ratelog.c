/* ratelog.c — rate-limited logging of a counted event (see ratelog.h). */
#include "libdev/ratelog.h"

#include <stdarg.h>

gboolean ratelog_due(guint64 count)
{
	if (count == 0)
		return FALSE;
	while (count % 10 == 0)
		count /= 10;
	return count == 1;
}

void ratelog_log(const char *domain, GLogLevelFlags level, guint64 count, const char *fmt, ...)
{
	if (!ratelog_due(count))
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_log(domain, level, "%s (%" G_GUINT64_FORMAT " so far)", msg, count);
	g_free(msg);
}
