/* obslog.h — audiod's observation log (`audiod --obs-log FILE`): every
 * timestamp observation a device feeds its frame -> cpu fit, one text line
 * each, for diagnosing a card's timestamps (their delays, floor and drift)
 * offline.  Shared by all devices of one audiod.
 *
 * Line format (space separated):
 *   K SEGMENT FRAME CPU_NS RAW_NS
 * K the device, SEGMENT its timehist segment (a new one after a break),
 * FRAME the absolute frame index, CPU_NS the cpu time fitted (the record's
 * time less the calibrated floor), RAW_NS the record's own time.  Lines
 * starting with '#' are comments (the header, a device's parameters).
 *
 * A failed write is an error: it is logged once, the log stops, and the
 * error stays on every device's status (obslog_status). */
#ifndef CHORUS_AUDIOD_OBSLOG_H
#define CHORUS_AUDIOD_OBSLOG_H

#include <stdint.h>

#include <glib.h>

typedef struct obslog obslog;

/* Create or truncate `path` and write the header.  NULL + *err (the path
 * and why). */
obslog *obslog_open(const char *path, GError **err);

/* One comment line "# device K: TEXT" (a device's pcm, rate, source). */
void obslog_note(obslog *l, int k, const char *text);

/* One observation (see the line format above); nothing after a failure. */
void obslog_add(obslog *l, int k, unsigned segment, int64_t frame, int64_t cpu_ns, int64_t raw_ns);

/* Append "obs_log path=P lines=N[ error=WHY]\n" to out. */
void obslog_status(const obslog *l, GString *out);

/* Close (checked: a failed close is logged) and free; NULL is fine.
 * Returns 0, or -1 when a write or the close failed. */
int obslog_close(obslog *l);

#endif
