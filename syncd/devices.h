/* devices.h — syncd's devices: sync/ticker (every conversion, text and
 * binary), sync/clocks and sync/rbs (status), sync/command (commands.h),
 * and when they notify their readers.
 */
#ifndef CHORUS_SYNCD_DEVICES_H
#define CHORUS_SYNCD_DEVICES_H

#include <glib.h>
#include <stdint.h>

#include "syncd/notify.h"
#include "syncd/syncd.h"

/* Create the four devices on ctx (NULL = default).  FALSE + *err on
 * failure (the devices made so far stay for syncd_devices_close). */
gboolean syncd_devices_open(syncd *s, GMainContext *ctx, GError **err);

/* Notify ticker, clocks and rbs readers if something changed and the last
 * notification is at least ticker_interval_s old (or a change asked for it
 * at once). */
void syncd_devices_flush(syncd *s, int64_t now_ns);

/* The listener the daemon gives root and RBS (notify.h): counts changes,
 * and flushes on SYNCD_SETTLED. */
syncd_notify syncd_devices_notify(syncd *s);

/* Close the devices (their socket files go); NULL members are fine. */
void syncd_devices_close(syncd *s);

#endif
