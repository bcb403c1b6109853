/* config.c — audiod's configuration table (see config.h): a static libcfg
 * table; keys carry their unit (rate_hz), the names before that are accepted
 * as deprecated aliases. */
#include "audiod/config.h"

#include <stddef.h>
#include <stdlib.h>

#include "libcfg/cfg.h"

/* The table's entries (libcfg/cfg.h): a key, a key renamed to carry its unit, an enum. */
#define K CFG_KEY
#define R CFG_KEY_RENAMED
#define E CFG_KEY_ENUM

static const char *const formats[] = {"S16_LE", "S32_LE", "FLOAT_LE", "S24_3LE", NULL}; /* audiod_format */
static const char *const tstamps[] = {"auto", "kpatch", "alsa", "sim", NULL};           /* tsrc_kind */

static const cfg_key audiod_keys[] = {
	K(audiod_config, "node", CFG_INT, "0", 0, 4294967294.0, node, "this node's number (CHORUS_NODE sets the default)"),
	K(audiod_config, "rt_priority", CFG_INT, "0", 0, 99, rt_priority, "SCHED_FIFO priority of the capture threads; 0 = normal scheduling"),
	K(audiod_config, "lock_memory", CFG_BOOL, "false", 1, 0, lock_memory, "lock all memory (mlockall) so capture never pages"),
	R(audiod_config, "status_interval_s", "status_interval", CFG_DOUBLE, "0.5", 0.01, 60, status_interval_s,
	  "seconds between status notifications"),
	K(audiod_config, "archive_dir", CFG_STRING, "", 0, 0, archive_dir,
	  "chorus-archive's directory: requests older than the ring are served from it; empty = $CHORUS_ARCHIVE_DIR, else /var/lib/chorus/archive if it exists; none = never"),
	{NULL},
};

/* The keys of [device.K]; only the default of pcm differs between device 0
 * (the system's default PCM) and the others (unused). */
#define D(key, t, def, lo, hi, field, help) K(audiod_device_config, key, t, def, lo, hi, field, help)
#define DR(key, old, t, def, lo, hi, field, help) R(audiod_device_config, key, old, t, def, lo, hi, field, help)
#define DEVICE_KEYS(pcm_default) \
	{ \
		D("pcm", CFG_STRING, pcm_default, 1, 0, pcm, "ALSA PCM to capture (hw:1, plughw:1,0, chorus_sim); empty = unused"), \
			DR("rate_hz", "rate", CFG_INT, "48000", 8000, 384000, rate_hz, "sample rate, frames/s"), \
			D("channels", CFG_INT, "1", 1, 64, channels, "channels"), \
			E(audiod_device_config, "format", "S16_LE", formats, format, "sample format"), \
			D("period", CFG_INT, "480", 16, 1 << 20, period, "frames per period (one DMA interrupt each)"), \
			D("periods", CFG_INT, "8", 2, 1024, periods, "periods in the ALSA buffer"), \
			DR("ring_s", "ring_seconds", CFG_DOUBLE, "60", 1, 86400, ring_s, "seconds of audio kept for clients"), \
			E(audiod_device_config, "tstamp", "auto", tstamps, tstamp, "timestamp source (auto: kpatch, else the simulator's side channel, else ALSA)"), \
			D("sidechannel", CFG_STRING, "", 1, 0, sidechannel, "simulator side channel path; empty = the default for the PCM"), \
			D("latency_floor_us", CFG_DOUBLE, "0", 0, 1e5, latency_floor_us, "calibrated least delay from the period's end to its timestamp, us (subtracted from every timestamp)"), \
			D("latency_floor_sd_us", CFG_DOUBLE, "0", 0, 1e5, latency_floor_sd_us, "standard error of latency_floor_us, us: every conversion of this card's clock carries it"), \
			{NULL}, \
	}
static const cfg_key device0_keys[] = DEVICE_KEYS("default");
static const cfg_key device_keys[] = DEVICE_KEYS("");

static const cfg_group table[] = {
	{.name = "audiod", .keys = audiod_keys, .store = 1},
	{.name = "device", .numbered = 1, .keys = device0_keys, .store = 1, .offset = offsetof(audiod_config, dev), .stride = sizeof(audiod_device_config), .first = 0, .count = 1},
	{.name = "device", .numbered = 1, .keys = device_keys, .store = 1, .offset = offsetof(audiod_config, dev) + sizeof(audiod_device_config), .stride = sizeof(audiod_device_config), .first = 1, .count = AUDIOD_MAX_DEVICES - 1},
	{NULL},
};

gboolean audiod_config_load(audiod_config *cfg, const char *path, gboolean path_given, GError **err)
{
	if (!cfg_defaults(table, cfg, err))
		return FALSE;
	const char *env = getenv("CHORUS_NODE");
	if (env && *env && !cfg_set(table, cfg, "audiod", "node", env, "environment CHORUS_NODE: ", err))
		return FALSE;
	return cfg_load(path, !path_given, table, cfg, err);
}

gboolean audiod_config_set(audiod_config *cfg, const char *group, const char *key, const char *text, const char *where,
			   GError **err)
{
	return cfg_set(table, cfg, group, key, text, where, err);
}

void audiod_config_clear(audiod_config *cfg)
{
	cfg_clear(table, cfg);
}

char *audiod_config_describe(void)
{
	return cfg_describe(table);
}
