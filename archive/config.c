/* config.c — chorus-archive's configuration table (see config.h): a static
 * libcfg table; keys carry their unit. */
#include "archive/config.h"

#include <stddef.h>
#include <stdlib.h>

#include "libcfg/cfg.h"

#define K CFG_KEY

static const cfg_key archive_keys[] = {
	K(archive_config, "node", CFG_INT, "0", 0, 4294967294.0, node, "this node's number (CHORUS_NODE sets the default)"),
	K(archive_config, "dir", CFG_STRING, "/var/lib/chorus/archive", 1, 0, dir, "directory of the segments (FLAC) and their indices"),
	K(archive_config, "segment_s", CFG_DOUBLE, "60", 1, 3600, segment_s, "audio per segment, s"),
	K(archive_config, "flush_s", CFG_DOUBLE, "2", 0.2, 60, flush_s, "flush horizon, s: the most audio a crash or power cut may lose"),
	K(archive_config, "flac_level", CFG_INT, "5", 0, 8, flac_level, "FLAC compression level 0..8 (libFLAC's presets; 5 is flac's default)"),
	K(archive_config, "time_interval_s", CFG_DOUBLE, "10", 0.5, 600, time_interval_s, "s between the audio->cpu and audio->global conversions kept in a segment's index"),
	K(archive_config, "max_age_s", CFG_DOUBLE, "0", 0, 1e9, max_age_s, "drop segments older than this, s; 0 = no limit"),
	K(archive_config, "max_bytes_mb", CFG_DOUBLE, "0", 0, 1e9, max_bytes_mb, "keep at most this much, MB (10^6 bytes), oldest dropped first; 0 = no limit"),
	K(archive_config, "reserve_mb", CFG_DOUBLE, "64", 0, 1e9, reserve_mb, "free space on the file system never used, MB: the oldest segments go first"),
	K(archive_config, "status_interval_s", CFG_DOUBLE, "1", 0.05, 60, status_interval_s, "s between status notifications"),
	{NULL},
};

/* Only device 0 is recorded by default. */
static const cfg_key device0_keys[] = {
	K(archive_device_config, "record", CFG_BOOL, "true", 1, 0, record, "keep every frame of audio/K/data"),
	{NULL},
};
static const cfg_key device_keys[] = {
	K(archive_device_config, "record", CFG_BOOL, "false", 1, 0, record, "keep every frame of audio/K/data"),
	{NULL},
};

static const cfg_group table[] = {
	{.name = "archive", .keys = archive_keys, .store = 1},
	{.name = "device", .numbered = 1, .keys = device0_keys, .store = 1, .offset = offsetof(archive_config, dev), .stride = sizeof(archive_device_config), .first = 0, .count = 1},
	{.name = "device", .numbered = 1, .keys = device_keys, .store = 1, .offset = offsetof(archive_config, dev) + sizeof(archive_device_config), .stride = sizeof(archive_device_config), .first = 1, .count = ARCHIVE_MAX_DEVICES - 1},
	{NULL},
};

gboolean archive_config_load(archive_config *cfg, const char *path, gboolean path_given, GError **err)
{
	if (!cfg_defaults(table, cfg, err))
		return FALSE;
	const char *env = getenv("CHORUS_NODE");
	if (env && *env && !cfg_set(table, cfg, "archive", "node", env, "environment CHORUS_NODE: ", err))
		return FALSE;
	GError *e = NULL;
	cfg_file *f = cfg_file_load(path, table, &e);
	if (!f) {
		if (!path_given && g_error_matches(e, CFG_ERROR, ENOENT)) {
			g_error_free(e);
			return TRUE;
		}
		g_propagate_error(err, e);
		return FALSE;
	}
	cfg_file_store(f, cfg);
	if (cfg->flush_s > cfg->segment_s)
		cfg_file_fail(f, "archive", "flush_s", "the flush horizon (%g s) must not exceed segment_s (%g s)", cfg->flush_s,
			      cfg->segment_s);
	gboolean ok = cfg_file_check(f, err);
	cfg_file_free(f);
	return ok;
}

gboolean archive_config_set(archive_config *cfg, const char *group, const char *key, const char *text,
			    const char *where, GError **err)
{
	return cfg_set(table, cfg, group, key, text, where, err);
}

void archive_config_clear(archive_config *cfg)
{
	cfg_clear(table, cfg);
}

char *archive_config_describe(void)
{
	return cfg_describe(table);
}
