/* recorder.h — one audiod device into the archive: a streaming client of
 * audio/K/data (libdev's crashproof sensor reader, so audiod never waits
 * for the disk) that cuts the frames into segments (archive/segment.h),
 * turns every GAP into a segment boundary and a gap record, journals the
 * audio->cpu and audio->global conversions of its frames, and flushes on
 * the daemon's tick (docs/archive.md §1-2).
 *
 * At start it resumes from the end of the newest segment of this device
 * in the store (DEV_SENSOR_RESUME: audiod sends what its ring still holds
 * and a GAP for the rest, or refuses an earlier run's numbering, after
 * which the recorder starts again from audiod's next frame).  Runs on the
 * main context; every failure that loses frames is counted and logged,
 * and archive_recorder_lost() says so.
 */
#ifndef CHORUS_ARCHIVE_RECORDER_H
#define CHORUS_ARCHIVE_RECORDER_H

#include <glib.h>
#include <stdint.h>

#include "archive/store.h"
#include "libsync/client.h"

typedef struct archive_recorder archive_recorder;

typedef struct {
	const char *dir;             /* segment directory */
	uint32_t node, device;       /* records nodeN's audio/<device>/data */
	double segment_s;            /* audio per segment, s */
	int flac_level;              /* 0..8 */
	double time_interval_s;      /* s of audio between kept conversions */
	sync_client *clocks;         /* conversions (owned by the caller) */
	archive_store *store;        /* closed segments go here (owned by the caller) */
	void (*changed)(void *user); /* a segment closed or an error happened; may be NULL */
	void *user;
} archive_recorder_cfg;

/* Start recording on ctx (NULL = default).  NULL + *err for a bad device
 * name. */
archive_recorder *archive_recorder_new(const archive_recorder_cfg *c, GMainContext *ctx, GError **err);

/* Flush the open segment (fsync FLAC and journal) and note a conversion
 * when time_interval_s of audio passed.  Call every flush horizon / 2. */
void archive_recorder_tick(archive_recorder *r);

/* Append this device's status lines to out (docs/archive.md §5). */
void archive_recorder_status(const archive_recorder *r, GString *out);

/* Write, fsync, close or rename failures so far (frames were lost); a
 * sample format FLAC cannot hold bit-exact sets *fatal. */
guint64 archive_recorder_errors(const archive_recorder *r, gboolean *fatal);

/* The errno of the last error (ENOSPC for a full disk), 0 before any. */
int archive_recorder_last_errno(const archive_recorder *r);

/* Close the open segment properly and stop.  FALSE + *err when the close
 * failed (its files stay for archive_recover()).  Frees r. */
gboolean archive_recorder_stop(archive_recorder *r, GError **err);

#endif
