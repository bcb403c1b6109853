/* config.h — chorus-archive's configuration: [archive] and one [device.K]
 * group per audiod device it may record (K = 0..ARCHIVE_MAX_DEVICES-1),
 * validated by libcfg with file:line:key errors (docs/archive.md §3).
 */
#ifndef CHORUS_ARCHIVE_CONFIG_H
#define CHORUS_ARCHIVE_CONFIG_H

#include <glib.h>

#define ARCHIVE_MAX_DEVICES 4

typedef struct {
	gboolean record; /* keep every frame of audio/K/data */
} archive_device_config;

typedef struct {
	gint64 node;              /* this node's number (names and clocks) */
	char *dir;                /* where segments are kept */
	double segment_s;         /* audio per segment, s */
	double flush_s;           /* most audio a crash may lose, s */
	gint64 flac_level;        /* libsndfile's compression level 0..8 (SFC_SET_COMPRESSION_LEVEL / 8) */
	double time_interval_s;   /* s between the audio->cpu/global conversions kept in an index */
	double max_age_s;         /* retention by age, s; 0 = no limit */
	double max_bytes_mb;      /* retention by size, MB (10^6 bytes); 0 = no limit */
	double reserve_mb;        /* free space never used, MB */
	double status_interval_s; /* s between status notifications */
	archive_device_config dev[ARCHIVE_MAX_DEVICES];
} archive_config;

/* Defaults, then `path` (missing is fine unless path_given), into *cfg
 * (zeroed, or cleared with archive_config_clear: the defaults replace the
 * strings it holds).
 * CHORUS_NODE sets the default node.  Checks across keys (the flush
 * horizon inside a segment) are reported with the file and line.
 * FALSE + *err ("FILE:LINE: [group] key: why"). */
gboolean archive_config_load(archive_config *cfg, const char *path, gboolean path_given, GError **err);

/* Override one key (a command-line option), e.g. "archive" "dir" "/x";
 * `where` prefixes the error ("--dir: ").  FALSE + *err. */
gboolean archive_config_set(archive_config *cfg, const char *group, const char *key, const char *text,
			    const char *where, GError **err);

/* Free the strings. */
void archive_config_clear(archive_config *cfg);

/* Every key with its default and help, as INI text (g_free). */
char *archive_config_describe(void);

#endif
