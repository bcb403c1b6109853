/* ratelog.h — rate-limited logging of a counted event, for per-packet and
 * per-frame paths where one log line per occurrence would flood the journal.
 *
 * The caller counts the event; ratelog() logs only its 1st, 10th, 100th,
 * 1000th ... occurrence, each line ending with " (N so far)", at the given
 * level in the caller's G_LOG_DOMAIN.  Usage:
 *
 *	r->send_errors++;
 *	ratelog(G_LOG_LEVEL_WARNING, r->send_errors, "send to %s failed: %s", addr, g_strerror(errno));
 */
#ifndef CHORUS_DEV_RATELOG_H
#define CHORUS_DEV_RATELOG_H

#include <glib.h>

/* TRUE when `count` (1-based) is 1 or a power of ten: the occurrences that
 * ratelog() logs.  Pure. */
gboolean ratelog_due(guint64 count);

/* Log the printf-style message with " (count so far)" appended through
 * g_log(domain, level, ...) when ratelog_due(count); otherwise do nothing
 * (the message is not even formatted). */
void ratelog_log(const char *domain, GLogLevelFlags level, guint64 count, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

/* ratelog_log in the caller's log domain. */
#define ratelog(level, count, ...) ratelog_log(G_LOG_DOMAIN, (level), (count), __VA_ARGS__)

#endif
